"""Model folders that are not what they claim are one line naming the folder, the file and what is wrong; a sound
folder passes and loads (transformers agrees with each verdict)."""

from __future__ import annotations

import json
import shutil

import pytest
from safetensors import SafetensorError
from transformers import AutoModelForSeq2SeqLM, BartConfig, BartForConditionalGeneration, BertConfig, BertModel

from mtkit.errors import UserError
from mtkit.model.folders import check_pretrained_source, looks_local

TINY = dict(vocab_size=64, d_model=16, max_position_embeddings=32, encoder_layers=1, decoder_layers=1,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32)  # fmt: skip


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("folders")
    BartForConditionalGeneration(BartConfig(**TINY)).save_pretrained(root / "bart")
    bert = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    BertModel(bert).save_pretrained(root / "bert")
    shutil.copytree(root / "bart", root / "cut")
    weights = (root / "cut" / "model.safetensors").read_bytes()
    (root / "cut" / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    shutil.copytree(root / "bart", root / "garbled")
    (root / "garbled" / "model.safetensors").write_bytes(b"\xff" * 64)
    shutil.copytree(root / "bart", root / "notjson")
    (root / "notjson" / "config.json").write_text("{model_type: bart")
    (root / "empty").mkdir()
    return root


def test_a_sound_folder_passes_and_loads(folders):
    check_pretrained_source(str(folders / "bart"), "--model", weights=True)
    assert AutoModelForSeq2SeqLM.from_pretrained(folders / "bart").config.model_type == "bart"


def test_an_encoder_only_model_is_named(folders):
    with pytest.raises(UserError) as err:
        check_pretrained_source(str(folders / "bert"), "--model", weights=True)
    assert str(err.value).startswith(f"--model {folders / 'bert'}: config.json: not a sequence-to-sequence model: bert")
    with pytest.raises(ValueError):  # transformers' own verdict, as a traceback
        AutoModelForSeq2SeqLM.from_pretrained(folders / "bert")


@pytest.mark.parametrize("name", ["cut", "garbled"])
def test_truncated_or_corrupt_weights_are_named(folders, name):
    with pytest.raises(UserError) as err:
        check_pretrained_source(str(folders / name), "--model_name_or_path", weights=True)
    assert str(err.value).startswith(
        f"--model_name_or_path {folders / name}: model.safetensors is truncated or corrupt: header "
    )
    with pytest.raises((SafetensorError, OSError)):
        AutoModelForSeq2SeqLM.from_pretrained(folders / name)


def test_missing_folders_configs_and_unreadable_configs(folders):
    cases = {
        folders / "nowhere": "no such folder (and not a hub id",
        folders / "empty": "no config.json (not a folder written by save_pretrained)",
        folders / "notjson": "config.json cannot be read (",
        folders / "bart" / "config.json": "not a folder",
    }
    for path, expected in cases.items():
        with pytest.raises(UserError) as err:
            check_pretrained_source(str(path), "--model", weights=True)
        assert str(err.value).startswith(f"--model {path}: {expected}")


def test_sharded_weights_are_each_checked(folders, tmp_path):
    shutil.copytree(folders / "bart", tmp_path / "sharded")
    (tmp_path / "sharded" / "model.safetensors").rename(tmp_path / "sharded" / "part-1.safetensors")
    index = {"weight_map": {"a": "part-1.safetensors", "b": "part-2.safetensors"}}
    (tmp_path / "sharded" / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(UserError, match=r"shard part-2.safetensors \(named in model.safetensors.index.json\)"):
        check_pretrained_source(str(tmp_path / "sharded"), "--model", weights=True)


def test_paths_and_hub_ids(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert looks_local("runs/final") and looks_local("./final") and looks_local("/abs") and looks_local("a/b/c")
    assert not looks_local("google/flan-t5-small") and not looks_local("t5-small")
