import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

from mtkit.errors import UserError
from mtkit.model.presets import PRESETS, preset_config

IDS = {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}


def test_base_matches_the_paper():
    cfg = preset_config("transformer-base", vocab_size=37000, **IDS)
    assert (cfg.encoder_layers, cfg.decoder_layers, cfg.d_model) == (6, 6, 512)
    assert (cfg.encoder_attention_heads, cfg.encoder_ffn_dim, cfg.dropout) == (8, 2048, 0.1)
    assert cfg.activation_function == "relu" and cfg.scale_embedding and not cfg.normalize_before
    with torch.device("meta"):
        model = AutoModelForSeq2SeqLM.from_config(cfg)
    n = sum(p.numel() for p in model.parameters())
    assert 60e6 <= n <= 65e6
    assert model.lm_head.weight is model.model.shared.weight is model.model.encoder.embed_tokens.weight


def test_big_and_dropout_override():
    big = preset_config("transformer-big", vocab_size=1000, **IDS)
    assert (big.d_model, big.encoder_attention_heads, big.encoder_ffn_dim, big.dropout) == (1024, 16, 4096, 0.3)
    assert preset_config("transformer-small", vocab_size=1000, dropout=0.2, **IDS).dropout == 0.2


def test_every_preset_builds_and_runs():
    for name in PRESETS:
        with torch.device("meta"):
            AutoModelForSeq2SeqLM.from_config(preset_config(name, vocab_size=100, **IDS))
    model = AutoModelForSeq2SeqLM.from_config(preset_config("transformer-tiny", vocab_size=100, **IDS))
    out = model(input_ids=torch.tensor([[5, 6, 2]]), labels=torch.tensor([[7, 2]]))
    assert out.logits.shape == (1, 2, 128)  # the vocabulary rounded up to 64 rows (mtkit/model/vocab.py)


def test_unknown_preset():
    with pytest.raises(UserError, match="unknown preset 'transformer-huge'"):
        preset_config("transformer-huge", vocab_size=10, **IDS)


@pytest.mark.parametrize(
    "name, millions",  # parameter counts of the published google/flan-t5-* checkpoints
    [("flan-t5-small", 77), ("flan-t5-base", 248), ("flan-t5-large", 783), ("flan-t5-xl", 2850)],
)
def test_flan_t5_shapes_have_the_published_sizes(name, millions):
    cfg = preset_config(name, vocab_size=2000, **IDS)
    assert cfg.model_type == "t5" and cfg.vocab_size == 32128 and cfg.decoder_start_token_id == IDS["pad_token_id"]
    with torch.device("meta"):
        model = AutoModelForSeq2SeqLM.from_config(cfg)
    # transformers 5 ties a T5 built from a config to its embeddings; the checkpoints keep a separate output layer.
    assert model.lm_head.weight is model.shared.weight
    output_layer = 32128 * cfg.d_model
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(millions * 1e6 - output_layer, rel=0.01)
