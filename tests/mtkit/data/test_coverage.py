"""The coverage measure against counts made without it: a unigram tokenizer trained on Latin-script text cannot write
Russian or Hindi (every Cyrillic or Devanagari character, and whatever else it maps to ``<unk>``), one trained on them
can; lossy decoding, word-level vocabularies, a byte-level tokenizer and the built-in letters of each language."""

from __future__ import annotations

import unicodedata
from collections import Counter

import pytest
from coverage_helpers import HINDI, RUSSIAN, latin_lines, unigram
from datasets import Dataset

from mtkit.data.coverage import (
    EXEMPLARS,
    check_coverage,
    check_language,
    exemplars,
    measure_coverage,
    target_samples,
)
from mtkit.errors import UserError

SCRIPTS = {"ru": (RUSSIAN, "CYRILLIC"), "hi": (HINDI, "DEVANAGARI")}


@pytest.fixture(scope="module")
def latin():
    return unigram(latin_lines())


@pytest.fixture(scope="module")
def covering():
    return unigram(latin_lines() + RUSSIAN + HINDI)


def independent_count(tokenizer, texts: list[str], script: str) -> tuple[int, Counter]:
    """Non-space characters, and those of ``script`` (by their Unicode name) or that the tokenizer maps to its unknown
    token on their own, with their counts."""
    chars = [c for text in texts for c in text if not c.isspace()]
    lost = Counter(
        c
        for c in chars
        if script in unicodedata.name(c, "")
        or tokenizer.unk_token_id in tokenizer(c, add_special_tokens=False).input_ids
    )
    return len(chars), lost


@pytest.mark.parametrize("lang", ["ru", "hi"])
def test_the_share_a_latin_tokenizer_cannot_write_is_counted_exactly(latin, lang):
    texts, script = SCRIPTS[lang]
    total, lost = independent_count(latin, texts, script)
    found = measure_coverage(latin, texts)
    assert (found.total, found.uncovered) == (total, sum(lost.values()))
    assert found.share == pytest.approx(sum(lost.values()) / total) and found.share > 0.9
    assert dict(found.missing) == dict(lost)
    assert [n for _, n in found.missing] == sorted(lost.values(), reverse=True)  # most frequent first


@pytest.mark.parametrize("lang", ["ru", "hi"])
def test_a_tokenizer_trained_with_the_language_covers_it(covering, lang):
    texts, _ = SCRIPTS[lang]
    assert measure_coverage(covering, texts).uncovered == 0
    assert check_coverage(covering, texts, lang, flag="--force", force=False).share == 0


def test_latin_text_the_latin_tokenizer_never_saw_is_covered(latin):
    held_out = latin_lines(1600)[1500:1600]  # English lines after those it learned from
    assert measure_coverage(latin, held_out).share < 0.01


def test_a_refusal_is_one_line_naming_the_language_share_examples_and_what_instead(latin, capsys):
    share = measure_coverage(latin, RUSSIAN).share
    with pytest.raises(UserError) as refused:
        check_coverage(latin, RUSSIAN, "ru", flag="--force", force=False, source="--model m")
    message = str(refused.value)
    assert "\n" not in message and message.startswith("--model m cannot write ")
    assert f"{share:.1%} of the ru reference characters" in message
    assert "'о'" in message  # the most frequent uncovered letter of these sentences
    assert "google/mt5-base" in message and "google/byt5-base" in message and "pass --force to go on" in message
    assert capsys.readouterr().err == ""

    assert check_coverage(latin, RUSSIAN, "ru", flag="--force", force=True).share == share
    warned = capsys.readouterr().err.splitlines()
    assert len(warned) == 1 and warned[0].startswith("warning: ") and "ru" in warned[0] and "(--force)" in warned[0]


def test_below_the_threshold_is_silent(latin, capsys):
    texts = latin_lines(20)[:20] + ["ж"]  # one uncovered character among some thousand
    found = check_coverage(latin, texts, "de", flag="--force", force=False)
    assert 0 < found.share < 0.01 and found.missing == (("ж", 1),)
    with pytest.raises(UserError):
        check_coverage(latin, texts, "de", flag="--force", force=False, threshold=found.share / 2)
    assert capsys.readouterr().err == ""


def test_nfkc_forms_are_covered_and_lossy_decoding_is_not(latin):
    assert measure_coverage(latin, ["Ｆｕｌｌ ｗｉｄｔｈ ﬁne"]).uncovered == 0  # written in their NFKC forms
    lowered = unigram(latin_lines())
    from tokenizers import normalizers

    lowered.backend_tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    text = "A Man In A Red Shirt Sits On A Bench."
    found = measure_coverage(lowered, [text])
    upper = Counter(c for c in text if c != c.lower())
    assert dict(found.missing) == dict(upper) and found.total == len(text.replace(" ", ""))


def test_a_word_level_vocabulary_loses_whole_unknown_words():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(["the cat sat"], trainers.WordLevelTrainer(special_tokens=["<unk>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    found = measure_coverage(tokenizer, ["the dog sat"])
    assert (found.total, found.uncovered) == (9, 3) and dict(found.missing) == {"d": 1, "o": 1, "g": 1}


def test_a_byte_level_tokenizer_without_offsets_covers_every_script():
    from transformers import ByT5Tokenizer

    bytes_ = ByT5Tokenizer()
    assert not bytes_.is_fast
    assert measure_coverage(bytes_, RUSSIAN + HINDI).uncovered == 0


def test_the_built_in_letters(latin, covering):
    assert exemplars("pt-BR") == exemplars("pt_br") == EXEMPLARS["pt"] and exemplars("xx") is None
    assert check_language(latin, "xx", flag="--force", force=False) is None
    assert check_language(latin, None, flag="--force", force=False) is None
    assert check_language(latin, "de", flag="--force", force=False).share == 0  # Multi30k has ä ö ü ß
    for lang in ("ru", "hi", "fr"):
        letters = EXEMPLARS[lang]
        unknown = [c for c in letters if latin.unk_token_id in latin(c, add_special_tokens=False).input_ids]
        assert check_language(latin, lang, flag="--force", force=True).share == pytest.approx(
            len(unknown) / len(letters)
        )
        with pytest.raises(UserError, match=f"of the letters of {lang} "):
            check_language(latin, lang, flag="--force", force=False)
    for lang in ("ru", "hi"):  # the test sentences hold every letter of the table
        assert check_language(covering, lang, flag="--force", force=False).share == 0


def test_target_samples_are_per_language_seeded_and_in_corpus_order():
    langs = ["de"] * 50 + ["ru"] * 7 + ["de"] * 50 + ["hi"] * 3
    split = Dataset.from_dict({"target": [f"{lang}{i}" for i, lang in enumerate(langs)], "lang": langs})
    split = split.select(range(len(split) - 1, -1, -1))  # an indices mapping, as a held-out split has
    samples = target_samples(split, n=20, seed=3)
    assert sorted(samples) == ["de", "hi", "ru"]
    assert [len(samples[lang]) for lang in ("de", "hi", "ru")] == [20, 3, 7]
    for lang, texts in samples.items():
        assert all(t.startswith(lang) for t in texts)
        order = [int(t[2:]) for t in texts]
        assert order == sorted(order, reverse=True)  # the split's order (here reversed)
    assert target_samples(split, n=20, seed=3) == samples and target_samples(split, n=20, seed=4) != samples
