"""CTranslate2: convert a trained model folder (a from-scratch BART or a fine-tuned T5) and translate with it.

The converted folder holds CTranslate2's ``model.bin`` and vocabulary plus what decoding needs from the original:
the tokenizer, ``generation_config.json`` (beam, length penalty, output bounds), ``prompt.json`` and
``mtkit_ct2.json`` (the source model, the quantization and the position limit).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from mtkit.errors import UserError
from mtkit.translate import MAX_LEN_A, MAX_LEN_B, apply_prompt, length_sorted_batches, output_bound, position_limit

#: CTranslate2's weight types (``--quantization``); int8 is the fast choice on CPU, int8_float16 or bfloat16 on GPU.
QUANTIZATIONS = ("int8", "int8_float16", "int8_bfloat16", "int16", "float16", "bfloat16", "float32")
INFO = "mtkit_ct2.json"
CARRIED = ("generation_config.json", "prompt.json")


def is_ct2_model(path: str | Path) -> bool:
    """Whether ``path`` is a folder written by :func:`export_ct2`."""
    return (Path(path) / "model.bin").is_file() and (Path(path) / INFO).is_file()


def export_ct2(model_dir: str | Path, out: str | Path, quantization: str = "int8", force: bool = False) -> Path:
    """Convert the ``save_pretrained`` model in ``model_dir`` to a CTranslate2 folder ``out`` (written to a
    temporary folder beside it and renamed at the end, so ``out`` is either complete or absent)."""
    import ctranslate2.converters
    from transformers import AutoConfig, AutoTokenizer

    model_dir, out = Path(model_dir), Path(out)
    if quantization not in QUANTIZATIONS:
        raise UserError(f"--quantization: {quantization!r} is not one of {', '.join(QUANTIZATIONS)}")
    if not (model_dir / "config.json").is_file():
        raise UserError(f"--model: {model_dir} is not a model directory (no config.json there)")
    if out.exists() and not force:
        raise UserError(f"--out: {out} exists (pass --force to replace it)")

    class Converter(ctranslate2.converters.TransformersConverter):
        def load_model(self, model_class, path, **kwargs):
            model = super().load_model(model_class, path, **kwargs)
            if model.config.model_type == "bart" and not hasattr(model.config, "normalize_before"):
                model.config.normalize_before = False  # transformers' BART is post-norm; the converter asks
            return model

    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        Converter(str(model_dir)).convert(str(tmp), quantization=quantization, force=True)
        AutoTokenizer.from_pretrained(str(model_dir)).save_pretrained(str(tmp))
        for name in CARRIED:
            if (model_dir / name).is_file():
                shutil.copy2(model_dir / name, tmp / name)
        info = {
            "source": str(model_dir.resolve()),
            "quantization": quantization,
            "position_limit": position_limit(AutoConfig.from_pretrained(str(model_dir))),
        }
        (tmp / INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


class CT2Translator:
    """A CTranslate2 folder and its tokenizer, translating lists of sentences like
    :class:`mtkit.translate.Translator` (same prompts, length-sorted batches and output bounds)."""

    def __init__(self, path: str | Path, device: str | None = None, threads: int = 0) -> None:
        import ctranslate2
        from transformers import AutoTokenizer, GenerationConfig

        path = Path(path)
        if not is_ct2_model(path):
            raise UserError(f"--model: {path} is not a CTranslate2 model (convert one with scripts/export_ct2.py)")
        self.info = json.loads((path / INFO).read_text(encoding="utf-8"))
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.generation_config = (
            GenerationConfig.from_pretrained(str(path)) if (path / "generation_config.json").is_file() else None
        )
        device = device or ("cuda" if ctranslate2.get_cuda_device_count() else "cpu")
        kind, _, index = device.partition(":")  # cuda:1 -> cuda, device 1
        self.translator = ctranslate2.Translator(
            str(path), device=kind, device_index=int(index or 0), intra_threads=threads
        )

    def translate(
        self,
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
    ) -> list[str]:
        """Translate ``sentences``; the arguments mean what they mean in
        :func:`mtkit.translate.generate_translations`."""
        texts = apply_prompt(sentences, prompt)
        limit = self.info.get("position_limit")
        if limit is not None:
            max_new_tokens = min(max_new_tokens, limit)
        # transformers forces </s> as the last of max_new_tokens when the model says so (BART); CTranslate2 stops
        # without it, so one fewer token gives the same output.
        forced_eos = self.generation_config is not None and self.generation_config.forced_eos_token_id is not None
        out: list[str] = [""] * len(texts)
        for idx in length_sorted_batches(texts, batch_size, progress):
            ids = self.tokenizer([texts[i] for i in idx], truncation=limit is not None, max_length=limit).input_ids
            bound = output_bound(max(map(len, ids)), max_new_tokens, max_len_a, max_len_b) - forced_eos
            results = self.translator.translate_batch(
                [self.tokenizer.convert_ids_to_tokens(x) for x in ids],
                beam_size=beam_size,
                length_penalty=length_penalty,
                max_decoding_length=max(1, bound),
                max_batch_size=batch_size,
            )
            for i, result in zip(idx, results):
                tokens = self.tokenizer.convert_tokens_to_ids(result.hypotheses[0])
                out[i] = self.tokenizer.decode(tokens, skip_special_tokens=True).strip()
        return out


def main(argv: list[str] | None = None) -> None:
    """``scripts/export_ct2.py MODEL OUT [--quantization int8] [--force]``."""
    import argparse

    p = argparse.ArgumentParser(description="Convert a trained model (a run's final/) to CTranslate2.")
    p.add_argument("model", help="A save_pretrained model folder (a run's final/, or export_model.py's output).")
    p.add_argument("out", help="The CTranslate2 folder to write.")
    p.add_argument("--quantization", default="int8", help=f"One of {', '.join(QUANTIZATIONS)} (default: int8).")
    p.add_argument("--force", action="store_true", help="Replace OUT if it exists.")
    args = p.parse_args(argv)
    out = export_ct2(args.model, args.out, args.quantization, force=args.force)
    print(f"CTranslate2 model ({args.quantization}) in {out}; translate with scripts/translate.py --engine ct2")
