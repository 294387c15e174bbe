"""Language tags (:mod:`bias_eval.langtag`): language, script and region read as BCP 47 orders them, any case, ``_`` or
``-``; a region never taken for a language; pairs read every way they can be."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.langtag import ISO3, ISO_639_1, LanguageTag, base_language, pair_readings
from mtkit.errors import UserError

T = LanguageTag


@pytest.mark.parametrize(
    ("text", "tag"),
    [("de", T("de")), ("DE", T("de")), ("deu", T("de")), ("ZH-CN", T("zh", None, "CN")), ("PT-BR", T("pt", None, "BR")),
     ("EN-US", T("en", None, "US")), ("pt_br", T("pt", None, "BR")), ("zh_Hant", T("zh", "Hant")),
     ("zh-HANS-cn", T("zh", "Hans", "CN")), ("deu_Latn", T("de", "Latn")), ("es-419", T("es", None, "419")),
     ("cmn_Hans", T("zh", "Hans")), ("ast", T("ast")), ("br", T("br")), ("iw", T("he")), (" fr ", T("fr"))],
)  # fmt: skip
def test_tags(text, tag):
    assert LanguageTag.parse(text) == tag


@pytest.mark.parametrize(
    "text", ["", "us", "cn", "german", "d", "de-", "de--DE", "de_DE_x", "de-Latn-Latn", "en/de", "en-de-at", "dé"]
)
def test_what_is_no_language_is_refused_in_one_line(text):
    assert LanguageTag.read(text) is None
    with pytest.raises(UserError, match=rf"^--target_lang: {text!r} is not a language code \(ISO 639-1 or 639-3"):
        LanguageTag.parse(text, "--target_lang")


def test_base_language_and_the_tables():
    assert [base_language(c) for c in ("zh-Hant", "zh_TW", "pt_BR", "deu_Latn", "", None, "xx")] == [
        "zh", "zh", "pt", "de", "", "", ""]  # fmt: skip
    assert set(ISO3) <= ISO_639_1 and len(ISO_639_1) == 184  # 183 in force and bh


def test_covers_and_overlaps():
    pt, br, pt_pt = T("pt"), T("pt", None, "BR"), T("pt", None, "PT")
    assert pt.covers(br) and pt.covers(pt) and br.covers(br)
    assert not br.covers(pt) and not br.covers(pt_pt) and not T("es").covers(br)
    assert pt.overlaps(br) and not br.overlaps(pt_pt) and T("zh", "Hant").overlaps(T("zh", None, "TW"))
    assert not T("zh", "Hant").overlaps(T("zh", "Hans"))


def test_pairs_are_read_every_way_they_can_be():
    def read(text):
        return [(str(s), str(t)) for s, t in pair_readings(text)]

    assert read("en-de") == read("EN_DE") == [("en", "de")]
    assert read("eng_Latn-deu_Latn") == [("en-Latn", "de-Latn")]
    assert read("zh-CN-en") == [("zh-CN", "en")]  # cn is no language
    assert read("en-pt-BR") == [("en", "pt-BR"), ("en-PT", "br")]  # br is Breton
    assert read("de") == read("English-German") == []


LETTERS = "abcdefghijklmnopqrstuvwxyz"
bases = st.sampled_from(sorted(ISO_639_1)) | st.text(LETTERS, min_size=3, max_size=3)
scripts = st.none() | st.text(LETTERS, min_size=4, max_size=4)
regions = st.none() | st.text(LETTERS, min_size=2, max_size=2) | st.text("0123456789", min_size=3, max_size=3)


@st.composite
def spelled(draw):
    """A tag's subtags, and the tag spelled with any separators and any case."""
    parts = [p for p in (draw(bases), draw(scripts), draw(regions)) if p is not None]
    seps = [draw(st.sampled_from("_-")) for _ in parts[1:]]
    text = parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:]))
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in text)
    return parts, cased


@given(spelled())
def test_any_case_and_either_separator_read_the_same_tag(drawn):
    parts, text = drawn
    tag = LanguageTag.parse(text)
    assert tag == LanguageTag.parse(text.lower()) == LanguageTag.parse(text.upper().replace("_", "-"))
    assert LanguageTag.parse(str(tag)) == tag  # round trip through its BCP 47 spelling
    assert str(tag) == str(tag).replace("_", "-") and str(tag).count("-") == len(parts) - 1
    subtags = parts[1:]
    script = next((p for p in subtags if len(p) == 4), None)
    region = next((p for p in subtags if len(p) != 4), None)
    assert (tag.script, tag.region) == (script and script.title(), region and region.upper())
    assert tag.base == LanguageTag.parse(parts[0]).base and tag.base == base_language(text)
