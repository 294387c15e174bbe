"""bias_eval: gender-bias evaluation of translation models on MT-GenEval and gendered parallel data, a library of
its own (it imports nothing of ``mtkit``). :func:`make_report` makes a report from hypotheses and
:func:`compare_reports` compares two; :func:`make_winomt_report` reports on translations of WinoMT; each is
imported when first used, so that ``bias_eval.markdown`` stays light."""

from __future__ import annotations

import importlib
from typing import Any

#: the public API -> the module that defines it
_HOMES = {
    "ReportSettings": "bias_eval.make",
    "make_report": "bias_eval.make",
    "Comparison": "bias_eval.comparison",
    "compare_reports": "bias_eval.comparison",
    "make_winomt_report": "bias_eval.winomt.report",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """``bias_eval.make_report`` and the rest of :data:`_HOMES`, from their modules."""
    if name not in _HOMES:
        raise AttributeError(f"module 'bias_eval' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
