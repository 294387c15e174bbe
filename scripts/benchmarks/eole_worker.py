"""eole's side of ``scripts/benchmark.py peers``, run by the Python of eole's own virtual environment (it imports
eole and torch, and of ``mtkit`` only its standard-library modules ``allocator`` and ``textio``):
``python eole_worker.py train|translate SETTINGS.json``; one JSON line on standard output.

``train``: eole's own training (``eole.bin.run.train.train``) on pre-tokenized files, its loop untouched; a wrapper
around ``Trainer._accum_batches`` (the generator the loop draws each update's batches from) notes when each
update ended and its non-padding target tokens (those the loss predicts: the target after its start token), saves
the model at the requested wall-clock seconds and update counts (the saving time left out of the clock) and
stops once every mark is passed. ``translate``: eole's own translator (``InferenceEnginePY``) on a pre-tokenized
file, and the model converted to CTranslate2 by CTranslate2's eole converter, each timed around the translation
only.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the toolkit's allocator and line readers (stdlib only)
from bias_eval.core.textio import split_lines  # noqa: E402
from mtkit.allocator import allocator  # noqa: E402
from mtkit.model.vocab import VOCAB_MULTIPLE  # noqa: E402


def eole_config(s: dict) -> dict:
    """The eole training config of the settings ``s`` (see ``scripts/benchmarks/peers.py``)."""
    d = s["model"]
    return {
        "src_vocab": s["vocab"], "tgt_vocab": s["vocab"], "share_vocab": True, "n_sample": 0,
        "src_vocab_size": s["vocab_size"], "tgt_vocab_size": s["vocab_size"],
        "vocab_size_multiple": VOCAB_MULTIPLE,  # rounded up as this toolkit rounds a from-scratch model's
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
        "decoder_start_token": "<s>", "seed": s["seed"], "report_every": 50, "overwrite": True,
        "data": {
            "corpus_1": {"path_src": s["train_src"], "path_tgt": s["train_tgt"]},
            "valid": {"path_src": s["valid_src"], "path_tgt": s["valid_tgt"]},
        },
        "training": {
            "model_path": str(Path(s["out"]) / "model"), "save_checkpoint_steps": 0, "train_steps": 10**9,
            "valid_steps": 10**9, "batch_type": "tokens", "batch_size": s["max_tokens"], "batch_size_multiple": 1,
            "bucket_size": s["bucket_size"], "num_workers": 0, "accum_count": [1], "accum_steps": [0],
            "dropout": [s["dropout"]], "attention_dropout": [0.0], "dropout_steps": [0],
            "optim": "adam", "learning_rate": s["noam_learning_rate"], "decay_method": "noam",
            "warmup_steps": s["warmup_steps"], "adam_beta1": s["adam_beta1"], "adam_beta2": s["adam_beta2"],
            "adam_eps": s["adam_epsilon"], "weight_decay": 0.0, "max_grad_norm": s["max_grad_norm"],
            "label_smoothing": s["label_smoothing"], "normalization": "tokens",
            "param_init_method": "xavier_uniform", "world_size": 1, "gpu_ranks": [], "compute_dtype": "fp32",
            "keep_checkpoint": -1,
        },
        "model": {
            "architecture": "transformer", "hidden_size": d["d_model"], "layers": d["layers"], "heads": d["heads"],
            "transformer_ff": d["ffn"], "share_embeddings": True, "share_decoder_embeddings": True,
            "add_qkvbias": True, "add_ffnbias": True, "add_final_linear_bias": True,
            "embeddings": {
                "word_vec_size": d["d_model"], "position_encoding_type": "Learned", "n_positions": d["positions"],
            },
        },
    }  # fmt: skip


def profile_stop(profiler, s: dict) -> None:
    """Stop ``profiler`` and write its operators by self CPU time to ``<out>/profile.txt``."""
    profiler.__exit__(None, None, None)
    table = profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=30)
    Path(s["out"], "profile.txt").write_text(table, encoding="utf-8")


def train(s: dict) -> dict:
    import torch
    from eole.bin.run.train import train as eole_train
    from eole.config.run import TrainConfig
    from eole.trainer import Trainer

    torch.set_num_threads(s["threads"])
    marks_s, marks_u = sorted(s["budgets_s"]), sorted(s["update_marks"])
    ends: list[float] = []  # each update's end on the training clock
    tokens: list[int] = []
    saved: dict[str, dict] = {}
    params: list[int] = []
    profiler: list = []
    vocab: list[int] = []
    peak: list[float] = []
    original = Trainer._accum_batches

    def save(trainer, label: str, clock: float) -> None:
        updates = len(ends)
        if not s.get("save", True):
            return
        trainer.model_saver.save(updates)
        path = Path(trainer.model_saver.model_path) / f"step_{updates}"
        saved[label] = {"path": str(path), "updates": updates, "train_s": clock}

    def timed(self, iterator):
        params.append(sum(p.numel() for p in self.model.parameters()))
        vocab.append(len(self.model.src_emb.embeddings.weight))  # the built model's rows
        peak.append(max(self.optim.learning_rate(step=n) for n in range(1, 2 * s["warmup_steps"])))
        paused, start = 0.0, time.perf_counter()
        for batches, normalization in original(self, iterator):
            now = time.perf_counter() - start - paused
            if profiler:  # the profiled update has ended (its window: the update and the next batch's loading)
                profile_stop(profiler.pop(), s)
            if tokens:  # the update drawn last time has ended
                ends.append(now)
                t0 = time.perf_counter()
                while marks_s and now >= marks_s[0]:
                    save(self, f"{marks_s.pop(0):g}s", now)
                while marks_u and len(ends) >= marks_u[0]:
                    save(self, f"{marks_u.pop(0)}u", now)
                paused += time.perf_counter() - t0
                if not marks_s and not marks_u:
                    self.model_saver = None  # the loop's own last save: already done above
                    return
            pad = self.train_loss.padding_idx  # the predicted tokens: the target after its start token
            tokens.append(sum(int(b["tgt"][:, 1:].ne(pad).sum()) for b in batches))
            if s.get("profile_update") == len(tokens):
                profiler.append(torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]))
                profiler[0].__enter__()
            yield batches, normalization

    Trainer._accum_batches = timed
    cfg = eole_config(s)
    eole_train(TrainConfig(**cfg))
    m, t = cfg["model"], cfg["training"]
    config = {
        "layers": [m["layers"], m["layers"]], "d_model": m["hidden_size"], "heads": m["heads"],
        "ffn": m["transformer_ff"], "vocab": vocab[0], "positions": m["embeddings"]["n_positions"],
        "dropout": t["dropout"][0], "attention_dropout": t["attention_dropout"][0], "max_tokens": t["batch_size"],
        "schedule": f"noam, lr {t['learning_rate']:g} (peak {peak[0]:g}), warmup {t['warmup_steps']}",
        "label_smoothing": t["label_smoothing"], "adam": [t["adam_beta1"], t["adam_beta2"], t["adam_eps"]],
        "max_grad_norm": t["max_grad_norm"], "threads": torch.get_num_threads(),
        "tied_embeddings": m["share_embeddings"] and m["share_decoder_embeddings"],
        "allocator": allocator(),
    }  # fmt: skip
    return {
        "params": params[0], "update_ends": ends, "update_tokens": tokens[: len(ends)], "snapshots": saved,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "config": config,
        "eole_config": cfg,
    }  # fmt: skip


def translate(s: dict) -> dict:
    import torch
    from eole.config.run import PredictConfig
    from eole.inference_engine import InferenceEnginePY

    torch.set_num_threads(s["threads"])
    sources = split_lines(Path(s["source"]).read_text(encoding="utf-8"))  # as eole reads it: \n ends a line
    config = PredictConfig(
        model_path=s["model"], src=s["source"], output=os.devnull, beam_size=s["beam_size"],
        length_penalty="avg", alpha=s["length_penalty"], max_length=s["max_new_tokens"], batch_size=s["batch_size"],
        max_length_ratio=s["max_len_ratio"],
        batch_type="sents", world_size=1, gpu_ranks=[], compute_dtype="fp32", seed=s["seed"],
    )  # fmt: skip
    engine = InferenceEnginePY(config)
    engine.infer_list(sources[: s["batch_size"]])  # warm-up, as on our side
    start = time.perf_counter()
    _, _, preds = engine.infer_list(sources)
    seconds = time.perf_counter() - start
    engine.terminate()
    records = {"eole": {"seconds": seconds, "hypotheses": [p[0] for p in preds]}}
    return records | translate_ct2(s, sources)


def learned_positions_converter():
    """CTranslate2's eole converter (4.8) for a model with ``position_encoding_type: Learned``: it reads only
    sinusoidal tables (``<scope>.pe.pe``) and scales embeddings by sqrt(d) as eole's sinusoidal encoding does;
    eole's learned positions are an ``nn.Embedding`` (``<scope>.pe.weight``) added to unscaled embeddings."""
    from ctranslate2.converters import eole_ct2

    eole_ct2.set_position_encodings = lambda spec, variables, scope: setattr(
        spec, "encodings", variables[f"{scope}.weight"]
    )

    class Converter(eole_ct2.EoleConverter):
        def _load(self):
            spec = super()._load()
            spec.encoder.scale_embeddings = spec.decoder.scale_embeddings = False
            return spec

    return Converter


def translate_ct2(s: dict, sources: list[str]) -> dict:
    """eole's fast inference path: the model converted by CTranslate2's own eole converter, translated by
    CTranslate2 float32 in length-sorted batches with the same beam, length penalty, threads and per-batch output
    bound (``max_length_ratio`` x the longest source + 5, at most ``max_length``) as eole's translator; ``{}``
    when CTranslate2 is not installed in eole's environment."""
    try:
        import ctranslate2
    except ImportError:
        return {}
    path = Path(s["model"]) / "ct2"
    learned_positions_converter()(s["model"]).convert(str(path), quantization="float32", force=True)
    translator = ctranslate2.Translator(str(path), device="cpu", intra_threads=s["threads"])
    pieces = [line.split() for line in sources]
    order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
    batches = [order[i : i + s["batch_size"]] for i in range(0, len(order), s["batch_size"])]

    def run(batch: list[int]) -> list[list[str]]:
        bound = min(s["max_new_tokens"], math.ceil(s["max_len_ratio"] * max(len(pieces[i]) for i in batch) + 5))
        results = translator.translate_batch(
            [pieces[i] for i in batch], beam_size=s["beam_size"], length_penalty=s["length_penalty"],
            max_decoding_length=bound, max_batch_size=s["batch_size"],
        )  # fmt: skip
        return [r.hypotheses[0] for r in results]

    run(batches[0])  # warm-up
    hyps: list[str] = [""] * len(pieces)
    start = time.perf_counter()
    for batch in batches:
        for i, hyp in zip(batch, run(batch)):
            hyps[i] = " ".join(hyp)
    return {"eole_ct2": {"seconds": time.perf_counter() - start, "hypotheses": hyps}}


def main() -> None:
    mode, settings = sys.argv[1], json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    record = {"train": train, "translate": translate}[mode](settings)
    print(json.dumps(record))


if __name__ == "__main__":
    main()
