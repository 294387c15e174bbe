"""The training objective: label-smoothed cross-entropy summed over a batch's target tokens.

Summed, not averaged: the trainer divides by the number of target tokens of the whole optimizer update
(all micro-batches, all processes), as fairseq does, so every token weighs the same however the update
was split into batches.

The model computes it in its own forward (:func:`install_token_loss`, before any wrapper: DDP, DeepSpeed and FSDP see
one forward with their hooks, ``torch.compile`` compiles the loss with the model): the decoder's hidden states of the
target tokens alone (the rows the collator lists in ``batch["loss_rows"]``, read on the host, so nothing syncs) go
through the output projection and the loss fused (:mod:`mtkit.model.linear_ce`), so no logits are held whole, none
in fp32 and none of padding; no decoder cache is built. The value and the gradients are those of
``F.cross_entropy(logits.float(), labels, label_smoothing=e, reduction="sum")`` on the model's full logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MethodType

import torch
import torch.nn.functional as F

from mtkit.model.linear_ce import IGNORE_INDEX, linear_cross_entropy_sum
from mtkit.model.vocab import tokens_in_use

#: The marker :func:`install_token_loss` leaves on a model.
INSTALLED = "_mtkit_token_loss"
KERNEL = "_mtkit_loss_kernel"  # the fused loss's elementwise part compiled: None (on a GPU), True or False


def transformers_model(model) -> torch.nn.Module:
    """The transformers model inside any wrapper (``torch.compile``, DDP, DeepSpeed's engine, peft)."""
    while True:
        if hasattr(model, "_orig_mod"):
            model = model._orig_mod
        elif hasattr(model, "get_base_model"):  # peft
            model = model.get_base_model()
        elif hasattr(model, "module") and not hasattr(model, "config"):
            model = model.module
        else:
            return model


def _config(model):
    """The transformers config inside any wrapper, or ``None``."""
    return getattr(transformers_model(model), "config", None)


def model_mask(model, attention_mask: torch.Tensor) -> torch.Tensor:
    """``attention_mask`` (batch x source) as the model takes it without a host read: for SDPA attention the 4-D
    boolean mask (batch x 1 x 1 x source) that transformers uses as it is, where a 2-D one is first checked for
    padding (``mask.all()``, read back from the device at every forward); other attention implementations get
    the 2-D mask."""
    config = _config(model)
    if getattr(config, "_attn_implementation", None) != "sdpa" or attention_mask.dim() != 2:
        return attention_mask
    return attention_mask[:, None, None, :].bool()


def causal_mask(model, decoder_input_ids: torch.Tensor) -> torch.Tensor | None:
    """For SDPA attention, the decoder's causal mask in the 4-D boolean form transformers uses as it is (else it
    reads back whether the target has padding at every forward); ``None`` (the model's own) otherwise."""
    if getattr(_config(model), "_attn_implementation", None) != "sdpa":
        return None
    length = decoder_input_ids.shape[1]
    return torch.ones(length, length, dtype=torch.bool, device=decoder_input_ids.device).tril()[None, None]


@dataclass(frozen=True)
class Teacher:
    """A frozen model whose predicted distribution takes ``weight`` of every target token's loss (word-level knowledge
    distillation, Kim & Rush 2016): ``(1 - weight) x`` the label-smoothed cross-entropy against the reference ``+
    weight x`` the cross-entropy against the teacher's distribution (its KL divergence from the student's, plus the
    teacher's entropy, which has no gradient)."""

    model: torch.nn.Module
    weight: float


def model_inputs(model, batch: dict) -> dict:
    """The model's inputs for ``batch``: masks in the form read without a sync, no decoder cache."""
    return {
        "input_ids": batch["input_ids"],
        "attention_mask": model_mask(model, batch["attention_mask"]),
        "decoder_input_ids": batch["decoder_input_ids"],
        "decoder_attention_mask": causal_mask(model, batch["decoder_input_ids"]),
        "use_cache": False,
    }


def soft_cross_entropy_sum(logits: torch.Tensor, teacher_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Sum over the non-padding target tokens (``labels`` not ``-100``) of the cross-entropy of ``logits`` against
    the softmax of ``teacher_logits``; fp32 (one fp32 copy of those tokens' logits: mitigation batches are small)."""
    vocab = logits.size(-1)
    keep = labels.reshape(-1) != IGNORE_INDEX
    student = logits.reshape(-1, vocab)[keep].float()
    target = teacher_logits.reshape(-1, vocab)[keep].float().softmax(dim=-1)
    return F.cross_entropy(student, target, reduction="sum")


def decoder_states(model, *, input_ids, attention_mask, decoder_input_ids, decoder_attention_mask=None, **_):
    """The decoder's last hidden states (batch x target x d) as the model's output projection takes them (T5 with tied
    embeddings scales them by d_model ** -0.5 first)."""
    encoded = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask)[0]
    states = model.get_decoder()(
        input_ids=decoder_input_ids,
        attention_mask=decoder_attention_mask,
        encoder_hidden_states=encoded,
        encoder_attention_mask=attention_mask,
        use_cache=False,
    )[0]
    if getattr(model.config, "scale_decoder_outputs", False):
        states = states * model.config.d_model**-0.5
    return states


def _loss_forward(self, *args, label_smoothing: float | None = None, loss_rows=None, labels=None, **kwargs):
    """A forward that returns the summed token loss when given ``label_smoothing`` (fp32 scalar), else the model's
    own output: what :func:`install_token_loss` puts on a model."""
    if label_smoothing is None:
        return type(self).forward(self, *args, labels=labels, **kwargs)
    states = decoder_states(self, **kwargs)
    states, labels = states.reshape(-1, states.shape[-1]), labels.reshape(-1)
    if loss_rows is not None:  # the target tokens alone
        states, labels = states.index_select(0, loss_rows), labels.index_select(0, loss_rows)
    return linear_cross_entropy_sum(
        states,
        self.get_output_embeddings().weight,
        labels,
        bias=getattr(self, "final_logits_bias", None),
        label_smoothing=label_smoothing,
        vocab=tokens_in_use(self.config),
        kernel=getattr(self, KERNEL, None),
    )


def install_token_loss(model, kernel: bool | None = None) -> None:
    """Make the transformers model in ``model`` return the summed token loss from its forward when asked (see the
    module's docstring); called before ``accelerator.prepare``, whose wrappers then call it. Under DeepSpeed ZeRO-3
    the output weight, read in that forward outside its own module's, is registered to be gathered there. ``kernel``:
    :func:`mtkit.model.linear_ce.linear_cross_entropy_sum`'s (default: compiled on a GPU, eager on a CPU)."""
    inner = transformers_model(model)
    setattr(inner, KERNEL, kernel)
    if getattr(inner, INSTALLED, False):
        return
    inner.forward = MethodType(_loss_forward, inner)
    setattr(inner, INSTALLED, True)
    weight = inner.get_output_embeddings().weight
    if hasattr(weight, "ds_id"):  # a ZeRO-3 partitioned parameter
        import deepspeed

        deepspeed.zero.register_external_parameter(inner, weight)


def token_loss_sum(model, batch: dict, label_smoothing: float = 0.0, teacher: Teacher | None = None) -> torch.Tensor:
    """Sum of label-smoothed cross-entropy over the non-padding target tokens of ``batch`` (fp32, on device); with a
    :class:`Teacher`, each token's loss shared with the cross-entropy against the teacher's distribution.

    ``batch`` holds ``input_ids``, ``attention_mask``, ``decoder_input_ids`` and ``labels``, and may list the target
    tokens' flat positions in ``loss_rows`` (the collator's). ``model`` is a transformers model, bare or wrapped after
    :func:`install_token_loss` (which a bare one gets here)."""
    inputs, inner = model_inputs(model, batch), transformers_model(model)
    if teacher is not None and teacher.weight:  # distillation needs the student's whole distribution: logits
        config = getattr(inner, "config", None)
        used = tokens_in_use(config) if config is not None else None  # a rounded-up vocabulary's extra rows left out
        logits = model(**inputs).logits[..., :used]
        with torch.no_grad():
            target = teacher.model(**model_inputs(teacher.model, batch)).logits[..., :used].detach()
        labels = batch["labels"]
        gold = F.cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(), labels.reshape(-1), label_smoothing=label_smoothing,
            reduction="sum",
        )  # fmt: skip
        return (1 - teacher.weight) * gold + teacher.weight * soft_cross_entropy_sum(logits, target, labels)
    if not getattr(inner, INSTALLED, False):
        if inner is not model:
            raise TypeError("token_loss_sum: call mtkit.model.loss.install_token_loss(model) before wrapping it")
        install_token_loss(model)
    return model(**inputs, labels=batch["labels"], loss_rows=batch.get("loss_rows"), label_smoothing=label_smoothing)
