"""The toolkit's side of ``scripts/benchmark.py peers``, each run in its own process:
``python peers_mtkit.py train|translate SETTINGS.json`` prints one JSON line (see ``peers.py``)."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def profile_start(s: dict, update: int):
    """A started ``torch.profiler`` if ``update`` is the one ``s["profile_update"]`` names, else None."""
    import torch

    if s.get("profile_update") != update:
        return None
    profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
    profiler.__enter__()
    return profiler


def profile_stop(profiler, s: dict) -> None:
    """Stop ``profiler`` and write its operators by self CPU time to ``<out>/profile.txt``."""
    if profiler is not None:
        profiler.__exit__(None, None, None)
        table = profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=30)
        Path(s["out"], "profile.txt").write_text(table, encoding="utf-8")


def train_mtkit(s: dict) -> dict:
    """The toolkit's loop (:meth:`mtkit.train.trainer.Trainer.update`), timed and saved as eole's worker does."""
    import torch

    from mtkit.allocator import allocator
    from mtkit.config import parse_config
    from mtkit.train.final import export_model
    from mtkit.train.trainer import Trainer

    torch.set_num_threads(s["threads"])
    cfg = parse_config(s["flags"])
    trainer = Trainer(cfg)
    marks_s, marks_u = sorted(s["budgets_s"]), sorted(s["update_marks"])
    ends, tokens, snapshots = [], [], {}
    n_params = sum(p.numel() for p in trainer.model.parameters())

    def save(label: str, clock: float) -> None:
        if not s.get("save", True):
            return
        path = Path(s["out"]) / "snapshots" / label
        export_model(cfg, trainer.accelerator, trainer.model, trainer.tokenizer, path, None)
        snapshots[label] = {"path": str(path), "updates": len(ends), "train_s": clock}

    batches = trainer.micro_batches()
    paused, start = 0.0, time.perf_counter()
    while marks_s or marks_u:
        profiler = profile_start(s, len(ends) + 1)
        batch = next(batches)
        tokens.append(int(batch["stats"]["tgt_tokens"]))
        trainer.update([batch])
        profile_stop(profiler, s)
        now = time.perf_counter() - start - paused
        ends.append(now)
        t0 = time.perf_counter()
        while marks_s and now >= marks_s[0]:
            save(f"{marks_s.pop(0):g}s", now)
        while marks_u and len(ends) >= marks_u[0]:
            save(f"{marks_u.pop(0)}u", now)
        paused += time.perf_counter() - t0
    c, o = trainer.accelerator.unwrap_model(trainer.model).config, cfg.optim
    config = {
        "layers": [c.encoder_layers, c.decoder_layers], "d_model": c.d_model, "heads": c.encoder_attention_heads,
        "ffn": c.encoder_ffn_dim, "vocab": c.vocab_size, "positions": c.max_position_embeddings + 2,
        "dropout": c.dropout, "attention_dropout": c.attention_dropout, "max_tokens": cfg.train.max_tokens,
        "schedule": f"{o.lr_scheduler_type}, peak {o.learning_rate:g}, warmup {o.warmup_steps}",
        "label_smoothing": o.label_smoothing, "adam": [o.adam_beta1, o.adam_beta2, o.adam_epsilon],
        "max_grad_norm": o.max_grad_norm, "threads": torch.get_num_threads(), "tied_embeddings": c.tie_word_embeddings,
        "allocator": allocator(),
    }  # fmt: skip
    return {
        "params": n_params, "update_ends": ends, "update_tokens": tokens, "snapshots": snapshots, "config": config,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }  # fmt: skip


def translate_mtkit(s: dict) -> dict:
    """Test-split translations of a saved model: CTranslate2 float32, and with ``s["generate"]`` transformers'
    ``generate``, each timed around the translation only, after one warm-up batch."""
    import tempfile

    import torch

    from mtkit.decode.ct2 import CT2Translator
    from mtkit.decode.generate import Translator
    from mtkit.decode.settings import DecodingSettings
    from mtkit.export.ct2 import export_ct2

    torch.set_num_threads(s["threads"])
    sources, records = s["sources"], {}
    options = {k: s[k] for k in ("batch_size", "max_new_tokens", "length_penalty")}
    settings = DecodingSettings(
        num_beams=s["beam_size"], max_len_a=s["max_len_ratio"], max_len_b=5, **options
    )  # eole's bound: ratio x longest source + 5
    with tempfile.TemporaryDirectory() as tmp:
        engines = {
            "ct2": CT2Translator(
                export_ct2(Path(s["model"]), Path(tmp) / "ct2", "float32", check_samples=0), threads=s["threads"]
            )
        }
        if s["generate"]:
            engines["generate"] = Translator(Path(s["model"]), device="cpu", dtype="fp32")
        for name, engine in engines.items():
            engine.translate(sources[: s["batch_size"]], settings)
            start = time.perf_counter()
            hyps = engine.translate(sources, settings)
            records[name] = {"seconds": time.perf_counter() - start, "hypotheses": hyps}
    return records


def _main() -> None:
    """``python peers.py train|translate SETTINGS.json``: one JSON line."""
    mode, settings = sys.argv[1], json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    if mode == "train":
        from mtkit.allocator import start_on_tcmalloc

        start_on_tcmalloc()  # as scripts/train.py does
    print(json.dumps({"train": train_mtkit, "translate": translate_mtkit}[mode](settings)))


if __name__ == "__main__":
    _main()
