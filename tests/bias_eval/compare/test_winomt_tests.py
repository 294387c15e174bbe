"""WinoMT's paired tests (bias_eval.compare.winomt_tests) on random judged lines of two systems: McNemar's counts
and p by the binomial sum, each system's F1, ΔG and ΔS by hand from the lines, and every bootstrap interval
excluding 0 exactly when its raw p is below 0.05."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.compare.winomt_tests import Judged, language_tests
from bias_eval.winomt.data import GOLD
from bias_eval.winomt.figures import CELLS
from bias_eval.winomt.gender import PREDICTIONS

#: one line: its gold gender, the two systems' predictions and the half of the benchmark it is in
LINE = st.tuples(st.sampled_from(GOLD), st.sampled_from(PREDICTIONS), st.sampled_from(PREDICTIONS),
                 st.sampled_from(("pro", "anti", None)))  # fmt: skip


def _judged(lines: list[tuple], system: int) -> Judged:
    cells = np.zeros((len(lines), len(CELLS) + 4))
    for k, (gold, *predicted, half) in enumerate(lines):
        cells[k, CELLS.index((gold, predicted[system]))] = 1
        if half is not None:  # [right, items] of the half it belongs to
            offset = len(CELLS) + (0 if half == "pro" else 2)
            cells[k, offset : offset + 2] = (predicted[system] == gold, 1)
    sources = tuple(f"sentence {k}" for k in range(len(lines)))
    return Judged(sources, tuple(line[1 + system] == line[0] for line in lines), cells, True)


def _f1(lines: list[tuple], system: int, gender: str) -> float | None:
    hits = sum(line[0] == line[1 + system] == gender for line in lines)
    both = sum(line[1 + system] == gender for line in lines) + sum(line[0] == gender for line in lines)
    return None if both == 0 else 100 * 2 * hits / both


def _delta_s(lines: list[tuple], system: int) -> float | None:
    shares = []
    for half in ("pro", "anti"):
        judged = [line[0] == line[1 + system] for line in lines if line[3] == half]
        shares.append(100 * sum(judged) / len(judged) if judged else None)
    return None if None in shares else shares[0] - shares[1]  # type: ignore[operator]


@settings(max_examples=25, deadline=None)
@given(st.lists(LINE, min_size=30, max_size=90))
def test_paired_tests_equal_direct_computation(lines: list[tuple]) -> None:
    rows = {r["figure"]: r for r in language_tests("xx", _judged(lines, 0), _judged(lines, 1), samples=60, seed=3)}
    b = sum(x[1] == x[0] and x[2] != x[0] for x in lines)
    c = sum(x[2] == x[0] and x[1] != x[0] for x in lines)
    accuracy = rows["winomt_accuracy"]
    assert (accuracy["before_only"], accuracy["after_only"]) == (b, c)
    n = b + c
    p = min(Fraction(1), 2 * sum(Fraction(math.comb(n, k), 2**n) for k in range(min(b, c) + 1))) if n else 1
    assert math.isclose(accuracy["p_value"], float(p), rel_tol=1e-12)
    for system, side in ((0, "before"), (1, "after")):
        male, female = _f1(lines, system, "male"), _f1(lines, system, "female")
        if male is not None and female is not None and not rows["winomt_delta_g"].get("missing"):
            assert math.isclose(rows["winomt_delta_g"][side], male - female, abs_tol=1e-9)
        delta_s = _delta_s(lines, system)
        if delta_s is not None and not rows["winomt_delta_s"].get("missing"):
            assert math.isclose(rows["winomt_delta_s"][side], delta_s, abs_tol=1e-9)
    for row in rows.values():
        if not row.get("missing"):
            low, high = row["ci95"]
            assert (low > 0 or high < 0) == (row["p_value"] < 0.05), row
