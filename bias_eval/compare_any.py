"""Two reports of one benchmark compared by one call, whichever the benchmark: :func:`comparison_for` gives the
comparison of two MT-GenEval reports (:func:`bias_eval.comparison.compare_reports`) or of two WinoMT reports or sets
of them (:func:`bias_eval.compare_winomt.compare_winomt`), both called alike, and refuses a pair of two benchmarks in
one line."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bias_eval.compare_winomt import BENCHMARK, compare_winomt
from bias_eval.comparison import Comparison, compare_reports
from bias_eval.errors import UserError


def benchmark(metrics: Mapping[str, Any]) -> str:
    """The benchmark a ``metrics.json`` (or a set of WinoMT reports) reports on (MT-GenEval's reports of earlier
    versions do not say)."""
    return str(metrics.get("benchmark") or "mtgeneval")


def comparison_for(before: Mapping[str, Any], after: Mapping[str, Any]) -> Callable[..., Comparison]:
    """The function that compares ``before`` with ``after`` (called as
    :func:`~bias_eval.comparison.compare_reports` is); two benchmarks are refused before anything is read or
    written."""
    kinds = benchmark(before), benchmark(after)
    if kinds[0] != kinds[1]:
        raise UserError(
            f"AFTER: a {kinds[1]} report cannot be compared with BEFORE's {kinds[0]} report (compare two reports of "
            "one benchmark)"
        )
    return compare_winomt if kinds[0] == BENCHMARK else compare_reports
