"""The training loop, one for every strategy and for both paths (from scratch and fine-tuning).

accelerate supplies devices, precision, DDP/FSDP/DeepSpeed, gradient accumulation and checkpoint state;
:class:`Trainer` supplies the translation-specific parts, one method per concern: :meth:`~Trainer.update`
(one optimizer update), :meth:`~Trainer.fit` (the schedule of updates, logging, evaluation and saving),
:meth:`~Trainer.evaluate`, :meth:`~Trainer.save` and :meth:`~Trainer.export`.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import torch
from accelerate.utils import set_seed
from tqdm.auto import tqdm

from bias_eval.core.textio import atomic_write, check_writable, write_jsonl
from mtkit.config import RunConfig
from mtkit.data.batching import Seq2SeqCollator, to_device
from mtkit.data.corpus import DATA_COUNTS, describe_counts, held_out, language_counts, load_parallel
from mtkit.data.coverage import check_run_coverage
from mtkit.data.languages import check_run_languages
from mtkit.data.mitigation_data import mitigation_splits
from mtkit.data.preprocess import prepare_tokenizer, tokenize_splits
from mtkit.data.prompts import Prompt
from mtkit.distributed.deepspeed import sharded_creation, zero_stage
from mtkit.distributed.fsdp import shard_tied_embeddings, uses_fsdp
from mtkit.distributed.reshard import resharding
from mtkit.errors import Stopped, UserError
from mtkit.evaluation.scores import balanced_subset, split_scores
from mtkit.evaluation.selection import check_selection, describe, low_signal_note, oriented, raw_value, selection_value
from mtkit.evaluation.validation import translate_corpus, validation_loss
from mtkit.model.flops import Architecture, peak_tflops
from mtkit.model.folders import check_pretrained_source
from mtkit.model.loss import token_loss_sum
from mtkit.model.norms import fuse_t5_norms
from mtkit.model.precision import model_type, resolve_mixed_precision
from mtkit.model.presets import check_model_shape
from mtkit.train.build import buckets, build_accelerator, build_loader, build_model, build_optimizer
from mtkit.train.checkpoint import CheckpointManager, TrainerState, newest_complete
from mtkit.train.checks import check_bias_report, check_ct2, check_launch, check_position_limit, check_resume
from mtkit.train.compile import check_compile, training_forward
from mtkit.train.epochs import EpochCheckpoints
from mtkit.train.final import export_model
from mtkit.train.mitigation import Mitigation, check_pull
from mtkit.train.nonfinite import NonFiniteGuard
from mtkit.train.preemption import StopSignal
from mtkit.train.record import RunRecord
from mtkit.train.stopping import Patience
from mtkit.train.throughput import Throughput
from mtkit.train.tracking import MetricsLog, plot_curves


class Trainer:
    """One run: builds its parts from ``cfg`` (resuming from the newest checkpoint), then :meth:`fit`."""

    def __init__(self, cfg: RunConfig) -> None:
        self.cfg = cfg
        self.out = out = Path(cfg.train.output_dir)
        discard = self._check_inputs()  # every input check happens here, before anything is written
        precision = resolve_mixed_precision(cfg, model_type(cfg))
        self.accelerator = acc = build_accelerator(cfg, precision)
        self.epochs = EpochCheckpoints(cfg, acc)  # --average_last_epochs refused under DeepSpeed and FSDP
        if precision and precision != cfg.train.mixed_precision:
            acc.print(f"--mixed_precision auto: computing in {precision.replace('no', 'fp32')} on {acc.device.type}")
        check_pull(cfg, sharded=zero_stage(acc) is not None or uses_fsdp(acc))  # before anything is written
        set_seed(cfg.train.seed)
        if acc.is_main_process:
            out.mkdir(parents=True, exist_ok=True)
            if self.afresh:  # trained again below, with the new settings
                shutil.rmtree(out / "tokenizer", ignore_errors=True)
            cfg.save(out / "config.yaml")
            if held_out(cfg.data):
                write_jsonl(out / "validation_split.jsonl", self.raw["validation"].to_list())
        with acc.main_process_first():  # instant when scripts/preprocess.py ran first
            self.tokenizer = prepare_tokenizer(cfg, self.raw["train"], out)
            data = tokenize_splits(self.raw, self.tokenizer, cfg)
        self._build(data)
        self._restore(discard)

    def _check_inputs(self) -> bool:
        """Check the flags, the model source, the output folder (a resume's settings) and the data (loaded into
        ``self.raw``); return whether the checkpoints are to be discarded (``--overwrite_output_dir``)."""
        cfg, out = self.cfg, self.out
        check_launch(cfg)  # DeepSpeed settings and trackers
        check_model_shape(cfg.model)  # a known preset, a layout some class has
        check_writable(out, "--output_dir")  # not a file, not read-only, not full
        try:  # a run never silently starts over checkpoints it cannot read
            resuming, discard = newest_complete(out / "checkpoints") is not None, False
        except UserError:
            if not cfg.train.overwrite_output_dir:
                raise
            resuming, discard = False, True
        self.afresh = check_resume(cfg, out, resuming)  # other settings than config.yaml's: refused, or afresh
        check_pretrained_source(cfg.model.model_name_or_path, "--model_name_or_path", weights=True)
        check_position_limit(cfg)
        tokenizer_files = ("tokenizer.json", "tokenizer_config.json")
        check_pretrained_source(cfg.tokenizer.tokenizer_name, "--tokenizer_name", tokenizer_files)
        self.prompt = Prompt.parse(cfg.data.prompt, cfg.data.source_lang) if cfg.data.prompt else None
        check_run_languages(cfg)  # language codes, and ones a pretrained model's family has
        self.raw = mitigation_splits(cfg, load_parallel(cfg.data, seed=cfg.train.seed))  # --gender_data: its splits
        check_run_coverage(cfg, self.raw["train"])  # a given tokenizer must write every target language
        check_selection(cfg, self.raw["validation"].column_names)
        check_bias_report(cfg)
        check_ct2(cfg)
        return discard or self.afresh

    def _build(self, data: dict) -> None:
        """Model, loaders, optimizer and schedule, prepared by accelerate for the run's strategy."""
        cfg, acc = self.cfg, self.accelerator
        with sharded_creation(acc):  # ZeRO-3: zero.Init here; every model created after the run is a plain one
            model = build_model(cfg, self.tokenizer, zero_stage(acc))
        if cfg.train.fuse_norms:
            fused = fuse_t5_norms(model) if acc.device.type == "cuda" else 0
            acc.print(f"--fuse_norms: {fused} T5 norms fused" if fused else "--fuse_norms: no T5 norm on a GPU to fuse")
        self.arch = replace(Architecture.from_config(model.config), weight_gradients=not cfg.model.lora_r)
        self.train_data = data["train"]
        self.counts = language_counts(data, self.raw.left_out)  # what trains: long pairs dropped
        if acc.is_main_process:
            atomic_write(self.out / DATA_COUNTS, json.dumps(self.counts, indent=2).encode("utf-8"))
        self._announce(model)
        self.collator = Seq2SeqCollator.for_model(self.tokenizer, model, cfg.train.pad_to_multiple_of, buckets(cfg))
        self.train_loader, self.sampler = build_loader(data["train"], cfg, acc, self.collator, train=True)
        self.valid_loader, self.valid_sampler = build_loader(data["validation"], cfg, acc, self.collator, train=False)
        shard_tied_embeddings(acc, model)  # FSDP only; before the optimizer sees the parameters
        fused = zero_stage(acc) is None and acc.mixed_precision != "fp16"  # fp16: the scaler's own skipping
        optimizer, scheduler = build_optimizer(cfg, model, fused=fused)
        if cfg.train.torch_compile:
            check_compile(acc)
        self.model, self.optimizer, self.scheduler = acc.prepare(model, optimizer, scheduler)
        self.train_forward = training_forward(  # evaluation: self.model
            self.model, cfg.train.torch_compile, cfg.train.static_shapes, cfg.train.torch_compile_mode
        )
        self.mitigation = Mitigation(cfg, self.model, self.out)

    def _restore(self, discard: bool) -> None:
        """Checkpoints (resuming from the newest complete one), throughput accounting and the fault handlers."""
        cfg, acc = self.cfg, self.accelerator
        self.checkpoints = CheckpointManager(self.out, acc, keep_last=cfg.train.save_total_limit)
        if discard:
            which = "checkpoints made with other settings" if self.afresh else "unreadable checkpoints"
            acc.print(f"--overwrite_output_dir: deleting the {which} in {self.checkpoints.root}")
            self.checkpoints.discard_unreadable()
        self.state = TrainerState(world_size=acc.num_processes)
        last = self.checkpoints.last  # the newest complete checkpoint, whatever the links say
        if last is not None:
            self._resume(last)
        peak = peak_tflops(acc.device, cfg.logging.peak_tflops, acc.mixed_precision)  # of the precision in use
        self.throughput = Throughput(acc, self.arch, peak)
        self.stop = StopSignal(acc.num_processes)  # from here on, SIGTERM/SIGINT end in a checkpoint
        self.nonfinite = NonFiniteGuard(self.optimizer, acc.device, cfg.optim.max_nonfinite_updates, say=acc.print)
        self.grad_norm: torch.Tensor | float | None = None

    def _resume(self, checkpoint: Path) -> None:
        """Restore everything from ``checkpoint``; on another number of processes, with the weights and optimizer
        state resharded (:mod:`mtkit.distributed.reshard`), continue the epoch where it stood."""
        acc = self.accelerator
        self.state = self.checkpoints.load(checkpoint)
        acc.print(f"resuming from {checkpoint} (update {self.state.step}, epoch {self.state.epoch})")
        if self.cfg.train.max_steps > self.state.step and self.state.train_on():
            self.checkpoints.point_best_at(self.state.best_step)  # as a run straight to --max_steps has it
        before = self.state.world_size
        if self.state.resume_on(acc.num_processes):
            acc.print(
                f"the checkpoint was written by {before} process(es), this run has {acc.num_processes}: "
                f"{resharding(acc)}; the rest of epoch {self.state.epoch} is dealt anew, nothing repeated or skipped"
            )

    def _announce(self, model) -> None:
        cfg, acc = self.cfg, self.accelerator
        params = list(model.parameters())
        n_params = sum(getattr(p, "ds_numel", p.numel()) for p in params)  # ZeRO-3 partitions early
        n_trained = sum(getattr(p, "ds_numel", p.numel()) for p in params if p.requires_grad)
        per_update = cfg.train.max_tokens * acc.num_processes * cfg.train.gradient_accumulation_steps
        notes = [f"{n_trained / 1e6:.2f}M trained (LoRA r={cfg.model.lora_r})"] if cfg.model.lora_r else []
        if hasattr(params[0], "ds_id"):
            notes.append("created sharded across processes (ZeRO-3 zero.Init)")
        if cfg.train.gradient_checkpointing:
            notes.append("gradient checkpointing")
        acc.print(
            f"model {cfg.model.model_name_or_path or cfg.model.model}: {n_params / 1e6:.1f}M parameters "
            f"({params[0].dtype}{''.join(', ' + n for n in notes)}), vocabulary {len(self.tokenizer)}; "
            f"{len(self.train_data)} training pairs ({describe_counts(self.counts)}); "
            f"{acc.num_processes} process(es) on {acc.device}, {acc.distributed_type.value}, "
            f"precision {acc.mixed_precision}\n"
            f"effective batch: up to {per_update} padded tokens per update = {cfg.train.max_tokens} per batch "
            f"x {acc.num_processes} process(es) x {cfg.train.gradient_accumulation_steps} accumulation step(s)"
        )

    # -- one update ------------------------------------------------------------------------------------

    def micro_batches(self) -> Iterator[dict]:
        """Training batches without end, epoch after epoch, keeping the position in ``state`` for resume."""
        state = self.state
        while True:
            self.sampler.set_epoch(state.epoch, skip=state.batches_in_epoch, segments=state.epoch_segments)
            for batch in self.train_loader:
                state.batches_in_epoch += 1
                yield batch
            state.epoch += 1
            state.batches_in_epoch = 0
            state.epoch_segments = []

    def update(self, micro_batches: list[dict]) -> bool:
        """One optimizer update over ``micro_batches`` (one per accumulation step); True if it was applied.

        The loss is the sum over target tokens divided by the target tokens of the whole update, over every
        micro-batch and every process. DDP/ZeRO average gradients over processes and accelerate divides
        by the accumulation steps, so each micro-batch's sum is scaled by ``processes x steps / tokens``.
        The token count is known on the host; only its sum across processes is a (device-side) collective.
        """
        acc = self.accelerator
        if len(micro_batches) != acc.gradient_accumulation_steps:
            raise ValueError(f"{len(micro_batches)} micro-batches for {acc.gradient_accumulation_steps} steps")
        local = float(sum(b["stats"]["tgt_tokens"] for b in micro_batches))
        pinned = torch.tensor([local], pin_memory=acc.device.type == "cuda")  # no stream-ordered pageable copy
        tokens = acc.reduce(pinned.to(acc.device, non_blocking=True), reduction="sum")
        scale = acc.num_processes * acc.gradient_accumulation_steps / tokens
        clip = self.cfg.optim.max_grad_norm or float("inf")  # inf: measure the norm, clip nothing
        smoothing = self.cfg.optim.label_smoothing
        for batch in micro_batches:
            self.throughput.add_batch(batch["stats"])
            batch = to_device(batch, acc.device)
            with acc.accumulate(self.model):
                loss_sum = token_loss_sum(self.train_forward, batch, smoothing, self.mitigation.teacher)  # distilled?
                loss = loss_sum * scale
                acc.backward(loss + self.mitigation.pull() if self.mitigation.strength else loss)  # --l2_to_start
                if acc.sync_gradients and zero_stage(acc) is None:  # DeepSpeed clips in its step: norm read when logged
                    self.grad_norm = acc.clip_grad_norm_(self.model.parameters(), clip)
                    self.nonfinite.before_step(self.grad_norm)
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.throughput.add_loss(loss_sum)
        if acc.optimizer_step_was_skipped:  # fp16 or DeepSpeed overflow: nothing applied, the schedule stays
            return False
        self.scheduler.step()
        return True

    # -- the run ---------------------------------------------------------------------------------------

    def fit(self) -> RunRecord:
        """Train to ``--max_steps`` updates with logging, evaluation and checkpoints; export; return the record."""
        cfg, state = self.cfg, self.state
        self.log = MetricsLog(self.out, self.accelerator, resume_step=state.step)
        self.accelerator.init_trackers(
            cfg.logging.project_name,
            config={k: v if v is not None else "none" for k, v in cfg.flat().items()},
            init_kwargs={"wandb": {"name": cfg.logging.run_name or self.out.name}},
        )
        bar = tqdm(
            total=cfg.train.max_steps,
            initial=state.step,
            desc="training",
            unit="upd",
            disable=not self.accelerator.is_main_process or cfg.logging.disable_tqdm,
        )
        if self.mitigation.needs_start(state.step):  # a mitigation's start: its BLEU budget, and a candidate checkpoint
            self.save(is_best=self._validate())
        self.model.train()
        batches, self.patience = self.micro_batches(), Patience(cfg, state, self.accelerator.print)
        while state.step < cfg.train.max_steps and not self.patience.exhausted(state):
            group = [next(batches) for _ in range(self.accelerator.gradient_accumulation_steps)]
            if self.nonfinite.skipped(self.update(group), state, self.checkpoints.root):
                self._stop_if_signalled(saved=False)  # a run whose updates keep being skipped still stops on a signal
                continue
            state.step += 1
            bar.update(1)
            last = state.step == cfg.train.max_steps
            if state.step % cfg.logging.logging_steps == 0 or last:
                record = self._log_training()
                shown = {
                    "loss": f"{record['loss']:.3f}",
                    "lr": f"{record['lr']:.2e}",
                    "tok_s": f"{record['tgt_tok_s']:.0f}",
                }
                if "mfu" in record:
                    shown["mfu"] = f"{record['mfu']:.1%}"
                bar.set_postfix(shown)
            paused = time.perf_counter()
            is_best = False
            if state.step % cfg.eval.eval_steps == 0 or last:
                is_best = self._validate()
                last = self.patience.after_evaluation(state, is_best) or last  # --early_stopping_patience
            epoch_end = self.epochs.ended(state, self.sampler)  # --keep_last_epochs, --average_last_epochs
            saved = state.step % cfg.train.save_steps == 0 or is_best or last or epoch_end
            if saved:
                self.save(is_best=is_best)
            self.throughput.pause(time.perf_counter() - paused)
            if not last:
                self._stop_if_signalled(saved)  # a host collective every StopSignal.EVERY updates
        bar.close()
        self.stop.restore()
        return self.export()

    def _stop_if_signalled(self, saved: bool) -> None:
        """At an update boundary: if any process was sent SIGTERM/SIGINT, checkpoint and stop (all together)."""
        signame = self.stop.agreed(self.state.step + self.state.skipped_updates, now=saved)  # skipped ones count
        if signame is None:
            return
        if not saved:
            self.save()
        self.accelerator.print(f"\n{signame}: checkpoint of update {self.state.step} written")
        self.accelerator.end_training()
        self.stop.restore()
        raise Stopped(signame, self.state.step)

    def _log_training(self) -> dict:
        record = self.throughput.report()  # the one host read of the interval
        record.update(lr=self.scheduler.get_last_lr()[0], epoch=self.state.epoch)
        if zero_stage(self.accelerator) is not None:  # a host read (DeepSpeed's .item()): at logging steps only
            self.grad_norm = self.accelerator.clip_grad_norm_(self.model.parameters(), self.cfg.optim.max_grad_norm)
        record.update(self.nonfinite.report(self.state, self.checkpoints.root))
        if self.grad_norm is not None:
            record["grad_norm"] = float(self.grad_norm)
        self.log.log(record, self.state.step)
        return record

    def _validate(self) -> bool:
        """Validation loss and scores, logged; returns whether this is the best checkpoint so far."""
        cfg, state = self.cfg, self.state
        self.valid_sampler.set_epoch(0)
        scores = {"valid_loss": validation_loss(self.accelerator, self.model, self.valid_loader)}
        found = self.evaluate("validation", cfg.eval.eval_max_samples, save_as=f"valid-step{state.step}")
        scores.update({f"valid_{k}": v for k, v in found.items()} | self.mitigation.scores(self, state.step))
        value = selection_value(scores, cfg.eval.metric_for_best_model)
        # Best by the chosen metric; on a tie (early on, when BLEU is 0), by validation loss.
        is_best = state.best_metric is None or (value, -scores["valid_loss"]) > (
            oriented(state.best_metric, cfg.eval.metric_for_best_model),
            -state.best_valid_loss,
        )
        is_best = self.mitigation.chooses(scores, state, is_best)  # a mitigation: its own rule
        if is_best:  # the end of a run off the --eval_steps grid chooses its final/, not training's best
            metric = raw_value(scores, cfg.eval.metric_for_best_model)
            state.set_best(metric, scores["valid_loss"], scheduled=state.step % cfg.eval.eval_steps == 0)
        self.log.log(scores | low_signal_note(scores), state.step)  # low coverage marked in metrics.jsonl too
        best_metric, _, best_step = state.chosen
        self.accelerator.print(
            f"\nupdate {state.step}: "
            + describe(scores, cfg.eval.metric_for_best_model, best_metric, best_step, self.mitigation.measure)
        )
        return is_best

    def evaluate(self, split: str, max_samples: int | None = None, save_as: str | None = None) -> dict[str, float]:
        """Scores of the model's translations of ``split`` (a balanced subset of ``max_samples`` rows): BLEU and
        chrF, per language when there are several, and the gender figures when the rows carry gender.
        With ``save_as``, the rows and their translations go to ``<output_dir>/translations/<save_as>.jsonl``."""
        rows = balanced_subset(self.raw[split], max_samples)
        sources = rows["source"]
        langs = rows["lang"] if "lang" in rows.column_names else [self.cfg.data.target_lang] * len(sources)
        if self.prompt is not None:
            sources = [self.prompt.render(s, lang) for s, lang in zip(sources, langs)]
        acc, seed = self.accelerator, self.cfg.train.seed
        hyps = translate_corpus(acc, self.model, self.tokenizer, sources, self.cfg.eval, seed=seed, langs=langs)
        if save_as and self.accelerator.is_main_process:
            (self.out / "translations").mkdir(exist_ok=True)
            records = [{**row, "hypothesis": hyp} for row, hyp in zip(rows.to_list(), hyps)]
            write_jsonl(self.out / "translations" / f"{save_as}.jsonl", records)
        return split_scores(rows, hyps, self.cfg.eval.paper_bleu)

    def save(self, *, is_best: bool = False) -> Path:
        """A checkpoint of the whole training state (see :class:`mtkit.train.checkpoint.CheckpointManager`)."""
        return self.checkpoints.save(self.state, is_best=is_best)

    def export(self) -> RunRecord:
        """``final/`` (best or last weights), the test split's scores and the curves; return the run's record, which
        :func:`mtkit.pipeline.run` extends and writes (``results.json``, the model card)."""
        cfg, acc, state = self.cfg, self.accelerator, self.state
        metric, (best_metric, _, best_step) = cfg.eval.metric_for_best_model, state.chosen
        averaged = self.epochs.load_mean(self.model, self.checkpoints.root, state)  # {} without it
        if (
            not averaged
            and cfg.train.load_best_model_at_end
            and self.checkpoints.best
            and self.checkpoints.best != self.checkpoints.last
        ):
            self.checkpoints.load(self.checkpoints.best)  # resharded if written by another process count
            acc.print(f"loaded checkpoint_best (update {best_step}) for export")
        results: dict = {"step": state.step, "metric_for_best_model": metric, "best_step": best_step, **averaged}
        results[f"best_valid_{metric}"] = best_metric
        if "test" in self.raw:
            test = {f"test_{k}": v for k, v in self.evaluate("test", save_as="test").items()}
            results.update(test)
            self.log.log(test, state.step)
            acc.print(f"test ({cfg.data.test_split}): BLEU {test['test_bleu']:.2f}, chrF {test['test_chrf']:.2f}")
        final = self.out / "final"
        prompt = self.prompt.with_languages(cfg.data.languages()) if self.prompt else None
        export_model(cfg, acc, self.model, self.tokenizer, final, prompt)
        if acc.is_main_process:
            acc.print(f"final model in {final}")
            plot_curves(self.out, self.out / "curves.png")
        acc.wait_for_everyone()  # every process leaves the process group together
        acc.end_training()
        return RunRecord(results, self.counts)
