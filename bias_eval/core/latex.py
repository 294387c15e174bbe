"""LaTeX for papers: one escape for text in a table cell or a caption, and one booktabs table builder
(``\\toprule``, ``\\midrule``, ``\\bottomrule``), for the report's ``report.tex`` and the comparison's
``comparison.tex``. Standard library only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: characters LaTeX reads as commands, and the typographic signs the pages use, as LaTeX writes them
_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "\u2212": "$-$",  # minus sign
    "\u221e": r"$\infty$",
    "\u2192": r"$\rightarrow$",
    "\u0394": r"$\Delta$",
}
PREAMBLE = "% needs \\usepackage{booktabs} and \\usepackage{graphicx} (for \\resizebox)"


@dataclass(frozen=True)
class Layout:
    """How a paper takes a table: its ``\\label`` (``label``; ``None``: the table's own default, so that two tables
    of one paper never share one when each is given its own), across both columns of a two-column paper (``wide``:
    ``table*`` scaled to ``\\textwidth``) or in one (``\\linewidth``), and the run's name, said first in every
    caption (``name``)."""

    label: str | None = None
    wide: bool = False
    name: str | None = None

    def label_or(self, default: str) -> str:
        """The table's label: the one given, else ``default``."""
        return self.label or default

    def caption(self, text: str) -> str:
        """``text`` after the run's name, when there is one."""
        return f"{self.name}. {text}" if self.name else text


def escape(text: object) -> str:
    """``text`` as LaTeX text: its special characters escaped, the minus, infinity and arrow signs in math mode."""
    return "".join(_SPECIAL.get(char, char) for char in str(text))


def bold(text: str) -> str:
    """Already escaped ``text`` in bold."""
    return f"\\textbf{{{text}}}"


def table(
    header: Sequence[object],
    rows: Iterable[Sequence[str] | None],
    *,
    caption: str,
    label: str,
    right_from: int = 1,
    fit: bool = True,
    wide: bool = False,
) -> list[str]:
    """The lines of a ``table`` float holding a booktabs ``tabular``, scaled to the width of the column it stands in
    (``\\linewidth``: one column of a two-column paper) or, with ``fit`` false, at its own width in small type (for a
    table narrow enough to fit a column as it is): the header and every
    caption word escaped here, the cells already escaped by the caller (:func:`escape`, :func:`bold`); ``None`` in
    ``rows`` is a ``\\midrule``; the columns from ``right_from`` on aligned right; with ``wide``, a ``table*``
    across both columns of a two-column paper (scaled to ``\\textwidth``). A row of another width than the header is
    a :class:`ValueError`."""
    width = len(header)
    float_, span = ("table*", "\\textwidth") if wide else ("table", "\\linewidth")
    lines = [
        PREAMBLE if fit else PREAMBLE.split(" and ")[0],
        f"\\begin{{{float_}}}[t]",
        "\\centering",
        f"\\resizebox{{{span}}}{{!}}{{%" if fit else "\\small\\setlength{\\tabcolsep}{4pt}",
        f"\\begin{{tabular}}{{{'l' * right_from}{'r' * (width - right_from)}}}",
        "\\toprule",
        " & ".join(escape(h) for h in header) + " \\\\",
        "\\midrule",
    ]
    for cells in rows:
        if cells is None:
            lines.append("\\midrule")
            continue
        if len(cells) != width:
            raise ValueError(f"a row of {len(cells)} cells in a table of {width} columns: {list(cells)}")
        lines.append(" & ".join(cells) + " \\\\")
    lines += [
        "\\bottomrule",
        "\\end{tabular}" + ("}" if fit else ""),
        f"\\caption{{{escape(caption)}}}",
        f"\\label{{{label}}}",
    ]
    return [*lines, f"\\end{{{float_}}}"]
