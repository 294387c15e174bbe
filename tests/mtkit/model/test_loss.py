import pytest
import torch
import torch.nn.functional as F

from mtkit.model.loss import Teacher, token_loss_sum


class Logits(torch.nn.Module):
    """A stand-in model whose logits are given: the loss, not the model, is under test."""

    def __init__(self, logits: torch.Tensor) -> None:
        super().__init__()
        self.logits = logits

    def forward(self, **_) -> object:
        return type("Out", (), {"logits": self.logits})


def tiny(preset: str, vocab: int = 200):
    """A from-scratch model of ``preset`` (BART-family or T5) with a vocabulary of ``vocab`` tokens, dropout off."""
    from transformers import AutoModelForSeq2SeqLM

    from mtkit.model.presets import preset_config
    from mtkit.model.vocab import mask_extra_rows

    config = preset_config(preset, vocab_size=vocab, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    if config.model_type == "t5":
        config.vocab_size, config.num_layers, config.num_decoder_layers = vocab, 2, 2
    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_config(config).eval()
    mask_extra_rows(model)
    return model


def batch_of(model, seed: int = 0) -> dict:
    """Three pairs of different lengths, collated as training batches are (``loss_rows`` included)."""
    from mtkit.data.batching import Seq2SeqCollator

    g = torch.Generator().manual_seed(seed)
    top = min(200, model.config.vocab_size)
    pairs = [(5, 7), (9, 3), (2, 4)]
    features = [{"input_ids": torch.randint(3, top, (n,), generator=g).tolist(),
                 "labels": torch.randint(3, top, (k,), generator=g).tolist()} for n, k in pairs]  # fmt: skip
    return Seq2SeqCollator(model.config.pad_token_id, model.config.decoder_start_token_id)(features)


def reference_loss(model, batch: dict, eps: float, vocab: int) -> torch.Tensor:
    """torch's cross-entropy on the model's own full logits (the tokenizer's entries of them)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                   decoder_input_ids=batch["decoder_input_ids"]).logits[..., :vocab]  # fmt: skip
    return F.cross_entropy(logits.reshape(-1, vocab).float(), batch["labels"].reshape(-1), label_smoothing=eps,
                           reduction="sum")  # fmt: skip


def assert_same_gradients(model, other) -> None:
    """Every parameter's gradient equal to 1e-6 of the whole gradient's norm."""
    ours = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    theirs = {n: p.grad for n, p in other.named_parameters() if p.grad is not None}
    assert ours.keys() == theirs.keys() and ours
    norm = torch.stack([g.norm() for g in theirs.values()]).norm()
    worst = max(float((ours[n] - theirs[n]).norm() / norm) for n in ours)
    assert worst < 1e-6, worst


@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("preset", ["transformer-tiny", "flan-t5-small"])
def test_the_models_loss_and_gradients_equal_cross_entropy_on_its_full_logits(preset, eps):
    """BART (bias, vocabulary rounded from 200 to 256 rows) and T5 (tied output scaled by d_model ** -0.5): the loss
    the model computes on its target rows alone, and every parameter's gradient, equal torch's loss on its logits."""
    import copy

    from mtkit.model.vocab import tokens_in_use

    model = tiny(preset)
    other = copy.deepcopy(model)
    batch = batch_of(model)
    assert tokens_in_use(model.config) == 200 and model.config.vocab_size == (256 if preset.startswith("t") else 200)
    ours = token_loss_sum(model, batch, eps)
    ours.backward()
    ref = reference_loss(other, batch, eps, 200)
    ref.backward()
    assert ours.dtype == torch.float32 and ours.item() == pytest.approx(ref.item(), rel=1e-6)
    assert_same_gradients(model, other)


@pytest.mark.parametrize("family", ["marian", "m2m100", "mbart50", "mt5"])
def test_every_hub_family_computes_the_loss_of_its_own_logits(family, family_dir):
    """The real classes of the hub's families (Marian's and mBART's output bias, M2M100's none, mT5's untied
    output): the fused loss and gradients equal torch's loss on the model's logits."""
    import copy

    from transformers import AutoModelForSeq2SeqLM

    model = AutoModelForSeq2SeqLM.from_pretrained(family_dir(family)).eval()
    other = copy.deepcopy(model)
    batch = batch_of(model, seed=1)
    ours = token_loss_sum(model, batch, 0.1)
    ours.backward()
    ref = reference_loss(other, batch, 0.1, model.config.vocab_size)
    ref.backward()
    assert ours.item() == pytest.approx(ref.item(), rel=1e-6)
    assert_same_gradients(model, other)


def test_a_plain_batch_gives_the_loss_of_the_collated_one():
    """A library caller's batch without ``loss_rows`` (every row, the padding ignored) gives the same loss."""
    model = tiny("transformer-tiny")
    batch = batch_of(model)
    plain = {k: v for k, v in batch.items() if k not in ("loss_rows", "stats")}
    with torch.no_grad():
        assert token_loss_sum(model, plain, 0.1).item() == pytest.approx(token_loss_sum(model, batch, 0.1).item(), 1e-6)


def test_a_wrapped_model_without_the_loss_installed_is_refused():
    """A wrapper (as DDP's: the model in ``.module``) around a model that was not given the loss before wrapping."""

    class Wrapper(torch.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    model = tiny("transformer-tiny")
    with pytest.raises(TypeError, match="install_token_loss"):
        token_loss_sum(Wrapper(model), batch_of(model))


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


@pytest.mark.parametrize("weight", [0.3, 0.9])  # 0: the plain loss, tested above
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


def test_one_update_with_every_lever_equals_the_update_without_them():
    """From the same weights, one update the old way (padding to a multiple of 8, the decoder cache, the full fp32
    logits into torch's loss, the tokenizer's vocabulary, eager) and one with every lever (padding to the longest, the
    fused loss on the target rows, the vocabulary rounded to 256 rows, compiled by dynamo) give the same weights. By
    SGD: Adam's first step divides each gradient by its own size, so a rounding difference in a gradient that is zero
    but for rounding (the key projections' biases) would become a whole step."""
    import copy

    from transformers import AutoModelForSeq2SeqLM

    from mtkit.data.batching import Seq2SeqCollator
    from mtkit.model.loss import install_token_loss
    from mtkit.model.vocab import sliced_state_dict, unpadded_config

    padded = tiny("transformer-tiny")  # dropout off (eval), gradients on
    with unpadded_config(padded.config):
        plain = AutoModelForSeq2SeqLM.from_config(copy.deepcopy(padded.config)).eval()
    plain.load_state_dict(sliced_state_dict(padded.config, padded.state_dict()))
    g = torch.Generator().manual_seed(3)
    ids = lambda n: torch.randint(3, 200, (n,), generator=g).tolist()  # noqa: E731
    features = [{"input_ids": ids(n), "labels": ids(k)} for n, k in [(5, 9), (11, 3), (2, 6)]]
    old = Seq2SeqCollator(1, padded.config.decoder_start_token_id, pad_to_multiple_of=8)(features)
    new = Seq2SeqCollator(1, padded.config.decoder_start_token_id)(features)
    assert old["labels"].shape[1] == 16 and new["labels"].shape[1] == 9 and plain.config.vocab_size == 200

    def update(model, loss) -> None:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        loss().backward()
        optimizer.step()

    update(plain, lambda: reference_loss(plain, old, 0.1, 200))
    install_token_loss(padded)
    compiled = torch.compile(padded, dynamic=True, backend="eager")
    update(padded, lambda: token_loss_sum(compiled, new, 0.1))
    after = sliced_state_dict(padded.config, padded.state_dict())
    for name, tensor in plain.state_dict().items():
        torch.testing.assert_close(after[name], tensor, rtol=1e-6, atol=1e-6, msg=name)
