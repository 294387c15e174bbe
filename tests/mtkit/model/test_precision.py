import pytest

from mtkit.config import parse_config
from mtkit.errors import UserError
from mtkit.model.precision import resolve_mixed_precision


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch):
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)


def test_t5_defaults_to_bf16_and_other_models_follow_accelerate():
    assert resolve_mixed_precision(parse_config([]), "t5") == "bf16"
    assert resolve_mixed_precision(parse_config([]), "bart") is None
    assert resolve_mixed_precision(parse_config(["--mixed_precision", "no"]), "t5") == "no"  # asked for fp32


def test_a_launcher_precision_is_kept(monkeypatch):
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    assert resolve_mixed_precision(parse_config([]), "t5") is None  # accelerate already says bf16


@pytest.mark.parametrize("kind", ["t5", "mt5", "umt5"])
def test_fp16_refused_for_the_t5_family_unless_forced(monkeypatch, kind):
    with pytest.raises(UserError, match="^--mixed_precision fp16: .* overflow in fp16"):
        resolve_mixed_precision(parse_config(["--mixed_precision", "fp16"]), kind)
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp16")
    with pytest.raises(UserError):
        resolve_mixed_precision(parse_config([]), kind)  # from the launcher too
    assert resolve_mixed_precision(parse_config(["--force_fp16"]), kind) is None
    assert resolve_mixed_precision(parse_config(["--mixed_precision", "fp16"]), "bart") == "fp16"
