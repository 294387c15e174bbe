"""``scripts/compare_reports.py BEFORE AFTER [--out DIR] [--names a,b]``: the two reports' figures side by side and
the paired tests of their changes on the same sentences, for two MT-GenEval reports or two WinoMT ones
(:func:`bias_eval.benchmarks.compare_reports`); when AFTER's MT-GenEval model is a folder here, its model card
gets the before/after table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bias_eval.benchmarks import compare_reports
from bias_eval.compare.mtgeneval import COMPARISON_FILES, FIGURE_FILES
from bias_eval.compare.rows import report_names
from bias_eval.core.decision import Rule
from bias_eval.core.latex import Layout
from bias_eval.core.report import Report
from bias_eval.core.textio import check_writable
from mtkit.cli.args import Parser, add_figures_arg, add_latex_args, add_rule_args
from mtkit.errors import UserError, cli_entry
from mtkit.export.card_bias import add_comparison, local_model_dir
from mtkit.paths import check_apart


def parse_names(value: str) -> list[str]:
    """``before,after`` -> two distinct non-empty names."""
    names = [n.strip() for n in value.split(",")]
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise UserError(f"--names: expected two different names separated by a comma (e.g. base,tuned), got {value!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``scripts/compare_reports.py``."""
    parser = Parser(
        lists=("names",),
        prog="compare_reports.py",
        description="Compare two gender-bias reports of scripts/bias_report.py (both MT-GenEval or both WinoMT): "
        "every figure per language and macro-averaged, its change, and whether the change lies outside both "
        "bootstrap 95% CIs; then, when both reports hold the same sentences, paired tests of each change (McNemar for "
        "accuracies, paired bootstrap for BLEU, chrF, the gaps, WinoMT's F1, ΔG and ΔS; Holm-adjusted p beside the "
        "raw one), written to comparison.json too.",
    )
    parser.add_argument("before", metavar="BEFORE", help="report folder (with metrics.json) of the first system; "
                        "for WinoMT, one language's report or a folder of <lang>/ reports")  # fmt: skip
    parser.add_argument("after", metavar="AFTER", help="report folder of the second system")
    parser.add_argument("--out", metavar="DIR", help="write comparison.md, .html, .json, .tex and the figure "
                        "(figures/comparison.svg, .pdf, .png) here (default: print the markdown)")  # fmt: skip
    parser.add_argument(
        "--names",
        help="the two systems' names, comma-separated (default: the reports' --name when both have one, else "
        "before,after)",
    )
    add_rule_args(parser)
    add_latex_args(parser)
    add_figures_arg(parser)
    return parser


@cli_entry
def main(argv: Sequence[str] | None = None) -> int:
    """Compare the reports; bad input ends as one ``error: ...`` line, exit status 2 and nothing written."""
    args = build_parser().parse_args(argv)
    names = None if args.names is None else parse_names(args.names)
    check_apart({"BEFORE": args.before, "AFTER": args.after}, {"--out": args.out})
    if args.out is not None:  # a folder that cannot be made or written: one line, before the reports are read
        check_writable(Path(args.out), "--out")
    before, after = Report.read(args.before, "BEFORE"), Report.read(args.after, "AFTER")
    names = names or report_names(before.metrics, after.metrics)
    out = None if args.out is None else Path(args.out)
    rule = Rule(args.p_adjust, args.min_effect)
    layout = Layout(args.label, args.table_star)
    done = compare_reports(before, after, names, out, rule, layout, figures=not args.no_figures)
    if done.paired["refused"]:
        print(f"note: paired tests not run: {done.paired['refused']}", file=sys.stderr)
    if out is None:
        print(done.markdown, end="")  # the cautions in it
    else:
        for line in done.cautions:
            print(f"warning: {line}", file=sys.stderr)
        print(f"comparison written to {args.out}/: " + ", ".join(sorted([*COMPARISON_FILES, *FIGURE_FILES])))
    if after.benchmark != "mtgeneval":  # the model card takes MT-GenEval's before/after table only
        return 0
    model_dir = local_model_dir((after.metrics.get("config") or {}).get("hypotheses", {}).get("model"))
    if model_dir is not None:  # AFTER's model, when it is a folder here: its card gets the before/after table
        try:
            print(f"model card updated: {add_comparison(model_dir, done.rows, names, done.sources)}", file=sys.stderr)
        except (OSError, ValueError) as err:
            print(f"warning: AFTER's model {model_dir}: model card not updated ({err})", file=sys.stderr)
    return 0
