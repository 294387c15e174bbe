"""How many padded positions per batch fit a device: activation bytes measured, model states counted.

Activations are measured, not guessed: the bytes of every tensor a training forward keeps for its backward pass
(``torch.autograd.graph.saved_tensors_hooks``, each storage counted once), on copies of the architecture with one
and two layers per stack and the real widths, in bf16 weights as DeepSpeed trains, on the ``meta`` device (shapes
without data: no memory, no arithmetic). The difference is one layer of each stack, scaled to the real depth.
Model states are bytes per parameter (ZeRO-3 bf16 on one device: 2 + 2 + 4 + 8, plus DeepSpeed's extra fp32
gradient partition: 18).
"""

from __future__ import annotations

import copy

import torch

#: Bytes of model states per parameter under ZeRO-3 bf16 on one device (DeepSpeed's own estimator's count).
ZERO3_STATE_BYTES = 18
#: Sentence shape of the measurement (MT-GenEval-like lengths; a position costs more in longer sentences).
SHAPE = (8, 48, 40)  # sentences, source length, target length


def saved_bytes(model, batch: int, src_len: int, tgt_len: int) -> int:
    """Bytes kept for the backward pass by one training forward (with its loss) of ``model``, each storage once.

    Runs on the model's device, the ``meta`` device included (shapes only: seconds for flan-t5-xl's widths). The
    masks are given in 4-D additive form, which transformers uses as is (a 2-D one would be read back)."""
    device, dtype = model.device, model.dtype
    ids = torch.full((batch, src_len), 3, device=device)
    labels = torch.full((batch, tgt_len), 3, device=device)
    mask = torch.zeros(batch, 1, 1, src_len, dtype=dtype, device=device)
    causal = torch.full((tgt_len, tgt_len), -1e4, dtype=dtype, device=device).triu(1).expand(batch, 1, -1, -1)
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        seen[storage._cdata] = storage.nbytes()
        return t

    params = {p.untyped_storage()._cdata for p in model.parameters()}
    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(input_ids=ids, attention_mask=mask, decoder_attention_mask=causal, labels=labels)
    return sum(n for key, n in seen.items() if key not in params)


def _with_layers(config, layers: int):
    config = copy.deepcopy(config)
    if hasattr(config, "num_decoder_layers"):
        config.num_layers = config.num_decoder_layers = layers
    else:
        config.encoder_layers = config.decoder_layers = layers
    return config


def _layers(config) -> int:
    return getattr(config, "num_layers", None) or config.encoder_layers


def activation_bytes_per_position(
    config, *, checkpointing: bool = False, shape: tuple = SHAPE, device: str = "meta"
) -> float:
    """Activation bytes per padded position (``sentences x longest``) of a model of ``config``, measured on one and
    two layers per stack (bf16 weights, on ``device``) and scaled to the config's depth."""
    from transformers import AutoModelForSeq2SeqLM

    batch, src_len, tgt_len = shape
    measured = []
    for layers in (1, 2):
        with torch.device(device):
            model = AutoModelForSeq2SeqLM.from_config(_with_layers(config, layers), dtype=torch.bfloat16)
        if checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.config.use_cache = False
        measured.append(saved_bytes(model, batch, src_len, tgt_len))
        del model
    per_layer = measured[1] - measured[0]
    total = measured[0] + per_layer * (_layers(config) - 1)
    if checkpointing:  # each layer keeps its bf16 input; the backward rebuilds one layer's activations at a time
        positions = batch * max(src_len, tgt_len)
        total += 2 * config.d_model * positions * 2 * _layers(config)
        total += activation_bytes_per_position(_with_layers(config, 1), shape=shape, device=device) * positions
    return total / (batch * max(src_len, tgt_len))


def token_budget(
    config,
    memory_bytes: float,
    *,
    state_bytes_per_param: float = ZERO3_STATE_BYTES,
    checkpointing: bool = False,
    headroom: float = 0.1,
    multiple: int = 512,
    cap: int = 16384,
) -> int:
    """The largest ``--max_tokens`` (a multiple of ``multiple``, at most ``cap``) whose activations fit beside the
    model states in ``memory_bytes`` less ``headroom`` of it (CUDA context, allocator cache, buckets)."""
    from transformers import AutoModelForSeq2SeqLM

    with torch.device("meta"):
        params = sum(p.numel() for p in AutoModelForSeq2SeqLM.from_config(config).parameters())
    free = memory_bytes * (1 - headroom) - params * state_bytes_per_param
    per_position = activation_bytes_per_position(config, checkpointing=checkpointing)
    fits = int(free // per_position) // multiple * multiple if free > 0 else 0
    return min(cap, fits)
