"""Language tags (:mod:`bias_eval.core.langtag`): language, script and region read as BCP 47 orders them, any case,
``_`` or ``-``, against the registry (``langcodes``); every spelling of a language one tag; a region never taken for a
language; pairs read every way they can be."""

from __future__ import annotations

import langcodes
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.core.langtag import LanguageTag, base_language, pair_readings
from mtkit.errors import UserError

T = LanguageTag


@pytest.mark.parametrize(
    ("text", "tag"),
    [("de", T("de")), ("DE", T("de")), ("deu", T("de")), ("ZH-CN", T("zh", None, "CN")), ("PT-BR", T("pt", None, "BR")),
     ("EN-US", T("en", None, "US")), ("pt_br", T("pt", None, "BR")), ("zh_Hant", T("zh", "Hant")),
     ("zh-HANS-cn", T("zh", "Hans", "CN")), ("deu_Latn", T("de", "Latn")), ("es-419", T("es", None, "419")),
     ("cmn_Hans", T("zh", "Hans")), ("ast", T("ast")), ("br", T("br")), ("iw", T("he")), (" fr ", T("fr")),
     ("ger", T("de")), ("GER", T("de")), ("fre", T("fr")), ("chi", T("zh")), ("chi-HK", T("zh", None, "HK")),
     ("nob", T("nb")), ("NB", T("nb")), ("yue", T("yue")), ("sh", T("sr", "Latn")), ("arb", T("ar")),
     ("prs", T("fa", None, "AF")), ("cnr", T("sr", None, "ME")), ("prs_BR", T("fa", None, "BR"))],
)  # fmt: skip
def test_tags(text, tag):
    assert LanguageTag.parse(text) == tag


@pytest.mark.parametrize(
    "text",
    [
        "",
        "us",
        "cn",
        "german",
        "d",
        "de-",
        "de--DE",
        "de_DE_x",
        "de-Latn-Latn",
        "en/de",
        "en-de-at",
        "dé",
        "und",
        "mul",
        "zxx",
        "qaa",
        "qtz",
        "xx",
        "de-Qaaa",
        "de-ZZ",
        "de-XA",
        "de-Abcd",
        "en-x-foo",
        "zh-yue",
    ],
)
def test_what_is_no_language_is_refused_in_one_line(text):
    assert LanguageTag.read(text) is None
    with pytest.raises(UserError, match=rf"^--target_lang: {text!r} is not a language code \(a registered ISO 639"):
        LanguageTag.parse(text, "--target_lang")


def test_base_language_and_the_tables():
    assert [base_language(c) for c in ("zh-Hant", "zh_TW", "pt_BR", "deu_Latn", "", None, "xx")] == [
        "zh", "zh", "pt", "de", "", "", ""]  # fmt: skip


def test_the_script_a_tag_is_written_in():
    scripts = {code: LanguageTag.parse(code).written_script for code in ("yue", "zh", "zh-TW", "chi", "ja", "th", "de")}
    assert scripts == {"yue": "Hant", "zh": "Hans", "zh-TW": "Hant", "chi": "Hans", "ja": "Jpan", "th": "Thai",
                       "de": "Latn"}  # fmt: skip
    assert [LanguageTag.parse(c).spaced for c in ("de", "ko", "zh", "yue", "ja", "th", "zh-Latn")] == [
        True, True, False, False, False, False, True]  # fmt: skip


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


def _registry(kind: str) -> list[str]:
    """The IANA registry's subtags of ``kind`` (as ``langcodes`` ships it), private-use ranges and the special
    languages (und, mul, zxx, mis) left out."""
    from langcodes.registry_parser import parse_registry

    return sorted(
        item["Subtag"] for item in parse_registry()
        if item.get("Type") == kind and ".." not in item["Subtag"] and item.get("Scope") != "special"
        and "Private use" not in item.get("Description", [])
    )  # fmt: skip


LANGUAGES, SCRIPTS, REGIONS = _registry("language"), _registry("script"), _registry("region")
#: ISO 639-2/B and other aliases CLDR maps to a registered language
ALIASES = ["ger", "fre", "chi", "dut", "cze", "gre", "per", "rum", "slo", "wel", "alb", "arm", "baq", "bur", "ice"]


@st.composite
def spelled(draw):
    """A registered language (or an alias of one), maybe a registered script and region, spelled with any
    separators and any case."""
    parts = [draw(st.sampled_from(LANGUAGES) | st.sampled_from(ALIASES))]
    parts += [p for p in (draw(st.none() | st.sampled_from(SCRIPTS)), draw(st.none() | st.sampled_from(REGIONS))) if p]
    seps = [draw(st.sampled_from("_-")) for _ in parts[1:]]
    text = parts[0] + "".join(sep + part for sep, part in zip(seps, parts[1:]))
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in text)
    return parts, cased


@settings(max_examples=300)
@given(spelled())
def test_every_valid_tag_round_trips_through_its_one_spelling(drawn):
    parts, text = drawn
    tag = LanguageTag.parse(text)
    assert tag == LanguageTag.parse(text.lower()) == LanguageTag.parse(text.upper().replace("_", "-"))
    assert LanguageTag.parse(str(tag)) == tag  # round trip through its BCP 47 spelling
    assert str(tag) == str(tag).replace("_", "-")
    subtags = parts[1:]
    script = next((p for p in subtags if len(p) == 4), None)
    region = next((p for p in subtags if len(p) != 4), None)
    own = langcodes.Language.get(parts[0], normalize=True)  # the registry's reading of the language alone
    assert (tag.script, tag.region) == (script or own.script, region or own.territory)
    assert tag.base == own.prefer_macrolanguage().language == base_language(text)
    assert langcodes.tag_is_valid(str(tag))
