"""The PyTorch behaviour the toolkit relies on, probed directly on the installed torch: the supported range is
torch 2.11 (what GPU images ship) to 2.14. CI runs these on the pinned 2.13.0; ``scripts/gpu_report.py`` runs them
first on a GPU image's own torch."""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.distributed as dist
from packaging.version import Version
from testing_utils import free_port

SUPPORTED = (Version("2.11"), Version("2.15"))  # [lowest, first unsupported)


def test_the_installed_torch_is_in_the_supported_range():
    assert SUPPORTED[0] <= Version(Version(torch.__version__).base_version) < SUPPORTED[1], torch.__version__


def test_fused_adamw_skips_a_step_flagged_in_found_inf():
    """mtkit.train.nonfinite skips a non-finite update on the device by setting the fused optimizer's
    ``found_inf``: a step with the flag set leaves weights and moments as they were, without it they move."""
    weight = torch.nn.Parameter(torch.ones(4))
    optimizer = torch.optim.AdamW([weight], lr=0.1, fused=True)
    weight.grad = torch.full((4,), 0.5)
    optimizer.found_inf = torch.ones(())
    optimizer.step()
    assert torch.equal(weight.detach(), torch.ones(4))
    optimizer.found_inf = torch.zeros(())
    optimizer.step()
    assert (weight.detach() < 1).all()


@pytest.fixture
def one_process_group():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_fsdp2_shards_tied_modules_as_one_unit_and_unshards(one_process_group):
    """mtkit.distributed.fsdp hands ``fully_shard`` a list of modules sharing one weight, with a mixed-precision
    and an offload policy, and calls ``unshard`` before decoding."""
    from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard

    assert {"reshard_after_forward", "mp_policy", "offload_policy"} <= set(inspect.signature(fully_shard).parameters)
    embed = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    head.weight = embed.weight
    model = torch.nn.Sequential(embed, head)
    fully_shard([embed, head], reshard_after_forward=False, mp_policy=MixedPrecisionPolicy(),
                offload_policy=OffloadPolicy())  # fmt: skip
    fully_shard(model)
    assert isinstance(model, FSDPModule)
    model.unshard()
    out = model(torch.tensor([[1, 2]]))
    assert out.shape == (1, 2, 10) and torch.isfinite(out).all()


def test_a_sharded_checkpoint_folder_converts_to_one_file(tmp_path):
    """mtkit.distributed.fsdp reads an FSDP checkpoint back whole with ``dcp_to_torch_save``."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    state = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.ones(2)}
    dcp.save(state, checkpoint_id=str(tmp_path / "dcp"))
    dcp_to_torch_save(str(tmp_path / "dcp"), str(tmp_path / "whole.pt"))
    whole = torch.load(tmp_path / "whole.pt")
    assert whole.keys() == state.keys() and all(torch.equal(whole[k], state[k]) for k in state)
