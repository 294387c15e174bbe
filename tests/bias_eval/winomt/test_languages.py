"""The languages WinoMT is scored for (bias_eval.winomt.languages): the benchmark's eight, tags read
case-insensitively, any other language refused in one line."""

from __future__ import annotations

import pytest

from bias_eval.core.errors import UserError
from bias_eval.winomt.languages import LANGUAGES, check_language


@pytest.mark.parametrize(("tag", "code"), [("DE", "de"), ("deu", "de"), ("It", "it"), ("ukr", "uk"), ("heb", "he")])
def test_tags_are_read_case_insensitively(tag: str, code: str) -> None:
    assert check_language(tag) == code


def test_the_benchmarks_eight_languages_are_scored() -> None:
    assert sorted(LANGUAGES) == sorted(["es", "fr", "it", "ru", "uk", "he", "ar", "de"])


def test_other_languages_refused_in_one_line() -> None:
    with pytest.raises(
        UserError, match=r"^--target_lang pt: WinoMT is scored for de, es, fr, it, ru, uk, he, ar only$"
    ):
        check_language("pt")
    with pytest.raises(UserError, match=r"^--target_lang: 'xx-1' is not a language code"):
        check_language("xx-1")
