"""The comparison's figure: both systems on one pair of axes (every value and interval of both inside the same
limits), each gender in the report's colour, the systems told apart by marker (its SVG, PDF and PNG files:
tests/scripts/test_compare_reports.py)."""

from __future__ import annotations

from matplotlib.colors import to_hex

from bias_eval.compare.plot import comparison_figure
from bias_eval.core.plots import FEMININE_COLOUR, MASCULINE_COLOUR


def _language(f: float, m: float, gap_ci: list[float]) -> dict:
    return {"accuracy_feminine": f, "accuracy_feminine_ci95": [f - 0.02, min(1.0, f + 0.02)],
            "accuracy_masculine": m, "accuracy_masculine_ci95": [m - 0.01, min(1.0, m + 0.01)],
            "accuracy_gap": m - f, "accuracy_gap_ci95": gap_ci}  # fmt: skip


BEFORE = {"languages": {"de": _language(0.6, 0.98, [0.3, 0.46]), "es": _language(0.7, 0.97, [0.2, 0.34])}}
AFTER = {"languages": {"de": _language(0.9, 0.97, [0.03, 0.11]), "es": _language(0.92, 1.0, [0.04, 0.12])}}
for _m in (BEFORE, AFTER):
    _m["macro"] = {k: sum(lang[k] for lang in _m["languages"].values()) / 2 for k in ("accuracy_feminine",
                   "accuracy_masculine", "accuracy_gap")}  # fmt: skip


def test_both_systems_share_each_panels_axis() -> None:
    fig = comparison_figure(BEFORE, AFTER, ["base", "tuned"])
    gap_ax, acc_ax = fig.axes
    assert [t.get_text() for t in gap_ax.get_xticklabels()] == ["de", "es", "macro"]
    for metrics in (BEFORE, AFTER):
        for lang in metrics["languages"].values():
            low, high = gap_ax.get_ylim()
            assert low <= 100 * lang["accuracy_gap_ci95"][0] and 100 * lang["accuracy_gap_ci95"][1] <= high
            low, high = acc_ax.get_ylim()
            for g in ("feminine", "masculine"):
                assert low <= 100 * lang[f"accuracy_{g}_ci95"][0] and 100 * lang[f"accuracy_{g}_ci95"][1] <= high
    labels = {t.get_text() for t in acc_ax.get_legend().get_texts()}
    assert labels == {f"{g}, {s}" for g in ("feminine", "masculine") for s in ("base", "tuned")}
    assert {t.get_text() for t in gap_ax.get_legend().get_texts()} == {"base", "tuned"}
    colours = {to_hex(line.get_color()) for line in acc_ax.get_lines() if line.get_marker() in ("o", "s")}
    assert colours == {FEMININE_COLOUR.lower(), MASCULINE_COLOUR.lower()}
    hollow = [to_hex(line.get_markerfacecolor()) for line in gap_ax.get_lines() if line.get_marker() == "o"]
    assert hollow and set(hollow) == {"#ffffff"}  # base: hollow circles; tuned: filled squares
