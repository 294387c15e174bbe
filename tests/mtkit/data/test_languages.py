"""Languages of each model family, on tiny stand-ins of the Hub's families (real tokenizer classes, tests/families.py):
the codes read from each tokenizer, pairs tokenized with their own target language (checked against the tokenizer
called directly with that language set), the collator's decoder inputs against transformers' own shift, and the
one-line refusals."""

import pickle

import pytest
import torch
from families import FAMILY_LANG_CODES, TGT_LANG_ARG
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from mtkit.config import DataConfig
from mtkit.data.batching import Seq2SeqCollator
from mtkit.data.languages import ModelLanguages, check_code
from mtkit.errors import UserError

SOURCES = ["A man is walking his dog.", "Two children play in the park.", "The doctor said she was tired."]
TARGETS = ["Ein Mann geht mit seinem Hund.", "Dos niños juegan en el parque.", "Die Ärztin sagte, sie sei müde."]
LANGS = ["de", "es", "de"]

CODED = ("marian_multi", "marian_mul", "m2m100", "nllb", "mbart50", "mt5")


@pytest.mark.parametrize("family", [*CODED, "marian", "flan_t5"])
def test_codes_are_read_from_the_tokenizer(family, family_dir):
    tok = AutoTokenizer.from_pretrained(family_dir(family))
    languages = ModelLanguages.of(tok, family)
    for iso, token in FAMILY_LANG_CODES[family].items():
        assert languages.token(iso) == token
    assert (languages.family is not None) == bool(FAMILY_LANG_CODES[family])
    assert languages.only_target == ("de" if family == "marian" else None)


@pytest.mark.parametrize("family", ["m2m100", "nllb", "mbart50"])
def test_each_label_row_starts_with_its_own_target_code(family, family_dir):
    """A batch of German and Spanish pairs: each row as the tokenizer makes it with that pair's languages set."""
    tok = AutoTokenizer.from_pretrained(family_dir(family))
    src, tgt = ModelLanguages.of(tok).encode_pairs(tok, SOURCES, TARGETS, LANGS, "en")
    codes = FAMILY_LANG_CODES[family]
    direct = AutoTokenizer.from_pretrained(family_dir(family))
    for s, t, source, target, lang in zip(src, tgt, SOURCES, TARGETS, LANGS):
        direct.src_lang, direct.tgt_lang = TGT_LANG_ARG[family]["en"], TGT_LANG_ARG[family][lang]
        assert t == direct(text_target=target)["input_ids"]
        assert s == direct(source)["input_ids"]
        assert direct.convert_ids_to_tokens(t[0]) == codes[lang]
        assert direct.convert_ids_to_tokens(s[0]) == codes["en"]


@pytest.mark.parametrize("family", ["marian_multi", "marian_mul", "mt5"])
def test_source_prefix_families_read_the_code_first(family, family_dir):
    tok = AutoTokenizer.from_pretrained(family_dir(family))
    src, tgt = ModelLanguages.of(tok).encode_pairs(tok, SOURCES, TARGETS, LANGS, "en")
    for s, t, source, target, lang in zip(src, tgt, SOURCES, TARGETS, LANGS):
        code = FAMILY_LANG_CODES[family][lang]
        assert [piece for piece in tok.convert_ids_to_tokens(s) if piece != "▁"][0] == code  # T5: a space before
        assert s == tok(f"{code} {source}")["input_ids"]
        assert t == tok(text_target=target)["input_ids"]


@pytest.mark.parametrize("family", ["marian", "marian_multi", "m2m100"])
def test_slow_tokenizers_tokenize_into_the_cache(family, family_dir, tmp_path):
    """Marian and M2M100 have slow tokenizers only (no backend_tokenizer to fingerprint): cached, and read back."""
    from datasets import Dataset

    from mtkit.data.preprocess import tokenize_split

    tok = AutoTokenizer.from_pretrained(family_dir(family))
    assert not tok.is_fast
    split = Dataset.from_dict({"source": SOURCES, "target": TARGETS, "lang": ["de"] * 3})
    first = tokenize_split(split, tok, DataConfig(), tmp_path, "train")
    again = tokenize_split(split, AutoTokenizer.from_pretrained(family_dir(family)), DataConfig(), tmp_path, "train")
    assert len(list(tmp_path.glob("train-*.arrow"))) == 1
    assert first["labels"] == again["labels"] == [tok(text_target=t)["input_ids"] for t in TARGETS]


@pytest.mark.parametrize("family", ["marian", "m2m100", "nllb", "mbart50", "mt5", "flan_t5"])
def test_collator_shifts_labels_behind_the_models_decoder_start(family, family_dir):
    """decoder_input_ids are transformers' shift of the labels with the model's own start token, and the loss on
    them equals the model's own loss from labels."""
    from transformers.models.bart.modeling_bart import shift_tokens_right

    folder = family_dir(family)
    tok, model = AutoTokenizer.from_pretrained(folder), AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    src, tgt = ModelLanguages.of(tok).encode_pairs(tok, SOURCES, TARGETS, LANGS, "en")
    collator = Seq2SeqCollator.for_model(tok, model, pad_to_multiple_of=8)
    assert len(pickle.dumps(collator)) < 500  # two ids: cheap to send to data-loader workers
    batch = collator([{"input_ids": s, "attention_mask": [1] * len(s), "labels": t} for s, t in zip(src, tgt)])
    start = model.config.decoder_start_token_id
    assert torch.equal(batch["decoder_input_ids"], shift_tokens_right(batch["labels"], tok.pad_token_id, start))
    assert batch["input_ids"].shape[1] % 8 == 0 and batch["stats"]["tgt_tokens"] == sum(map(len, tgt))
    with torch.no_grad():
        own = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"]).loss
        logits = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            decoder_input_ids=batch["decoder_input_ids"],
        ).logits
    mine = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
    assert torch.allclose(own, mine, atol=1e-5)


def test_refusals_name_the_model_the_language_and_the_codes(family_dir):
    nllb = ModelLanguages.of(AutoTokenizer.from_pretrained(family_dir("nllb")), "my-nllb")
    with pytest.raises(UserError, match=r"--target_lang: my-nllb has no language code for 'kl' \(NLLB-200 codes: "):
        nllb.check("kl")
    mbart = ModelLanguages.of(AutoTokenizer.from_pretrained(family_dir("mbart50")), "my-mbart")
    with pytest.raises(UserError, match=r"no language code for 'da' \(mBART-50 codes: af \(af_ZA\)"):
        mbart.check("da")
    marian = ModelLanguages.of(AutoTokenizer.from_pretrained(family_dir("marian")), "opus-mt-en-de")
    assert marian.check("de") == "de"
    with pytest.raises(UserError, match="opus-mt-en-de is a single-target model .*de only.*cannot write es"):
        marian.check("es")
    for bad in ("spanish", "Spanish", "de,es", "", "und", "qaa"):
        with pytest.raises(UserError, match="is not a language code"):
            check_code(bad)
    codes = ("de", "pt_BR", "zh-Hant", "DE", "ger", "nob", "chi", "PT-br")
    assert [check_code(code) for code in codes] == ["de", "pt-BR", "zh-Hant", "de", "de", "nb", "zh", "pt-BR"]


def test_the_vocabulary_is_read_once_per_tokenizer_until_it_grows(family_dir):
    """Training asks at every evaluation: the second ask reads no vocabulary; added language tokens are seen."""
    tok = AutoTokenizer.from_pretrained(family_dir("nllb"))
    reads = []
    real = tok.get_vocab
    tok.get_vocab = lambda: reads.append(1) or real()
    first, second = ModelLanguages.of(tok, "a"), ModelLanguages.of(tok, "b")
    assert len(reads) == 1
    assert (second.model, second.codes, second.family) == ("b", first.codes, first.family)
    assert second.token("de") == tok.convert_ids_to_tokens(tok.convert_tokens_to_ids("deu_Latn"))
    plain = AutoTokenizer.from_pretrained(family_dir("flan_t5"))
    assert ModelLanguages.of(plain).family is None
    plain.add_tokens(["__de__", "__fr__"], special_tokens=True)
    assert ModelLanguages.of(plain).token("fr") == "__fr__"


def test_a_split_without_languages_is_cached_per_target_language(family_dir, tmp_path):
    """Pairs without a lang column take --target_lang: another one is another cache, its labels its own code."""
    from datasets import Dataset

    from mtkit.data.preprocess import tokenize_split

    tok = AutoTokenizer.from_pretrained(family_dir("nllb"))
    split = Dataset.from_dict({"source": SOURCES[:2], "target": TARGETS[:2]})
    for lang in ("de", "es"):
        rows = tokenize_split(split, tok, DataConfig(target_lang=lang), tmp_path, "train")
        assert {labels[0] for labels in rows["labels"]} == {tok.convert_tokens_to_ids(FAMILY_LANG_CODES["nllb"][lang])}


def test_a_variant_token_is_found_under_any_spelling_of_its_tag():
    """A flag read into its one spelling (``pt-BR``) still finds a family's variant token written another way
    (Marian's ``>>pt_BR<<``), and the language alone its own token."""
    from mtkit.data.languages import FAMILIES

    marian = next(f for f in FAMILIES if f.name == "Marian")
    codes = {"es": ">>es<<", "pt": ">>por<<", "pt_BR": ">>pt_BR<<"}
    languages = ModelLanguages("multi", marian, codes)
    assert [languages.token(c) for c in ("pt-BR", "pt_BR", "PT_br", "pt", "por", "pt-PT", "ES")] == [
        ">>pt_BR<<", ">>pt_BR<<", ">>pt_BR<<", ">>por<<", ">>por<<", ">>por<<", ">>es<<"]  # fmt: skip
