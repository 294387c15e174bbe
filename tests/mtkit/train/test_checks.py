"""Checks a run makes before it writes anything (mtkit/train/checks.py) that no other test file covers."""

from __future__ import annotations

import pytest
from testing_utils import FAST_RUN, train_in_process

from mtkit.config import RunConfig
from mtkit.data.tokenizer import train_tokenizer
from mtkit.errors import UserError
from mtkit.model.presets import preset_config
from mtkit.train.checks import check_position_limit


@pytest.fixture(scope="module")
def short_positions(tmp_path_factory):
    """A pretrained stand-in with a 34-position table (learned positions)."""
    from transformers import AutoModelForSeq2SeqLM

    root = tmp_path_factory.mktemp("short_positions")
    tok = train_tokenizer(["a small cat", "eine kleine Katze", "the dog", "der Hund"] * 5, vocab_size=60)
    config = preset_config("transformer-tiny", vocab_size=len(tok), pad_token_id=tok.pad_token_id,
                           bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, max_positions=34)  # fmt: skip
    assert config.max_position_embeddings == 34
    AutoModelForSeq2SeqLM.from_config(config).save_pretrained(root)
    tok.save_pretrained(root)
    return root


def test_lengths_beyond_a_pretrained_models_positions_are_refused_before_anything_is_written(
    short_positions, multi30k_small, tmp_path
):
    out = tmp_path / "run"
    res = train_in_process(
        "--data_dir", str(multi30k_small), *FAST_RUN, "--model_name_or_path", str(short_positions),
        "--output_dir", str(out), "--max_source_length", "64", "--max_steps", "1",
    )  # fmt: skip
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1] == (
        f"error: --max_source_length 64: {short_positions} has 34 positions (max_position_embeddings); at most 34"
    )
    assert not out.exists()
    cfg = RunConfig()
    cfg.model.model_name_or_path = str(short_positions)
    cfg.data.max_source_length = cfg.data.max_target_length = 34
    check_position_limit(cfg)  # at the limit: accepted
    cfg.data.max_target_length = 35
    with pytest.raises(UserError, match="--max_target_length 35"):
        check_position_limit(cfg)
