"""The training loop, one for every strategy: accelerate supplies devices, precision, DDP/FSDP/DeepSpeed,
gradient accumulation and checkpoint state; this module supplies the translation-specific parts.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType, InitProcessGroupKwargs, ProjectConfiguration, set_seed
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import AutoModelForSeq2SeqLM, DataCollatorForSeq2Seq, GenerationConfig, get_scheduler

from mtkit.batching import TokenBatchSampler
from mtkit.checkpoint import CheckpointManager, TrainerState
from mtkit.config import RunConfig
from mtkit.data import load_parallel
from mtkit.errors import UserError
from mtkit.evaluation import corpus_scores, seq2seq_loss, translate_corpus, validation_loss
from mtkit.preprocess import tokenize_split
from mtkit.presets import PRESETS, preset_config
from mtkit.tokenizer import load_tokenizer, train_tokenizer
from mtkit.tracking import MetricsLog, plot_curves, tracker_names


def build_accelerator(cfg: RunConfig) -> Accelerator:
    """An Accelerator for this run; on CPU-only hosts it runs multi-process jobs over gloo."""
    kwargs: dict = {}
    if not torch.cuda.is_available():
        if os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true":
            kwargs["kwargs_handlers"] = [InitProcessGroupKwargs(backend="gloo")]
        else:
            kwargs["cpu"] = True  # without it, a CPU job under a launcher trains N unsynchronised copies
    out = Path(cfg.train.output_dir)
    return Accelerator(
        gradient_accumulation_steps=cfg.train.gradient_accumulation_steps,
        mixed_precision=cfg.train.mixed_precision,
        log_with=tracker_names(cfg.logging.report_to) or None,
        project_config=ProjectConfiguration(project_dir=str(out), logging_dir=str(out / "logs")),
        step_scheduler_with_optimizer=False,  # the schedule counts optimizer updates, whatever the world size
        **kwargs,
    )


def prepare_tokenizer(cfg: RunConfig, train_texts, out: Path, accelerator: Accelerator):
    """The run's tokenizer: given, the pretrained model's, one saved by an earlier attempt, or trained now."""
    if cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path:
        return load_tokenizer(cfg.tokenizer.tokenizer_name or cfg.model.model_name_or_path)
    tok_dir = out / "tokenizer"
    with accelerator.main_process_first():
        if not (tok_dir / "tokenizer.json").exists():
            n = cfg.tokenizer.tokenizer_train_samples or len(train_texts)
            texts = (text for row in train_texts.select(range(min(n, len(train_texts)))) for text in row.values())
            tok = train_tokenizer(texts, vocab_size=cfg.tokenizer.vocab_size, kind=cfg.tokenizer.tokenizer_type)
            tok.save_pretrained(str(tok_dir))
        return load_tokenizer(tok_dir)


def build_model(cfg: RunConfig, tokenizer):
    """A pretrained model to fine-tune, or a preset initialised at random."""
    if cfg.model.model_name_or_path:
        try:
            return AutoModelForSeq2SeqLM.from_pretrained(cfg.model.model_name_or_path)
        except OSError as err:
            raise UserError(f"--model_name_or_path: {str(err).splitlines()[0]}") from None
    config = preset_config(
        cfg.model.model,
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        max_positions=max(1024, cfg.data.max_source_length, cfg.data.max_target_length, cfg.eval.max_new_tokens),
        dropout=cfg.model.dropout,
    )
    return AutoModelForSeq2SeqLM.from_config(config)


def _loader(dataset, sampler: TokenBatchSampler, collator) -> DataLoader:
    # Its own generator: making an iterator must not draw from the global RNG, or resuming would
    # shift the dropout masks of every later step.
    return DataLoader(dataset, batch_sampler=sampler, collate_fn=collator, generator=torch.Generator())


def train(cfg: RunConfig) -> dict:
    """Train (or resume) the run described by ``cfg``; return the final metrics."""
    out = Path(cfg.train.output_dir)
    if not cfg.model.model_name_or_path and cfg.model.model not in PRESETS:
        raise UserError(f"--model: unknown preset '{cfg.model.model}'; choose from {', '.join(PRESETS)}")
    if out.exists() and not out.is_dir():
        raise UserError(f"--output_dir {out}: exists and is not a folder")
    raw = load_parallel(cfg.data)  # every input check happens here, before anything is written
    accelerator = build_accelerator(cfg)
    set_seed(cfg.train.seed)
    if accelerator.is_main_process:
        out.mkdir(parents=True, exist_ok=True)
        cfg.save(out / "config.yaml")
    tokenizer = prepare_tokenizer(cfg, raw["train"], out, accelerator)
    model = build_model(cfg, tokenizer)
    with accelerator.main_process_first():
        data = {name: tokenize_split(split, tokenizer, cfg.data, out / "cache", name) for name, split in raw.items()}
    n_params = sum(getattr(p, "ds_numel", p.numel()) for p in model.parameters())  # ZeRO-3 partitions early
    accelerator.print(
        f"model {cfg.model.model_name_or_path or cfg.model.model}: {n_params / 1e6:.1f}M parameters, "
        f"vocabulary {len(tokenizer)}; {len(data['train'])} training pairs; {accelerator.num_processes} process(es)"
        f" on {accelerator.device}, {accelerator.distributed_type.value}, precision {accelerator.mixed_precision}"
    )

    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100, pad_to_multiple_of=8)
    columns = ["input_ids", "attention_mask", "labels"]
    shard = {"num_replicas": accelerator.num_processes, "rank": accelerator.process_index}
    sampler = TokenBatchSampler(
        data["train"]["length"],
        cfg.train.max_tokens,
        seed=cfg.train.seed,
        max_sentences=cfg.train.max_sentences,
        **shard,
    )
    train_loader = _loader(data["train"].select_columns(columns), sampler, collator)
    valid_sampler = TokenBatchSampler(data["validation"]["length"], cfg.train.max_tokens, shuffle=False, **shard)
    valid_loader = _loader(data["validation"].select_columns(columns), valid_sampler, collator)

    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=cfg.optim.learning_rate,
        betas=(cfg.optim.adam_beta1, cfg.optim.adam_beta2),
        eps=cfg.optim.adam_epsilon,
        weight_decay=cfg.optim.weight_decay,
    )
    scheduler = get_scheduler(
        cfg.optim.lr_scheduler_type,
        optimizer,
        num_warmup_steps=cfg.optim.warmup_steps,
        num_training_steps=cfg.train.max_steps,
    )
    if accelerator.distributed_type == DistributedType.DEEPSPEED:
        ds_config = accelerator.state.deepspeed_plugin.deepspeed_config
        if ds_config.get("train_micro_batch_size_per_gpu", "auto") == "auto":
            ds_config["train_micro_batch_size_per_gpu"] = 1  # token batches have no fixed size
    if cfg.train.torch_compile:
        model.compile()  # in place: no wrapper, so state-dict keys (checkpoints, final/) stay plain
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)

    checkpoints = CheckpointManager(out, accelerator, keep_last=cfg.train.save_total_limit)
    state = TrainerState()
    if checkpoints.last is not None:
        state = checkpoints.load(checkpoints.last)
        accelerator.print(f"resuming from {checkpoints.last} (update {state.step}, epoch {state.epoch})")
    log = MetricsLog(out, accelerator, resume_step=state.step)
    accelerator.init_trackers(
        cfg.logging.project_name,
        config={k: v if v is not None else "none" for k, v in cfg.flat().items()},
        init_kwargs={"wandb": {"name": cfg.logging.run_name or out.name}},
    )

    def evaluate(split: str, max_samples: int | None) -> dict[str, float]:
        rows = raw[split].select(range(min(max_samples or len(raw[split]), len(raw[split]))))
        hyps = translate_corpus(accelerator, model, tokenizer, rows["source"], cfg.eval, cfg.data.source_prefix)
        return corpus_scores(hyps, rows["target"])

    bar = tqdm(
        total=cfg.train.max_steps,
        initial=state.step,
        desc="training",
        unit="upd",
        disable=not accelerator.is_main_process or cfg.logging.disable_tqdm,
    )
    model.train()
    window = {"loss": 0.0, "updates": 0, "tokens": 0, "start": time.perf_counter()}
    while state.step < cfg.train.max_steps:
        sampler.set_epoch(state.epoch, skip=state.batches_in_epoch)
        for batch in train_loader:
            state.batches_in_epoch += 1
            with accelerator.accumulate(model):
                loss, n_tokens = seq2seq_loss(model, batch, cfg.optim.label_smoothing)
                accelerator.backward(loss)
                if accelerator.sync_gradients and cfg.optim.max_grad_norm > 0:
                    accelerator.clip_grad_norm_(model.parameters(), cfg.optim.max_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
            window["loss"] += loss.item() / cfg.train.gradient_accumulation_steps
            window["tokens"] += n_tokens
            if not accelerator.sync_gradients:
                continue
            if not accelerator.optimizer_step_was_skipped:
                scheduler.step()
            state.step += 1
            window["updates"] += 1
            bar.update(1)

            if state.step % cfg.logging.logging_steps == 0 or state.step == cfg.train.max_steps:
                stats = accelerator.reduce(
                    torch.tensor([window["loss"], window["tokens"]], device=accelerator.device, dtype=torch.float64),
                    reduction="sum",
                )
                elapsed = time.perf_counter() - window["start"]
                record = {
                    "loss": float(stats[0]) / accelerator.num_processes / window["updates"],
                    "lr": scheduler.get_last_lr()[0],
                    "tokens_per_s": float(stats[1]) / elapsed,
                    "epoch": state.epoch,
                }
                log.log(record, state.step)
                bar.set_postfix(
                    loss=f"{record['loss']:.3f}", lr=f"{record['lr']:.2e}", tok_s=f"{record['tokens_per_s']:.0f}"
                )
                window = {"loss": 0.0, "updates": 0, "tokens": 0, "start": time.perf_counter()}

            is_best = False
            if state.step % cfg.eval.eval_steps == 0 or state.step == cfg.train.max_steps:
                valid_sampler.set_epoch(0)
                scores = {"valid_loss": validation_loss(accelerator, model, valid_loader)}
                scores.update({f"valid_{k}": v for k, v in evaluate("validation", cfg.eval.eval_max_samples).items()})
                # Best by BLEU; on a tie (early on, when BLEU is 0), by validation loss.
                key = (scores["valid_bleu"], -scores["valid_loss"])
                is_best = state.best_bleu is None or key > (state.best_bleu, -state.best_valid_loss)
                if is_best:
                    state.best_bleu, state.best_valid_loss = scores["valid_bleu"], scores["valid_loss"]
                    state.best_step = state.step
                log.log(scores, state.step)
                accelerator.print(
                    f"\nupdate {state.step}: valid loss {scores['valid_loss']:.3f}, "
                    f"BLEU {scores['valid_bleu']:.2f} (best {state.best_bleu:.2f} at {state.best_step})"
                )
            if state.step % cfg.train.save_steps == 0 or is_best or state.step == cfg.train.max_steps:
                checkpoints.save(state, is_best=is_best)
            if state.step >= cfg.train.max_steps:
                break
        else:
            state.epoch += 1
            state.batches_in_epoch = 0
    bar.close()
    return finish(cfg, accelerator, model, tokenizer, checkpoints, state, evaluate, log, has_test="test" in raw)


def finish(cfg, accelerator, model, tokenizer, checkpoints, state, evaluate, log, has_test: bool) -> dict:
    """Export ``final/`` (best or last weights), score the test split, write ``results.json`` and curves."""
    out = Path(cfg.train.output_dir)
    if cfg.train.load_best_model_at_end and checkpoints.best and checkpoints.best != checkpoints.last:
        accelerator.load_state(str(checkpoints.best))
        accelerator.print(f"loaded checkpoint_best (update {state.best_step}) for export")
    results: dict = {"step": state.step, "best_valid_bleu": state.best_bleu, "best_step": state.best_step}
    if has_test:
        test = {f"test_{k}": v for k, v in evaluate("test", None).items()}
        results.update(test)
        log.log(test, state.step)
        accelerator.print(f"test ({cfg.data.test_split}): BLEU {test['test_bleu']:.2f}, chrF {test['test_chrf']:.2f}")
    final = out / "final"
    state_dict = accelerator.get_state_dict(model)
    if accelerator.is_main_process:
        unwrapped = accelerator.unwrap_model(model)
        unwrapped.save_pretrained(str(final), state_dict=dict(state_dict), safe_serialization=True)
        tokenizer.save_pretrained(str(final))
        generation = GenerationConfig.from_model_config(unwrapped.config)
        generation.update(
            num_beams=cfg.eval.num_beams, length_penalty=cfg.eval.length_penalty, max_new_tokens=cfg.eval.max_new_tokens
        )
        generation.save_pretrained(str(final))
        (out / "results.json").write_text(json.dumps(results, indent=2))
        plot_curves(out / "metrics.jsonl", out / "curves.png")
        accelerator.print(f"final model in {final}")
    accelerator.end_training()
    return results
