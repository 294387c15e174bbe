"""Batched beam-search translation with any Hugging Face seq2seq model (a trained dir or a hub id)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from mtkit.errors import UserError
from mtkit.prompts import resolve


def position_limit(config) -> int | None:
    """Longest source and output a model with learned positions handles (BART-style ``max_position_embeddings``,
    less the decoder start and one spare); ``None`` for models without such a limit (T5)."""
    limit = getattr(config, "max_position_embeddings", None)
    return limit - 2 if isinstance(limit, int) and limit > 2 else None


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
    limit = position_limit(model.config)
    if limit is not None:  # longer inputs or outputs would index past the position table
        max_new_tokens = min(max_new_tokens, limit)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[str] = [""] * len(texts)
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, desc="translating", unit="batch", disable=not progress):
        idx = order[start : start + batch_size]
        enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True, truncation=True, max_length=limit)
        enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        beam = {"num_beams": beam_size, "length_penalty": length_penalty} if beam_size > 1 else {"num_beams": 1}
        ids = model.generate(**enc, **beam, max_new_tokens=max_new_tokens, **generate_kwargs)
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


def _parser():
    import argparse

    p = argparse.ArgumentParser(description="Translate with a trained model (a run's final/ dir) or a hub model.")
    p.add_argument("--model", required=True, help="Model directory (e.g. runs/demo/final) or hub id.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--text", action="append", help="Sentence to translate (repeatable).")
    mode.add_argument("--input", help="File with one sentence per line (UTF-8, .gz allowed).")
    p.add_argument("--output", help="Where --input's translations go (default: standard output).")
    p.add_argument("--num_beams", type=int, default=None, help="Beam size (default: the model's generation config).")
    p.add_argument("--length_penalty", type=float, default=None, help="Beam length penalty (default: the model's).")
    p.add_argument("--max_new_tokens", type=int, default=None, help="Longest translation (default: the model's).")
    p.add_argument("--batch_size", type=int, default=32, help="Sentences per batch.")
    p.add_argument(
        "--prompt",
        default=None,
        help="Preset (t5, instruction), template with {source} and {lang_name}, or none; default: the prompt "
        "saved with the model (final/prompt.json).",
    )
    p.add_argument("--target_lang", default=None, help="Target language code for the prompt (e.g. de).")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda if available).")
    p.add_argument("--dtype", default="auto", help="auto, fp32, bf16 or fp16.")
    return p


def main(argv: list[str] | None = None) -> None:
    """``scripts/translate.py``: ``--text``, ``--input``/``--output``, or an interactive prompt."""
    import sys

    from mtkit.textio import atomic_write, read_lines

    args = _parser().parse_args(argv)
    if args.output and not args.input:
        raise UserError("--output: only used with --input")
    lines = read_lines(Path(args.input)) if args.input else None
    prompt = resolve(args.prompt, args.model)
    lang = prompt.language_for(args.target_lang) if prompt else args.target_lang
    translator = Translator(args.model, device=args.device, dtype=args.dtype)
    gen = translator.model.generation_config
    options = {
        "beam_size": args.num_beams or gen.num_beams or 4,
        "length_penalty": args.length_penalty if args.length_penalty is not None else gen.length_penalty,
        "max_new_tokens": args.max_new_tokens or gen.max_new_tokens or 256,
        "batch_size": args.batch_size,
    }

    def wrap(sentences: list[str]) -> list[str]:
        return [prompt.render(s, lang) for s in sentences] if prompt else sentences

    if args.text:
        for hyp in translator.translate(wrap(args.text), **options):
            print(hyp)
    elif lines is not None:
        hyps = translator.translate(wrap(lines), progress=True, **options)
        if not args.output:
            sys.stdout.write("".join(h + "\n" for h in hyps))
            return
        out = Path(args.output)
        atomic_write(out, "".join(h + "\n" for h in hyps).encode("utf-8"))
        print(f"{len(hyps)} translations written to {out}", file=sys.stderr)
    else:
        print("Type a sentence and press Enter; 'q' quits.", file=sys.stderr)
        for line in sys.stdin:
            if line.strip() in ("q", "quit", "exit"):
                break
            if line.strip():
                print(translator.translate(wrap([line.strip()]), **options)[0], flush=True)
