"""Markdown for reports, comparisons, model cards and benchmark tables: one escape for text in a table cell or a list
line, and one table builder (:func:`records_table` lays records out through it), for ``bias_eval`` and :mod:`mtkit`
alike. Standard library only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def escape(text: object) -> str:
    """``text`` as one table cell or list line: backslashes and pipes escaped, line breaks as spaces. Other markdown
    (``**bold**``, `` `code` ``) keeps its meaning."""
    flat = str(text).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    return flat.replace("\\", "\\\\").replace("|", "\\|")


def _row(cells: Iterable[object]) -> str:
    """``| a | b |``; an empty cell is ``| |``."""
    return " ".join(["|", *(part for cell in map(escape, cells) for part in ((cell, "|") if cell else ("|",)))])


def table(header: Sequence[object], rows: Iterable[Sequence[object]], *, right_from: int | None = None) -> list[str]:
    """The lines of a markdown table, every cell escaped (:func:`escape`): the columns from index ``right_from`` on
    aligned right (figures), those before it left (default: every column left). A row of another width than the
    header is a :class:`ValueError`."""
    width = len(header)
    left = width if right_from is None else right_from
    lines = [_row(header), "|" + "".join("---|" if i < left else "---:|" for i in range(width))]
    for cells in rows:
        if len(cells) != width:
            raise ValueError(f"a row of {len(cells)} cells in a table of {width} columns: {list(cells)}")
        lines.append(_row(cells))
    return lines


def records_table(records: Sequence[dict], columns: Sequence[tuple[str, str, str]], label: str = "system") -> str:
    """``records`` as a markdown table (:func:`table`): the ``label`` column, then one per ``(key, title, format)`` in
    ``columns`` (``n/a`` where a record lacks the key)."""
    head = [label, *(title for _, title, _ in columns)]
    rows = [[str(r[label]), *(fmt.format(r[k]) if k in r else "n/a" for k, _, fmt in columns)] for r in records]
    return "\n".join(table(head, rows))
