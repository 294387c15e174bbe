"""Figures of every report (matplotlib's object API, no pyplot state): the palette, each figure rendered as SVG, PDF
and PNG with the same bytes for the same figure, language ticks and a gap's y-range.

Colours are Okabe-Ito's colour-blind-safe palette: feminine orange, masculine bluish green (no pink and blue),
and every series also has its own marker, so no figure relies on colour alone.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib import rc_context, rcParams
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_pdf import FigureCanvasPdf
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

# Okabe & Ito (2008), "Color Universal Design": https://jfly.uni-koeln.de/color/
FEMININE_COLOUR = "#E69F00"  # orange
MASCULINE_COLOUR = "#009E73"  # bluish green
PAIR_COLOUR = "#000000"  # black
COVERAGE_COLOUR = "#56B4E9"  # sky blue
INK = "#333333"

FORMATS = ("svg", "pdf", "png")  # every figure is written in each of these
DPI = 150  # the PNG's resolution
_RC = {
    "svg.fonttype": "none",  # text stays text in the SVG: editable, searchable, small
    "svg.hashsalt": "bias_eval",  # stable element ids: the same report gives the same bytes
    "pdf.fonttype": 42,  # TrueType in the PDF (publishers refuse Type 3 fonts)
    "font.size": 9,
}
_CANVAS = {"svg": FigureCanvasSVG, "pdf": FigureCanvasPdf, "png": FigureCanvasAgg}
_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": {"Software": None}}


def render(fig: Figure) -> dict[str, bytes]:
    """``fig`` as the bytes of each of :data:`FORMATS` (dates left out, so that equal figures give equal files), laid
    out once and cut to one tight box (``bbox_inches="tight"`` would lay out and draw the figure twice for each
    format)."""
    out = {}
    with rc_context(_RC):
        fig.set_dpi(DPI)
        canvas = FigureCanvasAgg(fig)
        fig.draw_without_rendering()  # the layout engine places the axes, as a savefig's first draw would
        box = fig.get_tightbbox(canvas.get_renderer()).padded(rcParams["savefig.pad_inches"])
        fig.set_layout_engine("none")  # kept where it placed them: each format the same layout, laid out once
        for fmt in FORMATS:
            _CANVAS[fmt](fig)
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, dpi=DPI, bbox_inches=box, metadata=_METADATA[fmt])
            out[fmt] = buffer.getvalue()
    return out


def categories(ax: Axes, labels: Sequence[str]) -> np.ndarray:
    """Language ticks, the macro column set off by a dotted line."""
    x = np.arange(len(labels), dtype=float)
    ax.set_xticks(x, labels)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    if labels and labels[-1] == "macro":
        ax.axvline(len(labels) - 1.5, color="#999999", linewidth=0.8, linestyle=":")
    ax.tick_params(length=0, axis="x")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return x


def gap_limits(gaps: Sequence[float], cis: Sequence[Sequence[float] | None]) -> tuple[float, float]:
    """A y-range that holds 0, every gap and every CI bound, with a quarter of their span (at least 1 point) as room
    on each side, so that both the "favours masculine" and the "favours feminine" side show."""
    values = [0.0, *(v for v in gaps if not np.isnan(v)), *(b for ci in cis if ci is not None for b in ci)]
    low, high = min(values), max(values)
    room = 0.25 * max(high - low, 1.0)
    return low - room, high + room
