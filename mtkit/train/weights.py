"""A checkpoint's model weights, read one way whatever the strategy that wrote them, their mean, and their loading.

A step folder (:mod:`mtkit.train.checkpoint`) holds the whole training state as ``accelerator.save_state`` wrote it.
The model weights in it come in three layouts:

* one process, DDP (a LoRA run's adapters and frozen base too): ``model.safetensors`` (or ``pytorch_model.bin``), the
  whole model, written once;
* FSDP (sharded state dict): ``pytorch_model_fsdp_0/``, a ``torch.distributed.checkpoint`` folder read back whole;
* DeepSpeed ZeRO-2/3: ``pytorch_model/`` with one shard per process and a ``latest`` file naming that tag;
  DeepSpeed's own ``get_fp32_state_dict_from_zero_checkpoint`` consolidates the fp32 master weights.

:func:`checkpoint_weights` reads any of them whole on one process, the weights alone (no optimizer, schedule or
random state is restored, no accelerator is needed), under the model's own names (without a DDP ``module.`` or
``torch.compile`` ``_orig_mod.`` prefix). Everything that reads a checkpoint's weights reads them through it: the
mean of the last epoch checkpoints at the end of a run (:mod:`mtkit.train.epochs`), ``scripts/export_model.py`` and
``scripts/average_checkpoints.py`` (:mod:`mtkit.export`). :func:`mean_weights` is the one mean of several of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import torch
from accelerate.utils.constants import MODEL_NAME, SAFE_WEIGHTS_NAME, WEIGHTS_NAME

from mtkit.distributed import fsdp
from mtkit.errors import UserError
from mtkit.model.folders import check_weights_file

LATEST_FILE = "latest"  # DeepSpeed's pointer to the tag (sub-folder) of its checkpoint


def checkpoint_weights(checkpoint: Path) -> tuple[dict[str, torch.Tensor], str]:
    """The model weights saved in ``checkpoint`` (whole, consolidated, without wrapper prefixes) and a description
    of their layout."""
    state_dict, layout = _read(checkpoint)
    return _strip_wrappers(state_dict), layout


def _read(checkpoint: Path) -> tuple[dict[str, torch.Tensor], str]:
    latest = checkpoint / LATEST_FILE
    if latest.is_file() or (checkpoint / MODEL_NAME).is_dir():
        tag = latest.read_text().strip() if latest.is_file() else MODEL_NAME
        if not (checkpoint / tag).is_dir():
            raise UserError(f"CHECKPOINT {checkpoint}: DeepSpeed tag folder {tag}/ (named in {LATEST_FILE}) is missing")
        from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

        try:
            state_dict = get_fp32_state_dict_from_zero_checkpoint(str(checkpoint), tag=tag)
        except (ValueError, FileNotFoundError, KeyError) as err:
            raise UserError(f"CHECKPOINT {checkpoint}: cannot consolidate the DeepSpeed shards: {err}") from None
        return dict(state_dict), f"DeepSpeed ZeRO shards in {tag}/, consolidated to fp32"
    if (checkpoint / fsdp.MODEL_FOLDER).is_dir():
        return fsdp.consolidated(checkpoint / fsdp.MODEL_FOLDER), f"FSDP shards in {fsdp.MODEL_FOLDER}/, consolidated"
    if (checkpoint / SAFE_WEIGHTS_NAME).is_file():
        from safetensors.torch import load_file

        check_weights_file(checkpoint / SAFE_WEIGHTS_NAME, f"CHECKPOINT {checkpoint}")
        return load_file(checkpoint / SAFE_WEIGHTS_NAME), SAFE_WEIGHTS_NAME
    if (checkpoint / WEIGHTS_NAME).is_file():
        return torch.load(checkpoint / WEIGHTS_NAME, map_location="cpu", weights_only=True), WEIGHTS_NAME
    present = ", ".join(sorted(p.name for p in checkpoint.iterdir()))
    raise UserError(
        f"CHECKPOINT {checkpoint}: no model weights ({SAFE_WEIGHTS_NAME}, {WEIGHTS_NAME} or DeepSpeed "
        f"{MODEL_NAME}/, FSDP {fsdp.MODEL_FOLDER}/); it holds {present}"
    )


def _strip_wrappers(state_dict: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Keys without a DDP (``module.``) or ``torch.compile`` (``_orig_mod.``) prefix common to all of them."""
    for prefix in ("module.", "_orig_mod."):
        if state_dict and all(k.startswith(prefix) for k in state_dict):
            state_dict = {k[len(prefix) :]: v for k, v in state_dict.items()}
    return state_dict


class WeightMean:
    """The element-wise mean of state dicts added one at a time: floating tensors summed in float64 and returned in
    their own dtype, integer buffers taken from the first. Holds one float64 copy, however many are added."""

    def __init__(self) -> None:
        self.total: dict[str, torch.Tensor] = {}
        self.dtypes: dict[str, torch.dtype] = {}
        self.count = 0

    def add(self, state_dict: dict[str, torch.Tensor]) -> None:
        if self.count and state_dict.keys() != self.total.keys():
            raise UserError("checkpoints hold different weights (not from the same run?)")
        for key, tensor in state_dict.items():
            if not self.count:
                wide = torch.float64 if tensor.is_floating_point() else tensor.dtype
                self.total[key], self.dtypes[key] = tensor.detach().to(wide, copy=True), tensor.dtype
            elif tensor.is_floating_point():
                self.total[key].add_(tensor.detach())
        self.count += 1

    def result(self) -> dict[str, torch.Tensor]:
        return {
            key: (total / self.count).to(self.dtypes[key]) if total.is_floating_point() else total
            for key, total in self.total.items()
        }


def mean_weights(checkpoints: Sequence[Path]) -> dict[str, torch.Tensor]:
    """The element-wise mean of the model weights of ``checkpoints`` (:func:`checkpoint_weights`, one of them in
    memory at a time beside the float64 sum; :class:`WeightMean`)."""
    mean = WeightMean()
    for folder in checkpoints:
        mean.add(checkpoint_weights(folder)[0])
    return mean.result()


def _few(names: list[str], n: int = 3) -> str:
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def load_weights_strictly(model: torch.nn.Module, state_dict: dict[str, torch.Tensor], where: str) -> None:
    """Load ``state_dict`` (:func:`checkpoint_weights`' names) into ``model`` (unwrapped): every key must fit, in
    name and shape. A key may be absent only when it is a tied copy of one that is present (saving stores shared
    embeddings once)."""
    expected = model.state_dict()
    shared: dict[tuple, set[str]] = defaultdict(set)
    for key, tensor in expected.items():
        if tensor.numel():
            shared[(tensor.data_ptr(), tuple(tensor.shape))].add(key)
    tied = {key: group for group in shared.values() for key in group}
    missing = [k for k in expected if k not in state_dict and not (tied.get(k, set()) & state_dict.keys())]
    unexpected = [k for k in state_dict if k not in expected]
    if missing or unexpected:
        problems = [
            f"{label} {_few(keys)}" for label, keys in (("missing", missing), ("unexpected", unexpected)) if keys
        ]
        raise UserError(f"{where}: the weights do not fit the run's model ({'; '.join(problems)})")
    wrong = [k for k, v in state_dict.items() if tuple(v.shape) != tuple(expected[k].shape)]
    if wrong:
        k, more = wrong[0], f", and {len(wrong) - 1} more" if len(wrong) > 1 else ""
        saved, wanted = tuple(state_dict[k].shape), tuple(expected[k].shape)
        raise UserError(f"{where}: the weights do not fit the run's model ({k}: {saved} saved, {wanted} wanted{more})")
    model.load_state_dict(state_dict, strict=False)
