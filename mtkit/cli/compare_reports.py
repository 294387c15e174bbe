"""``scripts/compare_reports.py BEFORE AFTER [--out DIR] [--names a,b]``: the two reports' figures side by side and
the paired tests of their changes on the same sentences; when AFTER's model is a folder here, its model card gets
the before/after table."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bias_eval.comparability import cautions
from bias_eval.compare import compare, describe_sources, load_metrics, render_html, render_markdown
from bias_eval.compare_paired import paired_html, paired_markdown, paired_tests
from bias_eval.report import write_report
from mtkit.cli.args import Parser
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
        description="Compare two gender-bias reports of scripts/bias_report.py: every figure per language and "
        "macro-averaged, its change, and whether the change lies outside both bootstrap 95% CIs; then, when both "
        "reports hold the same sentences, paired tests of each change (McNemar for accuracies, paired bootstrap for "
        "BLEU, chrF and the gaps), written to comparison.json too.",
    )
    parser.add_argument("before", metavar="BEFORE", help="report folder (with metrics.json) of the first system")
    parser.add_argument("after", metavar="AFTER", help="report folder of the second system")
    parser.add_argument("--out", metavar="DIR", help="write comparison.md and comparison.html here "
                        "(default: print the markdown table)")  # fmt: skip
    parser.add_argument("--names", default="before,after", help="column names, comma-separated (default: before,after)")
    return parser


@cli_entry
def main(argv: Sequence[str] | None = None) -> int:
    """Compare the reports; bad input ends as one ``error: ...`` line, exit status 2 and nothing written."""
    args = build_parser().parse_args(argv)
    names = parse_names(args.names)
    check_apart({"BEFORE": args.before, "AFTER": args.after}, {"--out": args.out})
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UserError(f"--out: {args.out} exists and is not a folder")
    before, after = load_metrics(args.before, "BEFORE"), load_metrics(args.after, "AFTER")
    rows, notes = compare(before, after, names)
    sources = describe_sources([args.before, args.after], [before, after], names)
    flagged = cautions(before, after, names)  # each report's warnings, different decoding or data
    common = sorted(set(before["languages"]) & set(after["languages"]))
    paired = paired_tests([Path(args.before), Path(args.after)], [before, after], names, common)
    if paired["refused"]:
        print(f"note: paired tests not run: {paired['refused']}", file=sys.stderr)
    markdown = render_markdown(rows, notes, names, sources, paired_markdown(paired, names), cautions=flagged)
    if args.out is None:
        print(markdown, end="")  # the cautions in it
    else:
        for line in flagged:
            print(f"warning: {line}", file=sys.stderr)
        page = render_html(rows, notes, names, sources, paired_html(paired, names), cautions=flagged)
        files = {"comparison.md": markdown, "comparison.html": page}
        files["comparison.json"] = json.dumps({"names": names, "sources": sources, "paired": paired}, indent=2) + "\n"
        write_report(Path(args.out), {name: text.encode("utf-8") for name, text in files.items()})
        print(f"comparison written to {args.out}/: " + ", ".join(sorted(files)))
    model_dir = local_model_dir((after.get("config") or {}).get("hypotheses", {}).get("model"))
    if model_dir is not None:  # AFTER's model, when it is a folder here: its card gets the before/after table
        try:
            print(f"model card updated: {add_comparison(model_dir, rows, names, sources)}", file=sys.stderr)
        except (OSError, ValueError) as err:
            print(f"warning: AFTER's model {model_dir}: model card not updated ({err})", file=sys.stderr)
    return 0
