"""A bias report as the library holds it: :class:`Report`, its ``metrics.json`` and each language's per-sentence
details (what ``<lang>.details.jsonl`` holds), with the folder it is written in.
:func:`bias_eval.benchmarks.make_report` returns one with the details in memory; :meth:`Report.read` reads one back from
its folder (either benchmark's, or a folder of one WinoMT report per language), its details when a comparison asks for
them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bias_eval.core.errors import UserError
from bias_eval.core.textio import read_jsonl, split_lines

WINOMT = "winomt"
DETAILS = "{lang}.details.jsonl"


class Refused(Exception):
    """Two reports cannot be paired (per-sentence details missing or unreadable, other sentences); the message says
    why, in one line."""


@dataclass(frozen=True)
class Report:
    """A report's ``metrics`` (for a set of WinoMT reports, ``{"benchmark": "winomt", "languages": {lang: metrics}}``),
    the ``folder`` it is written in (``None``: never written), and ``details``: each language's per-sentence rows
    held in memory (a language without them is read from ``folder`` when asked)."""

    metrics: Mapping[str, Any]
    folder: Path | None = None
    details: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)

    @property
    def benchmark(self) -> str:
        """``mtgeneval`` or ``winomt`` (MT-GenEval's reports of earlier versions do not say)."""
        return str(self.metrics.get("benchmark") or "mtgeneval")

    @property
    def languages(self) -> list[str]:
        """The report's languages, sorted."""
        if "language" in self.metrics:
            return [self.metrics["language"]]
        return sorted(self.metrics["languages"])

    def language(self, lang: str) -> Report:
        """One language's WinoMT report, of a set of them (its own folder, ``<folder>/<lang>``) or of this one."""
        if "language" in self.metrics:
            return self
        folder = None if self.folder is None else self.folder / lang
        return Report(self.metrics["languages"][lang], folder, {k: v for k, v in self.details.items() if k == lang})

    def rows(self, lang: str, argument: str) -> list[Mapping[str, Any]]:
        """``lang``'s per-sentence rows, held or read from the folder; :class:`Refused`, naming ``argument``, when
        there are none or they are unreadable."""
        if lang in self.details:
            return list(self.details[lang])
        if self.benchmark == WINOMT and "language" not in self.metrics:
            return self.language(lang).rows(lang, argument)
        if self.folder is None:
            raise Refused(f"{argument}: the report holds no per-sentence details of {lang}")
        path = self.folder / DETAILS.format(lang=lang)
        if not path.exists():
            raise Refused(f"{argument}: {path} is missing (the per-sentence details the paired tests need)")
        try:
            return [row for _, row in read_jsonl(path)]
        except UserError as err:
            raise Refused(f"{argument}: {err}") from None

    @classmethod
    def winomt_set(cls, reports: Mapping[str, Report], folder: Path | None) -> Report:
        """One report of several languages' WinoMT ``reports`` (by language), written in ``folder/<lang>``."""
        metrics = {"benchmark": WINOMT, "languages": {lang: r.metrics for lang, r in sorted(reports.items())}}
        return cls(metrics, folder, {lang: rows for r in reports.values() for lang, rows in r.details.items()})

    @classmethod
    def written(cls, metrics: Mapping[str, Any], files: Mapping[str, bytes], folder: Path) -> Report:
        """The report whose ``files`` were written into ``folder``, its details as those files hold them."""
        details = {}
        for name, data in files.items():
            if name.endswith(".details.jsonl") and "/" not in name:
                lines = split_lines(data.decode("utf-8"))  # a U+2028 inside a sentence is text, not a row's end
                details[name.removesuffix(".details.jsonl")] = [json.loads(line) for line in lines if line.strip()]
        return cls(metrics, folder, details)

    @classmethod
    def read(cls, folder: str | Path, argument: str) -> Report:
        """The report in ``folder`` (its ``metrics.json`` checked; its details read when asked); problems are
        one-line errors naming ``argument``."""
        return cls(_metrics(Path(folder), argument), Path(folder))


def _metrics(path: Path, argument: str) -> dict[str, Any]:
    if not path.exists():
        raise UserError(f"{argument}: {path}: no such folder")
    if not path.is_dir():
        raise UserError(f"{argument}: {path} is not a folder (expected a bias report folder)")
    file = path / "metrics.json"
    languages = sorted(f.parent.name for f in path.glob("*/metrics.json"))
    if not file.is_file() and languages:  # a folder of one WinoMT report per language
        found = {lang: _metrics(path / lang, argument) for lang in languages}
        if all(m.get("benchmark") == WINOMT and m.get("language") == lang for lang, m in found.items()):
            return {"benchmark": WINOMT, "languages": found}
    if not file.is_file():
        raise UserError(f"{argument}: {path} has no metrics.json (not a scripts/bias_report.py output folder)")
    try:
        metrics = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{argument}: {file}: invalid UTF-8") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{argument}: {file}: invalid JSON (line {err.lineno}, column {err.colno})") from None
    if isinstance(metrics, dict) and metrics.get("benchmark") == WINOMT and isinstance(metrics.get("language"), str):
        return metrics  # one language's WinoMT report
    for part in ("languages", "macro"):
        if not isinstance(metrics, dict) or not isinstance(metrics.get(part), dict):
            raise UserError(f"{argument}: {file} is not a bias report's metrics.json (no {part!r} object)")
    if not metrics["languages"] or not all(isinstance(m, dict) for m in metrics["languages"].values()):
        raise UserError(f"{argument}: {file} holds no language results")
    return metrics
