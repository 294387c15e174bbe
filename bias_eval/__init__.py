"""bias_eval: gender-bias evaluation of translation models on MT-GenEval (or any gendered parallel data) and WinoMT,
a library of its own (it imports nothing of ``mtkit``). :func:`make_report` makes a report from hypotheses (a
:class:`Report`, its per-sentence details in memory; ``Report.read`` reads one from its folder) and
:func:`compare_reports` compares two, whichever the benchmark; each is imported when first used, so that
``bias_eval.core.markdown`` stays light.

The package: ``core/`` (what both benchmarks share: text, tags, BLEU, intervals, paired tests, the decision rule,
tables, pages, figures, files), ``mtgeneval/`` and ``winomt/`` (each benchmark's scoring and report; neither imports
the other), ``compare/`` (two reports side by side with paired tests), ``benchmarks`` (the two calls above)."""

from __future__ import annotations

import importlib
from typing import Any

#: the public API -> the module that defines it
_HOMES = {
    "Report": "bias_eval.core.report",
    "ReportOptions": "bias_eval.core.settings",
    "ReportSettings": "bias_eval.core.settings",
    "make_report": "bias_eval.benchmarks",
    "Comparison": "bias_eval.compare.mtgeneval",
    "compare_reports": "bias_eval.benchmarks",
    "make_winomt_report": "bias_eval.winomt.report",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """``bias_eval.make_report`` and the rest of :data:`_HOMES`, from their modules."""
    if name not in _HOMES:
        raise AttributeError(f"module 'bias_eval' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
