"""What every report page shares: its style sheet, a figure embedded as SVG with links to its files, and the
benchmark's BibTeX."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from typing import Any

from bias_eval.core.references import BIBTEX, bibtex

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5em auto;
  max-width: 76em; padding: 0 1.5em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
.meta { color: #555; margin-top: 0; font-size: 0.92em; }
.takeaway { font-size: 1.15em; border-left: 5px solid #0072B2; background: #f2f7fb; padding: 0.6em 0.9em; }
.warning { border: 2px solid #D55E00; border-left-width: 8px; background: #fff1e6; padding: 0.5em 0.9em;
  margin: 1em 0; }
.warning strong { color: #A33F00; }
.warning ul { margin: 0.3em 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; vertical-align: top; }
table.compact { font-size: 0.86em; }
table.compact th, table.compact td { padding: 0.3em 0.45em; }
thead th { background: #f0f0f0; text-align: center; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.sig { font-weight: bold; }
tbody th { white-space: nowrap; text-align: left; }
tr.macro th, tr.macro td { border-top: 2px solid #888; }
td.bad { background: #fde8d9; }
.note { font-size: 0.88em; color: #555; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #444; max-width: 50em; }
.figrow { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.figrow figure { flex: 1 1 26em; }
details { margin: 0.8em 0; }
.scroll { overflow-x: auto; }
summary { cursor: pointer; font-weight: 600; }
.example td { max-width: 30em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 0.5em; }
"""


def escape(text: Any) -> str:
    """``text`` as HTML text or attribute value."""
    return html.escape(str(text), quote=True)


def figure_path(name: str, fmt: str) -> str:
    """Where figure ``name`` in format ``fmt`` is written, relative to the report folder."""
    return f"figures/{name}.{fmt}"


def figure_html(name: str, rendered: Mapping[str, bytes], caption: str) -> str:
    """A figure embedded as SVG with its caption and links to its files (:func:`figure_path`)."""
    data = base64.b64encode(rendered["svg"]).decode("ascii")
    links = " \u00b7 ".join(f'<a href="{figure_path(name, f)}">{f.upper()}</a>' for f in rendered)
    return (
        f'<figure id="fig-{name}"><img src="data:image/svg+xml;base64,{data}" alt="{escape(caption)}" />'
        f"<figcaption>{escape(caption)} Files: {links}.</figcaption></figure>"
    )


def bibtex_html(benchmark: str) -> list[str]:
    """The benchmark's BibTeX on the page, as ``references.bib`` holds it (nothing for a table of one's own)."""
    if benchmark not in BIBTEX:
        return []
    return ["<h2>Cite the benchmark</h2>", f"<pre>{escape(bibtex(benchmark).decode('utf-8'))}</pre>"]
