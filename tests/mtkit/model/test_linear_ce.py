import warnings

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from mtkit.model.linear_ce import linear_cross_entropy_sum


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """Relative difference of two tensors, by their norms."""
    return float((a.double() - b.double()).norm() / b.double().norm().clamp(min=1e-30))


def case(seed: int, rows: int = 37, d: int = 16, size: int = 50, vocab: int = 50, bias: bool = True):
    torch.manual_seed(seed)
    hidden = torch.randn(rows, d).requires_grad_()
    weight = torch.randn(size, d).requires_grad_()
    b = torch.randn(size).requires_grad_() if bias else None
    labels = torch.randint(0, vocab, (rows,))
    labels[::5] = -100  # padding rows among the rest
    return hidden, weight, b, labels


def grads(loss: torch.Tensor, *inputs) -> list[torch.Tensor]:
    wanted = [x for x in inputs if x is not None]
    return list(torch.autograd.grad(loss * 1.7, wanted))


@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("vocab", [50, 45])  # every row of the weight a token; the last 5 rows unused
def test_value_and_gradients_equal_torchs_cross_entropy_on_the_full_logits(eps, bias, vocab):
    """In fp32, over chunks smaller than the batch (an uneven last one) and with ignored rows: the value and the
    gradients of the hidden states, the weight and the bias within 1e-6 of torch's loss on the whole logits."""
    hidden, weight, b, labels = case(1, bias=bias, vocab=vocab)
    ours = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=eps, vocab=vocab,
                                    chunk_elements=8 * 50)  # fmt: skip
    logits = hidden @ weight.T + (b if b is not None else 0)
    ref = F.cross_entropy(logits[:, :vocab], labels, ignore_index=-100, label_smoothing=eps, reduction="sum")
    assert ours.dtype == torch.float32 and ours.item() == pytest.approx(ref.item(), rel=1e-6)
    mine = grads(ours, hidden, weight, b)
    for g, theirs in zip(mine, grads(ref, hidden, weight, b)):
        assert rel(g, theirs) < 1e-6
    g_hidden, g_weight = mine[:2]
    assert (g_hidden[labels == -100] == 0).all() and (g_weight[vocab:] == 0).all()


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 30),
    vocab=st.integers(2, 40),
    extra=st.integers(0, 9),
    eps=st.sampled_from([0.0, 0.1, 0.3]),
    chunk=st.integers(1, 12),
    seed=st.integers(0, 10_000),
)
def test_the_value_is_the_smoothed_loss_written_out_for_any_shape(rows, vocab, extra, eps, chunk, seed):
    """The label-smoothed loss by its definition, in float64: (1 - eps) on the gold token plus eps spread evenly over
    the vocabulary in use, summed over the rows that are not ignored, whatever the chunking and unused rows."""
    hidden, weight, b, labels = case(seed, rows=rows, d=4, size=vocab + extra, vocab=vocab)
    ours = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=eps, vocab=vocab,
                                    chunk_elements=chunk * (vocab + extra))  # fmt: skip
    logp = ((hidden.double() @ weight.double().T + b.double())[:, :vocab]).log_softmax(-1)
    keep = labels != -100
    gold = logp[keep].gather(1, labels[keep, None]).squeeze(1)
    expected = (-(1 - eps) * gold - eps * logp[keep].mean(-1)).sum()
    assert ours.item() == pytest.approx(expected.item(), rel=1e-5, abs=1e-5)


def test_bf16_products_give_the_loss_of_the_bf16_logits():
    """With bf16 matrix products (autocast's), value and gradients are those of torch's loss on the bf16 logits
    turned fp32, to bf16's precision."""
    hidden, weight, b, labels = case(2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ours = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=0.1)
    logits = (hidden.bfloat16() @ weight.bfloat16().T).float() + b
    ref = F.cross_entropy(logits, labels, label_smoothing=0.1, reduction="sum")
    assert ours.item() == pytest.approx(ref.item(), rel=1e-3)
    for mine, theirs in zip(grads(ours, hidden, weight, b), grads(ref, hidden, weight, b)):
        assert mine.dtype == theirs.dtype == torch.float32 and rel(mine, theirs) < 2e-2


def test_no_logits_are_kept_for_the_backward():
    """512 rows x 4,000 entries: torch's loss keeps an fp32 log-softmax (8 MB) for its backward; the fused one keeps
    the gradients it made (hidden states and weight: 0.6 MB), less than even bf16 logits would take."""
    rows, vocab, d = 512, 4000, 32
    hidden, weight, _, labels = case(3, rows=rows, d=d, size=vocab, vocab=vocab, bias=False)
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        linear_cross_entropy_sum(hidden, weight, labels, label_smoothing=0.1)
    assert 0 < sum(seen.values()) < rows * vocab * 2


def test_without_gradients_nothing_is_made_for_a_backward():
    hidden, weight, b, labels = case(4)
    with torch.no_grad():
        value = linear_cross_entropy_sum(hidden, weight, labels, bias=b)
    assert value.grad_fn is None
    assert value.item() == pytest.approx(F.cross_entropy(hidden @ weight.T + b, labels, reduction="sum").item(), 1e-6)


def test_a_vocabulary_larger_than_the_weight_is_refused():
    hidden, weight, _, labels = case(5)
    with pytest.raises(ValueError, match="vocab 51 outside 1..50"):
        linear_cross_entropy_sum(hidden, weight, labels, vocab=51)


@pytest.mark.slow  # inductor's compile, 12 s; the default tier keeps tests/scripts/test_gpu_levers.py's loss-kernel
def test_the_compiled_kernel_gives_the_same_value_and_gradients():  # (one update's loss and gradient norm, to 1e-6)
    """``kernel=True`` (a GPU's default) compiles each chunk's elementwise part; here inductor's CPU code: the value
    and every gradient within 1e-6 of torch's loss on the whole logits, with a bias, unused rows, ignored rows and an
    uneven last chunk (a second row count: the compiled code takes both)."""
    hidden, weight, b, labels = case(3, vocab=45)
    ours = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=0.1, vocab=45,
                                    chunk_elements=8 * 50, kernel=True)  # fmt: skip
    logits = hidden @ weight.T + b
    ref = F.cross_entropy(logits[:, :45], labels, ignore_index=-100, label_smoothing=0.1, reduction="sum")
    assert ours.item() == pytest.approx(ref.item(), rel=1e-6)
    for g, theirs in zip(grads(ours, hidden, weight, b), grads(ref, hidden, weight, b), strict=True):
        assert rel(g, theirs) < 1e-6


def test_a_kernel_that_cannot_be_compiled_leaves_the_eager_code_with_one_warning(monkeypatch):
    """Compiling fails (here: the compiler raises, as on a GPU without Triton's support): one warning naming it, then
    the eager code, the same value and gradients as without the kernel, for this call and the next."""
    from mtkit.model import linear_ce

    def no_compiler():
        def fail(*_):
            raise RuntimeError("no Triton for this device\nmore lines")

        return fail

    monkeypatch.setattr(linear_ce, "_compiled_math", no_compiler)
    monkeypatch.setattr(linear_ce, "_KERNEL_FAILED", [])
    hidden, weight, b, labels = case(4, vocab=45)
    with pytest.warns(RuntimeWarning, match=r"failed \(RuntimeError: no Triton for this device\); it runs eagerly"):
        ours = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=0.1, vocab=45, kernel=True)
    eager = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=0.1, vocab=45, kernel=False)
    assert ours.item() == eager.item()
    for g, theirs in zip(grads(ours, hidden, weight, b), grads(eager, hidden, weight, b), strict=True):
        assert torch.equal(g, theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning
        again = linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=0.1, vocab=45, kernel=True)
    assert again.item() == eager.item() and linear_ce._KERNEL_FAILED == ["RuntimeError"]


def test_out_of_memory_in_the_kernel_is_raised_not_taken_for_a_compiler_failure(monkeypatch) -> None:
    """A batch too large for the device is the batch's problem: it reaches the caller, and the kernel stays on."""
    from mtkit.model import linear_ce

    def out_of_memory():
        def fail(*_):
            raise torch.OutOfMemoryError("CUDA out of memory")

        return fail

    monkeypatch.setattr(linear_ce, "_compiled_math", out_of_memory)
    monkeypatch.setattr(linear_ce, "_KERNEL_FAILED", [])
    hidden, weight, b, labels = case(4, vocab=45)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning
        with pytest.raises(torch.OutOfMemoryError):
            linear_cross_entropy_sum(hidden, weight, labels, bias=b, label_smoothing=0.1, vocab=45, kernel=True)
    assert linear_ce._KERNEL_FAILED == []
