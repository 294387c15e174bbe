"""The 'changed' rule of the report comparison and its rows, on crafted metrics."""

from __future__ import annotations

import pytest

from bias_eval.compare import cells, compare, outside_both
from mtkit.errors import UserError


@pytest.mark.parametrize(
    ("before", "before_ci", "after", "after_ci", "expected"),
    [
        (1.0, [0.5, 1.5], 2.0, [1.8, 2.2], True),  # each value outside the other's interval
        (2.0, [1.8, 2.2], 1.0, [0.5, 1.5], True),  # the same, downwards
        (1.0, [0.5, 2.5], 2.0, [0.9, 3.1], False),  # each inside the other's
        (1.0, [0.9, 1.1], 1.5, [0.8, 2.2], False),  # after outside before's CI, but before inside after's
        (1.0, [0.9, 1.1], 1.1, [1.05, 1.2], False),  # on the bound counts as inside
        (1.0, None, 2.0, [1.8, 2.2], None),  # a figure without a CI
        (None, None, 2.0, [1.8, 2.2], None),
    ],
)
def test_changed_rule(before, before_ci, after, after_ci, expected) -> None:
    assert outside_both(before, before_ci, after, after_ci) is expected


def _metrics(langs: dict[str, dict], **config) -> dict:
    return {"languages": langs, "macro": {"bleu": 1.0}, "config": config}


def test_rows_cells_and_notes() -> None:
    before = _metrics(
        {"de": {"n": 10, "accuracy_feminine": 0.8, "accuracy_feminine_ci95": [0.78, 0.82], "bleu_gap": 2.0}},
        seed=1,
    )
    after = _metrics(
        {"de": {"n": 12, "accuracy_feminine": 0.85, "accuracy_feminine_ci95": [0.7, 0.95], "bleu_gap": -1.5}},
        seed=2,
    )
    rows, notes = compare(before, after, ["a", "b"])
    by_key = {row.key: row for row in rows if row.scope == "de"}
    assert [row.scope for row in rows] == ["de"] * 10 + ["macro"] * 10
    accuracy = by_key["accuracy_feminine"]
    assert accuracy.change == pytest.approx(0.05) and accuracy.changed is False
    assert cells(accuracy) == ["de", "acc f", "0.800", "[0.780, 0.820]", "0.850", "[0.700, 0.950]", "+0.050", "no"]
    assert cells(by_key["bleu_gap"]) == ["de", "BLEU gap", "+2.00", "n/a", "-1.50", "n/a", "-3.50", "n/a"]
    assert cells(by_key["coverage"])[2:] == ["n/a", "n/a", "n/a", "n/a", "n/a", "n/a"]  # an older report
    assert "The reports differ in seed: a 1, b 2." in notes  # a size differs: bias_eval.comparability


def test_no_common_language() -> None:
    with pytest.raises(UserError, match=r"^AFTER: no language in common with BEFORE \(BEFORE: de; AFTER: es fr\)$"):
        compare(_metrics({"de": {}}), _metrics({"es": {}, "fr": {}}), ["a", "b"])
