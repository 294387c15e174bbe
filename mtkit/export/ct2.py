"""Conversion of a ``save_pretrained`` model folder (BART, T5/mT5/MADLAD, MarianMT, M2M100/NLLB-200, mBART-50) to
CTranslate2, carrying what decoding needs from the original:
the tokenizer, ``generation_config.json`` (beam, length penalty, output bounds), ``prompt.json`` and
``mtkit_ct2.json`` (the source model, the quantization, the position limit and the self-check's figures). Float16
types are refused for T5-family models (:func:`mtkit.train.checks.check_float16`), and every conversion checks
itself against transformers before it is put in place (:mod:`mtkit.export.ct2_check`)."""

from __future__ import annotations

import json
import shutil
import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path

from mtkit.decode.bounds import position_limit
from mtkit.decode.ct2 import CARRIED, INFO
from mtkit.errors import UserError
from mtkit.export.ct2_check import CHECK_SAMPLES, check_sample, self_check
from mtkit.model.folders import check_pretrained_source
from mtkit.train.checks import AUTO, check_float16, check_quantization


def resolve(quantization: str) -> str:
    """``auto`` resolved on this machine: ``int8`` without a CUDA device (CTranslate2's fast CPU type),
    ``int8_bfloat16`` with one (int8 weights, the rest in bfloat16, which T5 models decode in); any other type as
    given."""
    if quantization != AUTO:
        return quantization
    import ctranslate2

    return "int8_bfloat16" if ctranslate2.get_cuda_device_count() > 0 else "int8"


def export_ct2(
    model_dir: str | Path,
    out: str | Path,
    quantization: str = AUTO,
    force: bool = False,
    *,
    force_fp16: bool = False,
    check_samples: int = CHECK_SAMPLES,
    check_source: str | Path | None = None,
    check_reference: str | Path | None = None,
    flag: str = "--quantization",
) -> Path:
    """Convert the ``save_pretrained`` model in ``model_dir`` to a CTranslate2 folder ``out`` (written to a
    temporary folder beside it and renamed at the end, so ``out`` is either complete or absent).

    ``quantization`` (``auto``: :func:`resolve`) float16 or int8_float16 is refused for a T5-family model unless
    ``force_fp16``. Before the rename, ``check_samples`` sentences (of ``check_source``, with ``check_reference``; by
    default the run's validation data or the built-in sample) are translated by both engines and compared
    (:func:`mtkit.export.ct2_check.self_check`); 0 skips that. ``flag`` names the quantization in errors."""
    import ctranslate2.converters
    from transformers import AutoConfig, AutoTokenizer

    model_dir, out = Path(model_dir), Path(out)
    check_quantization(quantization, flag)
    quantization = resolve(quantization)
    check_pretrained_source(str(model_dir), "MODEL", weights=True)  # no such folder, not seq2seq, corrupt weights
    if not (model_dir / "config.json").is_file():
        raise UserError(f"MODEL {model_dir}: not a model directory (no config.json there)")
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"--model: {model_dir}/config.json is not a JSON model config") from None
    check_float16(quantization, config, flag, force_fp16)
    if out.exists() and not force:
        raise UserError(f"--out: {out} exists (pass --force to replace it)")
    if check_samples < 0:
        raise UserError(f"--check_samples: must be >= 0, got {check_samples}")
    sample = check_sample(model_dir, check_samples, check_source, check_reference) if check_samples else None

    class Converter(ctranslate2.converters.TransformersConverter):
        def load_model(self, model_class, path, **kwargs):
            model = super().load_model(model_class, path, **kwargs)
            if model.config.model_type in ("bart", "mbart") and not hasattr(model.config, "normalize_before"):
                # the converter asks: transformers' BART is post-norm, mBART pre-norm
                model.config.normalize_before = model.config.model_type == "mbart"
            if model.config.model_type == "mbart" and getattr(model.config, "tokenizer_class", None) is None:
                # mBART-50 starts from </s>; the converter takes a config without a tokenizer class for mBART-25's
                model.config.tokenizer_class = type(AutoTokenizer.from_pretrained(str(path))).__name__
            return model

        def load_tokenizer(self, tokenizer_class, path, **kwargs):
            return _Vocabulary(super().load_tokenizer(tokenizer_class, path, **kwargs), config.get("vocab_size"))

    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with _own_vocabulary_marian() if _scratch_marian(config) else nullcontext():
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
        if sample is None:
            print("CTranslate2 self-check skipped (--check_samples 0): not compared with transformers", file=sys.stderr)
            info["check"] = None
        else:
            info["check"] = self_check(model_dir, tmp, sample, quantization, flag)
        (tmp / INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _scratch_marian(config: dict) -> bool:
    """Whether ``config`` is a MarianMT model without Marian's own vocabulary layout (padding last), as the post-norm
    sinusoidal layout trained from scratch (:mod:`mtkit.model.layouts`) is."""
    return config.get("model_type") == "marian" and config.get("pad_token_id") != config.get("vocab_size", 0) - 1


@contextmanager
def _own_vocabulary_marian():
    """CTranslate2's MarianMT converter assumes Marian's vocabulary: it drops the last row of the embeddings (the
    padding token there) and starts the decoder from a zero vector. A model with its padding elsewhere and its own
    decoder start token is converted, while this lasts, as its BART converter converts a post-norm model without an
    embedding norm (what the config's ``normalize_before`` and ``normalize_embedding`` say)."""
    from ctranslate2.converters import transformers as loaders

    class Loader(loaders.BartLoader):
        @property
        def architecture_name(self) -> str:
            return "MarianMTModel"

    saved = loaders._MODEL_LOADERS["MarianConfig"]
    loaders._MODEL_LOADERS["MarianConfig"] = Loader()
    try:
        yield
    finally:
        loaders._MODEL_LOADERS["MarianConfig"] = saved


class _Vocabulary:
    """A tokenizer as CTranslate2's converters read it, with M2M100's language tokens (``__de__``, kept outside the
    slow tokenizer's ``get_vocab``) in its vocabulary and the made-up words that fill the model's embedding table."""

    def __init__(self, tokenizer, vocab_size: int | None) -> None:
        self._tokenizer, self._vocab_size = tokenizer, vocab_size

    def __getattr__(self, name: str):
        return getattr(self._tokenizer, name)

    def get_vocab(self) -> dict[str, int]:
        vocab = dict(self._tokenizer.get_vocab())
        vocab.update(getattr(self._tokenizer, "lang_token_to_id", None) or {})
        return vocab

    @property
    def bos_token(self) -> str | None:  # mBART-50's tokenizer names <s> its cls token only
        return self._tokenizer.bos_token or getattr(self._tokenizer, "cls_token", None)

    @property
    def num_madeup_words(self) -> int:
        return max(0, (self._vocab_size or 0) - len(self.get_vocab()))
