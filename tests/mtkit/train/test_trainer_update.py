"""One optimizer update of :class:`mtkit.train.trainer.Trainer`, in process: loss normalisation, syncs, fp16 skips."""

import copy
import traceback
from collections import Counter

import pytest
import torch
from accelerate.optimizer import AcceleratedOptimizer
from accelerate.scheduler import AcceleratedScheduler
from accelerate.state import AcceleratorState, GradientState
from testing_utils import FAST_RUN

from mtkit.config import parse_config
from mtkit.train.build import MODEL_COLUMNS, build_optimizer
from mtkit.train.nonfinite import NonFiniteGuard
from mtkit.train.trainer import Trainer

#: Adam with a large epsilon moves each weight by about lr * gradient / epsilon, so that weight changes
#: after one update compare gradients (with the usual tiny epsilon Adam's first step is lr * sign(gradient)).
GRADIENT_PROBE = ["--dropout", "0", "--adam_epsilon", "1", "--learning_rate", "1", "--lr_scheduler_type", "constant"]


@pytest.fixture
def make_trainer(multi30k_small, tmp_path):
    def make(*flags: str) -> Trainer:
        AcceleratorState._reset_state(reset_partial_state=True)
        GradientState._reset_state()
        out = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        args = ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--test_split", "none"]
        return Trainer(parse_config([*args, *flags]))

    yield make
    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()


def collate(trainer: Trainer, indices: list[int]) -> dict:
    columns = trainer.train_data.select_columns(MODEL_COLUMNS).with_format(None)[indices]
    return trainer.collator([dict(zip(columns, values)) for values in zip(*columns.values())])


def weights(trainer: Trainer) -> torch.Tensor:
    return torch.cat([p.detach().flatten().clone() for p in trainer.model.parameters()])


def test_accumulated_update_equals_one_batch_of_the_same_sentences(make_trainer):
    trainer = make_trainer("--gradient_accumulation_steps", "3", *GRADIENT_PROBE)
    # The batches with the fewest, a middle and the most target tokens: unequal micro-batches, where a mean
    # of per-batch means would weigh tokens unequally.
    target_len = [len(x) for x in trainer.train_data["labels"]]
    by_size = sorted(trainer.sampler, key=lambda b: sum(target_len[i] for i in b))
    groups = [by_size[0], by_size[len(by_size) // 2], by_size[-1]]
    micro = [collate(trainer, g) for g in groups]
    sizes = [b["stats"]["tgt_tokens"] for b in micro]
    assert max(sizes) > 1.3 * min(sizes)
    start, opt_state = weights(trainer), copy.deepcopy(trainer.optimizer.state_dict())

    assert trainer.update(micro)
    accumulated = weights(trainer) - start

    with torch.no_grad():
        offset = 0
        for p in trainer.model.parameters():
            p.copy_(start[offset : offset + p.numel()].view_as(p))
            offset += p.numel()
    trainer.optimizer.load_state_dict(opt_state)
    trainer.accelerator.gradient_accumulation_steps = 1
    assert trainer.update([collate(trainer, [i for g in groups for i in g])])
    single = weights(trainer) - start

    assert accumulated.norm() > 0
    assert (accumulated - single).norm() / single.norm() < 1e-4


def test_no_host_sync_inside_updates_that_do_not_log(make_trainer):
    """Reading a value back from the accelerator (``item``, ``int``, ``float``, ``bool``, ``tolist``) stalls the
    host until the device catches up. None may happen in an update: counts come from the host-side batch.

    The optimizer's step counters, which torch keeps on the host by design, are not syncs and are left out.
    transformers' own check whether an attention mask has padding (``mask.all()`` in ``masking_utils``, per
    forward pass) is avoided by giving the model its mask in 4-D form (:func:`mtkit.model.loss.model_mask`).
    """
    trainer = make_trainer("--gradient_accumulation_steps", "2")
    batches = trainer.micro_batches()
    trainer.update([next(batches), next(batches)])  # optimizer state exists from here on
    host_counters = {id(s["step"]) for s in trainer.optimizer.state.values() if "step" in s}
    groups = [[next(batches), next(batches)] for _ in range(3)]
    reads: Counter = Counter()
    originals = {name: getattr(torch.Tensor, name) for name in ("item", "__int__", "__float__", "__bool__", "tolist")}

    def counting(name, original):
        def read(self, *args, **kwargs):
            caller = traceback.extract_stack(limit=2)[0]
            if id(self) not in host_counters:
                reads[f"{name} at {caller.filename}:{caller.lineno}"] += 1
            return original(self, *args, **kwargs)

        return read

    try:
        for name, original in originals.items():
            setattr(torch.Tensor, name, counting(name, original))
        for group in groups:
            trainer.update(group)
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)
    assert not reads, reads
    assert trainer.throughput.report()["loss"] > 0  # the interval's sums were kept, to be read at logging time


def test_skipped_fp16_updates_do_not_advance_the_step_or_the_schedule(make_trainer):
    """An overflowing loss scale skips updates (a real torch GradScaler; accelerate makes none on CPU, so the
    test hands one over): the step counter, the schedule and --max_steps count applied updates only."""
    trainer = make_trainer(
        "--max_steps",
        "4",
        "--eval_steps",
        "4",
        "--logging_steps",
        "1",
        "--max_grad_norm",
        "0",
        "--eval_max_samples",
        "2",
    )
    # what Trainer._build makes under fp16: foreach AdamW (the scaler does the skipping), no device-side guard
    optimizer, scheduler = build_optimizer(trainer.cfg, trainer.model, fused=False)
    trainer.nonfinite = NonFiniteGuard(optimizer, trainer.accelerator.device, limit=0)
    assert not trainer.nonfinite.armed
    # the scaled loss itself overflows fp32 at first, the gradients until the scale is about 2**63: a scale cut by
    # 2**16 at each skip (not the default half) gets there in a few updates, not 64
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**127, backoff_factor=2.0**-16)
    trainer.accelerator.scaler = scaler
    trainer.optimizer = AcceleratedOptimizer(optimizer, device_placement=False, scaler=scaler)
    trainer.scheduler = AcceleratedScheduler(scheduler, trainer.optimizer, step_with_optimizer=False)
    trainer.accelerator._optimizers = [trainer.optimizer]
    trainer.fit()
    state = trainer.state
    assert state.step == 4
    assert state.skipped_updates >= 2  # 2**127 times a loss above 4 is inf in fp32, 2**111 times its gradient too
    assert state.batches_in_epoch == state.step + state.skipped_updates  # every batch was consumed once
    assert trainer.scheduler.scheduler.last_epoch == 4
    assert scaler.get_scale() == 2.0 ** (127 - 16 * state.skipped_updates)


def test_process_group_timeout_comes_from_the_flag(make_trainer):
    from datetime import timedelta

    trainer = make_trainer("--ddp_timeout", "7200", "--max_steps", "1")
    assert trainer.accelerator.init_handler.timeout == timedelta(seconds=7200)
