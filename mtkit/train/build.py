"""The parts of a run, built from its config: accelerator, model, data loaders, optimizer and schedule."""

from __future__ import annotations

import os
from datetime import timedelta

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs, ProjectConfiguration
from torch.utils.data import DataLoader
from transformers import AutoConfig, AutoModelForSeq2SeqLM, get_scheduler

from mtkit.allocator import cpu_note
from mtkit.config import RunConfig
from mtkit.data.batching import Seq2SeqCollator, TokenBatchSampler, column_array, length_buckets
from mtkit.distributed.deepspeed import configure_deepspeed, quiet_deepspeed_collective_warnings
from mtkit.distributed.fsdp import reduce_gradients_in_fp32
from mtkit.errors import UserError
from mtkit.model.layouts import SHAPE_KEYS
from mtkit.model.lora import apply_lora
from mtkit.model.loss import install_token_loss
from mtkit.model.precision import enable_tf32
from mtkit.model.presets import preset_config
from mtkit.model.vocab import mask_extra_rows
from mtkit.train.tracking import tracker_names

#: The columns a training or validation batch is made of.
MODEL_COLUMNS = ["input_ids", "attention_mask", "labels"]


def build_accelerator(cfg: RunConfig, mixed_precision: str | None = None) -> Accelerator:
    """An Accelerator for this run; on CPU-only hosts it runs multi-process jobs over gloo."""
    quiet_deepspeed_collective_warnings()
    enable_tf32()
    pg = {"timeout": timedelta(seconds=cfg.train.ddp_timeout)}
    kwargs: dict = {}
    if not torch.cuda.is_available():
        if os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true":
            pg["backend"] = "gloo"
        else:
            kwargs["cpu"] = True  # without it, a CPU job under a launcher trains N unsynchronised copies
    out = cfg.train.output_dir
    accelerator = Accelerator(
        gradient_accumulation_steps=cfg.train.gradient_accumulation_steps,
        mixed_precision=mixed_precision,
        log_with=tracker_names(cfg.logging.report_to) or None,
        project_config=ProjectConfiguration(project_dir=out, logging_dir=os.path.join(out, "logs")),
        step_scheduler_with_optimizer=False,  # the schedule counts optimizer updates, whatever the world size
        kwargs_handlers=[InitProcessGroupKwargs(**pg)],
        **kwargs,
    )
    configure_deepspeed(cfg, accelerator)
    reduce_gradients_in_fp32(accelerator)
    if accelerator.device.type == "cpu" and (note := cpu_note()):
        accelerator.print(note)
    return accelerator


def build_model(cfg: RunConfig, tokenizer, zero_stage: int | None = None):
    """The model to train, with gradient checkpointing and LoRA adapters when asked for.

    Master weights are fp32 either way: checkpoints stored in bf16/fp16 are upcast, since half-precision
    master weights lose small Adam updates (bf16) or fail at unscaling (fp16). Compute precision comes from
    ``--mixed_precision`` or DeepSpeed. Under ZeRO-3 with accelerate's ``zero3_init_flag``, called within
    :func:`mtkit.distributed.deepspeed.sharded_creation` (as the trainer calls it), the weights are created already
    sharded (``zero.Init``), so a model larger than one device's memory can be loaded.
    """
    model = _load_model(cfg, tokenizer)
    if cfg.train.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    if cfg.model.lora_r < 0:
        raise UserError(f"--lora_r: must be 0 (off) or a positive rank, got {cfg.model.lora_r}")
    if cfg.model.lora_r:
        model = apply_lora(model, cfg.model, zero_stage=zero_stage)
    install_token_loss(model)  # before accelerate's wrappers, which then call it
    return model


def _load_model(cfg: RunConfig, tokenizer):
    if cfg.model.model_name_or_path:
        try:
            config = AutoConfig.from_pretrained(cfg.model.model_name_or_path)
            if cfg.model.dropout is not None:  # --dropout: the pretrained model's own, under its family's name
                name = next((n for n in ("dropout", "dropout_rate") if hasattr(config, n)), None)
                if name is None:
                    raise UserError(f"--dropout: a {config.model_type} model has no dropout setting to change")
                setattr(config, name, cfg.model.dropout)
            return AutoModelForSeq2SeqLM.from_pretrained(
                cfg.model.model_name_or_path, config=config, dtype=torch.float32
            )
        except OSError as err:
            raise UserError(f"--model_name_or_path: {str(err).splitlines()[0]}") from None
    config = preset_config(
        cfg.model.model,
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        max_positions=max(1024, cfg.data.max_source_length, cfg.data.max_target_length, cfg.eval.max_new_tokens),
        **{k: getattr(cfg.model, k) for k in SHAPE_KEYS},  # the preset's, where the recipe gives none
    )
    model = AutoModelForSeq2SeqLM.from_config(config)
    mask_extra_rows(model)  # a vocabulary rounded up to 64 rows: the extra ones never decoded
    return model


def buckets(cfg: RunConfig):
    """The length buckets of ``--static_shapes`` batches (up to the longest pair the data keeps), else ``None``."""
    if not cfg.train.static_shapes:
        return None
    return length_buckets(max(cfg.data.max_source_length, cfg.data.max_target_length))


def loader_workers(asked: int | None, cuda: bool) -> int:
    """DataLoader worker processes for training batches: ``--dataloader_num_workers``, else 2 on a GPU (collation
    off the loop's critical path) and 0 on a CPU (where workers would take cores from the model)."""
    return asked if asked is not None else (2 if cuda else 0)


def build_loader(
    dataset,
    cfg: RunConfig,
    accelerator: Accelerator,
    collator: Seq2SeqCollator,
    *,
    train: bool,
    workers: int | None = None,
) -> tuple[DataLoader, TokenBatchSampler]:
    """This process' token-budget batches of ``dataset``, collated on the host into pinned memory; training batches
    in ``workers`` processes (default :func:`loader_workers`), persistent and prefetching."""
    cuda = accelerator.device.type == "cuda"
    workers = (loader_workers(cfg.train.dataloader_num_workers, cuda) if workers is None else workers) if train else 0
    sampler = TokenBatchSampler(
        column_array(dataset, "length"),
        cfg.train.max_tokens,
        num_replicas=accelerator.num_processes,
        rank=accelerator.process_index,
        shuffle=train,
        seed=cfg.train.seed,
        max_sentences=cfg.train.max_sentences if train else None,
        pad_to_multiple_of=collator.pad_to_multiple_of,
        buckets=collator.buckets,
    )
    loader = DataLoader(
        dataset.select_columns(MODEL_COLUMNS),
        batch_sampler=sampler,
        collate_fn=collator,
        pin_memory=cuda,
        num_workers=workers,
        persistent_workers=workers > 0,
        prefetch_factor=4 if workers else None,
        # Its own generator: making an iterator must not draw from the global RNG, or resuming would
        # shift the dropout masks of every later step.
        generator=torch.Generator(),
    )
    return loader, sampler


def build_optimizer(cfg: RunConfig, model, fused: bool = True) -> tuple[torch.optim.Optimizer, object]:
    """AdamW (plain Adam at weight decay 0) and the learning-rate schedule, counted in optimizer updates. Fused
    AdamW (one kernel per step, and it can skip a non-finite update on the device) unless DeepSpeed drives it."""
    o = cfg.optim
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],  # LoRA: the adapters only
        lr=o.learning_rate,
        betas=(o.adam_beta1, o.adam_beta2),
        eps=o.adam_epsilon,
        weight_decay=o.weight_decay,
        **({"fused": True} if fused else {"foreach": True}),
    )
    scheduler = get_scheduler(
        o.lr_scheduler_type, optimizer, num_warmup_steps=o.warmup_steps, num_training_steps=cfg.train.max_steps
    )
    return optimizer, scheduler
