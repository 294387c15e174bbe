"""Batched beam-search translation with any Hugging Face seq2seq model (a trained dir or a hub id)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import torch
from tqdm.auto import tqdm

from mtkit.errors import UserError
from mtkit.prompts import resolve

#: Default output bound per batch: ``MAX_LEN_A * longest source + MAX_LEN_B`` tokens (fairseq's
#: ``--max-len-a/--max-len-b``). Generous for translation between European languages (targets run to about 1.3x
#: the source in subwords); it stops a degenerate hypothesis from keeping its whole batch decoding to
#: ``max_new_tokens``.
MAX_LEN_A = 1.5
MAX_LEN_B = 10


def output_bound(longest_source: int, max_new_tokens: int, max_len_a: float, max_len_b: int) -> int:
    """Most tokens a batch whose longest source has ``longest_source`` tokens may generate."""
    return max(1, min(max_new_tokens, math.ceil(max_len_a * longest_source + max_len_b)))


def position_limit(config) -> int | None:
    """Longest source and output a model with learned positions handles (BART-style ``max_position_embeddings``,
    less the decoder start and one spare); ``None`` for models without such a limit (T5)."""
    limit = getattr(config, "max_position_embeddings", None)
    return limit - 2 if isinstance(limit, int) and limit > 2 else None


def apply_prompt(sentences: Sequence[str], prompt: str | None) -> list[str]:
    """``sentences`` put into ``prompt`` (a template with ``{source}``), or as they are without one."""
    if prompt is not None and "{source}" not in prompt:
        raise UserError(f"--prompt: template {prompt!r} has no {{source}} placeholder")
    return [prompt.format(source=s) if prompt else s for s in sentences]


def length_sorted_batches(texts: Sequence[str], batch_size: int, progress: bool = False) -> Iterator[list[int]]:
    """Indices of ``texts`` in batches of ``batch_size``, longest texts first (little padding, and the batch that
    needs the most memory comes first)."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    starts = range(0, len(order), batch_size)
    for start in tqdm(starts, desc="translating", unit="batch", disable=not progress):
        yield order[start : start + batch_size]


@torch.no_grad()
def generate_translations(
    model,
    tokenizer,
    sentences: Sequence[str],
    *,
    beam_size: int = 4,
    length_penalty: float = 1.0,
    max_new_tokens: int = 256,
    max_len_a: float = MAX_LEN_A,
    max_len_b: int = MAX_LEN_B,
    batch_size: int = 32,
    prompt: str | None = None,
    progress: bool = False,
    **generate_kwargs,
) -> list[str]:
    """Translate ``sentences`` in length-sorted batches and return them in input order.

    ``prompt`` is a template with ``{source}`` (for T5-style models, e.g.
    ``"translate English to German: {source}"``). Each batch generates at most
    :func:`output_bound` tokens (``max_len_a`` times its longest source, prompt included, plus ``max_len_b``, and
    never more than ``max_new_tokens``), and at least one token before ``</s>`` (as CTranslate2 does: a sentence
    never gets an empty translation). Extra keyword arguments go to ``generate`` (``synced_gpus=True`` under
    ZeRO-3, for instance: processes whose batches stop at different lengths keep stepping together).
    """
    texts = apply_prompt(sentences, prompt)
    limit = position_limit(model.config)
    if limit is not None:  # longer inputs or outputs would index past the position table
        max_new_tokens = min(max_new_tokens, limit)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[str] = [""] * len(texts)
    for idx in length_sorted_batches(texts, batch_size, progress):
        enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True, truncation=True, max_length=limit)
        longest = int(enc["attention_mask"].sum(1).max())  # on the host, before the copy: no device sync
        bound = output_bound(longest, max_new_tokens, max_len_a, max_len_b)
        enc = {k: v.to(device, non_blocking=True) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        beam = {"num_beams": beam_size, "length_penalty": length_penalty} if beam_size > 1 else {"num_beams": 1}
        ids = model.generate(**enc, **beam, min_new_tokens=1, max_new_tokens=bound, **generate_kwargs)
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
        if (path / "mtkit_ct2.json").is_file():
            raise UserError(f"--model: {model} is a CTranslate2 model; translate with it through --engine ct2")
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

    @property
    def generation_config(self):
        """The model's saved decoding settings."""
        return self.model.generation_config

    def translate(self, sentences: Sequence[str], **kwargs) -> list[str]:
        """Translate a list of sentences; keyword arguments as in :func:`generate_translations`."""
        return generate_translations(self.model, self.tokenizer, sentences, **kwargs)


ENGINES = ("hf", "ct2")


def load_translator(model: str | Path, engine: str = "hf", device: str | None = None, dtype: str = "auto"):
    """A :class:`Translator` (``engine`` hf: transformers' ``generate``) or a :class:`mtkit.ct2.CT2Translator`
    (``ct2``: a folder written by ``scripts/export_ct2.py``)."""
    if engine not in ENGINES:
        raise UserError(f"--engine: {engine!r} is not one of {', '.join(ENGINES)}")
    if engine == "hf":
        return Translator(model, device=device, dtype=dtype)
    if dtype != "auto":
        raise UserError("--dtype: not used with --engine ct2 (its weights' type is export_ct2.py's --quantization)")
    from mtkit.ct2 import CT2Translator

    return CT2Translator(model, device=device)


def first_set(*values):
    """The first of ``values`` that is not ``None``."""
    return next(v for v in values if v is not None)


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
    p.add_argument(
        "--max_len_a",
        type=float,
        default=None,
        help=f"Each batch stops after max_len_a x its longest source + max_len_b tokens (default: the model's, "
        f"else {MAX_LEN_A}).",
    )
    p.add_argument(
        "--max_len_b", type=int, default=None, help=f"See --max_len_a (default: the model's, else {MAX_LEN_B})."
    )
    p.add_argument("--batch_size", type=int, default=32, help="Sentences per batch.")
    p.add_argument(
        "--prompt",
        default=None,
        help="Preset (t5, instruction), template with {source} and {lang_name}, or none; default: the prompt "
        "saved with the model (final/prompt.json).",
    )
    p.add_argument("--target_lang", default=None, help="Target language code for the prompt (e.g. de).")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda if available).")
    p.add_argument("--dtype", default="auto", help="auto, fp32, bf16 or fp16 (--engine hf).")
    p.add_argument(
        "--engine",
        default="hf",
        help="hf: transformers' generate on --model; ct2: CTranslate2 on a folder from scripts/export_ct2.py.",
    )
    return p


def main(argv: list[str] | None = None) -> None:
    """``scripts/translate.py``: ``--text``, ``--input``/``--output``, or an interactive prompt."""
    import sys

    from transformers import GenerationConfig

    from mtkit.textio import atomic_write, read_lines

    args = _parser().parse_args(argv)
    if args.output and not args.input:
        raise UserError("--output: only used with --input")
    lines = read_lines(Path(args.input)) if args.input else None
    prompt = resolve(args.prompt, args.model)
    lang = prompt.language_for(args.target_lang) if prompt else args.target_lang
    translator = load_translator(args.model, args.engine, device=args.device, dtype=args.dtype)
    gen = translator.generation_config or GenerationConfig()
    options = {
        "beam_size": args.num_beams or gen.num_beams or 4,
        "length_penalty": args.length_penalty if args.length_penalty is not None else gen.length_penalty,
        "max_new_tokens": args.max_new_tokens or gen.max_new_tokens or 256,
        "max_len_a": first_set(args.max_len_a, getattr(gen, "max_len_a", None), MAX_LEN_A),
        "max_len_b": first_set(args.max_len_b, getattr(gen, "max_len_b", None), MAX_LEN_B),
        "batch_size": args.batch_size,
    }
    for flag in ("max_len_a", "max_len_b"):
        if options[flag] < 0:
            raise UserError(f"--{flag}: must be >= 0, got {options[flag]}")

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
