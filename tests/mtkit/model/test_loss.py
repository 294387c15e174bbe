import pytest
import torch

from mtkit.model.loss import token_loss_sum


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
