"""The family fixtures (tests/families.py) behave like the hub checkpoints they stand for, checked against the
libraries called directly: the real tokenizer and model classes come back from the Auto classes, language codes sit
where the real tokenizers put them (the text between them is exactly what the saved sentencepiece model gives),
every code maps to one id and back, the special ids and generation configs follow the hub's, ``generate`` and
CTranslate2 run and emit the forced target token. The expectations here are written from the hub checkpoints and
transformers' own language lists, not read from families.py."""

from __future__ import annotations

import json

import pytest
import sentencepiece as spm
import torch
import transformers
from families import FAMILIES, MORE_FAMILIES, build_family
from testing_utils import MTGENEVAL
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, GenerationConfig

#: family -> (tokenizer class, model class, model_type, is_fast) as AutoTokenizer/AutoModelForSeq2SeqLM give them
#: for the hub checkpoint in transformers 5.
CLASSES = {
    "marian": ("MarianTokenizer", "MarianMTModel", "marian", False),
    "marian_multi": ("MarianTokenizer", "MarianMTModel", "marian", False),
    "marian_mul": ("MarianTokenizer", "MarianMTModel", "marian", False),
    "m2m100": ("M2M100Tokenizer", "M2M100ForConditionalGeneration", "m2m_100", False),
    "nllb": ("NllbTokenizerFast", "M2M100ForConditionalGeneration", "m2m_100", True),
    "mbart50": ("MBart50TokenizerFast", "MBartForConditionalGeneration", "mbart", True),
    "mt5": ("T5TokenizerFast", "MT5ForConditionalGeneration", "mt5", True),
    "flan_t5": ("T5TokenizerFast", "T5ForConditionalGeneration", "t5", True),
}

#: The files of the hub checkout that the tokenizer class reads.
TOKENIZER_FILES = {
    "marian": {"source.spm", "target.spm", "vocab.json"},
    "marian_multi": {"source.spm", "target.spm", "vocab.json"},
    "marian_mul": {"source.spm", "target.spm", "vocab.json"},
    "m2m100": {"sentencepiece.bpe.model", "vocab.json"},
    "nllb": {"sentencepiece.bpe.model", "tokenizer.json"},
    "mbart50": {"sentencepiece.bpe.model", "tokenizer.json"},
    "mt5": {"spiece.model", "tokenizer.json"},
    "flan_t5": {"spiece.model", "tokenizer.json"},
}

NLLB = {"en": "eng_Latn", "de": "deu_Latn", "es": "spa_Latn", "fr": "fra_Latn", "it": "ita_Latn", "pt": "por_Latn"}
MBART50 = {"en": "en_XX", "de": "de_DE", "es": "es_XX", "fr": "fr_XX", "it": "it_IT", "pt": "pt_XX"}
TARGETS = ("de", "es")
#: The multi-target Marian tokens: opus-mt-en-ROMANCE's ISO 639-1, opus-mt-en-mul's ISO 639-3.
MARIAN_CODES = {
    "marian_multi": {"de": ">>de<<", "es": ">>es<<", "fr": ">>fr<<", "it": ">>it<<", "pt": ">>pt<<"},
    "marian_mul": {"de": ">>deu<<", "es": ">>spa<<", "fr": ">>fra<<", "it": ">>ita<<", "pt": ">>por<<"},
}
ALL = (*FAMILIES, *MORE_FAMILIES)


def _all_codes(family: str) -> list[str]:
    """Every language token the real tokenizer of ``family`` knows, from transformers' own lists."""
    if family == "nllb":
        from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES

        return list(FAIRSEQ_LANGUAGE_CODES)
    if family == "mbart50":
        from transformers.models.mbart50.tokenization_mbart50 import FAIRSEQ_LANGUAGE_CODES

        return list(FAIRSEQ_LANGUAGE_CODES)
    from transformers.models.m2m_100.tokenization_m2m_100 import FAIRSEQ_LANGUAGE_CODES

    return [f"__{code}__" for code in FAIRSEQ_LANGUAGE_CODES["m2m100"]]


def _lines(lang: str, n: int = 3) -> list[str]:
    """Real MT-GenEval sentences in ``lang`` (English: the sources of the en-de pairs)."""
    dev = MTGENEVAL / "sentences" / "dev"
    path = dev / (
        "geneval-sentences-feminine-dev.en_de.en"
        if lang == "en"
        else f"geneval-sentences-masculine-dev.en_{lang}.{lang}"
    )
    return path.read_text(encoding="utf-8").splitlines()[:n]


def _pieces(model_file, text: str) -> list[str]:
    """``text`` split by the sentencepiece model itself (characters it does not know: ``<unk>``)."""
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    return [sp.id_to_piece(i) for i in sp.encode(text)]


def _marian_pieces(folder, side: str, text: str) -> list[str]:
    """What opus-mt does: ``text`` split by the side's sentencepiece model, each piece looked up in the joint
    vocab.json (a piece it lacks is ``<unk>``)."""
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    pieces = spm.SentencePieceProcessor(model_file=str(folder / f"{side}.spm")).encode(text, out_type=str)
    return [piece if piece in vocab else "<unk>" for piece in pieces]


@pytest.fixture(scope="module")
def loaded(family_dir):
    """``loaded(family)``: (folder, tokenizer, model) of the family fixture, loaded once per module."""
    cache: dict[str, tuple] = {}

    def get(family: str):
        if family not in cache:
            path = family_dir(family)
            cache[family] = (path, AutoTokenizer.from_pretrained(path), AutoModelForSeq2SeqLM.from_pretrained(path))
        return cache[family]

    return get


@pytest.mark.parametrize("family", ALL)
def test_auto_classes_give_the_real_tokenizer_and_architecture(loaded, family):
    path, tok, model = loaded(family)
    tok_class, model_class, model_type, fast = CLASSES[family]
    assert type(tok) is getattr(transformers, tok_class)
    assert type(model) is getattr(transformers, model_class) and model.config.model_type == model_type
    assert tok.is_fast is fast
    assert TOKENIZER_FILES[family] <= {p.name for p in path.iterdir()}
    assert json.loads((path / "config.json").read_text())["architectures"] == [model_class]
    # The embeddings cover every id the tokenizer can produce, and the ids of the special tokens agree.
    assert max(tok.get_vocab().values()) < model.config.vocab_size
    assert (model.config.pad_token_id, model.config.eos_token_id) == (tok.pad_token_id, tok.eos_token_id)


@pytest.mark.parametrize("family", ALL)
def test_generation_config_follows_the_hub(loaded, family):
    path, tok, model = loaded(family)
    gen = GenerationConfig.from_pretrained(path)
    assert gen.decoder_start_token_id == model.config.decoder_start_token_id
    assert gen.forced_bos_token_id is None  # no hub checkpoint forces a language by itself
    pad, eos = tok.pad_token_id, tok.eos_token_id
    if family.startswith("marian"):
        # opus-mt: </s> is id 0, <pad> the last id and the decoder's start, never generated.
        assert (eos, pad) == (0, model.config.vocab_size - 1) and tok.convert_ids_to_tokens(0) == "</s>"
        assert gen.decoder_start_token_id == pad and gen.bad_words_ids == [[pad]]
        assert (gen.forced_eos_token_id, gen.num_beams, gen.max_length) == (eos, 4, 512)
    elif family in ("m2m100", "nllb", "mbart50"):
        # fairseq dictionaries: <s> 0, <pad> 1, </s> 2, <unk> 3; decoding starts with </s>.
        assert tok.convert_ids_to_tokens([0, 1, 2, 3]) == ["<s>", "<pad>", "</s>", "<unk>"]
        assert (gen.bos_token_id, gen.pad_token_id, gen.eos_token_id, gen.decoder_start_token_id) == (0, 1, 2, 2)
        assert gen.max_length == 200
        beams = {"m2m100": 5, "nllb": 1, "mbart50": 5}[family]
        assert (gen.num_beams or 1) == beams and bool(gen.early_stopping) == (beams > 1)  # unset: None
        assert gen.forced_eos_token_id == (2 if family == "mbart50" else None)
    else:
        # T5: <pad> 0 starts decoding, </s> 1 ends it, <unk> 2.
        assert tok.convert_ids_to_tokens([0, 1, 2]) == ["<pad>", "</s>", "<unk>"]
        assert (gen.decoder_start_token_id, gen.pad_token_id, gen.eos_token_id) == (0, 0, 1)
    if family == "m2m100":  # the hub's 128112 = dictionary + 100 language tokens + 8 made-up words
        assert model.config.vocab_size == len(tok) + 8
    elif family in ("mt5", "flan_t5"):  # flan-t5: 32100 tokens, 32128 embeddings
        assert model.config.vocab_size % 128 == 0 and 0 < model.config.vocab_size - len(tok) < 128
    else:
        assert model.config.vocab_size == len(tok)


@pytest.mark.parametrize("family", ["nllb", "mbart50", "m2m100"])
@pytest.mark.parametrize("target", TARGETS)
def test_fairseq_tokenizers_put_the_codes_where_the_real_ones_do(loaded, family, target):
    path, _, _ = loaded(family)
    codes = {"nllb": NLLB, "mbart50": MBART50, "m2m100": {lang: lang for lang in NLLB}}[family]
    token = {"m2m100": f"__{target}__"}.get(family, codes[target])
    src_token = {"m2m100": "__en__"}.get(family, codes["en"])
    tok = AutoTokenizer.from_pretrained(path, src_lang=codes["en"], tgt_lang=codes[target])
    for src, tgt in zip(_lines("en"), _lines(target)):
        enc = tok(src, text_target=tgt)
        source, labels = tok.convert_ids_to_tokens(enc["input_ids"]), tok.convert_ids_to_tokens(enc["labels"])
        spm_file = path / "sentencepiece.bpe.model"
        assert source == [src_token, *_pieces(spm_file, src), "</s>"]
        assert labels == [token, *_pieces(spm_file, tgt), "</s>"]
        assert tok.decode(enc["labels"], skip_special_tokens=True) == tgt  # the code is special: dropped
    if family == "nllb":  # the pre-2023 layout: the code after </s>
        legacy = AutoTokenizer.from_pretrained(path, src_lang="eng_Latn", legacy_behaviour=True)
        src = _lines("en")[0]
        assert legacy.convert_ids_to_tokens(legacy(src)["input_ids"]) == [*_pieces(spm_file, src), "</s>", "eng_Latn"]


@pytest.mark.parametrize("family", ["marian", "marian_multi", "marian_mul", "mt5", "flan_t5"])
def test_prompted_and_one_target_families_encode_like_their_sentencepiece_models(loaded, family):
    path, tok, _ = loaded(family)
    marian = family.startswith("marian")
    for target in TARGETS if family != "marian" else ("de",):
        for src, tgt in zip(_lines("en"), _lines(target)):
            if family in MARIAN_CODES:  # the target's token opens the source, the labels carry no code
                code = MARIAN_CODES[family][target]
                text, expected = f"{code} {src}", [code, *_marian_pieces(path, "source", src)]
            elif family == "mt5":  # MADLAD's <2xx> is a piece of its sentencepiece model
                text = f"<2{target}> {src}"
                expected = _pieces(path / "spiece.model", text)
                assert f"<2{target}>" in expected[:2]
            elif family == "flan_t5":
                text = f"Translate English to German: {src}"
                expected = _pieces(path / "spiece.model", text)
            else:
                text, expected = src, _marian_pieces(path, "source", src)
            enc = tok(text, text_target=tgt)
            assert tok.convert_ids_to_tokens(enc["input_ids"]) == [*expected, "</s>"]
            labels = _marian_pieces(path, "target", tgt) if marian else _pieces(path / "spiece.model", tgt)
            assert tok.convert_ids_to_tokens(enc["labels"]) == [*labels, "</s>"]


@pytest.mark.parametrize("family", ["nllb", "mbart50", "m2m100", "marian_multi", "marian_mul", "mt5"])
def test_language_tokens_map_to_one_id_and_back(loaded, family):
    _, tok, model = loaded(family)
    if family in MARIAN_CODES:
        codes = list(MARIAN_CODES[family].values())
        assert set(codes) <= set(tok.supported_language_codes)  # what MarianTokenizer reads from vocab.json
    elif family == "mt5":
        codes = [f"<2{lang}>" for lang in ("en", "de", "es", "fr", "it", "pt")]
    else:
        codes = _all_codes(family)
        assert set(codes) <= set(tok.all_special_tokens)  # every real code, registered as special
    ids = tok.convert_tokens_to_ids(codes)
    assert tok.unk_token_id not in ids and len(set(ids)) == len(codes)
    assert tok.convert_ids_to_tokens(ids) == codes
    assert max(ids) < model.config.vocab_size


@pytest.mark.parametrize("family", ALL)
def test_generate_runs_and_emits_the_forced_target_token(loaded, family):
    _, tok, model = loaded(family)
    src = _lines("en", 2)
    forced = {}
    if family in ("nllb", "mbart50", "m2m100"):
        code = {"nllb": NLLB["es"], "mbart50": MBART50["es"], "m2m100": "__es__"}[family]
        forced = {"forced_bos_token_id": tok.convert_tokens_to_ids(code)}
    elif family in MARIAN_CODES:
        src = [f"{MARIAN_CODES[family]['es']} {s}" for s in src]
    elif family == "mt5":
        src = [f"<2es> {s}" for s in src]
    torch.manual_seed(0)
    out = model.generate(**tok(src, return_tensors="pt", padding=True), max_new_tokens=6, **forced)
    assert out.shape[0] == 2 and (out[:, 0] == model.config.decoder_start_token_id).all()
    if forced:
        assert (out[:, 1] == forced["forced_bos_token_id"]).all()
    if family.startswith("marian"):  # the generation config's bad_words_ids: <pad> only starts the output
        assert (out[:, 1:] != tok.pad_token_id).all()


@pytest.mark.parametrize("family", ["marian", "marian_multi", "m2m100", "nllb", "mbart50", "mt5", "flan_t5"])
def test_ctranslate2_converts_the_fixture_and_takes_the_target_code_as_prefix(loaded, family, tmp_path):
    ctranslate2 = pytest.importorskip("ctranslate2")
    path, _, _ = loaded(family)
    ctranslate2.converters.TransformersConverter(str(path)).convert(str(tmp_path / "ct2"))
    src_lang, code = {"nllb": ("eng_Latn", "spa_Latn"), "mbart50": ("en_XX", "es_XX"), "m2m100": ("en", "__es__")}.get(
        family, (None, None)
    )
    tok = AutoTokenizer.from_pretrained(path, **({"src_lang": src_lang} if src_lang else {}))
    prompt = {"marian_multi": ">>es<< ", "mt5": "<2es> "}.get(family, "")
    source = tok.convert_ids_to_tokens(tok(prompt + _lines("en", 1)[0])["input_ids"])
    result = ctranslate2.Translator(str(tmp_path / "ct2")).translate_batch(
        [source], target_prefix=[[code]] if code else None, max_decoding_length=6
    )
    hypothesis = result[0].hypotheses[0]
    assert hypothesis and (hypothesis[0] == code if code else True)


def test_build_rejects_unknown_families_and_languages(tmp_path):
    with pytest.raises(ValueError, match="unknown family"):
        build_family("bart", tmp_path)
    with pytest.raises(ValueError, match="target_langs"):
        build_family("nllb", tmp_path, target_langs=("xx",))
