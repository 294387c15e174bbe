"""This toolkit against eole (OpenNMT's successor) on the same data, tokenizer, architecture and settings.

One subword tokenizer is trained once on the training split; the toolkit reads the raw text with it, eole reads
the same pieces pre-tokenized (one space between pieces) with the same vocabulary file, so both vocabularies
are identical, id for id. Each training run is a fresh process (the toolkit's in this environment, eole's in its
own virtual environment, ``eole_worker.py``), the two alternating, ``repeats`` times. A run notes when each update
ended and its non-padding target tokens, saves the model at the wall-clock budgets and at the equal-update mark
(saving left out of the clock), and stops when every mark is passed. Each saved model is then scored on the test
split by its toolkit's own translators (the toolkit: CTranslate2 for every mark, transformers' ``generate`` too at
the last budget; eole: its own translator, and CTranslate2 after CTranslate2's eole converter) with the same beam,
length penalty and output cap.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
import venv
from importlib.metadata import version
from pathlib import Path

EOLE_VERSION, TORCH_VERSION = "0.6.4", "2.13.0"
WORKER = Path(__file__).with_name("eole_worker.py")
OURS = Path(__file__).with_name("peers_mtkit.py")
SYSTEMS = ("mtkit", "eole")
ENGINES = {"eole": "eole's translator", "eole_ct2": "eole via CTranslate2"}
#: translation engines compared, this toolkit's against eole's; the first pair is each toolkit's quality figure
PAIRS = (("ct2", "eole"), ("ct2", "eole_ct2"), ("generate", "eole"))


def eole_python(env: Path) -> Path | None:
    """The Python of eole's environment ``env`` if eole imports there, else None."""
    python = env / "bin" / "python"
    if not python.is_file():
        return None
    probe = subprocess.run([str(python), "-c", "import eole, torch, ctranslate2"], capture_output=True)
    return python if probe.returncode == 0 else None


def install_eole(env: Path) -> Path:
    """Create ``env`` and install this toolkit's torch, then eole and this toolkit's CTranslate2 (for eole's
    CTranslate2 path), into it (never into this environment)."""
    if (python := eole_python(env)) is not None:
        return python
    print(f"installing eole {EOLE_VERSION} (torch {TORCH_VERSION}) into {env}", file=sys.stderr)
    venv.create(env, with_pip=True, clear=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
    # torch first (the local CPU wheel); eole's command line imports aiohttp, which it does not declare
    ct2 = f"ctranslate2=={version('ctranslate2')}"
    for package in (f"torch=={TORCH_VERSION}", f"eole=={EOLE_VERSION}", "aiohttp", ct2):
        subprocess.run([*pip, package], check=True)
    return env / "bin" / "python"


def prepare(
    work: Path, data_dir: Path, vocab_size: int, max_train_samples: int | None, max_sentences: int | None
) -> dict:
    """The shared tokenizer (``work/tokenizer``), eole's pre-tokenized splits and its vocabulary file."""
    from bias_eval.core.textio import read_lines
    from mtkit.data.tokenizer import load_tokenizer, train_tokenizer

    def path(split: str, lang: str) -> Path:
        gz = data_dir / f"{split}.{lang}.gz"
        return gz if gz.is_file() else data_dir / f"{split}.{lang}"

    lines = {
        (split, lang): read_lines(path(split, lang))
        for split in ("train", "val", "test_2016_flickr")
        for lang in ("en", "de")
    }
    n = max_train_samples or len(lines["train", "en"])
    for lang in ("en", "de"):
        lines["train", lang] = lines["train", lang][:n]
    tok_dir = work / "tokenizer"
    if not (tok_dir / "tokenizer.json").is_file():
        tokenizer = train_tokenizer(lines["train", "en"] + lines["train", "de"], vocab_size=vocab_size)
        tokenizer.save_pretrained(str(tok_dir))
    tokenizer = load_tokenizer(tok_dir)
    files = {"tokenizer": str(tok_dir), "vocab": str(work / "eole" / "vocab.txt")}
    (work / "eole").mkdir(parents=True, exist_ok=True)
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    Path(files["vocab"]).write_text("".join(f"{token}\n" for token, _ in vocab), encoding="utf-8")
    for (split, lang), text in lines.items():
        path = work / "eole" / f"{split}.{lang}"
        path.write_text("".join(" ".join(tokenizer.tokenize(t)) + "\n" for t in text), encoding="utf-8")
        files[f"{split}.{lang}"] = str(path)
    test = slice(0, max_sentences)
    files["test_sources"], files["test_references"] = (
        lines["test_2016_flickr", "en"][test],
        lines["test_2016_flickr", "de"][test],
    )
    files["test_pieces"] = read_lines(Path(files["test_2016_flickr.en"]))[test]
    files["vocab_size"], files["train_pairs"] = len(vocab), n
    return files


def steady(record: dict, warmup: int) -> dict:
    """Tokens/s over the updates after the first ``warmup`` (all of them if there are no more)."""
    ends, tokens = record["update_ends"], record["update_tokens"]
    skip = warmup if len(ends) > warmup else 0
    begin = ends[skip - 1] if skip else 0.0
    return {
        "tgt_tok_s": sum(tokens[skip:]) / max(ends[-1] - begin, 1e-9),
        "tgt_tokens_per_update": sum(tokens) / len(tokens),
        "updates": len(ends),
    }


def spread(values: list[float]) -> str:
    """``mean [min, max]`` of ``values``."""
    return f"{statistics.mean(values):.2f} [{min(values):.2f}, {max(values):.2f}]"


def allocator_env(system: str, choice: str) -> dict[str, str]:
    """The environment of ``system``'s training run on the allocator ``choice`` (``--allocator``): tcmalloc
    preloaded for both toolkits, glibc's malloc for both (nothing preloaded, this toolkit's restart turned off), or
    each toolkit's own (this toolkit starts its training again on tcmalloc, eole takes what it is given: nothing)."""
    from mtkit.allocator import child_env, tcmalloc_library

    library = tcmalloc_library() if choice == "tcmalloc" else None
    return child_env(library, restart=choice == "own" and system == "mtkit")


def run_process(cmd: list[str], threads: int, env: dict[str, str] | None = None) -> dict:
    """Run ``cmd`` with ``threads`` OpenMP/MKL threads (in ``env``, else this process's environment); its last line
    of output, a JSON record."""
    env = (os.environ if env is None else env) | {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    start = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1]) | {"process_s": time.perf_counter() - start}


def settings(args, files: dict, preset: str) -> dict:
    """Both toolkits' settings for ``preset``, from the recipe and the benchmark's flags (eole's worker reads
    them; the toolkit's flags are derived from the same values)."""
    from mtkit.config import parse_config
    from mtkit.model.presets import PRESETS

    cfg = parse_config(["--config", args.recipe])
    shape = PRESETS[preset]
    layers, d_model, heads, ffn = (
        shape[k] for k in ("encoder_layers", "d_model", "encoder_attention_heads", "encoder_ffn_dim")
    )
    o, warmup = cfg.optim, args.warmup_steps
    return {
        "preset": preset, "vocab": files["vocab"], "vocab_size": files["vocab_size"], "seed": cfg.train.seed,
        "train_src": files["train.en"], "train_tgt": files["train.de"], "bucket_size": files["train_pairs"],
        "valid_src": files["val.en"], "valid_tgt": files["val.de"], "max_tokens": args.max_tokens,
        "dropout": cfg.model.dropout, "learning_rate": o.learning_rate, "warmup_steps": warmup,
        "noam_learning_rate": o.learning_rate * math.sqrt(d_model * warmup),  # noam's peak is lr / sqrt(d * warmup)
        "adam_beta1": o.adam_beta1, "adam_beta2": o.adam_beta2, "adam_epsilon": o.adam_epsilon,
        "max_grad_norm": o.max_grad_norm, "label_smoothing": o.label_smoothing, "threads": args.threads,
        "model": {"layers": layers, "d_model": d_model, "heads": heads, "ffn": ffn, "positions": 1026},
        "beam_size": cfg.eval.num_beams, "length_penalty": cfg.eval.length_penalty,
        "max_new_tokens": cfg.eval.max_new_tokens, "batch_size": 32, "max_len_ratio": cfg.eval.max_len_a,
    }  # fmt: skip


def mtkit_flags(s: dict, args, files: dict, out: Path) -> list[str]:
    """The toolkit's recipe flags for the settings ``s`` (the same values eole's config gets)."""
    flags = ["--config", args.recipe, "--data_dir", str(Path(args.data_dir).resolve()), "--model", s["preset"]]
    flags += ["--tokenizer_name", files["tokenizer"]]
    flags += ["--output_dir", str(out), "--max_tokens", str(s["max_tokens"]), "--warmup_steps", str(s["warmup_steps"])]
    flags += ["--max_train_samples", str(files["train_pairs"]), "--report_to", "none", "--disable_tqdm"]
    return flags + ["--logging_steps", "1000000", "--eval_steps", "1000000", "--save_steps", "1000000"]


def train_once(system: str, s: dict, args, files: dict, out: Path, eole: Path | None) -> dict:
    """One training run of ``system`` in a fresh process."""
    out.mkdir(parents=True, exist_ok=True)
    s = s | {"out": str(out)}
    if system == "mtkit":
        s["flags"] = mtkit_flags(s, args, files, out)
    (out / "settings.json").write_text(json.dumps(s), encoding="utf-8")
    python, script = (sys.executable, str(OURS)) if system == "mtkit" else (str(eole), str(WORKER))
    env = allocator_env(system, args.allocator)
    record = run_process([python, script, "train", str(out / "settings.json")], s["threads"], env)
    (out / "record.json").write_text(json.dumps(record), encoding="utf-8")
    return record


def translate_once(system: str, s: dict, snapshot: dict, files: dict, generate: bool, eole: Path | None) -> dict:
    """Test-split scores (and seconds) of one saved model with its toolkit's own translator(s)."""
    from mtkit.data.tokenizer import load_tokenizer
    from mtkit.evaluation.scores import corpus_scores

    sources, refs = files["test_sources"], files["test_references"]
    t = {k: s[k] for k in ("beam_size", "length_penalty", "max_new_tokens", "batch_size", "threads", "max_len_ratio")}
    t |= {"model": snapshot["path"], "seed": 0}
    path = Path(snapshot["path"]) / "translate.json"
    if system == "mtkit":
        path.write_text(json.dumps(t | {"sources": sources, "generate": generate}), encoding="utf-8")
        records = run_process([sys.executable, str(OURS), "translate", str(path)], s["threads"])
        records.pop("process_s")
    else:
        source = Path(snapshot["path"]) / "test.src"
        source.write_text("".join(line + "\n" for line in files["test_pieces"]), encoding="utf-8")
        path.write_text(json.dumps(t | {"source": str(source)}), encoding="utf-8")
        record = run_process([str(eole), str(WORKER), "translate", str(path)], s["threads"])
        decoder = load_tokenizer(files["tokenizer"]).backend_tokenizer.decoder  # pieces back to text
        record.pop("process_s")
        records = {
            name: {"seconds": r["seconds"], "hypotheses": [decoder.decode(h.split()) for h in r["hypotheses"]]}
            for name, r in record.items()
        }
    scored = {}
    for name, r in records.items():
        (Path(snapshot["path"]) / f"{name}-test.txt").write_text("".join(h + "\n" for h in r["hypotheses"]))
        scored[name] = corpus_scores(r["hypotheses"], refs, "de") | {"sent_s": len(sources) / r["seconds"]}
    return scored


def check_equal(mtkit: dict, eole: dict, preset: str, allocator: str) -> list[dict]:
    """Both built models' settings side by side; an error unless the parameter counts agree within 1% and the
    architecture, batch and loss settings are equal, and so are the allocators unless each ran on its ``own``."""
    a, b = mtkit["config"] | {"parameters": mtkit["params"]}, eole["config"] | {"parameters": eole["params"]}
    rows = [{"setting": f"{preset}: {k}", "mtkit": str(a[k]), "eole": str(b.get(k, "n/a"))} for k in a]
    same = ("layers", "d_model", "heads", "ffn", "vocab", "positions", "dropout", "max_tokens", "label_smoothing")
    same += () if allocator == "own" else ("allocator",)
    unequal = [k for k in same if a[k] != b[k]]
    if abs(a["parameters"] - b["parameters"]) > 0.01 * a["parameters"] or unequal:
        raise RuntimeError(f"{preset}: settings differ: {unequal}, parameters {a['parameters']} vs {b['parameters']}")
    return rows


def run(args) -> tuple[list[dict], list[dict], dict]:
    """Every run and score (see the module's docstring); returns the table's rows, the settings side by side and
    the raw records."""
    work = Path(args.work).resolve()
    systems, eole = list(SYSTEMS), None
    if args.install:
        eole = install_eole(Path(args.eole_env))
    elif (eole := eole_python(Path(args.eole_env))) is None:
        print(f"eole: no environment in {args.eole_env} (make one: leave out --no_install); eole skipped")
        systems = ["mtkit"]
    files = prepare(work, Path(args.data_dir), args.vocab_size, args.max_train_samples, args.max_sentences)
    budgets = [60 * m for m in args.minutes]
    small = settings(args, files, args.model) | {"budgets_s": budgets, "update_marks": [args.updates]}
    small["profile_update"] = args.profile_update
    base = settings(args, files, args.base_model) | {"budgets_s": [], "update_marks": [args.base_updates]}
    last = f"{budgets[-1]:g}s" if budgets else f"{args.updates}u"
    runs: dict[str, list[dict]] = {system: [] for system in systems}
    for r in range(args.repeats):
        for system in systems if r % 2 == 0 else systems[::-1]:  # who goes first alternates
            out = work / f"r{r}-{system}"
            rec = train_once(system, small, args, files, out / args.model, eole)
            rec["steady"] = steady(rec, args.warmup_updates)
            rec["scores"] = {
                label: translate_once(system, small, snap, files, label == last, eole)
                for label, snap in rec["snapshots"].items()
            }
            if args.base_updates:
                rec["base"] = train_once(system, base | {"save": False}, args, files, out / args.base_model, eole)
                rec["base"]["steady"] = steady(rec["base"], args.warmup_updates)
            runs[system].append(rec)
            (work / "runs-so-far.json").write_text(json.dumps(runs), encoding="utf-8")  # a cut-short run keeps these
    side = []
    if "eole" in runs:
        side = check_equal(runs["mtkit"][0], runs["eole"][0], args.model, args.allocator)
        if args.base_updates:
            side += check_equal(runs["mtkit"][0]["base"], runs["eole"][0]["base"], args.base_model, args.allocator)
    return table(runs, args), side, runs


def table(runs: dict[str, list[dict]], args) -> list[dict]:
    """One row per figure: each toolkit's mean [min, max] over the repeats and, per repeat, the toolkit against
    eole (a ratio, or for BLEU/chrF a difference in points). Translation rows pair one engine of each toolkit on the
    same saved models, BLEU beside speed, so that speed is read at the quality each engine reached."""
    figures = [
        (f"train tgt tok/s, {args.model}", lambda r: r["steady"]["tgt_tok_s"], "ratio"),
        (f"tgt tokens/update, {args.model}", lambda r: r["steady"]["tgt_tokens_per_update"], "ratio"),
        (f"peak RSS GiB, {args.model}", lambda r: r["peak_rss_gb"], "ratio"),
    ]
    if args.base_updates:
        figures.append((f"train tgt tok/s, {args.base_model}", lambda r: r["base"]["steady"]["tgt_tok_s"], "ratio"))
        figures.append((f"peak RSS GiB, {args.base_model}", lambda r: r["base"]["peak_rss_gb"], "ratio"))
    figures = [(name, get, get, kind) for name, get, kind in figures]
    for label in [f"{60 * m:g}s" for m in args.minutes] + [f"{args.updates}u"]:
        when = moment(label)
        updates = saved_updates(label)
        figures.append((f"updates at {when}", updates, updates, "ratio"))
        for ours, theirs in PAIRS:
            if not all(engine in r["scores"][label] for system, engine in (("mtkit", ours), ("eole", theirs))
                       for r in runs.get(system, [])):  # fmt: skip
                continue  # generate: the last budget only; eole via CTranslate2: eole's environment has it
            metrics = ("bleu", "chrf", "sent_s") if (ours, theirs) == PAIRS[0] else ("bleu", "sent_s")  # chrF: once
            for metric in metrics:
                kind = "ratio" if metric == "sent_s" else "diff"
                name = f"test {metric.replace('_', '/')} at {when}, mtkit {ours} vs {ENGINES[theirs]}"
                figures.append((name, scored(label, ours, metric), scored(label, theirs, metric), kind))
    rows = []
    for name, get_ours, get_theirs, kind in figures:
        row = {"figure": name, "mtkit": spread([get_ours(r) for r in runs["mtkit"]])}
        if "eole" in runs:
            pairs = [(get_ours(a), get_theirs(b)) for a, b in zip(runs["mtkit"], runs["eole"])]
            row["eole"] = spread([b for _, b in pairs])
            row["mtkit vs eole"] = spread([a / b if kind == "ratio" else a - b for a, b in pairs])
            row["vs"] = "x" if kind == "ratio" else "points"
        rows.append({**dict.fromkeys(SYSTEMS, "n/a"), **row})  # a toolkit not run: n/a
    return rows


def saved_updates(label: str):
    """A run's number of updates when it saved its model at ``label``."""
    return lambda record: record["snapshots"][label]["updates"]


def scored(label: str, engine: str, metric: str):
    """A run's ``metric`` of ``engine``'s test translations from its model saved at ``label``."""
    return lambda record: record["scores"][label][engine][metric]


def moment(label: str) -> str:
    """A snapshot's label in words: ``360s`` is ``6 min``, ``100u`` is ``100 updates``."""
    return f"{label[:-1]} updates" if label.endswith("u") else f"{float(label[:-1]) / 60:g} min"
