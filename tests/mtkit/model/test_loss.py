import pytest
import torch
import torch.nn.functional as F

from mtkit.model.loss import Teacher, cross_entropy_sum, token_loss_sum


class Logits(torch.nn.Module):
    """A stand-in model whose logits are given: the loss, not the model, is under test."""

    def __init__(self, logits: torch.Tensor) -> None:
        super().__init__()
        self.logits = logits

    def forward(self, **_) -> object:
        return type("Out", (), {"logits": self.logits})


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3])
def test_label_smoothed_loss_is_the_sum_over_target_tokens(eps):
    torch.manual_seed(0)
    vocab = 11
    logits = torch.randn(2, 5, vocab)
    labels = torch.randint(0, vocab, (2, 5))
    labels[1, 3:] = -100  # padding
    batch = {"input_ids": None, "attention_mask": None, "decoder_input_ids": None, "labels": labels}
    loss = token_loss_sum(Logits(logits), batch, label_smoothing=eps)
    total = 0.0
    for b in range(2):
        for t in range(5):
            y = int(labels[b, t])
            if y == -100:
                continue
            logp = logits[b, t].double().log_softmax(-1)
            # (1 - eps) on the gold token plus eps spread evenly over the whole vocabulary
            total += -(1 - eps) * logp[y].item() - eps / vocab * logp.sum().item()
    assert loss.dtype == torch.float32 and loss.item() == pytest.approx(total, rel=1e-5)


def saved_bytes(fn) -> tuple[torch.Tensor, int]:
    """``fn()``'s result and the bytes of the tensors autograd keeps for its backward pass (each storage once)."""
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, sum(seen.values())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_chunked_loss_and_gradient_equal_torchs_cross_entropy_on_fp32_logits(dtype, eps):
    """Value and gradient against F.cross_entropy on the same logits cast to fp32 (what the loss computed before),
    over chunks smaller than the batch (uneven last chunk), with padding rows."""
    torch.manual_seed(1)
    rows, vocab = 37, 50
    base = (torch.randn(rows, vocab) * 3).to(dtype)
    labels = torch.randint(0, vocab, (rows,))
    labels[::5] = -100
    ours_in = base.clone().requires_grad_()
    ours = cross_entropy_sum(ours_in, labels, eps, chunk_elements=8 * vocab)
    (ours * 0.7).backward()
    ref_in = base.clone().requires_grad_()
    ref = F.cross_entropy(ref_in.float(), labels, ignore_index=-100, label_smoothing=eps, reduction="sum")
    (ref * 0.7).backward()
    assert ours.dtype == torch.float32 and ours.item() == pytest.approx(ref.item(), rel=1e-6)
    assert ours_in.grad.dtype == dtype
    tol = 1e-6 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(ours_in.grad.float(), ref_in.grad.float(), rtol=tol, atol=tol * 1e-2)
    assert (ours_in.grad[labels == -100] == 0).all()


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_fp32_logits_of_one_chunk_take_torchs_own_loss_with_the_same_value_and_gradient(eps):
    """fp32 logits that fit one chunk go to torch's fused loss; larger ones (or bf16) to the chunked one; both give
    the chunked loss's value and gradient."""
    torch.manual_seed(2)
    rows, vocab = 40, 30
    logits = torch.randn(rows, vocab) * 2
    labels = torch.randint(0, vocab, (rows,))
    labels[::4] = -100
    results = {}
    for chunk in (rows * vocab, 7 * vocab):  # one chunk; several
        x = logits.clone().requires_grad_()
        loss = cross_entropy_sum(x, labels, eps, chunk_elements=chunk)
        loss.backward()
        results[chunk] = (type(loss.grad_fn).__name__, loss.item(), x.grad)
    (fused, value, grad), (chunked, value_c, grad_c) = results.values()
    assert fused != "ChunkedCrossEntropyBackward", fused
    assert chunked == "ChunkedCrossEntropyBackward"
    assert value == pytest.approx(value_c, rel=1e-6)
    torch.testing.assert_close(grad, grad_c, rtol=1e-6, atol=1e-8)


def test_the_backward_keeps_no_fp32_copy_of_the_logits():
    """bf16 logits of 512 tokens x 4,000 entries: torch's loss on their fp32 cast keeps an fp32 log-softmax (4 bytes
    per logit) for its backward; the chunked one keeps the bf16 logits (2 bytes) and a few bytes per row."""
    rows, vocab = 512, 4000
    logits = torch.randn(rows, vocab, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, vocab, (rows,))
    _, before = saved_bytes(lambda: F.cross_entropy(logits.float(), labels, label_smoothing=0.1, reduction="sum"))
    _, after = saved_bytes(lambda: cross_entropy_sum(logits, labels, 0.1))
    assert before >= rows * vocab * 4 and after <= rows * vocab * 2 + rows * 16


@pytest.mark.parametrize("preset", ["transformer-tiny", "flan-t5-small"])
def test_the_4d_masks_give_the_logits_of_the_2d_one_without_reading_back(preset, monkeypatch):
    """transformers checks a 2-D mask for padding (a read back from the device) in every forward; the 4-D masks
    are used as they are, for the same logits."""
    from transformers import AutoModelForSeq2SeqLM

    from mtkit.model.loss import causal_mask, model_mask
    from mtkit.model.presets import preset_config

    config = preset_config(preset, vocab_size=200, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    config.vocab_size, config.num_layers, config.num_decoder_layers = 200, 2, 2  # T5's; BART ignores them
    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_config(config).eval()
    ids = torch.randint(3, 200, (3, 7))
    mask = torch.ones(3, 7, dtype=torch.long)
    mask[1, 4:], mask[2, 2:] = 0, 0
    ids[mask == 0] = 1
    decoder = torch.randint(3, 200, (3, 5))
    expected = model(input_ids=ids, attention_mask=mask, decoder_input_ids=decoder).logits
    reads = []
    original = torch.Tensor.__bool__
    monkeypatch.setattr(torch.Tensor, "__bool__", lambda t: reads.append(t.shape) or original(t))
    logits = model(input_ids=ids, attention_mask=model_mask(model, mask), decoder_input_ids=decoder,
                   decoder_attention_mask=causal_mask(model, decoder)).logits  # fmt: skip
    monkeypatch.undo()
    assert reads == []
    torch.testing.assert_close(logits, expected, rtol=0, atol=0)


@pytest.mark.parametrize("weight", [0.0, 0.3, 0.9])
def test_distillation_shares_each_tokens_loss_with_the_teachers_distribution(weight):
    """``(1 - w) x`` the label-smoothed loss against the reference ``+ w x`` the cross-entropy against the teacher's
    distribution, which is torch's KL divergence plus the teacher's entropy; padding counts nowhere, the value and
    the gradient agree, and no gradient reaches the teacher."""
    torch.manual_seed(4)
    logits, teacher = torch.randn(2, 6, 9) * 2, torch.randn(2, 6, 9) * 2
    labels = torch.randint(0, 9, (2, 6))
    labels[0, 4:] = -100
    batch = {"input_ids": labels.clamp(min=0), "attention_mask": labels >= 0, "decoder_input_ids": labels.clamp(min=0),
             "labels": labels}  # fmt: skip
    x, t = logits.clone().requires_grad_(), teacher.clone().requires_grad_()
    ours = token_loss_sum(Logits(x), batch, 0.1, Teacher(Logits(t), weight))
    ours.backward()
    y = logits.clone().requires_grad_()
    keep = labels != -100
    q = F.softmax(teacher[keep], dim=-1)
    soft = F.kl_div(F.log_softmax(y[keep], dim=-1), q, reduction="sum") - (q * q.log()).sum()
    gold = F.cross_entropy(y.view(-1, 9), labels.view(-1), ignore_index=-100, label_smoothing=0.1, reduction="sum")
    ref = (1 - weight) * gold + weight * soft
    ref.backward()
    assert ours.item() == pytest.approx(ref.item(), rel=1e-6)
    torch.testing.assert_close(x.grad, y.grad, rtol=1e-5, atol=1e-7)
    assert t.grad is None and (x.grad[~keep] == 0).all()
