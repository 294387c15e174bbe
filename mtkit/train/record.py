"""The run record: what one run did, kept in memory from the end of training to the end of the run.

:meth:`mtkit.train.trainer.Trainer.export` makes it (the updates, the best validation score and its update, the
epochs averaged into ``final/``, the test scores, and the rows per language the run trained on); the end-of-run steps
of :mod:`mtkit.pipeline` add to it (which score is which, the environment, the CTranslate2 and bias report folders
and the reports' figures, a mitigation's comparison and verdict page, the hub commit). ``results.json`` is
:attr:`RunRecord.results`, written by :meth:`RunRecord.write` (atomically) once the run's local steps are done, and
once more only when the upload adds its commit; ``final/``'s model card is written once from the record, after the
verdict (:mod:`mtkit.export.card`). A model folder made
from the run after the fact (``scripts/export_model.py``, ``scripts/average_checkpoints.py``) reads the record back
from the run folder (:meth:`RunRecord.read`).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from bias_eval.compare.mtgeneval import Comparison
from bias_eval.core.textio import atomic_write
from mtkit.data.corpus import DATA_COUNTS

RESULTS = "results.json"


@dataclasses.dataclass
class RunRecord:
    """One run's record: ``results`` is the content of ``results.json``; ``counts`` the rows per language of each
    split (``data_counts.json``, written at the run's start); ``bias`` the figures of its bias report
    (``--bias_report_split``: that report's ``metrics.json``); a mitigation's ``comparison`` (start against
    mitigated model on the verdict pairs) and ``verdict_page``: what the model card shows (its WinoMT figures are
    ``results``' own, ``winomt``)."""

    results: dict[str, Any]
    counts: dict[str, Any] = dataclasses.field(default_factory=dict)
    bias: dict[str, Any] | None = None
    comparison: Comparison | None = None
    verdict_page: str | None = None

    def write(self, run_dir: Path) -> Path:
        """Write ``results.json`` into ``run_dir`` atomically (a reader sees the old file or the new one); return
        its path."""
        path = Path(run_dir) / RESULTS
        atomic_write(path, json.dumps(self.results, indent=2).encode("utf-8"))
        return path

    @classmethod
    def read(cls, run_dir: Path) -> RunRecord:
        """The record a run left in ``run_dir`` (``results.json`` and ``data_counts.json``; empty where missing).
        Its bias report's figures are not read back: a model made after the fact was not the one reported."""
        found = [Path(run_dir) / name for name in (RESULTS, DATA_COUNTS)]
        results, counts = (json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {} for p in found)
        return cls(results, counts)
