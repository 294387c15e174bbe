"""Today's reports and comparisons against those the code made before ``bias_eval`` was rebuilt into subpackages (commit
e9f9d3a's parent, 2026-11-28), on real data: MT-GenEval dev German and French from files (the references as one
system; the other writes the masculine reference for every third feminine sentence) and WinoMT German (Google's
outputs; the other turns every fourth line's first "Die " into "Der "), 200 bootstrap resamples, each pair compared.

Slow tier (about 40 s of CPU: two languages' bootstrap and WinoMT's alignment; ``make test-all`` or ``pytest -m slow
tests/bias_eval/test_golden.py``): the default tier tests every figure against an independent computation, this one
that a restructure changes none. ``golden/`` holds what that code wrote, less each report's ``config`` (paths, the
command) and each comparison's sentences (its ``summary``, whose wording of p and of a lowered accuracy's interval
changed since on purpose: ``bias_eval.core.paired.p_relation``): every figure, interval and paired test must come out
the same."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from testing_utils import MTGENEVAL, WINOMT

import bias_eval
from bias_eval.mtgeneval.gendered import GENDERS
from bias_eval.winomt.data import load_winomt, read_translations
from mtkit.data.mtgeneval import load_mtgeneval

pytestmark = pytest.mark.slow
GOLDEN = Path(__file__).parent / "golden"
GOOGLE_DE = WINOMT / "translations" / "google" / "en-de.txt"


def _same(ours: Any, theirs: Any, where: str = "") -> None:
    """Equal, floats to 1e-12 relative (JSON's round trip)."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), (where, set(ours) ^ set(theirs))
        for key in theirs:
            _same(ours[key], theirs[key], f"{where}/{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float) and isinstance(ours, float):
        assert math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12), (where, ours, theirs)
    else:
        assert ours == theirs, (where, ours, theirs)


def _golden(name: str) -> Any:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


def _settings(name: str) -> bias_eval.ReportSettings:
    return bias_eval.ReportSettings(
        {"hyp_dir": name}, name, "cmd", options=bias_eval.ReportOptions(bootstrap_samples=200, seed=12345, name=name)
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not (MTGENEVAL / "sentences").is_dir() or not GOOGLE_DE.is_file():
        pytest.skip("the shared MT-GenEval and WinoMT data are not there")
    out = tmp_path_factory.mktemp("golden")
    data = load_mtgeneval(MTGENEVAL, "dev", ["de", "fr"])
    refs = {lang: {g: ld.side(g).references for g in GENDERS} for lang, ld in data.languages.items()}
    tuned = {lang: {"feminine": [m if i % 3 == 0 else f for i, (f, m) in enumerate(zip(r["feminine"], r["masculine"]))],
                    "masculine": r["masculine"]} for lang, r in refs.items()}  # fmt: skip
    found = {name: bias_eval.make_report(data, hyps, _settings(name), out / f"mt_{name}", log=None)
             for name, hyps in (("a", refs), ("b", tuned))}  # fmt: skip
    winomt = load_winomt(WINOMT)
    lines = GOOGLE_DE.read_text(encoding="utf-8").splitlines()
    worse = out / "worse.de.txt"
    worse.write_text("".join((line.replace("Die ", "Der ", 1) if i % 4 == 0 else line) + "\n"
                             for i, line in enumerate(lines)), encoding="utf-8")  # fmt: skip
    for name, path in (("a", GOOGLE_DE), ("b", worse)):
        translations = read_translations(path, winomt)
        found[f"w_{name}"] = bias_eval.make_report(winomt, {"de": translations}, _settings(name), out / f"w_{name}",
                                                   log=None)  # fmt: skip
    found["mt_cmp"] = bias_eval.compare_reports(found["a"], found["b"], ["a", "b"])
    found["w_cmp"] = bias_eval.compare_reports(found["w_a"], found["w_b"], ["a", "b"])
    return found


def test_mtgeneval_reports_and_their_comparison_are_as_before(made) -> None:
    for name in ("a", "b"):
        metrics = {k: v for k, v in made[name].metrics.items() if k != "config"}
        _same(json.loads(json.dumps(metrics)), _golden(f"mt_{name}.metrics.json"), f"mt_{name}")
    _same(json.loads(json.dumps(made["mt_cmp"].paired)), _golden("mt_cmp.paired.json"), "mt_cmp")


def test_winomt_reports_and_their_comparison_are_as_before(made) -> None:
    for name in ("a", "b"):
        metrics = made[f"w_{name}"].metrics["languages"]["de"]
        _same({k: v for k, v in metrics.items() if k != "config"}, _golden(f"w_{name}.metrics.json"), f"w_{name}")
    _same(json.loads(json.dumps(made["w_cmp"].paired)), _golden("w_cmp.paired.json"), "w_cmp")
