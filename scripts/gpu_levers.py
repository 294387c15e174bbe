"""Benchmark: each lever of the training step measured on one GPU, side by side and checked for exactness.

One prepared command (docs/gpu.md; about 8 minutes on one H100 or H200, new variants stopped in time to stay within
``--budget_s``): on the same fixed batches, with the weights reset to the same start for every variant, four parts
(``--parts``), the quick ones first:

* ``eager``: transformer-base at Multi30k's lengths: the baseline (the step as it was: padding to a multiple of 8,
  the decoder cache built, full fp32 logits into torch's cross-entropy, the tokenizer's vocabulary, eager), then each
  lever added to the ones before it: padding to 1, no decoder cache, the fused loss on the target rows, its
  elementwise part compiled, the vocabulary rounded to 64 rows; every eager lever with one SDPA backend forced;
  transformer-big at WMT14's lengths, the baseline against every eager lever; flan-t5-large's shape (one process):
  the baseline, the fused loss, its kernel, and T5's norms fused;
* ``profile``: where the GPU time of an update with every eager lever goes (:mod:`benchmarks.kernel_profile`);
* ``zero3``: flan-t5-large's shape under DeepSpeed ZeRO-3 on the one GPU (``scripts/benchmark_step.py`` under
  ``accelerate launch``, the toolkit's own loop, without and with ``--fuse_norms``; not in a ``--smoke`` run);
* ``compile``: transformer-base with ``torch.compile`` (dynamic shapes, static shapes on bucketed batches, CUDA
  graphs), then transformer-big with the fastest of them.

Per variant one JSON line in ``<out>/gpu_levers.jsonl`` (``$OUT`` when set): ms per update, target tokens/s,
``ratio`` (the workload's baseline's ms over the variant's: > 1 is faster), TFLOP/s, MFU, target padding, peak
memory, host syncs in one update (CUDA's sync debug mode), graphs compiled and graph breaks, and the exactness check:
the first update's loss and gradient norm from the same weights, and their relative difference to the baseline's.
The corpora are synthetic (random ids at each benchmark's length distribution): throughput depends on shapes alone.

    python scripts/gpu_levers.py                 # on a GPU machine
    python scripts/gpu_levers.py --smoke         # every variant two updates on the CPU with transformer-tiny
                                                 # (the loss kernel and T5's fused norms eager there: their plumbing)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.levers import Levers, Workload, batches, corpus, cumulative, exactness, initial_weights, measure

from bias_eval.core.markdown import records_table
from mtkit.errors import UserError, cli_entry

WORKLOADS = {
    "base": Workload("transformer-base, Multi30k lengths", "transformer-base", "multi30k", 25_000, 26_142),
    "big": Workload("transformer-big, WMT14 lengths", "transformer-big", "wmt14", 25_000, 37_000),
    "flan": Workload("flan-t5-large shape", "flan-t5-large", "wmt14", 12_000, 32_128),
}
_T5_TINY = (("num_layers", 1), ("num_decoder_layers", 1), ("d_model", 64), ("d_ff", 128), ("num_heads", 2),
            ("vocab_size", 1_000))  # fmt: skip
SMOKE = {
    "base": Workload("transformer-tiny, Multi30k lengths", "transformer-tiny", "multi30k", 600, 1_000, 100),
    "big": Workload("transformer-tiny, WMT14 lengths", "transformer-tiny", "wmt14", 1_200, 1_000, 100),
    "flan": Workload("flan-t5 (1 layer, d 64)", "flan-t5-small", "multi30k", 600, 1_000, 100, _T5_TINY),
}
#: Each lever in the order it is added, as changes to :class:`Levers`.
LEVERS = [
    ("pad-1", {"pad": 1}),
    ("no-cache", {"no_cache": True}),
    ("fused-loss", {"fused": True}),
    ("loss-kernel", {"loss_kernel": True}),
    ("vocab-64", {"vocab64": True}),
    ("compile-dynamic", {"compile": "dynamic"}),
    ("compile-static", {"compile": "static"}),
    ("cuda-graphs", {"compile": "cudagraphs"}),
]
#: SDPA backends tried alone on top of the eager levers (torch's own choice, the baseline's, is cuDNN's on Hopper).
ATTENTION = ("efficient", "math")
#: The parts of a run, in the order they run: the eager levers of every workload first (seconds each), where the GPU
#: time goes, the toolkit's loop under ZeRO-3, and last the compiled variants (minutes of compiling each).
PARTS = ("eager", "profile", "zero3", "compile")
T5_LEVERS = [
    ("fused-loss", {"pad": 1, "no_cache": True, "fused": True}),
    ("loss-kernel", {"loss_kernel": True}),
    ("fused-norms", {"fused_norms": True}),
]
COLUMNS = [
    ("workload", "workload", "{}"),
    ("ms_per_update", "ms/update", "{:.1f}"),
    ("tgt_tok_s", "tgt tok/s", "{:,.0f}"),
    ("ratio", "x baseline", "{:.2f}"),
    ("mfu", "MFU", "{:.1%}"),
    ("peak_mem_gb", "peak GiB", "{:.1f}"),
    ("host_syncs", "syncs", "{}"),
    ("graph_breaks", "breaks", "{}"),
    ("loss_diff", "loss diff", "{:.1e}"),
    ("grad_norm_diff", "grad-norm diff", "{:.1e}"),
]


class Run:
    """The variants of one invocation, written as they finish, within a time budget."""

    def __init__(self, out: Path, budget_s: float, steps: int, warmup: int, smoke: bool) -> None:
        self.path, self.deadline = out / "gpu_levers.jsonl", time.monotonic() + budget_s
        self.steps, self.warmup, self.smoke = steps, warmup, smoke
        self.records: list[dict] = []
        self.baselines: dict[str, dict] = {}  # workload name -> its baseline's record
        self.longest: dict[bool, float] = {}  # compiled or not -> the longest variant of that kind so far
        self.path.write_text("", encoding="utf-8")

    def workload(self, workload: Workload, variants: list[tuple[str, Levers]]) -> list[dict]:
        """Each variant of ``workload`` against its baseline (measured first, once per invocation); a variant that
        would not end in time (judged by the longest of its kind so far: compiled or eager) is skipped."""
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        pairs, weights = corpus(workload), initial_weights(workload)
        first = batches(workload, pairs, Levers(pad=1), 1)[0]
        if workload.name not in self.baselines:
            variants = [("baseline", Levers()), *variants]
        done: list[dict] = []
        for name, levers in variants:
            record = {"workload": workload.name, "variant": name, "levers": vars(levers)}
            kind = levers.compile is not None
            if time.monotonic() + self.longest.get(kind, 0.0) * 1.2 > self.deadline:
                record["status"] = "skipped: the time budget"
            else:
                started = time.monotonic()
                loss, norm = exactness(workload, levers, weights, first, device)
                record |= {"status": "ok", "loss": loss, "grad_norm": norm}
                record |= measure(workload, levers, weights, pairs, steps=self.steps, warmup=self.warmup,
                                  smoke=self.smoke)  # fmt: skip
                self.longest[kind] = max(self.longest.get(kind, 0.0), time.monotonic() - started)
                base = self.baselines.setdefault(workload.name, record)
                record["ratio"] = base["ms_per_update"] / record["ms_per_update"]
                record["loss_diff"] = abs(loss - base["loss"]) / abs(base["loss"])
                record["grad_norm_diff"] = abs(norm - base["grad_norm"]) / abs(base["grad_norm"])
                done.append(record)
            self._write(record)
        return done

    def _write(self, record: dict) -> None:
        self.records.append(record)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        print(json.dumps({k: v for k, v in record.items() if k != "levers"}), flush=True)

    def zero3(self, workload: Workload, fuse: bool) -> None:
        """``workload`` under DeepSpeed ZeRO-3 on the one GPU through the toolkit's loop (GPU runs only)."""
        import subprocess

        from benchmarks.levers import write_text_corpus

        record = {"workload": f"{workload.name}, ZeRO-3", "variant": "fuse-norms" if fuse else "eager"}
        left = self.deadline - time.monotonic()
        if self.smoke:
            record["status"] = "skipped: a GPU run's variant (a DeepSpeed launch)"
        elif left < 150:
            record["status"] = "skipped: the time budget"
        else:
            work = self.path.parent / "zero3"
            data = write_text_corpus(workload, work / "data")
            report = work / f"{record['variant']}.json"
            command = zero3_command(workload, data, work / record["variant"], fuse, report)
            try:
                done = subprocess.run(command, timeout=left, capture_output=True, text=True)
                ok = done.returncode == 0 and report.is_file()
            except subprocess.TimeoutExpired:
                ok, done = False, None
            if ok:
                figures = json.loads(report.read_text(encoding="utf-8"))
                record |= {"status": "ok", "ms_per_update": figures["step_ms"], "tgt_tok_s": figures["tgt_tok_s"],
                           "mfu": figures.get("mfu"), "peak_mem_gb": figures.get("peak_mem_gb")}  # fmt: skip
            else:
                log = work / f"{record['variant']}.log"
                log.write_text(done.stdout + done.stderr if done is not None else "timed out", encoding="utf-8")
                record["status"] = f"failed: {failure(done)} (the whole output: {log})"
        self._write(record)

    def profile(self, workload: Workload, levers: Levers) -> None:
        """Where the GPU time of ``workload``'s update goes under ``levers``: :func:`kernel_profile.profile`."""
        from benchmarks.kernel_profile import profile

        record = {"workload": workload.name, "variant": "profile", "levers": vars(levers)}
        if time.monotonic() + 60 > self.deadline:
            record["status"] = "skipped: the time budget"
        else:
            trace = self.path.parent / f"trace-{workload.preset}-{workload.lengths}.json.gz"
            record |= {"status": "ok", "trace": str(trace)}
            record |= profile(workload, levers, initial_weights(workload), corpus(workload), steps=3,
                              warmup=self.warmup, trace=trace)  # fmt: skip
        self._write(record)


def profile_summary(record: dict) -> str:
    """A profile record in a few lines: the update's wall and GPU-busy time, the kernel families, the top kernels."""
    busy = record.get("gpu_busy_share")
    default = vars(Levers())
    pulled = [k if v is True else f"{k} {v}" for k, v in record["levers"].items() if v != default[k]]
    lines = [
        f"{record['workload']} ({', '.join(pulled)}):"
        f" {record['wall_ms_per_update']:.1f} ms per update, GPU busy {record['gpu_busy_ms_per_update']:.1f} ms"
        f" ({'n/a' if busy is None else f'{busy:.0%}'}), {record['kernels_per_update']:.0f} kernels per update"
    ]
    lines.append("  families: " + ", ".join(f"{k} {v:.0%}" for k, v in record["families"].items()))
    for part in ("top_operators", "top_kernels"):
        lines.append(f"  {part.replace('_', ' ')}:")
        lines += [f"  {k['share']:6.1%} {k['ms_per_update']:7.2f} ms  {k['name']}" for k in record[part]]
    return "\n".join(lines)


def failure(done) -> str:
    """The last lines of a failed launch's output that say something (not a rule of '=' or a blank)."""
    if done is None:
        return "timed out"
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines()]
    said = [line for line in lines if line and line.strip("=-_ ") and not line.startswith("[rank")]
    return " | ".join(said[-3:]) or f"exit status {done.returncode}"


def zero3_command(workload: Workload, data: Path, work: Path, fuse: bool, report: Path) -> list[str]:
    """The toolkit's own loop on ``workload``'s model under ZeRO-3 on one GPU: ``benchmark_step.py`` launched."""
    repo = Path(__file__).resolve().parents[1]
    return [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file",
        str(repo / "accelerate_configs" / "deepspeed_zero3.yaml"), "--num_processes", "1", "--mixed_precision", "bf16",
        str(repo / "scripts" / "benchmark_step.py"), "--data_dir", str(data), "--source_lang", "en", "--target_lang",
        "de", "--validation_split", "valid", "--test_split", "none", "--model", workload.preset, "--vocab_size", "8000",
        "--max_tokens", str(workload.max_tokens), "--steps", "10", "--warmup", "3", "--report_to", "none",
        "--disable_tqdm", "--eval_steps", "100000", "--json", str(report), "--output_dir", str(work),
        *(["--fuse_norms"] if fuse else []),
    ]  # fmt: skip


@cli_entry
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="folder for gpu_levers.jsonl (default: $OUT, else runs/gpu_levers)")
    ap.add_argument("--budget_s", type=float, default=500, help="start no variant that would end after this")
    ap.add_argument("--steps", type=int, help="timed updates per variant (default 20; 2 with --smoke)")
    ap.add_argument("--warmup", type=int, help="untimed updates first (default 5; 1 with --smoke)")
    ap.add_argument("--smoke", action="store_true", help="every variant, two updates on the CPU, transformer-tiny")
    ap.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"which parts, run in this order whatever the order given (default {','.join(PARTS)})",
    )
    args = ap.parse_args()
    import torch

    if not args.smoke and not torch.cuda.is_available():
        raise UserError("gpu_levers: torch sees no CUDA GPU; --smoke runs the variants on the CPU")
    steps = args.steps or (2 if args.smoke else 20)
    warmup = args.warmup if args.warmup is not None else (1 if args.smoke else 5)
    if steps < 1 or warmup < 0:
        raise UserError("--steps must be at least 1 and --warmup at least 0")
    out = Path(args.out or os.environ.get("OUT") or "runs/gpu_levers")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"--out {out}: cannot be created ({err.strerror})") from None
    loads = SMOKE if args.smoke else WORKLOADS
    run = Run(out, args.budget_s, steps, warmup, args.smoke)
    parts = args.parts.split(",")
    if unknown := sorted(set(parts) - set(PARTS)):
        raise UserError(f"--parts: unknown part(s) {', '.join(unknown)}; the parts are {', '.join(PARTS)}")
    eager = [(n, lv) for n, lv in cumulative(LEVERS)[1:] if lv.compile is None]
    best = eager[-1][1]  # every eager lever: each leaves the result unchanged
    for part in [p for p in PARTS if p in parts]:
        if part == "eager":
            run.workload(loads["base"], eager)
            run.workload(
                loads["base"], [(f"eager levers, {a} attention", replace(best, attention=a)) for a in ATTENTION]
            )
            run.workload(loads["big"], [("eager levers", best)])
            run.workload(loads["flan"], cumulative(T5_LEVERS)[1:])
        elif part == "profile":
            run.profile(loads["base"], best)
            run.profile(loads["big"], best)
        elif part == "zero3":
            for fuse in (False, True):
                run.zero3(loads["flan"], fuse)
        else:
            compiled = [(n, lv) for n, lv in cumulative(LEVERS)[1:] if lv.compile is not None]
            done = run.workload(loads["base"], compiled)
            if done:
                fastest = min(done, key=lambda r: r["ms_per_update"])
                run.workload(loads["big"], [(f"eager levers + {fastest['variant']}", Levers(**fastest["levers"]))])
    shown = [{k: v for k, v in r.items() if v is not None} for r in run.records if r["status"] == "ok"]
    print(records_table([r for r in shown if r["variant"] != "profile"], COLUMNS, label="variant"))
    for record in [r for r in shown if r["variant"] == "profile"]:
        print(profile_summary(record))
    print(f"records: {run.path}", file=sys.stderr)


if __name__ == "__main__":
    main()
