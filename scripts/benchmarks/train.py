"""Training throughput of this toolkit's loop against transformers' ``Seq2SeqTrainer``, on the same model preset,
data, initial weights, optimizer settings and average sentences per update.

Three systems, each in its own process (so peak memory and thread pools are its own):

* ``mtkit``: :meth:`mtkit.train.trainer.Trainer.update` on token-budget batches (``--max_tokens``);
* ``seq2seqtrainer``: ``Seq2SeqTrainer`` with its defaults, a fixed number of sentences per batch in random order,
  padded to the longest;
* ``seq2seqtrainer-grouped``: the same with its own length grouping (``train_sampling_strategy=
  "group_by_length"``, by source length).

The baselines take as many sentences per batch as the toolkit's batches held on average, so both see the same
number of target tokens per update. Figures: non-padding target tokens per second over ``steps`` timed updates
after ``warmup`` untimed ones, the padding fraction (source and target), peak memory.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

import torch

SYSTEMS = ("mtkit", "seq2seqtrainer", "seq2seqtrainer-grouped")


def peak_memory_gb() -> float:
    """Peak accelerator memory on a GPU, else this process's peak resident memory."""
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def test_bleu(model, tokenizer, cfg, name: str) -> dict:
    """sacreBLEU and chrF of ``model`` on the recipe's test split, decoded with the recipe's beam, length penalty
    and output bound by the toolkit's own batched decoding (the same for every system); the translations are
    written to ``<output_dir>/<name>-test.txt``."""
    from pathlib import Path

    from mtkit.data.corpus import load_parallel
    from mtkit.decode.generate import generate_translations
    from mtkit.decode.settings import DecodingSettings
    from mtkit.evaluation.scores import corpus_scores

    test = load_parallel(cfg.data)["test"]
    hyps = generate_translations(model, tokenizer, test["source"], DecodingSettings.from_eval(cfg.eval))
    path = Path(cfg.train.output_dir) / f"{name}-test.txt"
    path.write_text("".join(" ".join(h.split()) + "\n" for h in hyps), encoding="utf-8")
    return {**corpus_scores(hyps, list(test["target"]), list(test["lang"])), "translations": str(path)}


def run_mtkit(cfg, warmup: int, steps: int, budget_s: float = 0) -> dict:
    """Timed updates of the toolkit's loop; with ``budget_s``, updates until that much time has passed instead,
    then the test split's BLEU."""
    from mtkit.train.trainer import Trainer

    trainer = Trainer(cfg)
    batches = trainer.micro_batches()
    if budget_s:
        trainer.throughput.report()  # starts the interval
        start, updates = time.perf_counter(), 0
        while time.perf_counter() - start < budget_s:
            trainer.update([next(batches)])
            updates += 1
        figures = trainer.throughput.report()
        trained = {"updates": updates, "train_s": time.perf_counter() - start}
        trained["sentences_per_update"] = figures["sent_s"] * figures["elapsed_s"] / updates
        return trained | test_bleu(trainer.accelerator.unwrap_model(trainer.model), trainer.tokenizer, cfg, "mtkit")
    for n in (warmup, steps):
        trainer.throughput.report()  # starts the interval (after the warm-up: the timed one)
        for _ in range(n):
            trainer.update([next(batches)])
    figures = trainer.throughput.report()
    seconds = figures["elapsed_s"]
    return {
        "seconds": seconds,
        "tgt_tok_s": figures["tgt_tok_s"],
        "padding": figures["padding"],
        "sentences_per_update": figures["sent_s"] * seconds / steps,
        "tgt_tokens_per_update": figures["tgt_tok_s"] * seconds / steps,
    }


def run_seq2seqtrainer(cfg, batch_size: int, grouped: bool, warmup: int, steps: int, budget_s: float = 0) -> dict:
    """Timed updates of ``Seq2SeqTrainer`` (see the module's docstring); with ``budget_s``, training stops after
    that much time instead, then the test split's BLEU."""
    from pathlib import Path

    from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments, TrainerCallback

    from mtkit.data.preprocess import prepare_tokenizer, preprocess
    from mtkit.train.build import build_model

    out = Path(cfg.train.output_dir)
    train = preprocess(cfg)["train"].select_columns(["input_ids", "labels"])  # the toolkit's cached tokenization
    tokenizer = prepare_tokenizer(cfg, None, out)
    torch.manual_seed(cfg.train.seed)
    model = build_model(cfg, tokenizer)
    pad = DataCollatorForSeq2Seq(tokenizer, model=model)
    seen: list[tuple[int, int, int]] = []  # per batch, in training order: real target, real and padded tokens

    def collate(features):
        batch = pad(features)
        tgt = int((batch["labels"] != -100).sum())
        seen.append(
            (tgt, int(batch["attention_mask"].sum()) + tgt, batch["input_ids"].numel() + batch["labels"].numel())
        )
        return batch

    clock: dict[int, float] = {}

    class Clock(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            clock[-1] = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step in (warmup, warmup + steps):
                clock[state.global_step] = time.perf_counter()
            if budget_s and time.perf_counter() - clock[-1] >= budget_s:
                clock[-2] = state.global_step
                control.should_training_stop = True

    o = cfg.optim
    args = Seq2SeqTrainingArguments(
        output_dir=str(out / "seq2seqtrainer"), per_device_train_batch_size=batch_size,
        max_steps=cfg.train.max_steps if budget_s else warmup + steps,
        learning_rate=o.learning_rate, lr_scheduler_type="inverse_sqrt", warmup_steps=o.warmup_steps,
        adam_beta1=o.adam_beta1, adam_beta2=o.adam_beta2, adam_epsilon=o.adam_epsilon, weight_decay=o.weight_decay,
        label_smoothing_factor=o.label_smoothing, max_grad_norm=o.max_grad_norm, save_strategy="no",
        eval_strategy="no", logging_strategy="no", report_to=[], disable_tqdm=True, seed=cfg.train.seed,
        dataloader_num_workers=0, train_sampling_strategy="group_by_length" if grouped else "random",
        bf16=cfg.train.mixed_precision == "bf16", use_cpu=not torch.cuda.is_available(),
    )  # fmt: skip
    Seq2SeqTrainer(
        model=model, args=args, train_dataset=train, data_collator=collate, processing_class=tokenizer,
        callbacks=[Clock()],
    ).train()  # fmt: skip
    if budget_s:
        trained = {"updates": clock[-2], "train_s": time.perf_counter() - clock[-1]}
        return trained | test_bleu(model.eval(), tokenizer, cfg, "seq2seqtrainer")
    timed = seen[warmup : warmup + steps]  # the i-th batch collated is the i-th trained, whatever is prefetched
    seconds = clock[warmup + steps] - clock[warmup]
    tgt, real, padded = (sum(column) for column in zip(*timed))
    return {
        "seconds": seconds,
        "tgt_tok_s": tgt / seconds,
        "padding": 1 - real / padded,
        "sentences_per_update": batch_size,
        "tgt_tokens_per_update": tgt / steps,
    }


def measure(
    system: str, flags: list[str], warmup: int, steps: int, batch_size: int | None = None, budget_s: float = 0
) -> dict:
    """Run ``system`` in a fresh process on the recipe ``flags``; its record (with ``system`` and peak memory)."""
    cmd = [sys.executable, __file__, system, str(warmup), str(steps), str(batch_size or 0)]
    cmd.append(str(budget_s))
    res = subprocess.run([*cmd, *flags], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{system} failed:\n{res.stderr[-3000:]}")
    return {"system": system, **json.loads(res.stdout.strip().splitlines()[-1])}


def run(flags: list[str], warmup: int, steps: int) -> list[dict]:
    """The three systems, the toolkit first (its mean sentences per update sets the baselines' batch size); each
    record gets its throughput ratio to the toolkit's."""
    ours = measure("mtkit", flags, warmup, steps)
    batch = max(1, round(ours["sentences_per_update"]))
    records = [ours, *(measure(s, flags, warmup, steps, batch) for s in SYSTEMS[1:])]
    for record in records:
        record["mtkit_speedup"] = ours["tgt_tok_s"] / record["tgt_tok_s"]
    return records


def quality(flags: list[str], budget_s: float) -> list[dict]:
    """The toolkit, then ``Seq2SeqTrainer`` with its length grouping (its faster setting) given the toolkit's mean
    sentences per update, each trained for the same wall-clock ``budget_s`` from the same initial weights, then
    both scored on the test split."""
    ours = measure("mtkit", flags, 0, 0, None, budget_s)
    batch = max(1, round(ours["sentences_per_update"]))
    return [ours, measure("seq2seqtrainer-grouped", flags, 0, 0, batch, budget_s) | {"sentences_per_update": batch}]


def _main() -> None:
    """``python scripts/benchmarks/train.py SYSTEM WARMUP STEPS BATCH BUDGET_S FLAGS...``: one system, one JSON
    line."""
    from mtkit.config import parse_config

    system, warmup, steps, batch, budget, *flags = sys.argv[1:]
    cfg = parse_config(flags)
    warmup, steps, budget_s = int(warmup), int(steps), float(budget)
    if system == "mtkit":
        record = run_mtkit(cfg, warmup, steps, budget_s)
    else:
        record = run_seq2seqtrainer(cfg, int(batch), system.endswith("grouped"), warmup, steps, budget_s)
    print(json.dumps(record | {"peak_mem_gb": peak_memory_gb()}))


if __name__ == "__main__":
    _main()
