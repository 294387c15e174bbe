"""Translation speed and quality, engine against engine, on the same sentences, beam, batch size and threads.

Systems: transformers' ``generate`` with every batch running to ``--max_new_tokens`` (what decoding did before
output bounds), ``generate`` with the ``max_len_a``/``max_len_b`` bound, and CTranslate2 float32 and int8
conversions of the same model. Each reports wall time, sentences/s, output tokens/s and sacreBLEU, and its
speed-up over the bounded ``generate``, which is the baseline.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import torch

from mtkit.config import MAX_LEN_A, MAX_LEN_B
from mtkit.decode.ct2 import CT2Translator
from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings
from mtkit.evaluation.scores import corpus_scores
from mtkit.export.ct2 import export_ct2

BASELINE = "hf generate"
COLUMNS = [
    ("seconds", "s", "{:.1f}"),
    ("sent_s", "sent/s", "{:.1f}"),
    ("tok_s", "out tok/s", "{:,.0f}"),
    ("bleu", "BLEU", "{:.2f}"),
    ("speedup", "x baseline", "{:.2f}"),
]


def hf_settings(cuda: bool) -> tuple[str, str]:
    """Device and dtype of transformers' side: the GPU in bf16 where there is one (CTranslate2 runs there too),
    else the CPU in fp32."""
    return ("cuda", "bf16") if cuda else ("cpu", "fp32")


def timed(translate, sources: list[str]) -> tuple[list[str], float]:
    start = time.perf_counter()
    hyps = translate(sources)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return hyps, time.perf_counter() - start


def run(
    model: Path,
    sources: list[str],
    references: list[str],
    lang: str,
    *,
    beam_size: int = 4,
    batch_size: int = 32,
    max_new_tokens: int = 128,
    threads: int = 2,
    ct2_types: tuple[str, ...] = ("float32", "int8"),
    work_dir: Path | None = None,
) -> list[dict]:
    """One record per system (see the module's docstring)."""
    torch.set_num_threads(threads)
    options = {"num_beams": beam_size, "batch_size": batch_size, "max_new_tokens": max_new_tokens}
    device, dtype = hf_settings(torch.cuda.is_available())
    hf = Translator(model, device=device, dtype=dtype)
    tokenizer = hf.tokenizer
    options["length_penalty"] = hf.generation_config.length_penalty if beam_size > 1 else 1.0
    systems = [
        (
            f"hf generate, no bound ({max_new_tokens} tokens)",
            lambda s: hf.translate(s, DecodingSettings(**options, max_len_a=0, max_len_b=max_new_tokens)),
        ),
        (BASELINE, lambda s: hf.translate(s, DecodingSettings(**options, max_len_a=MAX_LEN_A, max_len_b=MAX_LEN_B))),
    ]
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        for kind in ct2_types:
            ct2 = CT2Translator(export_ct2(model, Path(tmp) / kind, kind), device=hf.device.type, threads=threads)
            systems.append((f"ctranslate2 {kind}", lambda s, t=ct2: t.translate(s, DecodingSettings(**options))))
        records = []
        for name, translate in systems:
            translate(sources[:batch_size])  # warm-up: allocations, lazy initialisation
            hyps, seconds = timed(translate, sources)
            out_tokens = sum(len(tokenizer(h).input_ids) for h in hyps)
            records.append({
                "system": name,
                "seconds": seconds,
                "sent_s": len(sources) / seconds,
                "tok_s": out_tokens / seconds,
                "bleu": corpus_scores(hyps, references, lang)["bleu"],
            })  # fmt: skip
    base = next(r for r in records if r["system"] == BASELINE)
    for record in records:
        record["speedup"] = base["seconds"] / record["seconds"]
        record["bleu_delta"] = record["bleu"] - base["bleu"]
    return records
