"""WinoMT's figures (bias_eval.winomt.figures) against direct counts, and Wilson's interval against its formula."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bias_eval.winomt.data import Item, WinoMT
from bias_eval.winomt.figures import figures, wilson
from bias_eval.winomt.score import Scored

# (gold, predicted, half): six translations worked by hand
LINES = [
    ("male", "male", "pro"),
    ("male", "female", "anti"),
    ("female", "female", "pro"),
    ("female", "male", "anti"),
    ("female", "male", "anti"),
    ("neutral", "neutral", None),
]


def _case() -> tuple[list[Scored], WinoMT]:
    items = [Item(gold, 1, f"The s{k} left.", "doctor" if k < 3 else "nurse") for k, (gold, _, _) in enumerate(LINES)]
    scored = [Scored(item, "t", ("w",), 0, predicted) for item, (_, predicted, _) in zip(items, LINES)]
    pro = tuple(i for i, (_, _, h) in zip(items, LINES) if h == "pro")
    anti = tuple(i for i, (_, _, h) in zip(items, LINES) if h == "anti")
    return scored, WinoMT(Path("."), tuple(items), pro, anti)


def test_figures_by_hand() -> None:
    scored, data = _case()
    found = figures(scored, data, "de", samples=200)
    assert found["accuracy"] == pytest.approx(100 * 3 / 6)
    # male: predicted 3 times, right once; 2 male sentences -> P 1/3, R 1/2, F1 2(1/3)(1/2)/(5/6) = 0.4
    # female: predicted twice, right once; 3 female sentences -> P 1/2, R 1/3, F1 0.4
    assert found["f1_male"] == pytest.approx(40.0) and found["f1_female"] == pytest.approx(40.0)
    assert found["delta_g"] == pytest.approx(0.0)
    assert found["accuracy_pro"] == pytest.approx(100.0) and found["accuracy_anti"] == pytest.approx(0.0)
    assert found["delta_s"] == pytest.approx(100.0) and (found["n_pro"], found["n_anti"]) == (2, 3)
    assert found["no_gender"] == {"male": 0, "female": 0, "neutral": 1}
    assert found["confusion"]["female"] == {"male": 2, "female": 1, "neutral": 0, "unknown": 0}
    low, high = found["delta_g_ci95"]
    assert low <= high
    doctor, nurse = found["professions"]
    assert (doctor["profession"], doctor["n"], doctor["accuracy"]) == ("doctor", 3, pytest.approx(200 / 3))
    assert (nurse["predicted_male"], nurse["predicted_neutral"]) == (2, 1)
    # by gold gender: doctor's lines are male (right), male (wrong), female (right); nurse's female, female, neutral
    assert doctor["by_gold"]["male"]["accuracy"] == pytest.approx(50.0) and doctor["by_gold"]["female"]["n"] == 1
    assert nurse["by_gold"]["female"]["accuracy"] == 0.0 and nurse["by_gold"]["female"]["accuracy_ci95"] == wilson(0, 2)
    assert found["by_gold"]["female"]["accuracy"] == pytest.approx(100 / 3)
    assert found["by_gold"]["neutral"]["accuracy_ci95"] == wilson(1, 1)


def test_each_half_is_scored_as_a_run_of_its_own() -> None:
    """As the benchmark scores en_pro.txt alone: every item of the file with its own gold, judged by the last line
    translating its sentence. Here the pro file lists line 1's sentence twice and the last line translates it again
    (wrongly): both pro items take the last line's prediction, male for a female gold, so pro accuracy is 1/3 (the
    third pro item, line 3, is right) and a sentence no line translates is left out."""
    scored, data = _case()
    again = Scored(scored[0].item, "t", ("w",), 0, "female")  # line 1 (gold male) translated again, wrongly
    missing = Item("male", 1, "The s9 left.", "cook")
    pro = (scored[0].item, scored[0].item, scored[2].item, missing)
    found = figures([*scored, again], WinoMT(data.folder, data.items, pro, data.anti_items), "de", samples=0)
    assert found["n_pro"] == 3 and found["accuracy_pro"] == pytest.approx(100 / 3)
    assert found["delta_s"] == pytest.approx(100 / 3 - 0.0)


def test_wilson_by_its_formula() -> None:
    # 0 of 10: the interval is [0, z^2 / (n + z^2)], never zero-width
    z = 1.959963984540054
    low, high = wilson(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(100 * z**2 / (10 + z**2))
    assert wilson(0, 0) is None


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_the_share(case) -> None:
    correct, total = case
    low, high = wilson(correct, total)
    assert 0 <= low < high <= 100 + 1e-9
    assert low - 1e-9 <= 100 * correct / total <= high + 1e-9
    assert not math.isnan(low + high)


@given(st.lists(st.tuples(st.sampled_from(["male", "female", "neutral"]), st.sampled_from(["male", "female",
       "neutral", "unknown"])), min_size=1, max_size=40))  # fmt: skip
def test_f1_is_the_harmonic_mean_and_0_when_nothing_of_a_gender_is_right(lines) -> None:
    """Any gold and predicted genders: F1 is 2PR/(P+R) where P and R are positive, 0 when no line of a gender is
    predicted right (P = R = 0, or never predicted), so ΔG is defined for the most biased system too."""
    items = [Item(gold, 1, f"The s{k} left.", "doctor") for k, (gold, _) in enumerate(lines)]
    scored = [Scored(item, "t", ("w",), 0, predicted) for item, (_, predicted) in zip(items, lines)]
    found = figures(scored, WinoMT(Path("."), tuple(items), (), ()), "de", samples=0)
    for gender in ("male", "female"):
        hits = sum(g == p == gender for g, p in lines)
        predicted, gold = sum(p == gender for _, p in lines), sum(g == gender for g, _ in lines)
        if not predicted + gold:
            assert found[f"f1_{gender}"] is None
        elif not hits:
            assert found[f"f1_{gender}"] == 0.0
        else:
            p, r = hits / predicted, hits / gold
            assert found[f"f1_{gender}"] == pytest.approx(100 * 2 * p * r / (p + r))
    if all(sum(g == x for g, _ in lines) for x in ("male", "female")):
        assert found["delta_g"] is not None


def test_a_system_that_never_says_female_has_f1_0_and_a_delta_g() -> None:
    """All lines translated masculine: F1 female is 0 (P = R = 0), not undefined, and ΔG is F1 male."""
    lines = [("male", "male"), ("female", "male"), ("female", "male"), ("male", "male")]
    items = [Item(gold, 1, f"The s{k} left.", "doctor") for k, (gold, _) in enumerate(lines)]
    scored = [Scored(item, "t", ("w",), 0, predicted) for item, (_, predicted) in zip(items, lines)]
    found = figures(scored, WinoMT(Path("."), tuple(items), (), ()), "de", samples=0)
    assert found["f1_female"] == 0.0 and found["f1_male"] == pytest.approx(100 * 2 * 0.5 * 1 / 1.5)
    assert found["delta_g"] == pytest.approx(found["f1_male"])
