"""Benchmarks printed as ratios against a baseline measured in the same run.

``train``: this toolkit's loop against transformers' ``Seq2SeqTrainer`` (its defaults, and its length grouping)
on the same preset, data and sentences per update: non-padding target tokens/s, padding, peak memory. Every
other flag is a recipe key::

    python scripts/benchmark.py train --data_dir ../shared/data/multi30k --source_lang en --target_lang de \\
        --model transformer-base --vocab_size 8000 --max_tokens 2048 --max_train_samples 8000 --steps 20

``quality``: the toolkit and ``Seq2SeqTrainer`` (length-grouped) each train for ``--minutes`` from the same
initial weights, then both are scored on the recipe's test split with the same decoding::

    python scripts/benchmark.py quality --config recipes/multi30k_en_de_small.yaml --minutes 20 --warmup_steps 200

``translate``: transformers' ``generate`` (without and with the output bound) against CTranslate2 float32 and
int8 on the same sentences, beam, batch size and threads: seconds, sentences/s, output tokens/s, sacreBLEU::

    python scripts/benchmark.py translate --model runs/multi30k_en_de_small/final \\
        --source ../shared/data/multi30k/test_2016_flickr.en.gz \\
        --reference ../shared/data/multi30k/test_2016_flickr.de.gz

``decoding``: beam search against MBR decoding (chrF over N = 8, 16, 32 epsilon samples) on the same model and
sentences: BLEU and chrF with paired-bootstrap intervals of the difference, time per sentence; with
``--mtgeneval_dir``, the gender gap and accuracy (with CIs) of beam search and MBR at the middle N::

    python scripts/benchmark.py decoding --model runs/multi30k_en_de_small/final \
        --source ../shared/data/multi30k/test_2016_flickr.en.gz \
        --reference ../shared/data/multi30k/test_2016_flickr.de.gz --mtgeneval_dir ../shared/data/mt-geneval

``preprocess``: this toolkit's streamed preprocessing against ``run_translation.py``'s (lists of lines,
``Dataset.from_dict``, ``Dataset.map(batched=True, num_proc=N)``) with the same tokenizer and workers::

    python scripts/benchmark.py preprocess --source runs/benchmark_scale/corpus-2000000/train.en \
        --target runs/benchmark_scale/corpus-2000000/train.de --tokenizer runs/benchmark_scale/run-2000000/tokenizer

``peers``: this toolkit against eole (OpenNMT's successor, installed on first use into its own environment
``.peers/eole-venv``) on Multi30k with one shared tokenizer: the same architecture, token batches, label smoothing,
schedule, dropout and threads, each run a fresh process, alternating; training target tokens/s, peak memory, test
BLEU/chrF at equal wall-clock budgets and at an equal number of updates, translation speed (docs/benchmarks_peers.md)::

    python scripts/benchmark.py peers --minutes 3,6 --updates 100 --base_updates 20 --repeats 2

``allocator``: the same timed training updates (``scripts/benchmark_step.py``, any recipe) on glibc's malloc and on
tcmalloc and jemalloc where installed, each a fresh process with it preloaded: step time, tokens/s, the ratio::

    python scripts/benchmark.py allocator --config recipes/multi30k_en_de_wu2021_tiny_cpu.yaml --steps 40

``scale``: preprocessing and training memory against corpus size (Multi30k repeated to N pairs), one and two
training processes on the same cache; other flags are recipe keys::

    python scripts/benchmark.py scale --pairs 500000,2000000,4500000 --model transformer-small --vocab_size 37000 \
        --tokenizer_train_samples 500000 --preprocessing_num_workers 2 --max_tokens 4096 --max_steps 3 \
        --eval_max_samples 8 --max_new_tokens 4
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from benchmarks import allocator as allocator_bench
from benchmarks import decoding as decoding_bench
from benchmarks import peers as peers_bench
from benchmarks import preprocess as preprocess_bench
from benchmarks import scale as scale_bench
from benchmarks import train as train_bench
from benchmarks import translation as translation_bench

from bias_eval.core.markdown import records_table
from bias_eval.core.textio import atomic_write, read_lines
from mtkit.cli.args import Parser, ranged
from mtkit.errors import UserError, cli_entry
from mtkit.flags import option
from mtkit.paths import check_apart


def add_corpus_args(sub: argparse.ArgumentParser, model_help: str) -> None:
    """``--model``, ``--source``, ``--reference`` and ``--max_sentences``: what the translation benchmarks share."""
    sub.add_argument("--model", required=True, help=model_help)
    sub.add_argument("--source", required=True, help="source sentences, one per line (.gz allowed)")
    sub.add_argument("--reference", required=True, help="their reference translations")
    first = ranged("eval_max_samples", "max_sentences")
    sub.add_argument("--max_sentences", type=first, help="use the first N sentences")
    sub.add_argument(
        "--target_lang", help="the references' language, which BLEU is tokenized for (default: --reference's suffix)"
    )


def target_language(args: argparse.Namespace) -> str:
    """``--target_lang``, else the two-letter last suffix of ``--reference`` before ``.gz`` (``test_2016_flickr.de.gz``:
    de)."""
    if args.target_lang:
        return args.target_lang
    name = Path(args.reference).name.removesuffix(".gz")
    suffix = Path(name).suffix.lstrip(".")
    if not (len(suffix) == 2 and suffix.isalpha()):  # an ISO 639-1 code; give any other with --target_lang
        raise UserError(f"--target_lang: required, --reference {args.reference} does not end in a language code")
    return suffix


def read_corpus(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The first ``--max_sentences`` lines of ``--source`` and ``--reference``, which must have as many lines."""
    sources, references = read_lines(Path(args.source)), read_lines(Path(args.reference))
    if len(sources) != len(references):
        raise UserError(f"--reference: {len(references)} lines, --source has {len(sources)}")
    n = args.max_sentences or len(sources)
    return sources[:n], references[:n]


def parser() -> argparse.ArgumentParser:
    p = Parser(description=__doc__.splitlines()[0], lists=("ct2_types", "samples", "target_langs", "pairs"))
    sub = p.add_subparsers(
        dest="benchmark", required=True, parser_class=Parser
    )  # no abbreviations: recipe flags pass through
    t = sub.add_parser("translate", help="generate vs CTranslate2: speed and BLEU", allow_abbrev=False)
    add_corpus_args(t, "a save_pretrained model folder (a run's final/)")
    beams = ranged("num_beams")
    t.add_argument(*option("num_beams", "beam_size"), dest="beam_size", type=beams, default=4, help="beam size")
    t.add_argument("--batch_size", type=ranged("eval_batch_size", "batch_size"), default=32)
    cap = "the cap (and the unbounded system's length)"
    t.add_argument("--max_new_tokens", type=ranged("max_new_tokens"), default=128, help=cap)
    threads = ranged("preprocessing_num_workers", "threads")  # a count of CPU workers, > 0
    t.add_argument("--threads", type=threads, default=2, help="CPU threads for both engines")
    t.add_argument("--ct2_types", default="float32,int8", help="CTranslate2 quantizations, comma-separated")
    t.add_argument("--json", help="also write the record to this file")
    d = sub.add_parser("decoding", help="beam search vs MBR: BLEU, chrF, time, gender gap", allow_abbrev=False)
    add_corpus_args(d, "a run's final/ (or a CTranslate2 folder with --engine ct2)")
    d.add_argument("--samples", default="8,16,32", help="MBR candidate counts, comma-separated")
    d.add_argument("--candidates", choices=("sample", "beam"), default="sample", help="MBR candidates")
    d.add_argument("--engine", choices=("hf", "ct2"), default="hf", help="hf: epsilon sampling; ct2: nucleus")
    d.add_argument("--epsilon", type=ranged("epsilon"), help="epsilon sampling's cutoff (default 0.02)")
    d.add_argument("--num_beams", type=beams, default=4, help="the baseline's beam size")
    d.add_argument("--batch_size", type=ranged("eval_batch_size", "batch_size"), default=32)
    d.add_argument("--threads", type=ranged("preprocessing_num_workers", "threads"), default=2, help="CPU threads")
    d.add_argument("--seed", type=ranged("seed"), default=0, help="sampling and bootstrap seed")
    d.add_argument("--mtgeneval_dir", help="also report MT-GenEval dev's gender gap and accuracy, beam vs MBR")
    d.add_argument("--mtgeneval_split", choices=("dev", "test"), default="dev", help="MT-GenEval split")
    d.add_argument("--target_langs", default="de", help="MT-GenEval languages the model translates into")
    d.add_argument("--work", default="runs/benchmark_decoding", help="folder for the MT-GenEval reports")
    d.add_argument("--json", help="also write the record to this file")
    tr = sub.add_parser("train", help="the toolkit's loop vs Seq2SeqTrainer: target tokens/s", allow_abbrev=False)
    tr.add_argument("--steps", type=ranged("steps"), default=20, help="timed updates per system")
    tr.add_argument("--warmup", type=ranged("warmup"), default=3, help="untimed updates first (at least 1)")
    tr.add_argument("--json", help="also write the record to this file")
    pp = sub.add_parser(
        "preprocess", help="streamed preprocessing vs datasets.map: seconds, memory", allow_abbrev=False
    )
    pp.add_argument("--source", required=True, help="source side of the training split, one sentence per line")
    pp.add_argument("--target", required=True, help="its target side (the language is the file's last suffix)")
    pp.add_argument("--tokenizer", required=True, help="a saved tokenizer folder (a run's tokenizer/ or final/)")
    pp.add_argument("--workers", type=ranged("workers"), default=2, help="tokenization processes for both systems")
    pp.add_argument("--max_length", type=ranged("max_length"), default=256, help="truncation length of both sides")
    pp.add_argument("--json", help="also write the record to this file")
    sc = sub.add_parser("scale", help="preprocess and training memory against corpus size", allow_abbrev=False)
    sc.add_argument("--multi30k", default="../shared/data/multi30k", help="Multi30k folder the corpora repeat")
    sc.add_argument("--pairs", default="500000,2000000,4500000", help="corpus sizes, comma-separated")
    sc.add_argument("--work", default="runs/benchmark_scale", help="folder for corpora, caches and runs")
    sc.add_argument("--json", help="also write the record to this file")
    q = sub.add_parser("quality", help="the toolkit vs Seq2SeqTrainer: test BLEU after equal time", allow_abbrev=False)
    q.add_argument("--minutes", type=ranged("minutes"), default=10, help="training time for each system")
    q.add_argument("--json", help="also write the record to this file")
    al = sub.add_parser("allocator", help="glibc malloc vs tcmalloc/jemalloc: training tokens/s", allow_abbrev=False)
    al.add_argument("--steps", type=ranged("steps"), default=30, help="timed updates per allocator")
    al.add_argument("--warmup", type=ranged("warmup"), default=5, help="untimed updates first")
    al.add_argument("--work", default="runs/benchmark_allocator", help="folder for the runs and their records")
    al.add_argument("--json", help="also write the record to this file")
    pe = sub.add_parser("peers", help="the toolkit vs eole (OpenNMT): speed, memory, BLEU", allow_abbrev=False)
    pe.add_argument("--data_dir", default="../shared/data/multi30k", help="Multi30k folder (en, de)")
    pe.add_argument("--recipe", default="recipes/multi30k_en_de_small.yaml", help="lr, dropout, Adam, beam...")
    pe.add_argument("--model", default="transformer-small", help="preset trained for BLEU")
    pe.add_argument("--base_model", default="transformer-base", help="preset of the throughput-only runs")
    pe.add_argument("--minutes", default="3,6", help="wall-clock budgets, comma-separated (empty: none)")
    pe.add_argument("--updates", type=ranged("updates"), default=100, help="the equal-update mark")
    pe.add_argument(
        "--base_updates", type=ranged("base_updates"), default=20, help="updates of the --base_model runs (0: none)"
    )
    pe.add_argument("--warmup_updates", type=ranged("warmup_updates"), default=5, help="updates left out of tokens/s")
    pe.add_argument("--repeats", type=ranged("repeats"), default=2, help="runs per toolkit, alternating")
    pe.add_argument("--threads", type=ranged("preprocessing_num_workers", "threads"), default=2, help="CPU threads")
    pe.add_argument("--max_tokens", type=ranged("max_tokens"), default=4096, help="padded tokens per batch")
    pe.add_argument("--warmup_steps", type=ranged("warmup_steps"), default=200, help="inverse-sqrt warm-up")
    pe.add_argument("--vocab_size", type=ranged("vocab_size"), default=8000, help="the shared BPE's size")
    pe.add_argument("--max_train_samples", type=ranged("max_train_samples"), help="first N training pairs")
    pe.add_argument("--max_sentences", type=ranged("eval_max_samples", "max_sentences"), help="first N test")
    pe.add_argument("--work", default="runs/benchmark_peers", help="folder for the tokenizer, runs and models")
    pe.add_argument("--eole_env", default=".peers/eole-venv", help="eole's own virtual environment")
    pe.add_argument(
        "--profile_update", type=ranged("profile_update"), help="torch.profiler table of this update (profile.txt)"
    )
    pe.add_argument(
        "--allocator",
        choices=("tcmalloc", "glibc", "own"),
        default="tcmalloc",
        help="the training runs' allocator: tcmalloc for both toolkits (where installed), glibc's malloc for both, "
        "or each toolkit's own (this toolkit's training starts itself on tcmalloc, eole stays on glibc's)",
    )
    pe.add_argument("--no_install", dest="install", action="store_false", help="skip eole if its env is absent")
    pe.add_argument("--json", help="also write the record to this file")
    return p


QUALITY_COLUMNS = [
    ("updates", "updates", "{}"),
    ("train_s", "train s", "{:.0f}"),
    ("bleu", "test BLEU", "{:.2f}"),
    ("chrf", "test chrF", "{:.2f}"),
]
TRAIN_COLUMNS = [
    ("tgt_tok_s", "tgt tok/s", "{:,.0f}"),
    ("padding", "padding", "{:.1%}"),
    ("sentences_per_update", "sent/update", "{:.1f}"),
    ("tgt_tokens_per_update", "tgt tok/update", "{:.0f}"),
    ("peak_mem_gb", "peak GiB", "{:.2f}"),
    ("mtkit_speedup", "mtkit x", "{:.2f}"),
]


def with_output_dir(flags: list[str], default: str) -> list[str]:
    """The recipe flags for the systems' runs (they share the tokenizer and the tokenized cache)."""
    flags = flags if "--output_dir" in flags else [*flags, "--output_dir", default]
    return [*flags, "--report_to", "none", "--disable_tqdm"]


def quality_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    flags = with_output_dir(flags, "runs/benchmark_quality")
    return train_bench.quality(flags, 60 * args.minutes), QUALITY_COLUMNS, {"minutes": args.minutes, "flags": flags}


def train_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    flags = with_output_dir(flags, "runs/benchmark_train")
    settings = {"steps": args.steps, "warmup": args.warmup, "flags": flags}
    return train_bench.run(flags, args.warmup, args.steps), TRAIN_COLUMNS, settings


def translate_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    if flags:
        raise UserError(f"unrecognized arguments: {' '.join(flags)}")
    sources, references = read_corpus(args)
    settings = {k: v for k, v in vars(args).items() if k not in ("json", "benchmark")} | {"sentences": len(sources)}
    records = translation_bench.run(
        Path(args.model), sources, references, target_language(args), beam_size=args.beam_size,
        batch_size=args.batch_size, max_new_tokens=args.max_new_tokens, threads=args.threads,
        ct2_types=tuple(args.ct2_types.split(",")),
    )  # fmt: skip
    return records, translation_bench.COLUMNS, settings


def decoding_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    if flags:
        raise UserError(f"unrecognized arguments: {' '.join(flags)}")
    try:
        samples = tuple(int(x) for x in args.samples.split(","))
    except ValueError:
        raise UserError(f"--samples: expected comma-separated integers, got {args.samples!r}") from None
    if not samples or min(samples) < 1:
        raise UserError("--samples: every count must be at least 1")
    sources, references = read_corpus(args)
    torch.set_num_threads(args.threads)
    settings = {k: v for k, v in vars(args).items() if k not in ("json", "benchmark")} | {"sentences": len(sources)}
    records = decoding_bench.run(
        args.model, sources, references, target_language(args), samples=samples, candidates=args.candidates,
        engine=args.engine, epsilon=args.epsilon, beam_size=args.num_beams, batch_size=args.batch_size, seed=args.seed,
    )  # fmt: skip
    if args.mtgeneval_dir:
        middle, engine = samples[len(samples) // 2], ["--engine", args.engine]
        mbr = [*engine, "--decoding", "mbr", "--mbr_samples", str(middle), "--mbr_candidates", args.candidates]
        mbr += ["--epsilon", str(args.epsilon)] if args.epsilon is not None else []
        langs, work = args.target_langs.split(","), Path(args.work)
        geneval = ["--mtgeneval_dir", args.mtgeneval_dir, "--split", args.mtgeneval_split]
        rows = [
            {"system": name, **decoding_bench.gender_run(args.model, geneval, langs, work, flags)}
            for name, flags in (("beam", engine), (f"MBR chrF, N={middle}", mbr))
        ]
        print(records_table(rows, decoding_bench.GENDER_COLUMNS) + "\n")
        settings["mtgeneval"] = rows
    return records, decoding_bench.COLUMNS, settings


def preprocess_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    if flags:
        raise UserError(f"unrecognized arguments: {' '.join(flags)}")
    for flag in ("source", "target", "tokenizer"):
        if not Path(getattr(args, flag)).exists():
            raise UserError(f"--{flag} {getattr(args, flag)}: not found")
    paths = [Path(args.source), Path(args.target), Path(args.tokenizer)]
    records = preprocess_bench.run(*paths, args.workers, args.max_length)
    return records, preprocess_bench.COLUMNS, {k: v for k, v in vars(args).items() if k not in ("json", "benchmark")}


def scale_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    try:
        sizes = [int(x) for x in args.pairs.split(",")]
    except ValueError:
        raise UserError(f"--pairs: expected comma-separated integers, got {args.pairs!r}") from None
    if not sizes or min(sizes) < 1:
        raise UserError("--pairs: every size must be at least 1")
    if not Path(args.multi30k, "train.en.gz").is_file():
        raise UserError(f"--multi30k {args.multi30k}: no train.en.gz there")
    records = scale_bench.run(Path(args.multi30k).resolve(), Path(args.work).resolve(), sizes, flags)
    return records, scale_bench.COLUMNS, {"pairs": sizes, "flags": flags}


def allocator_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    records = allocator_bench.run(flags, args.warmup, args.steps, Path(args.work))
    return records, allocator_bench.COLUMNS, {"steps": args.steps, "warmup": args.warmup, "flags": flags}


PEERS_COLUMNS = [("mtkit", "mtkit", "{}"), ("eole", "eole", "{}"), ("mtkit vs eole", "mtkit vs eole", "{}")]


def peers_benchmark(args: argparse.Namespace, flags: list[str]) -> tuple[list[dict], list, dict]:
    if flags:
        raise UserError(f"unrecognized arguments: {' '.join(flags)}")
    try:
        args.minutes = [float(x) for x in args.minutes.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--minutes: expected comma-separated numbers, got {args.minutes!r}") from None
    if min(args.minutes, default=1) <= 0 or args.updates < 1 or args.repeats < 1:
        raise UserError("--minutes, --updates and --repeats: must be > 0")
    if args.base_updates < 0 or args.warmup_updates < 0:
        raise UserError("--base_updates and --warmup_updates: must be >= 0")
    if not any(Path(args.data_dir, name).is_file() for name in ("train.en.gz", "train.en")):
        raise UserError(f"--data_dir {args.data_dir}: no train.en(.gz) there")
    rows, side, runs = peers_bench.run(args)
    if side:
        print(records_table(side, [("mtkit", "mtkit", "{}"), ("eole", "eole", "{}")], "setting") + "\n")
    raw = Path(args.work, "runs.json")
    atomic_write(raw, json.dumps(runs).encode("utf-8"))
    settings = {k: v for k, v in vars(args).items() if k not in ("json", "benchmark")} | {"raw": str(raw)}
    for row in rows:
        row["system"] = row.pop("figure")
        row["mtkit vs eole"] = f"{row['mtkit vs eole']} {row.pop('vs')}" if "vs" in row else "n/a"
    return rows, PEERS_COLUMNS, settings | {"settings_side_by_side": side}


@cli_entry
def main(argv: list[str] | None = None) -> None:
    """Run one benchmark; print its table and its JSON record (one line), also written to ``--json``."""
    args, flags = parser().parse_known_args(argv)
    names = ("model", "source", "reference", "target", "tokenizer", "mtgeneval_dir", "multi30k")
    inputs = {f"--{name}": getattr(args, name, None) for name in names}
    check_apart(inputs, {f"--{name}": getattr(args, name, None) for name in ("json", "work")})
    benchmark = {
        "train": train_benchmark,
        "quality": quality_benchmark,
        "translate": translate_benchmark,
        "preprocess": preprocess_benchmark,
        "decoding": decoding_benchmark,
        "scale": scale_benchmark,
        "peers": peers_benchmark,
        "allocator": allocator_benchmark,
    }
    records, columns, settings = benchmark[args.benchmark](args, flags)
    record = json.dumps({"settings": settings | {"command": " ".join(sys.argv)}, "systems": records})
    print(records_table(records, columns) + "\n" + record)
    if args.json:
        atomic_write(Path(args.json), (record + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
