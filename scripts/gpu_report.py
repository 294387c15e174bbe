"""Every GPU figure of the README from one command (see ``scripts/benchmarks/gpu_report.py`` for the steps)::

python scripts/gpu_report.py --out runs/gpu_report            # on a GPU machine: about 10 minutes
python scripts/gpu_report.py --out /tmp/r --only 'flan-t5-xl*'  # some steps
python scripts/gpu_report.py --out /tmp/r --smoke              # every step at CPU size (the plumbing)
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import gpu_report

from mtkit.cli.args import Parser
from mtkit.errors import UserError, cli_entry
from mtkit.paths import check_apart


@cli_entry
def main(argv: list[str] | None = None) -> None:
    p = Parser(description="Run the GPU tests and benchmarks; write report.md and report.json into --out.")
    p.add_argument("--out", required=True, help="folder for report.md, report.json and the steps' runs")
    p.add_argument("--data", default=None, help="folder with multi30k/ and mt-geneval/ (default: ../shared/data, "
                   "else .gpu/data, where scripts/gpu_prepare.sh copies them)")  # fmt: skip
    p.add_argument("--only", nargs="+", default=[], help="run only these steps (names or patterns: 'flan-*')")
    p.add_argument("--translate_model", help="model for the translate step (default: train one first)")
    p.add_argument("--smoke", action="store_true", help="every step at CPU size, GPU or not")
    args = p.parse_args(argv)
    repo = Path(__file__).resolve().parents[1]
    candidates = [Path(args.data)] if args.data else [repo.parent / "shared" / "data", repo / ".gpu" / "data"]
    data = next((d for d in candidates if (d / "multi30k").is_dir()), None)
    if data is None:
        raise UserError(f"--data: no multi30k/ in {' or '.join(map(str, candidates))}")
    out = Path(args.out)
    check_apart({"--data": data, "--translate_model": args.translate_model}, {"--out": out})
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    records = gpu_report.run(data.resolve(), out.resolve(), args.smoke, args.only, args.translate_model)
    print(gpu_report.report(records, out))
    print(f"report: {out / 'report.md'} and {out / 'report.json'}")


if __name__ == "__main__":
    main()
