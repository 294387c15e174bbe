"""What the command-line parsers share: one-line errors, one flag style (:mod:`mtkit.flags`) and training's ranges
for the flags every script shares with it (:func:`ranged`)."""

from __future__ import annotations

import argparse
import sys
import typing
from collections.abc import Callable

from bias_eval.core.decision import MIN_EFFECT, P_ADJUSTS
from mtkit.config import FIELDS, GROUPS, MBR_SAMPLES
from mtkit.decode.mbr import CANDIDATES, DECODINGS, MBR_KEYS
from mtkit.errors import UserError
from mtkit.flags import HelpFormatter, first_names, join_lists, option
from mtkit.ranges import RANGES, SCRIPT_FLOATS, SCRIPT_RANGES


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`~mtkit.errors.UserError`: one ``error:`` line, exit 2, naming
    an option by its first name (argparse names all its aliases: ``--num_beams/--num-beams/--beam-size``)."""

    def __init__(self, *args, lists: tuple[str, ...] = (), **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("allow_abbrev", False)  # --num_beam is refused, never taken for --num_beams
        super().__init__(*args, **kwargs)
        self.lists = lists  # comma-separated flags (documented so) whose words may also follow the flag: de es

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, with the words after a flag of :attr:`lists` joined by commas (``--names a b``: ``a,b``)."""
        args = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(join_lists(args, self.lists), namespace)

    def error(self, message: str):
        if message.startswith("unrecognized arguments:"):
            message += " (see --help)"
        raise UserError(first_names(message))


def ranged(key: str, flag: str | None = None) -> Callable[[str], int | float]:
    """The argparse ``type`` of a script's ``--flag`` (default ``--key``) that means what ``train.py --key`` means:
    the key's type and its range in :data:`mtkit.ranges.RANGES`, refused in training's words
    (``--num_beams: must be > 0, got 0``); a value that is no number is argparse's ``invalid int value``. A flag
    that is no run-config key takes its range from :data:`mtkit.ranges.SCRIPT_RANGES`."""
    if key in RANGES:
        ok, wanted = RANGES[key]
        hint = typing.get_type_hints(GROUPS[FIELDS[key][0]])[key]
        kind = next(t for t in (int, float) if t is hint or t in typing.get_args(hint))
    else:
        (ok, wanted), kind = SCRIPT_RANGES[key], float if key in SCRIPT_FLOATS else int

    def parse(text: str) -> int | float:
        value = kind(text)
        if not ok(value):
            raise UserError(f"--{flag or key}: must be {wanted}, got {value}")
        return value

    parse.__name__ = kind.__name__  # what argparse calls it: "invalid int value"
    parse.range_key = key  # type: ignore[attr-defined]  # the table entry it checks (tests/test_ranges.py)
    return parse


def add_decoding_args(group) -> None:
    """The flags that choose beam search or minimum-Bayes-risk decoding (as ``train.py`` names them; one per
    :data:`mtkit.decode.mbr.MBR_KEYS`)."""
    group.add_argument("--decoding", choices=DECODINGS, default="beam", help=_help("decoding") + " (default: beam)")
    kinds = {"mbr_candidates": {"choices": CANDIDATES}}
    defaults = {"mbr_samples": f" (default: {MBR_SAMPLES})", "mbr_candidates": " (default: sample)"}
    for key in MBR_KEYS:
        kind = kinds[key] if key in kinds else {"type": ranged(key)}
        group.add_argument(f"--{key}", **kind, help=_help(key) + defaults.get(key, ""))


def add_rule_args(group) -> None:
    """``--p_adjust`` and ``--min_effect``, as a mitigation's recipe names them: how a paired change is called a
    finding (:class:`bias_eval.core.decision.Rule`)."""
    group.add_argument(*option("p_adjust"), choices=P_ADJUSTS, default=P_ADJUSTS[0],
                       help=_help("p_adjust") + f" (default: {P_ADJUSTS[0]})")  # fmt: skip
    group.add_argument(*option("min_effect"), type=ranged("min_effect"), default=MIN_EFFECT,
                       help=_help("min_effect") + f" (default: {MIN_EFFECT:g})")  # fmt: skip


def add_latex_args(group) -> None:
    """``--label`` and ``--table_star``: how a paper takes the LaTeX tables (:class:`bias_eval.core.latex.Layout`)."""
    group.add_argument("--label", metavar="LABEL", help="the LaTeX table's \\label (default: the table's own); give "
                       "each table of one paper its own")  # fmt: skip
    group.add_argument(*option("table_star"), action="store_true", help="set the LaTeX table as a table* across "
                       "both columns of a two-column paper (default: one column, \\linewidth)")  # fmt: skip


def add_figures_arg(group) -> None:
    """``--no_figures``: a report, comparison or study without its drawn figures
    (:attr:`bias_eval.core.settings.ReportOptions.figures`)."""
    group.add_argument(*option("no_figures"), action="store_true", help="draw no figures: every other file as it "
                       "would be and the pages without figures; drawing is most of a small report's time (default: "
                       "each figure as SVG, PDF and PNG in figures/ and on the page)")  # fmt: skip


def _help(key: str) -> str:
    """The help text of the run-config field ``key``."""
    return FIELDS[key][1].metadata["help"].rstrip(".")
