"""The languages WinoMT is scored for (bias_eval.winomt.languages): tags read case-insensitively, the refused ones in
one line."""

from __future__ import annotations

import pytest

from bias_eval.errors import UserError
from bias_eval.winomt.languages import LANGUAGES, REFUSED, check_language


@pytest.mark.parametrize(("tag", "code"), [("DE", "de"), ("deu", "de"), ("It", "it"), ("ukr", "uk"), ("ru", "ru")])
def test_tags_are_read_case_insensitively(tag: str, code: str) -> None:
    assert check_language(tag) == code


def test_the_benchmarks_eight_languages_are_scored_or_refused_with_a_reason() -> None:
    assert set(LANGUAGES) | set(REFUSED) == {"es", "fr", "it", "ru", "uk", "he", "ar", "de"}
    for lang in REFUSED:
        with pytest.raises(UserError, match=rf"^--target_lang {lang}: not scored on WinoMT: the benchmark reads") as e:
            check_language(lang)
        assert "\n" not in str(e.value)


def test_other_languages_refused_in_one_line() -> None:
    with pytest.raises(UserError, match=r"^--target_lang pt: WinoMT is scored for de, es, fr, it, ru, uk only$"):
        check_language("pt")
    with pytest.raises(UserError, match=r"^--target_lang: 'xx-1' is not a language code"):
        check_language("xx-1")
