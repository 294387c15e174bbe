"""Beam search against minimum-Bayes-risk decoding on the same model, sentences, bounds and batch size.

Systems: beam search (the baseline), then MBR with chrF over N candidates for each N asked for (epsilon samples
with ``--engine hf``, nucleus samples with ``--engine ct2``, or the beam's n-best with ``--candidates beam``).
Each reports corpus sacreBLEU and chrF, their difference from beam search with a 95% paired-bootstrap interval
(the same resampled sentences for both systems), and seconds per sentence, candidates and choice included.
With ``--mtgeneval_dir``, beam search and MBR at the middle N also each write a ``bias_eval`` report (gender gap
and accuracy with their bootstrap CIs) on MT-GenEval, through ``scripts/bias_report.py`` itself.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bias_eval.mtgeneval.metrics import bleu_from_stats, bleu_stats, chrf_from_stats, chrf_stats
from mtkit.cli.bias_report import main as bias_report
from mtkit.decode.engines import load_translator
from mtkit.decode.mbr import MBR
from mtkit.decode.settings import resolve

BASELINE = "beam"
COLUMNS = [
    ("bleu", "BLEU", "{:.2f}"),
    ("bleu_delta_text", "ΔBLEU [95% CI]", "{}"),
    ("chrf", "chrF", "{:.2f}"),
    ("chrf_delta_text", "ΔchrF [95% CI]", "{}"),
    ("ms_sentence", "ms/sentence", "{:.0f}"),
    ("slowdown", "× beam time", "{:.1f}"),
]
GENDER_COLUMNS = [
    ("bleu_gap", "BLEU gap (m−f)", "{}"),
    ("chrf_gap", "chrF gap", "{}"),
    ("accuracy_feminine", "acc f", "{}"),
    ("accuracy_masculine", "acc m", "{}"),
    ("accuracy_pair", "acc pair", "{}"),
]


def paired_delta(
    base: np.ndarray, other: np.ndarray, score, samples: int = 1000, seed: int = 0
) -> tuple[float, list[float]]:
    """The corpus score of ``other`` minus that of ``base`` (per-sentence statistics, one row per sentence), and
    its 95% percentile interval over ``samples`` paired bootstrap resamples of the sentences."""
    rng = np.random.default_rng(seed)
    n = len(base)
    deltas = []
    for _ in range(samples):
        idx = rng.integers(0, n, n)
        deltas.append(score(other[idx].sum(0)) - score(base[idx].sum(0)))
    low, high = np.percentile(deltas, [2.5, 97.5])
    return score(other.sum(0)) - score(base.sum(0)), [float(low), float(high)]


def run(
    model: str,
    sources: list[str],
    references: list[str],
    lang: str,
    *,
    samples: tuple[int, ...] = (8, 16, 32),
    candidates: str = "sample",
    engine: str = "hf",
    epsilon: float | None = None,
    beam_size: int = 4,
    batch_size: int = 32,
    seed: int = 0,
    bootstrap: int = 1000,
) -> list[dict]:
    """One record per system (see the module's docstring); ``model`` translates with its saved prompt-free
    generation settings (length penalty, bounds) except the beam size."""
    translator = load_translator(model, engine)  # cuda where there is one
    saved, _ = resolve(None, model)
    beam = replace(saved, num_beams=beam_size, batch_size=batch_size, engine=engine)
    systems = [(BASELINE, beam)]
    for n in samples:
        settings = replace(beam, decoding="mbr", mbr_samples=n, mbr_candidates=candidates, epsilon=epsilon, seed=seed)
        systems.append((f"MBR chrF, N={n} {describe(settings.mbr, engine)}", settings))
    translator.translate(sources[:batch_size], beam)  # warm-up: allocations, lazy initialisation
    records = []
    for name, settings in systems:
        start = time.perf_counter()
        hyps = translator.translate(sources, settings)
        seconds = time.perf_counter() - start
        records.append({"system": name, "seconds": seconds, "ms_sentence": 1000 * seconds / len(sources),
                        "hyps": hyps})  # fmt: skip
    base = records[0]
    stats = {
        "bleu": (lambda h: bleu_stats(h, references, lang), bleu_from_stats),
        "chrf": (lambda h: chrf_stats(h, references), chrf_from_stats),
    }
    for metric, (extract, score) in stats.items():
        base_stats = extract(base["hyps"])
        for record in records:
            own = extract(record["hyps"])
            record[metric] = score(own.sum(0))
            delta, ci = paired_delta(base_stats, own, score, bootstrap, seed)
            record[f"{metric}_delta"], record[f"{metric}_delta_ci95"] = delta, ci
            record[f"{metric}_delta_text"] = f"{delta:+.2f} [{ci[0]:+.2f}, {ci[1]:+.2f}]"
    for record in records:
        record["slowdown"] = record["seconds"] / base["seconds"]
        del record["hyps"]
    return records


def describe(mbr: MBR, engine: str) -> str:
    """How the candidates were drawn, for a system's name."""
    if mbr.candidates == "beam":
        return "(beam n-best)"
    cut = mbr.sampling(engine)
    return f"(epsilon {cut['epsilon']})" if engine == "hf" else f"(nucleus {cut['top_p']})"


def gender_run(model: str, data: list[str], langs: list[str], work: Path, flags: list[str]) -> dict:
    """The ``bias_eval`` report of ``model`` on MT-GenEval (``data``: its folder and split flags), decoded as
    ``flags`` say (beam search without ``--decoding mbr``), through ``scripts/bias_report.py``; its figures with
    their CIs (one language's, or the macro average of several)."""
    out = work / ("mbr" if "--decoding" in flags else "beam")
    args = [*data, "--target_langs", *langs, "--model", model]
    bias_report([*args, "--out", str(out), *flags])
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    figures = metrics["languages"][langs[0]] if len(langs) == 1 else metrics["macro"]
    row = {}
    for key, _, _ in GENDER_COLUMNS:
        value, ci = figures.get(key), figures.get(f"{key}_ci95")
        scale = 100 if key.startswith("accuracy") else 1
        row[key] = "n/a" if value is None else f"{scale * value:.1f}"
        if ci:
            row[key] += f" [{scale * ci[0]:.1f}, {scale * ci[1]:.1f}]"
    return row
