import pytest
import torch

from mtkit.config import parse_config
from mtkit.errors import UserError
from mtkit.model.precision import auto_precision, enable_tf32, resolve_mixed_precision


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch):
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)


@pytest.mark.parametrize(
    ("cuda", "bf16", "expected"),
    [(True, True, "bf16"), (True, False, "no"), (False, False, "no"), (False, True, "no")],
)
def test_auto_is_bf16_exactly_on_gpus_that_compute_in_it(cuda, bf16, expected):
    assert auto_precision(cuda, bf16) == expected


@pytest.mark.parametrize("kind", ["t5", "bart"])
def test_every_model_gets_bf16_on_an_ampere_gpu_and_fp32_elsewhere(kind):
    """Not only the T5 family: a from-scratch transformer trains in bf16 by default on such a GPU too."""
    for flags in ([], ["--mixed_precision", "auto"]):
        cfg = parse_config(flags)
        assert resolve_mixed_precision(cfg, kind, cuda=True, bf16_supported=True) == "bf16"
        assert resolve_mixed_precision(cfg, kind, cuda=True, bf16_supported=False) == "no"  # a T4: fp32
        assert resolve_mixed_precision(cfg, kind, cuda=False, bf16_supported=False) == "no"  # a CPU
    asked = parse_config(["--mixed_precision", "no"])
    assert resolve_mixed_precision(asked, kind, cuda=True, bf16_supported=True) == "no"  # asked for fp32


def test_a_launcher_precision_is_kept(monkeypatch):
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    assert resolve_mixed_precision(parse_config([]), "t5", cuda=True, bf16_supported=True) is None
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp16")
    assert resolve_mixed_precision(parse_config([]), "bart", cuda=True, bf16_supported=True) is None


@pytest.mark.parametrize("kind", ["t5", "mt5", "umt5"])
def test_fp16_refused_for_the_t5_family_unless_forced(monkeypatch, kind):
    with pytest.raises(UserError, match="^--mixed_precision fp16: .* overflow in fp16"):
        resolve_mixed_precision(parse_config(["--mixed_precision", "fp16"]), kind)
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp16")
    with pytest.raises(UserError):
        resolve_mixed_precision(parse_config([]), kind)  # from the launcher too
    assert resolve_mixed_precision(parse_config(["--force_fp16"]), kind) is None
    assert resolve_mixed_precision(parse_config(["--mixed_precision", "fp16"]), "bart") == "fp16"


def test_tf32_is_enabled_for_matrix_products_and_convolutions():
    before = (torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision)
    try:
        enable_tf32()
        assert torch.backends.cuda.matmul.fp32_precision == "tf32"
        assert torch.backends.cudnn.conv.fp32_precision == "tf32"
    finally:
        torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision = before
