"""T5's norms fused (``--fuse_norms``): the same outputs and gradients as eager, on the CPU through dynamo alone (the
plumbing) and on a GPU through inductor (the kernels; ``make test-gpu``)."""

import copy

import pytest
import torch

from mtkit.model.norms import fuse_t5_norms


def t5(device: str):
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    config = T5Config(vocab_size=300, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                      feed_forward_proj="gated-gelu", decoder_start_token_id=0)  # fmt: skip
    return T5ForConditionalGeneration(config).to(device).eval()


def check_fused_equals_eager(device: str, backend: str, tol: float) -> None:
    eager = t5(device)
    fused = copy.deepcopy(eager)
    assert fuse_t5_norms(fused, backend) == 2 * 2 + 3 * 2 + 2  # 2 per encoder layer, 3 per decoder layer, 2 finals
    ids = torch.randint(1, 300, (3, 11), device=device)
    for model in (eager, fused):
        model(input_ids=ids, labels=ids).loss.backward()
    with torch.no_grad():
        a, b = eager(input_ids=ids, labels=ids).logits, fused(input_ids=ids, labels=ids).logits
    torch.testing.assert_close(b, a, rtol=tol, atol=tol)
    for (name, p), q in zip(eager.named_parameters(), fused.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=tol, atol=tol, msg=name)


def test_fused_norms_give_eagers_outputs_and_gradients_through_dynamo():
    check_fused_equals_eager("cpu", "eager", 1e-6)


@pytest.mark.gpu
def test_fused_norms_give_eagers_outputs_and_gradients_on_a_gpu():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    check_fused_equals_eager("cuda", "inductor", 1e-4)


def test_a_model_without_t5_norms_is_left_as_it_is():
    assert fuse_t5_norms(torch.nn.Sequential(torch.nn.LayerNorm(4)), "eager") == 0
