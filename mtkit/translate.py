"""Batched beam-search translation with any Hugging Face seq2seq model (a trained dir or a hub id)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from mtkit.errors import UserError


@torch.no_grad()
def generate_translations(
    model,
    tokenizer,
    sentences: Sequence[str],
    *,
    beam_size: int = 4,
    length_penalty: float = 1.0,
    max_new_tokens: int = 256,
    batch_size: int = 32,
    prompt: str | None = None,
    progress: bool = False,
    **generate_kwargs,
) -> list[str]:
    """Translate ``sentences`` in length-sorted batches and return them in input order.

    ``prompt`` is a template with ``{source}`` (for T5-style models, e.g.
    ``"translate English to German: {source}"``). Extra keyword arguments go to ``generate``
    (``synced_gpus=True`` under ZeRO-3, for instance).
    """
    if prompt is not None and "{source}" not in prompt:
        raise UserError(f"--prompt: template {prompt!r} has no {{source}} placeholder")
    texts = [prompt.format(source=s) if prompt else s for s in sentences]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[str] = [""] * len(texts)
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, desc="translating", unit="batch", disable=not progress):
        idx = order[start : start + batch_size]
        enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True, truncation=True)
        enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        ids = model.generate(
            **enc,
            num_beams=beam_size,
            length_penalty=length_penalty,
            max_new_tokens=max_new_tokens,
            **generate_kwargs,
        )
        for i, text in zip(idx, tokenizer.batch_decode(ids, skip_special_tokens=True)):
            out[i] = text.strip()
    model.train(was_training)
    return out


class Translator:
    """A model and its tokenizer, loaded once, translating lists of sentences.

    >>> Translator("runs/demo/final").translate(["The cat is blue."])  # doctest: +SKIP
    """

    def __init__(self, model: str | Path, device: str | None = None, dtype: str = "auto") -> None:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        path = Path(model)
        if (str(model).startswith((".", "/")) or path.exists()) and not (path / "config.json").is_file():
            raise UserError(f"--model: {model} is not a model directory (no config.json there)")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        torch_dtype = {"auto": "auto", "fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
        if dtype not in torch_dtype:
            raise UserError(f"--dtype: {dtype!r} is not one of {', '.join(torch_dtype)}")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(model))
            self.model = AutoModelForSeq2SeqLM.from_pretrained(str(model), dtype=torch_dtype[dtype])
        except OSError as err:
            raise UserError(f"--model: cannot load {model}: {str(err).splitlines()[0]}") from None
        self.model.to(self.device).eval()

    def translate(self, sentences: Sequence[str], **kwargs) -> list[str]:
        """Translate a list of sentences; keyword arguments as in :func:`generate_translations`."""
        return generate_translations(self.model, self.tokenizer, sentences, **kwargs)
