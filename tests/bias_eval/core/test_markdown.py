"""The one markdown escape and table builder, read back by an independent markdown parser (markdown-it-py with
GFM tables): any cell text keeps its table's shape, and text without inline markup comes back as it was."""

from __future__ import annotations

import ast
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from testing_utils import REPO

from bias_eval.core.markdown import escape, records_table, table

PARSER = MarkdownIt("commonmark").enable("table")
#: characters that open inline markup (emphasis, code, links, HTML, entities): text with them keeps its cells, but
#: its shown text is what the markup makes of it
MARKUP = "`*_<[&"


def parsed(lines: list[str]) -> list[list[tuple[str, str]]]:
    """The rows of the one table in ``lines``: each cell's shown text (its inline children's text and code) and its
    alignment; fails unless the lines are exactly one table."""
    tokens = PARSER.parse("\n".join(lines) + "\n")
    assert [t.type for t in tokens][:1] == ["table_open"] and tokens[-1].type == "table_close"
    rows: list[list[tuple[str, str]]] = []
    align = ""
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type in ("th_open", "td_open"):
            align = str(token.attrGet("style") or "")
        elif token.type == "inline":
            text = "".join(c.content for c in token.children or [] if c.type in ("text", "code_inline"))
            rows[-1].append((text, align))
    return rows


def shown(text: str) -> str:
    """What a cell of ``text`` shows: its line breaks as spaces, without the whitespace at its ends (which a
    renderer trims from a cell, each by its own list: both sides are compared with Python's)."""
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ").strip()


ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
PLAIN_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00" + MARKUP), max_size=30
)


def grid(cells: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[list[str], list[list[str]]]]:
    return st.integers(1, 4).flatmap(
        lambda width: st.tuples(
            st.lists(cells, min_size=width, max_size=width),
            st.lists(st.lists(cells, min_size=width, max_size=width), max_size=4),
        )
    )


@given(grid(ANY_TEXT))
@example((["\\|", "a\\"], [["|", "\\\\|"]]))  # a backslash before a pipe, a cell ending in one
def test_any_cell_text_keeps_the_tables_shape(case):
    header, rows = case
    got = parsed(table(header, rows))
    assert [len(row) for row in got] == [len(header)] * (1 + len(rows))


@given(grid(PLAIN_TEXT))
def test_text_without_inline_markup_comes_back_as_it_was(case):
    header, rows = case
    got = parsed(table(header, rows))
    assert [[text.strip() for text, _ in row] for row in got] == [[shown(c) for c in row] for row in [header, *rows]]


def test_pipes_backslashes_and_line_breaks_in_a_cell():
    cells = ["a|b", "c\\", "\\|", "x\r\ny\nz"]
    assert [escape(c) for c in cells] == ["a\\|b", "c\\\\", "\\\\\\|", "x y z"]
    assert [text for text, _ in parsed(table(["h"] * 4, [cells]))[1]] == ["a|b", "c\\", "\\|", "x y z"]


def test_columns_from_right_from_on_align_right_and_empty_cells_stay_cells():
    lines = table(["", "name", "n"], [["", "a", 1], ["x", "", 2.5]], right_from=2)
    assert lines == ["| | name | n |", "|---|---|---:|", "| | a | 1 |", "| x | | 2.5 |"]
    got = parsed(lines)
    assert [[a for _, a in row] for row in got] == [["", "", "text-align:right"]] * 3
    assert [[t for t, _ in row] for row in got] == [["", "name", "n"], ["", "a", "1"], ["x", "", "2.5"]]
    assert parsed(table(["a", "b"], [["1", "2"]]))[1] == [("1", ""), ("2", "")]  # no right_from: all left


def test_records_lay_out_by_their_columns_with_n_a_where_a_key_is_missing():
    records = [{"system": "ours", "bleu": 31.456, "speed": 120}, {"system": "a|b", "bleu": 2.0}]
    columns = [("bleu", "BLEU", "{:.1f}"), ("speed", "sent/s", "{:d}")]
    got = parsed(records_table(records, columns).splitlines())
    assert [[text for text, _ in row] for row in got] == [["system", "BLEU", "sent/s"], ["ours", "31.5", "120"],
                                                          ["a|b", "2.0", "n/a"]]  # fmt: skip


def test_a_row_of_another_width_is_refused():
    with pytest.raises(ValueError, match="a row of 1 cells in a table of 2 columns"):
        table(["a", "b"], [["only"]])


def test_the_module_is_standard_library_only():
    """mtkit's base layer imports it, and bias_eval is to stand alone: nothing but the standard library."""
    tree = ast.parse((REPO / "bias_eval" / "core" / "markdown.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {name.split(".")[0] for name in imported} <= set(sys.stdlib_module_names) | {"__future__"}


def test_no_other_module_escapes_markdown_or_builds_a_table_by_hand():
    sources = [*REPO.glob("mtkit/**/*.py"), *REPO.glob("bias_eval/**/*.py"), REPO / "notebooks" / "nbhelpers.py"]
    found = [
        str(path.relative_to(REPO))
        for path in sources
        if path.name != "markdown.py"
        and any(s in path.read_text(encoding="utf-8") for s in ('"\\\\|"', '"|---', '" | ".join'))
    ]
    assert found == []
