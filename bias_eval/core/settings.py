"""What a report needs to know besides the data and the hypotheses, for either benchmark: the options its maker
picks (:class:`ReportOptions`) and where its hypotheses came from (:class:`ReportSettings`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_eval.core.bootstrap import SAMPLES, SEED
from bias_eval.core.decision import MIN_EFFECT
from bias_eval.core.latex import Layout


@dataclass(frozen=True)
class ReportOptions:
    """How a report is made, whatever its data and hypotheses: the bootstrap, the worst examples shown, the smallest
    finding, the system's name, how ``report.tex`` is set and whether the figures are drawn."""

    bootstrap_samples: int = SAMPLES  # resamples for the CIs (0: none)
    seed: int = SEED
    examples: int = 10  # worst examples per language
    name: str | None = None  # the system's name in the title and metrics.json (default: the model or the folder)
    min_effect: float = MIN_EFFECT  # the smallest gap shown as a finding, in points (bias_eval.core.decision)
    layout: Layout = Layout()  # how report.tex is set for a paper: its label, table* (bias_eval.core.latex)
    figures: bool = True  # the figures drawn (SVG, PDF, PNG) and shown on the page; False: every other file, as is


@dataclass(frozen=True)
class ReportSettings:
    """What a report needs to know besides the data and the hypotheses: where the hypotheses came from, the command
    that rebuilds it (both written into ``metrics.json``) and its :class:`ReportOptions`."""

    hypotheses: Mapping[str, Any]  # metrics.json's config.hypotheses: {"hyp_dir": ...} or the model and its settings
    description: str  # one line: how the hypotheses were made
    command: str  # the command line that rebuilds this report
    hyp_dir: Path | None = None  # the folder of <lang>.<gender>.txt hypothesis files, if any (config.files)
    context: bool = False  # the contextual subset scored too
    max_samples: int | None = None  # the data is a subset of about this many sentences
    options: ReportOptions = ReportOptions()
