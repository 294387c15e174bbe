"""mtkit/train/compile.py: the training forward compiled once for every batch shape (token-budget batches change
shape at every step), sharing the model's parameters; refused in one line under ZeRO-3 and FSDP."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from accelerate.utils import DistributedType

from mtkit.errors import UserError
from mtkit.train.compile import check_compile, training_forward


def graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def test_batches_of_changing_shapes_share_one_compiled_graph():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    forward = training_forward(model, compile=True)
    assert training_forward(model, compile=False) is model
    before = graphs()
    for batch, length in [(4, 9), (7, 13), (3, 21), (5, 6)]:
        x = torch.randn(batch, length, 16)
        torch.testing.assert_close(forward(x), model(x))
    assert graphs() - before == 1
    assert {id(p) for p in forward.parameters()} == {id(p) for p in model.parameters()}
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]  # plain names stay


@pytest.mark.parametrize(
    ("accelerator", "where"),
    [
        (SimpleNamespace(distributed_type=DistributedType.FSDP), "FSDP"),
        (SimpleNamespace(distributed_type=DistributedType.DEEPSPEED,
                         state=SimpleNamespace(deepspeed_plugin=SimpleNamespace(zero_stage=3))), "DeepSpeed ZeRO-3"),
    ],
)  # fmt: skip
def test_refused_in_one_line_where_hooks_gather_the_weights(accelerator, where):
    with pytest.raises(UserError, match=f"^--torch_compile: not under {where}, ") as caught:
        check_compile(accelerator)
    assert "\n" not in str(caught.value)


def test_allowed_under_ddp_and_zero2():
    check_compile(SimpleNamespace(distributed_type=DistributedType.MULTI_GPU))
    check_compile(SimpleNamespace(distributed_type=DistributedType.DEEPSPEED,
                                  state=SimpleNamespace(deepspeed_plugin=SimpleNamespace(zero_stage=2))))  # fmt: skip
