"""Tiny, offline stand-ins for the Hub's translation-model families, each as a user gets it from the Hub.

The Hub is unreachable in tests, so each family is rebuilt here with its REAL architecture and its REAL tokenizer
class, random weights (seed 0; d_model 32, one layer each side) and a sentencepiece model trained in about a second on
a few thousand lines of the shared Multi30k and MT-GenEval data. :func:`build_family` writes a folder laid out like a
hub checkout (``save_pretrained`` of model and tokenizer, ``generation_config.json``, the tokenizer's own files) whose
special-token ids, ``decoder_start_token_id`` and generation config are those of the checkpoint in :data:`HUB_IDS`;
tests/test_families.py checks all of it against transformers and CTranslate2 called directly.

============ ============================== ================================ ==================================
family       model class + tokenizer class  target language chosen by        ids and generation config (hub)
============ ============================== ================================ ==================================
marian       MarianMTModel +                the model (one target)           </s> 0, <pad> last = decoder start;
             MarianTokenizer (slow only)                                     bad_words_ids [[pad]], forced_eos,
marian_multi same                           ``>>es<<`` opening the source;   num_beams 4, max_length 512
                                            labels carry no code
m2m100       M2M100ForConditionalGeneration ``tgt_lang="de"`` -> ``__de__``   <s> 0 <pad> 1 </s> 2 <unk> 3,
             + M2M100Tokenizer (slow only)  starts the labels; generate:      decoder start </s>; num_beams 5,
                                            ``forced_bos_token_id``          max_length 200, early_stopping
nllb         M2M100ForConditionalGeneration ``tgt_lang="deu_Latn"``, same    same ids; max_length 200 only
             + NllbTokenizerFast                                             (no beams, no forced BOS)
mbart50      MBartForConditionalGeneration  ``tgt_lang="de_DE"``, same        same ids; forced_eos 2, num_beams 5,
             + MBart50TokenizerFast                                          max_length 200, early_stopping
mt5          MT5ForConditionalGeneration +  ``<2de>`` opening the source     <pad> 0 = decoder start, </s> 1,
             T5TokenizerFast                (MADLAD-400)                     <unk> 2; embeddings padded to a
                                                                             multiple of 128 past len(tok)
flan_t5      T5ForConditionalGeneration +   prompt text                      same
             T5TokenizerFast
============ ============================== ================================ ==================================

Source: ``[code] text </s>`` (NLLB, mBART-50, M2M100; NLLB's ``legacy_behaviour=True``: ``text </s> [code]``);
``>>es<< text`` / ``<2es> text`` written by the user (Marian multi-target, MADLAD). No hub generation config forces
the target language: ``generate`` needs ``forced_bos_token_id`` (NLLB, mBART-50, M2M100), CTranslate2
``target_prefix=[[code]]``.

API:

- :data:`FAMILIES`: the families above; :data:`MORE_FAMILIES`: ``marian_mul`` (opus-mt-en-mul style multi-target
  Marian whose tokens are ISO 639-3, ``>>deu<<``), built on request only.
- ``build_family(family, out, *, target_langs=("de", "es"))``: writes the checkout into ``out`` (created) and
  returns it. The source is English; ``target_langs`` (some of :data:`LANGS`) are the languages the target side of
  the sentencepiece model is trained on. One-target ``marian`` uses ``target_langs[0]`` only. The multilingual
  tokenizers carry ALL their real language codes whatever ``target_langs`` is (NLLB's 202, mBART-50's 52, M2M100's
  100); multi-target Marian vocabularies have a token for every language of :data:`LANGS` plus a few more
  (:data:`MARIAN_EXTRA_CODES`: ``>>pt_BR<<``-style variants for en-ROMANCE, none of them for ``>>en<<``); MADLAD's
  ``<2xx>`` exist for English and :data:`LANGS` and are pieces of the sentencepiece model (not added tokens), so
  ``"<2de> A man"`` encodes as ``▁ <2de> ▁A ▁man </s>``.
- ``FAMILY_LANG_CODES[family]``: ISO 639-1 code -> the TOKEN the family puts in sequences (``de`` -> ``deu_Latn``,
  ``de_DE``, ``__de__``, ``>>de<<``, ``>>deu<<``, ``<2de>``); empty for families without language tokens.
- ``TGT_LANG_ARG[family]``: ISO code -> what the tokenizer takes as ``src_lang``/``tgt_lang`` (M2M100: the bare
  ``"de"``; NLLB and mBART-50: the token itself).
- :data:`HUB_IDS`: the hub checkpoint each family imitates.
- ``training_lines(lang, n)``: the first ``n`` real sentences of one language from ../shared/data.

The conftest's session fixture ``family_dir(family, target_langs=("de", "es"))`` builds each folder once per test run
(all xdist workers share it). Quirks of transformers 5.23 the fixtures reproduce because the real checkpoints show
them too: ``len()`` of an M2M100 tokenizer counts the dictionary and the language tokens but not the 8 made-up
words the model's embeddings also have; MarianTokenizer has no fast version (no ``backend_tokenizer``) and warns
without sacremoses.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tempfile
from pathlib import Path

from testing_utils import MTGENEVAL, MULTI30K

FAMILIES: tuple[str, ...] = ("marian", "marian_multi", "m2m100", "nllb", "mbart50", "mt5", "flan_t5")

#: Built on request only: opus-mt-en-mul style Marian, whose target tokens are ISO 639-3 (``>>deu<<``).
MORE_FAMILIES: tuple[str, ...] = ("marian_mul",)

#: Target languages a fixture can be built for (English is the source).
LANGS: tuple[str, ...] = ("de", "es", "fr", "it", "pt")

HUB_IDS: dict[str, str] = {
    "marian": "Helsinki-NLP/opus-mt-en-de",
    "marian_multi": "Helsinki-NLP/opus-mt-en-ROMANCE",
    "marian_mul": "Helsinki-NLP/opus-mt-en-mul",
    "m2m100": "facebook/m2m100_418M",
    "nllb": "facebook/nllb-200-distilled-600M",
    "mbart50": "facebook/mbart-large-50-one-to-many-mmt",
    "mt5": "google/madlad400-3b-mt",
    "flan_t5": "google/flan-t5-small",
}

_NLLB = {"en": "eng_Latn", "de": "deu_Latn", "es": "spa_Latn", "fr": "fra_Latn", "it": "ita_Latn", "pt": "por_Latn"}
_MBART50 = {"en": "en_XX", "de": "de_DE", "es": "es_XX", "fr": "fr_XX", "it": "it_IT", "pt": "pt_XX"}
_ISO = ("en", *LANGS)

FAMILY_LANG_CODES: dict[str, dict[str, str]] = {
    "marian": {},
    "marian_multi": {lang: f">>{lang}<<" for lang in LANGS},
    "marian_mul": {"de": ">>deu<<", "es": ">>spa<<", "fr": ">>fra<<", "it": ">>ita<<", "pt": ">>por<<"},
    "m2m100": {lang: f"__{lang}__" for lang in _ISO},
    "nllb": _NLLB,
    "mbart50": _MBART50,
    "mt5": {lang: f"<2{lang}>" for lang in _ISO},
    "flan_t5": {},
}

TGT_LANG_ARG: dict[str, dict[str, str]] = {"m2m100": {lang: lang for lang in _ISO}, "nllb": _NLLB, "mbart50": _MBART50}

#: Language tokens a multi-target Marian vocabulary has besides those of :data:`LANGS` (as the real ones do).
MARIAN_EXTRA_CODES: dict[str, tuple[str, ...]] = {
    "marian_multi": (">>pt_BR<<", ">>es_AR<<", ">>fr_CA<<"),
    "marian_mul": (">>cat<<", ">>ron<<", ">>nld<<"),
}

#: Small enough to build in seconds, big enough to have every piece of the real architecture.
_DIMS = dict(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
             encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=256, dropout=0.0)  # fmt: skip
_T5_DIMS = dict(d_model=32, d_ff=64, d_kv=16, num_layers=1, num_decoder_layers=1, num_heads=2, dropout_rate=0.0)


def training_lines(lang: str, n: int) -> list[str]:
    """The first ``n`` sentences of ``lang`` in the shared data: Multi30k train for en/de/fr, MT-GenEval dev (both
    genders) for es/it/pt."""
    if lang in ("en", "de", "fr"):
        with gzip.open(MULTI30K / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            return [line.strip() for line, _ in zip(f, range(n))]
    dev = MTGENEVAL / "sentences" / "dev"
    lines = [
        line for gender in ("feminine", "masculine")
        for line in (dev / f"geneval-sentences-{gender}-dev.en_{lang}.{lang}").read_text(encoding="utf-8").splitlines()
    ]  # fmt: skip
    return lines[:n]


def _spm(lines: list[str], *, vocab_size: int, model_type: str, **options) -> bytes:
    """A sentencepiece model trained in memory (about a second on a few thousand lines; one thread: the same model
    on every run and every machine)."""
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, vocab_size=vocab_size, model_type=model_type,
        character_coverage=1.0, minloglevel=2, hard_vocab_limit=False, num_threads=1, **options,
    )  # fmt: skip
    return buf.getvalue()


def _corpus(target_langs: tuple[str, ...], n: int = 3000) -> list[str]:
    """``n`` lines, half English, the rest shared by the target languages."""
    per_target = max(1, n // 2 // len(target_langs))
    return training_lines("en", n // 2) + [line for lang in target_langs for line in training_lines(lang, per_target)]


def _fast_from_spm(cls, spm_path: Path, **kwargs):
    """A fast tokenizer of class ``cls`` converted from a sentencepiece model the way ``from_pretrained`` converts a
    hub folder that has only the ``.model`` file (the family's own converter reorders ids and adds its tokens)."""
    converted = cls._convert_from_sentencepiece(str(spm_path), {})
    converted.pop("additional_special_tokens", None)  # [] would drop the family's language codes
    return cls(**converted, **kwargs)


def _save_generation_config(model, out: Path, **settings) -> None:
    """``generation_config.json`` with exactly the hub checkpoint's settings."""
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(**settings)
    model.generation_config.save_pretrained(out)


def _marian(out: Path, target_langs: tuple[str, ...], codes: list[str]) -> None:
    """opus-mt; ``codes``: the multi-target model's language tokens (none: one target)."""
    import sentencepiece as spm
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    multi = bool(codes)
    targets = target_langs if multi else target_langs[:1]
    source = _spm(training_lines("en", 1500), vocab_size=600, model_type="unigram")
    target = _spm([line for lang in targets for line in training_lines(lang, 1500 // len(targets))],
                  vocab_size=600, model_type="unigram")  # fmt: skip
    work = Path(tempfile.mkdtemp())
    (work / "source.spm").write_bytes(source)
    (work / "target.spm").write_bytes(target)
    # opus-mt's joint vocab.json: </s> 0, <unk> 1, language tokens, the pieces of both spm models, <pad> last.
    vocab = {"</s>": 0, "<unk>": 1}
    for code in codes:
        vocab[code] = len(vocab)
    for model in (source, target):
        sp = spm.SentencePieceProcessor(model_proto=model)
        for i in range(sp.get_piece_size()):
            if not (sp.is_control(i) or sp.is_unknown(i)):
                vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = MarianTokenizer(str(work / "source.spm"), str(work / "target.spm"), str(work / "vocab.json"),
                          source_lang="en", target_lang=None if multi else targets[0])  # fmt: skip
    pad, eos = vocab["<pad>"], vocab["</s>"]
    config = MarianConfig(
        vocab_size=len(vocab), pad_token_id=pad, eos_token_id=eos, bos_token_id=0, decoder_start_token_id=pad,
        forced_eos_token_id=eos, scale_embedding=True, static_position_embeddings=True, activation_function="swish",
        share_encoder_decoder_embeddings=True, **_DIMS,
    )  # fmt: skip
    model = MarianMTModel(config)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    _save_generation_config(
        model, out, bad_words_ids=[[pad]], bos_token_id=0, decoder_start_token_id=pad, eos_token_id=eos,
        forced_eos_token_id=eos, max_length=512, num_beams=4, pad_token_id=pad, renormalize_logits=True,
    )  # fmt: skip
    shutil.rmtree(work)


def _m2m100(out: Path, target_langs: tuple[str, ...]) -> None:
    import sentencepiece as spm
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer
    from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

    model_proto = _spm(_corpus(target_langs), vocab_size=1000, model_type="bpe")
    work = Path(tempfile.mkdtemp())
    (work / "sentencepiece.bpe.model").write_bytes(model_proto)
    # fairseq's dictionary order: <s> <pad> </s> <unk>, then the pieces; language tokens come after it.
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    sp = spm.SentencePieceProcessor(model_proto=model_proto)
    for i in range(sp.get_piece_size()):
        if not (sp.is_control(i) or sp.is_unknown(i)):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    (work / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    # The hub's tokenizer_config.json lists the 100 language tokens as special tokens; without that list
    # transformers 5 leaves them unregistered (they still map to ids, but are neither special nor in len(tok)).
    codes = [f"__{code}__" for code in FAIRSEQ_LANGUAGE_CODES["m2m100"]]
    tok = M2M100Tokenizer(str(work / "vocab.json"), str(work / "sentencepiece.bpe.model"), src_lang="en",
                          model_max_length=1024, additional_special_tokens=codes)  # fmt: skip
    # As in the hub's config: the dictionary, its 100 language tokens (not counted by len(tok)), 8 made-up words.
    config = M2M100Config(
        vocab_size=tok.vocab_size + len(tok.lang_code_to_id) + tok.num_madeup_words, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, decoder_start_token_id=2, scale_embedding=True, activation_function="relu", **_DIMS,
    )  # fmt: skip
    model = M2M100ForConditionalGeneration(config)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    _save_generation_config(
        model, out, bos_token_id=0, decoder_start_token_id=2, early_stopping=True, eos_token_id=2, max_length=200,
        num_beams=5, pad_token_id=1,
    )  # fmt: skip
    shutil.rmtree(work)


def _fairseq_multilingual(out: Path, target_langs: tuple[str, ...], family: str) -> None:
    """NLLB-200 (M2M100 architecture) and mBART-50: fast tokenizers with every real language code, one spm file."""
    from transformers import (
        M2M100Config,
        M2M100ForConditionalGeneration,
        MBart50Tokenizer,
        MBartConfig,
        MBartForConditionalGeneration,
        NllbTokenizer,
    )

    nllb = family == "nllb"
    out.mkdir(parents=True, exist_ok=True)
    spm_path = out / "sentencepiece.bpe.model"  # the hub checkouts ship it next to tokenizer.json
    spm_path.write_bytes(_spm(_corpus(target_langs), vocab_size=1000, model_type="bpe" if nllb else "unigram"))
    if nllb:
        tok = _fast_from_spm(NllbTokenizer, spm_path, src_lang="eng_Latn", model_max_length=1024)
        config = M2M100Config(
            vocab_size=len(tok), pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
            scale_embedding=True, activation_function="relu", tokenizer_class="NllbTokenizer", **_DIMS,
        )  # fmt: skip
        model = M2M100ForConditionalGeneration(config)
        generation = dict(bos_token_id=0, decoder_start_token_id=2, eos_token_id=2, max_length=200, pad_token_id=1)
    else:
        # The hub's special_tokens_map.json names <s> as bos_token (MBart50Tokenizer's defaults leave it unset).
        tok = _fast_from_spm(MBart50Tokenizer, spm_path, src_lang="en_XX", model_max_length=1024, bos_token="<s>")
        config = MBartConfig(
            vocab_size=len(tok), pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
            forced_eos_token_id=2, scale_embedding=True, activation_function="gelu", normalize_before=True,
            add_final_layer_norm=True, normalize_embedding=True, static_position_embeddings=False,
            tokenizer_class="MBart50Tokenizer", **_DIMS,
        )  # fmt: skip
        model = MBartForConditionalGeneration(config)
        generation = dict(bos_token_id=0, decoder_start_token_id=2, early_stopping=True, eos_token_id=2,
                          forced_eos_token_id=2, max_length=200, num_beams=5, pad_token_id=1)  # fmt: skip
    model.save_pretrained(out)
    tok.save_pretrained(out)
    _save_generation_config(model, out, **generation)


def _t5(out: Path, target_langs: tuple[str, ...], family: str) -> None:
    from transformers import MT5Config, MT5ForConditionalGeneration, T5Config, T5ForConditionalGeneration, T5Tokenizer

    out.mkdir(parents=True, exist_ok=True)
    spm_path = out / "spiece.model"
    # T5's ids: <pad> 0, </s> 1, <unk> 2; MADLAD's <2xx> prompts are pieces of the sentencepiece model itself.
    prompts = [f"<2{lang}>" for lang in _ISO] if family == "mt5" else []
    spm_path.write_bytes(
        _spm(_corpus(target_langs), vocab_size=1000, model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
             user_defined_symbols=prompts)
    )  # fmt: skip
    tok = _fast_from_spm(T5Tokenizer, spm_path, model_max_length=512)
    ids = dict(pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    # T5's embeddings are padded to a multiple of 128 rows past the tokenizer (flan-t5: 32100 -> 32128, mT5: 250100
    # -> 250112): the model has ids no token maps to.
    dims = dict(vocab_size=-(-len(tok) // 128) * 128, feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    if family == "mt5":
        model = MT5ForConditionalGeneration(MT5Config(**dims, **ids, **_T5_DIMS))
    else:
        model = T5ForConditionalGeneration(T5Config(**dims, **ids, **_T5_DIMS))
    model.save_pretrained(out)
    tok.save_pretrained(out)
    _save_generation_config(model, out, **ids)


def build_family(family: str, out: Path, *, target_langs: tuple[str, ...] = ("de", "es")) -> Path:
    """A hub-like checkout of ``family`` (see the module docstring) in ``out``, with random weights (seed 0)."""
    import torch

    if family not in (*FAMILIES, *MORE_FAMILIES):
        raise ValueError(f"unknown family {family!r}; choose one of {', '.join((*FAMILIES, *MORE_FAMILIES))}")
    unknown = [lang for lang in target_langs if lang not in LANGS]
    if not target_langs or unknown:
        raise ValueError(f"target_langs must be some of {LANGS}, got {target_langs}")
    out = Path(out)
    torch.manual_seed(0)
    if family.startswith("marian"):
        _marian(out, tuple(target_langs), [*FAMILY_LANG_CODES[family].values(), *MARIAN_EXTRA_CODES.get(family, ())])
    elif family == "m2m100":
        _m2m100(out, tuple(target_langs))
    elif family in ("nllb", "mbart50"):
        _fairseq_multilingual(out, tuple(target_langs), family)
    else:
        _t5(out, tuple(target_langs), family)
    return out
