"""A bias study in one process: every system's report on every benchmark and language, each system compared with the
first on each benchmark, one index page linking them all and ``study.tex`` with the headline table.

A system's hypothesis folder (``--systems name=DIR``) holds, per benchmark:

- ``DIR/mtgeneval/<lang>.feminine.txt`` and ``<lang>.masculine.txt``: MT-GenEval's hypotheses, one per line of the
  split's source files, as ``scripts/bias_report.py --hyp_dir`` reads them;
- ``DIR/winomt/<lang>.txt``: WinoMT's translations, as ``--hyp_file`` reads them (``source ||| translation`` lines or
  one translation per line of ``en.txt``).

The study folder then holds ``<system>/mtgeneval/`` (one report of all languages), ``<system>/winomt/<lang>/`` (one
report per language), ``compare/<benchmark>/<first>_vs_<other>/``, ``index.html`` and ``study.tex``. Everything is
written straight into ``out`` (which must be new or empty), so that every path a file records is its final one; bad
input is refused before anything is written, and a failure midway removes what was written."""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bias_eval.benchmarks import compare_reports
from bias_eval.compare.mtgeneval import Comparison
from bias_eval.core import latex
from bias_eval.core.bootstrap import SAMPLES, SEED
from bias_eval.core.decision import Rule
from bias_eval.core.latex import Layout
from bias_eval.core.page import CSS
from bias_eval.core.report import Report
from bias_eval.core.settings import ReportOptions
from bias_eval.core.textio import check_writable
from bias_eval.mtgeneval.paper_tables import figure_plain
from bias_eval.winomt.languages import check_language
from mtkit.errors import UserError
from mtkit.evaluation.bias_run import run_report
from mtkit.evaluation.report_inputs import GenderedSource, WinoMTSource
from mtkit.evaluation.winomt_run import run_winomt
from mtkit.paths import check_apart

BENCHMARKS = ("mtgeneval", "winomt")


@dataclass(frozen=True)
class Study:
    """What a study scores: systems by name (their hypothesis folders, the first the baseline), benchmarks,
    languages, the benchmarks' data, the bootstrap, the decision rule, the LaTeX layout and whether its reports and
    comparisons draw their figures."""

    systems: Mapping[str, Path]
    benchmarks: Sequence[str]
    langs: Sequence[str]
    mtgeneval_dir: Path | None = None
    winomt_dir: Path | None = None
    split: str = "dev"
    bootstrap_samples: int = SAMPLES
    seed: int = SEED
    rule: Rule = field(default_factory=Rule)
    layout: Layout = field(default_factory=Layout)
    figures: bool = True


def hypothesis_files(study: Study, name: str, benchmark: str) -> list[Path]:
    """The files system ``name`` needs for ``benchmark`` (see the module docstring)."""
    folder = study.systems[name] / benchmark
    if benchmark == "winomt":
        return [folder / f"{lang}.txt" for lang in study.langs]
    return [folder / f"{lang}.{g}.txt" for lang in study.langs for g in ("feminine", "masculine")]


def check_study(study: Study, out: Path) -> None:
    """Every problem found before anything is read or written, as one line."""
    if len(study.systems) < 2:
        raise UserError("--systems: give at least two systems (name=DIR,name=DIR), the first the baseline")
    inputs = {f"--systems {name}": folder for name, folder in study.systems.items()}
    check_apart(inputs | {"--mtgeneval_dir": study.mtgeneval_dir, "--winomt_dir": study.winomt_dir}, {"--out": out})
    check_writable(out, "--out")
    unknown = [b for b in study.benchmarks if b not in BENCHMARKS]
    if unknown or not study.benchmarks:
        raise UserError(f"--benchmarks: expected some of {', '.join(BENCHMARKS)}, got {', '.join(unknown) or 'none'}")
    if not study.langs:
        raise UserError("--langs: give at least one target language (e.g. de,es)")
    for lang in study.langs if "winomt" in study.benchmarks else ():
        check_language(lang, "--langs")
    for benchmark, folder in (("mtgeneval", study.mtgeneval_dir), ("winomt", study.winomt_dir)):
        if benchmark in study.benchmarks and (folder is None or not folder.is_dir()):
            raise UserError(f"--{benchmark}_dir: {folder}: not a folder (the {benchmark} benchmark's data)")
    for name in study.systems:
        for benchmark in study.benchmarks:
            missing = next((f for f in hypothesis_files(study, name, benchmark) if not f.is_file()), None)
            if missing is not None:
                raise UserError(f"--systems: {name}: {missing} is missing (see docs/bias_evaluation.md#a-study)")
    if out.exists() and any(out.iterdir()):
        raise UserError(f"--out: {out} already holds files; give a new or empty folder")


def label(study: Study, *parts: str) -> str:
    """A table's LaTeX label in the study, unique to it: ``--label`` (default ``tab:study``) and ``parts``, each
    character a label would not take as a hyphen."""
    return re.sub(r"[^A-Za-z0-9:.-]", "-", "-".join((study.layout.label or "tab:study", *parts)))


def _reports(study: Study, name: str, root: Path) -> dict[str, Report]:
    """System ``name``'s reports into ``root/<name>/``, by benchmark (WinoMT's as a set)."""
    folder, found = study.systems[name], {}
    options = ReportOptions(study.bootstrap_samples, study.seed, name=name, figures=study.figures)

    def laid(*parts: str) -> ReportOptions:
        return replace(options, layout=replace(study.layout, label=label(study, name, *parts)))

    if "mtgeneval" in study.benchmarks:
        source = GenderedSource(study.mtgeneval_dir, split=study.split, langs=tuple(study.langs))
        found["mtgeneval"] = run_report(source, folder / "mtgeneval", root / name / "mtgeneval", laid("mtgeneval"))
    if "winomt" in study.benchmarks:
        by_lang = {}
        for lang in study.langs:
            source = WinoMTSource(Path(study.winomt_dir), check_language(lang))
            hyp_file, out = folder / "winomt" / f"{lang}.txt", root / name / "winomt" / lang
            by_lang[lang] = run_winomt(source, hyp_file, out, laid("winomt", lang))
        found["winomt"] = Report.winomt_set(by_lang, root / name / "winomt")
    return found


def run_study(study: Study, out: Path) -> dict[str, Any]:
    """Run ``study`` into ``out``; return each system's reports and each comparison by benchmark."""
    check_study(study, out)
    existed = out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        reports = {name: _reports(study, name, out) for name in study.systems}
        names = list(study.systems)
        comparisons: dict[str, dict[str, Comparison]] = {}
        for benchmark in study.benchmarks:
            for other in names[1:]:
                pair = [reports[n][benchmark] for n in (names[0], other)]
                where = out / "compare" / benchmark / f"{names[0]}_vs_{other}"
                laid = replace(study.layout, label=label(study, benchmark, names[0], "vs", other))
                done = compare_reports(*pair, [names[0], other], where, study.rule, laid, study.figures)
                comparisons.setdefault(benchmark, {})[other] = done
        (out / "index.html").write_text(index_page(study, reports, comparisons), encoding="utf-8")
        (out / "study.tex").write_text(study_table(study, reports), encoding="utf-8")
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        if existed:  # it was empty (checked above): left as it was
            out.mkdir()
        raise
    return {"reports": reports, "comparisons": comparisons}


def _link(path: str, text: str) -> str:
    return f'<a href="{html.escape(path)}">{html.escape(text)}</a>'


def index_page(
    study: Study, reports: Mapping[str, Mapping[str, Report]], comparisons: Mapping[str, Mapping[str, Comparison]]
) -> str:
    """``index.html``: the headline table, every report and comparison linked, each comparison's first paragraph
    beside its link."""
    names = list(study.systems)
    parts = ['<!DOCTYPE html>\n<html lang="en" xmlns="http://www.w3.org/1999/xhtml"><head><meta charset="utf-8" />'
             f"<title>Bias study</title><style>{CSS}</style></head><body>",
             f"<h1>{html.escape(study.layout.caption('Bias study'))}: {html.escape(', '.join(names))}</h1>",
             headline_html(study, reports), "<h2>Reports</h2><ul>"]  # fmt: skip
    for name in names:
        links = []
        for benchmark in study.benchmarks:
            if benchmark == "mtgeneval":
                links.append(_link(f"{name}/mtgeneval/report.html", "MT-GenEval"))
            else:
                links += [_link(f"{name}/winomt/{lang}/report.html", f"WinoMT {lang}") for lang in study.langs]
        parts.append(f"<li>{html.escape(name)}: {' · '.join(links)}</li>")
    parts.append("</ul><h2>Comparisons</h2>")
    for benchmark, by_other in comparisons.items():
        for other, done in by_other.items():
            path = f"compare/{benchmark}/{names[0]}_vs_{other}/comparison.html"
            parts.append(f"<h3>{_link(path, f'{benchmark}: {other} against {names[0]}')}</h3>")
            parts.append(f"<p>{html.escape(done.summary)}</p>")
    parts.append(f"<p>{_link('study.tex', 'study.tex')}: the headline table for a paper.</p></body></html>")
    return "\n".join(parts) + "\n"


#: the headline table's caption (``study.tex``, the index page)
CAPTION = (
    "Gender bias per system and language. MT-GenEval: BLEU and the accuracy gap (masculine \u2212 feminine, points); "
    "WinoMT: accuracy (percent), ΔG (F1 male \u2212 F1 female) and ΔS (pro- \u2212 anti-stereotypical accuracy), in "
    "points. Intervals and paired tests: the comparisons."
)


def headline(study: Study, reports: Mapping[str, Mapping[str, Report]]) -> tuple[list[str], list[list[str]]]:
    """The headline table, as text: per system and language, BLEU and the accuracy gap on MT-GenEval, accuracy, ΔG
    and ΔS on WinoMT (the benchmarks scored)."""
    header = ["System", "Language"]
    header += ["BLEU", "Acc. gap"] if "mtgeneval" in study.benchmarks else []
    header += ["WinoMT acc.", "ΔG", "ΔS"] if "winomt" in study.benchmarks else []
    rows = []
    for name, found in reports.items():
        for lang in study.langs:
            row = [name, lang]
            if "mtgeneval" in found:
                m = found["mtgeneval"].metrics["languages"][lang]
                row += [figure_plain(m.get("bleu")), figure_plain(m.get("accuracy_gap"), 100, True)]
            if "winomt" in found:
                w = found["winomt"].metrics["languages"][lang]
                row += [
                    figure_plain(w.get("accuracy")),
                    *(figure_plain(w.get(k), signed=True) for k in ("delta_g", "delta_s")),
                ]
            rows.append(row)
    return header, rows


def study_table(study: Study, reports: Mapping[str, Mapping[str, Report]]) -> str:
    """``study.tex``: the :func:`headline` table, a rule between the systems."""
    header, plain = headline(study, reports)
    rows: list[list[str] | None] = []
    for k, row in enumerate(plain):
        rows += [None] if k and row[0] != plain[k - 1][0] else []
        rows.append([latex.escape(cell) for cell in row])
    lines = latex.table(header, rows, caption=study.layout.caption(CAPTION), label=study.layout.label_or("tab:study"),
                        right_from=2, wide=study.layout.wide)  # fmt: skip
    return "\n".join(lines) + "\n"


def headline_html(study: Study, reports: Mapping[str, Mapping[str, Report]]) -> str:
    """The :func:`headline` table on the index page: numbers right-aligned, the baseline (the first system) named."""
    header, rows = headline(study, reports)
    baseline = next(iter(study.systems))
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        f"<tr><td>{html.escape(row[0] + (' (baseline)' if row[0] == baseline else ''))}</td>"
        f"<td>{html.escape(row[1])}</td>" + "".join(f'<td class="num">{html.escape(c)}</td>' for c in row[2:]) + "</tr>"
        for row in rows
    )
    said = f"{CAPTION} The baseline is {baseline}: each comparison sets another system against it."
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table><p>{html.escape(said)}</p>"
