"""The report's figures: SVG, PDF and PNG that parse, a gap axis that shows the gap and its CI, and colour-blind-safe
colours that are not pink and blue (figures of real scores of MT-GenEval subsets)."""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from geneval_helpers import make_subset, read_plain
from matplotlib.colors import to_hex

from bias_eval.mtgeneval.plots import figure_objects, make_figures
from bias_eval.mtgeneval.report import metrics_document
from bias_eval.mtgeneval.scoring import score_dataset
from mtkit.data.mtgeneval import load_mtgeneval

# Okabe & Ito's palette, without its blue (#0072B2) and reddish purple (#CC79A7): no gender in pink and blue
ALLOWED = {"#e69f00", "#56b4e9", "#009e73", "#f0e442", "#d55e00", "#000000", "#ffffff"}
OLD_PINK_BLUE = {"#c4457a", "#3b6fb6"}


def _grey(hex_colour: str) -> bool:
    return hex_colour[1:3] == hex_colour[3:5] == hex_colour[5:7]


@pytest.fixture(scope="module")
def metrics(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Two reports' metrics.json content: de and es (de: the masculine reference for everyone, a large gap near
    BLEU 90), and es alone."""
    root = make_subset(shared_geneval, tmp_path_factory.mktemp("plots"), ("de", "es"), 80)
    data = load_mtgeneval(root, "test")
    hyps = {}
    for lang, ld in data.languages.items():
        masculine = read_plain(root / "sentences" / "test" / f"geneval-sentences-masculine-test.en_{lang}.{lang}")
        hyps[lang] = {"feminine": masculine if lang == "de" else ld.feminine.references, "masculine": masculine}
    out = {}
    for name, langs in (("both", ("de", "es")), ("one", ("es",))):
        data = load_mtgeneval(root, "test", list(langs))
        results, macro = score_dataset(data, {k: hyps[k] for k in langs}, samples=200, seed=1)
        out[name] = metrics_document(results, macro, {})
    return out


def test_every_figure_as_svg_pdf_and_png_without_layout_warnings(metrics) -> None:
    for document in metrics.values():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. "constrained_layout not applied": a squashed figure
            figures = make_figures(document)
        assert list(figures) == ["gap", "bleu_by_gender", "accuracy"]
        for rendered in figures.values():
            assert ET.fromstring(rendered["svg"]).tag == "{http://www.w3.org/2000/svg}svg"
            assert rendered["pdf"].startswith(b"%PDF-") and rendered["pdf"].rstrip().endswith(b"%%EOF")
            assert rendered["png"].startswith(b"\x89PNG\r\n\x1a\n")


def test_gap_axis_holds_the_ci_around_zero_not_the_bleu_scale(metrics) -> None:
    document = metrics["both"]
    rows = [*document["languages"].values(), document["macro"]]
    fig = figure_objects(document)["gap"]
    for ax, name in zip(fig.axes, ("bleu", "chrf")):
        low, high = ax.get_ylim()
        bounds = [b for r in rows for b in r[f"{name}_gap_ci95"]] + [r[f"{name}_gap"] for r in rows]
        assert low < 0 < high and low <= min(bounds) and max(bounds) <= high
        extent = max(max(bounds), 0) - min(min(bounds), 0)
        assert high - low <= 2 * extent + 2  # fitted to the gaps, not 0-90
    de = document["languages"]["de"]
    assert de["bleu_gap_ci95"][0] > 5 and min(de["bleu_feminine"], de["bleu_masculine"]) > 60
    assert fig.axes[0].get_ylim()[1] < de["bleu_feminine"]  # the BLEU level itself is off this axis


def test_bleu_axis_does_not_start_at_zero(metrics) -> None:
    document = metrics["both"]
    ax = figure_objects(document)["bleu_by_gender"].axes[0]
    values = [m[k] for m in document["languages"].values() for k in ("bleu_feminine", "bleu_masculine")]
    low, high = ax.get_ylim()
    assert low <= min(values) and max(values) <= high and low > 0.5 * min(values)


def test_equal_bleus_show_both_points(metrics) -> None:
    """es alone scores its references (BLEU 100 for both genders): the feminine and the masculine point of each
    language sit apart by more than a marker's width, so neither hides the other."""
    document = metrics["one"]
    es = document["languages"]["es"]
    assert es["bleu_feminine"] == es["bleu_masculine"]
    ax = figure_objects(document)["bleu_by_gender"].axes[0]
    points = {line.get_label(): line for line in ax.get_lines() if line.get_label() in ("feminine", "masculine")}
    f, m = (np.column_stack(points[g].get_data()).astype(float) for g in ("feminine", "masculine"))
    assert f.shape == m.shape == (1, 2) and f[0, 1] == m[0, 1]
    apart = np.abs(ax.transData.transform(f) - ax.transData.transform(m))[:, 0]  # pixels, across
    width = max(points[g].get_markersize() for g in points) * ax.figure.dpi / 72
    assert (apart > width).all(), (apart, width)


def test_colours_are_colour_blind_safe_and_not_pink_and_blue(metrics) -> None:
    for name, rendered in make_figures(metrics["both"]).items():
        svg = rendered["svg"].decode("utf-8").lower()
        colours = set(re.findall(r"#[0-9a-f]{6}\b", svg))
        assert not colours & OLD_PINK_BLUE, name
        assert {c for c in colours if not _grey(c)} <= ALLOWED, (name, colours)
    ax = figure_objects(metrics["both"])["bleu_by_gender"].axes[0]
    series = {
        line.get_label(): to_hex(line.get_color()) for line in ax.get_lines() if not line.get_label().startswith("_")
    }
    assert set(series) == {"feminine", "masculine"} and series["feminine"] != series["masculine"]
    assert {series["feminine"], series["masculine"]} <= ALLOWED - {"#000000", "#ffffff"}
