"""Every GPU figure of docs/gpu.md from a few commands (see ``scripts/benchmarks/gpu_report.py`` for the steps)::

python scripts/gpu_report.py --dry_run                  # the plan: groups, time limits, files; checked
python scripts/gpu_report.py --only base                # one group: one device command of at most 9 minutes
python scripts/gpu_report.py --out /tmp/r --smoke       # every step at CPU size (the plumbing)

``--out`` defaults to ``$OUT/gpu_report`` where ``$OUT`` is set (what a device command brings back), else
``runs/gpu_report``.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks import gpu_report

from mtkit.cli.args import Parser
from mtkit.errors import UserError, cli_entry
from mtkit.paths import check_apart


@cli_entry
def main(argv: list[str] | None = None) -> None:
    p = Parser(description="Run the GPU tests and benchmarks; write report.md and report.json into --out.")
    default_out = Path(os.environ["OUT"]) / "gpu_report" if os.environ.get("OUT") else Path("runs/gpu_report")
    p.add_argument("--out", default=str(default_out), help=f"folder for the report, logs and profiles ({default_out})")
    p.add_argument("--work", help="folder for runs and models (default: /tmp/mtkit_gpu_report with $OUT, else "
                   "OUT/runs)")  # fmt: skip
    p.add_argument("--data", default=None, help="folder with multi30k/ and mt-geneval/ (default: ../shared/data, "
                   "else .gpu/data, where scripts/gpu_prepare.sh copies them)")  # fmt: skip
    p.add_argument("--only", nargs="+", default=[], help="run only these groups or steps (names or patterns: 'flan-*')")
    p.add_argument("--translate_model", help="model for the translate step (default: train one first)")
    p.add_argument("--smoke", action="store_true", help="every step at CPU size, GPU or not")
    p.add_argument("--dry_run", action="store_true", help="print and check the plan; run nothing")
    args = p.parse_args(argv)
    repo = Path(__file__).resolve().parents[1]
    candidates = [Path(args.data)] if args.data else [repo.parent / "shared" / "data", repo / ".gpu" / "data"]
    data = next((d for d in candidates if (d / "multi30k").is_dir()), None)
    out, work = Path(args.out), Path(args.work) if args.work else None
    if args.dry_run:
        found = gpu_report.select(
            gpu_report.steps(data or candidates[0], out, args.smoke, args.translate_model, work), args.only
        )
        print(gpu_report.plan(found, out))
        problems = gpu_report.check_plan(found, out)
        if problems:
            raise UserError("--dry_run: " + "; ".join(problems))
        print(f"plan ok: every group within {gpu_report.SLOT_S} s and {gpu_report.MAX_FILES} files")
        return
    if data is None:
        raise UserError(f"--data: no multi30k/ in {' or '.join(map(str, candidates))}")
    check_apart({"--data": data, "--translate_model": args.translate_model}, {"--out": out})
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    records = gpu_report.run(data.resolve(), out.resolve(), args.smoke, args.only, args.translate_model, work)
    print(gpu_report.report(records, out))
    print(f"report: {out / 'report.md'} and {out / 'report.json'}")


if __name__ == "__main__":
    main()
