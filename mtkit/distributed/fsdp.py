"""What FSDP (accelerate's FSDP2, ``accelerate_configs/fsdp.yaml``) needs beyond ``accelerator.prepare``.

* **Tied embeddings.** BART ties four weights (``model.shared``, the encoder's and decoder's ``embed_tokens``,
  ``lm_head``), T5 three (``shared`` and the two ``embed_tokens``): one parameter held by several modules.
  accelerate groups the input and output embedding modules into one FSDP unit, but the other holders still
  see the parameter from the root unit, and torch refuses a parameter managed by two units. All holders are
  sharded here as one unit before ``prepare``, which then leaves them alone.
* **Decoding.** ``generate`` calls the encoder directly, outside the root module's forward, so the root
  unit's own parameters (positions, final norms) must be gathered first; each transformer layer still
  gathers its own when it runs, and every rank takes part in every step (``synced_gpus``), so a rank that
  finishes early does not leave the others waiting in a collective.
* **Checkpoints.** A sharded checkpoint is a ``torch.distributed.checkpoint`` folder; :func:`consolidated`
  reads it back whole on one CPU process (for ``scripts/export_model.py``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from accelerate import Accelerator
from accelerate.utils import DistributedType

#: accelerate's folder for the sharded model state of the first prepared model in a checkpoint
MODEL_FOLDER = "pytorch_model_fsdp_0"


def uses_fsdp(acc: Accelerator) -> bool:
    return acc.distributed_type == DistributedType.FSDP


def fp32_reduce(policy):
    """FSDP2's mixed-precision ``policy`` with gradients reduced (summed across processes) in fp32: accelerate's
    bf16 policy reduces them in bf16, which rounds each sum to 8 bits of mantissa. ``None`` stays ``None``."""
    if policy is None or policy.reduce_dtype in (None, torch.float32):
        return policy
    from torch.distributed.fsdp import MixedPrecisionPolicy

    return MixedPrecisionPolicy(
        param_dtype=policy.param_dtype,
        reduce_dtype=torch.float32,
        output_dtype=policy.output_dtype,
        cast_forward_inputs=policy.cast_forward_inputs,
    )


def reduce_gradients_in_fp32(acc: Accelerator) -> None:
    """Under FSDP2, make the plugin's policy (what ``prepare`` shards with) reduce gradients in fp32."""
    plugin = acc.state.fsdp_plugin if uses_fsdp(acc) else None
    if plugin is not None and not isinstance(plugin.mixed_precision_policy, dict):
        plugin.mixed_precision_policy = fp32_reduce(plugin.mixed_precision_policy)


def shard_tied_embeddings(acc: Accelerator, model: torch.nn.Module) -> None:
    """Under FSDP, make every module holding the input embedding's weight one FSDP unit (see the module doc)."""
    if not uses_fsdp(acc):
        return
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    embeddings = model.get_input_embeddings()
    holders = [m for m in model.modules() if getattr(m, "weight", None) is embeddings.weight]
    if len(holders) < 2:
        return  # nothing tied: accelerate's own grouping is enough
    plugin = acc.state.fsdp_plugin
    fully_shard(
        holders,
        reshard_after_forward=False,  # used at the start and the end of the forward: keep it gathered between
        mp_policy=plugin.mixed_precision_policy or MixedPrecisionPolicy(),
        offload_policy=plugin.cpu_offload,
    )


@contextmanager
def gathered_root(acc: Accelerator, model: torch.nn.Module) -> Iterator[None]:
    """Inside, the root FSDP unit's parameters are whole, so submodules can be called directly (``generate``)."""
    if not uses_fsdp(acc):
        yield
        return
    model.unshard()
    try:
        yield
    finally:
        model.reshard()


def drop_tied_copies(model: torch.nn.Module, state_dict: dict) -> dict:
    """``state_dict`` without the extra names of tied parameters. A gathered FSDP state dict holds a separate copy
    under each name, which ``save_pretrained`` cannot recognise as one weight and would write out each time."""
    kept = {name for name, _ in model.named_parameters()}  # one name per parameter object
    every = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    return {k: v for k, v in state_dict.items() if k in kept or k not in every}


def consolidated(folder: Path) -> dict[str, torch.Tensor]:
    """The whole model state dict of an accelerate FSDP checkpoint's sharded model folder, read on one process."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    with tempfile.TemporaryDirectory() as tmp:
        whole = Path(tmp) / "model.pt"
        dcp_to_torch_save(str(folder), str(whole))
        state = torch.load(whole, map_location="cpu", weights_only=True)
    return state["model"] if set(state) == {"model"} else state
