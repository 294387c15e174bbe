"""bias_eval's two calls for either benchmark (bias_eval.benchmarks): what each refuses in one line before anything is
written. The reports each makes are checked figure by figure in tests/bias_eval/mtgeneval/test_make_report.py
(MT-GenEval) and tests/bias_eval/compare/test_winomt.py (a WinoMT set made by the same call)."""

from __future__ import annotations

from pathlib import Path

import pytest
from testing_utils import WINOMT

import bias_eval
from bias_eval.core.errors import UserError
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportOptions, ReportSettings
from bias_eval.winomt.data import load_winomt


def test_winomt_hypotheses_must_be_each_language_s_translations(tmp_path: Path) -> None:
    if not (WINOMT / "en.txt").is_file():
        pytest.skip(f"{WINOMT} is not there")
    settings = ReportSettings({"hyp_file": "x"}, "x", "cmd", options=ReportOptions(bootstrap_samples=0))
    for given in ({}, {"de": ["Der Arzt kam."]}):
        with pytest.raises(UserError, match="WinoMT: give each language's Translations") as err:
            bias_eval.make_report(load_winomt(WINOMT), given, settings, tmp_path / "out", log=None)
        assert "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()


def test_two_benchmarks_are_not_compared(tmp_path: Path) -> None:
    mtgeneval = {"languages": {"de": {}}, "macro": {}}
    winomt = {"benchmark": "winomt", "language": "de"}
    for before, after, said in ((mtgeneval, winomt, "a winomt report"), (winomt, mtgeneval, "a mtgeneval report")):
        with pytest.raises(UserError, match=f"AFTER: {said} cannot be compared") as err:
            bias_eval.compare_reports(Report(before, tmp_path), Report(after, tmp_path), ["a", "b"], tmp_path / "cmp")
        assert "\n" not in str(err.value)
    assert not (tmp_path / "cmp").exists()
