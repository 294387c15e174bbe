"""A WinoMT report's page (bias_eval.winomt.page) laid out for reading: the short accuracy figure in a row of its
own, the tall per-profession figure below it at the page's width, every table compact inside a sideways scroll; and,
where Chromium is installed, the page as a 1200 px window draws it: no table wider than the page."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from testing_utils import WINOMT

from bias_eval.core.settings import ReportOptions, ReportSettings
from bias_eval.winomt.data import load_winomt, pair_translations
from bias_eval.winomt.report import make_winomt_report

GOOGLE_DE = WINOMT / "translations" / "google" / "en-de.txt"
X = "{http://www.w3.org/1999/xhtml}"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not GOOGLE_DE.is_file():
        pytest.skip(f"{GOOGLE_DE} is not there")
    data = load_winomt(WINOMT)
    pairs = [line.split(" ||| ") for line in GOOGLE_DE.read_text(encoding="utf-8").splitlines()[:300]]
    translations = pair_translations(data, [s for s, _ in pairs], [t for _, t in pairs], str(GOOGLE_DE))
    settings = ReportSettings({"hyp_file": str(GOOGLE_DE)}, "Google's first 300", "cmd",
                              options=ReportOptions(bootstrap_samples=20))  # fmt: skip
    out = tmp_path_factory.mktemp("winomt") / "de"
    make_winomt_report(data, translations, "de", settings, out, log=None)
    return out / "report.html"


def test_the_tall_figure_on_its_own_row_below_the_short_one(page: Path) -> None:
    body = ET.fromstring(page.read_text(encoding="utf-8").split("\n", 1)[1]).find(f"{X}body")
    children = list(body)
    row = next(k for k, c in enumerate(children) if c.get("class") == "figrow")
    assert [f.get("id") for f in children[row].iter(f"{X}figure")] == ["fig-accuracy"]
    assert children[row + 1].tag == f"{X}figure" and children[row + 1].get("id") == "fig-professions"


def test_every_table_compact_in_a_sideways_scroll(page: Path) -> None:
    body = ET.fromstring(page.read_text(encoding="utf-8").split("\n", 1)[1]).find(f"{X}body")
    parents = {child: parent for parent in body.iter() for child in parent}
    tables = list(body.iter(f"{X}table"))
    assert len(tables) == 2  # the results and every profession
    for table in tables:
        assert table.get("class") == "compact" and parents[table].get("class") == "scroll"


#: reads each table's drawn width and its container's, and each figure's left edge and width, into the body's attributes
MEASURE = """<script>
const box = e => e.getBoundingClientRect();
document.body.setAttribute("data-tables", Array.from(document.querySelectorAll("table"))
  .map(t => t.scrollWidth + "/" + t.parentElement.clientWidth).join(" "));
document.body.setAttribute("data-figures", Array.from(document.querySelectorAll("figure"))
  .map(f => f.id + ":" + Math.round(box(f).left) + ":" + Math.round(box(f).width)).join(" "));
</script></body>"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium on this machine")
def test_drawn_in_a_1200_px_window(page: Path, tmp_path: Path) -> None:
    """Every table (the folded one opened) as wide as its container at most; both figures start at the left edge,
    the per-profession one as wide as the page."""
    opened = page.read_text(encoding="utf-8").replace("<details>", '<details open="open">')
    (tmp_path / "page.html").write_text(opened.replace("</body>", MEASURE), encoding="utf-8")
    done = subprocess.run(["chromium", "--headless", "--disable-gpu", "--no-sandbox", "--window-size=1200,1600",
                           "--dump-dom", (tmp_path / "page.html").as_uri()], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    drawn = dict(re.findall(r'data-(tables|figures)="([^"]*)"', done.stdout))
    widths = [tuple(map(int, w.split("/"))) for w in drawn["tables"].split()]
    assert len(widths) == 2 and all(drawn <= room for drawn, room in widths), widths
    figures = {f.split(":")[0]: tuple(map(int, f.split(":")[1:])) for f in drawn["figures"].split()}
    assert figures["fig-accuracy"][0] == figures["fig-professions"][0]
    assert figures["fig-professions"][1] == widths[0][1]  # the page's width, as the results table's container
