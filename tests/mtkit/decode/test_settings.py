"""The one decoding settings object and its resolution rule: the flag, else what was saved with the model, else the
default; and the MBR key list defined once."""

import argparse
import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM, GenerationConfig

from mtkit.cli.args import add_decoding_args
from mtkit.cli.translate import build_parser
from mtkit.config import EvalConfig
from mtkit.data.prompts import Prompt
from mtkit.decode.mbr import MBR, MBR_KEYS
from mtkit.decode.settings import DEFAULTS, DecodingSettings, resolve
from mtkit.errors import UserError
from mtkit.model.presets import preset_config


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """A tiny BART saved with a hand-written generation config (beam 3, length penalty 0.8, output bound 0.5x + 7,
    no max_new_tokens) and a prompt."""
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("model")
    config = preset_config("transformer-tiny", vocab_size=64, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    AutoModelForSeq2SeqLM.from_config(config).save_pretrained(folder)
    (folder / "generation_config.json").write_text(
        json.dumps({"num_beams": 3, "length_penalty": 0.8, "max_len_a": 0.5, "max_len_b": 7, "eos_token_id": 2})
    )
    Prompt("translate: {source}", "en", ("de",)).save(folder)
    return folder


def flags(*argv: str) -> argparse.Namespace:
    """``scripts/translate.py``'s parsed flags."""
    return build_parser().parse_args(["--model", "m", "--text", "x", *argv])


def test_the_flag_wins_then_the_saved_config_then_the_default(model_dir):
    settings, origin = resolve(flags("--num_beams", "2", "--max_len_b", "4"), model_dir)
    saved = str(model_dir / "generation_config.json")
    # the flags
    assert (settings.num_beams, origin["num_beams"]) == (2, "--num_beams")
    assert (settings.max_len_b, origin["max_len_b"]) == (4, "--max_len_b")
    # the model's generation_config.json and prompt.json
    assert (settings.length_penalty, origin["length_penalty"]) == (0.8, saved)
    assert (settings.max_len_a, origin["max_len_a"]) == (0.5, saved)
    assert settings.prompt == Prompt("translate: {source}", "en", ("de",))
    assert origin["prompt"] == str(model_dir / "prompt.json")
    # neither: the defaults
    assert (settings.max_new_tokens, origin["max_new_tokens"]) == (256, "default")
    assert (settings.batch_size, settings.engine, settings.dtype, settings.seed) == (32, "hf", "auto", 0)
    assert (settings.decoding, settings.mbr, origin["decoding"]) == ("beam", None, "default")
    assert origin["batch_size"] == origin["engine"] == "default"
    # --prompt none is a flag too
    settings, origin = resolve(flags("--prompt", "none"), model_dir)
    assert (settings.prompt, origin["prompt"], settings.num_beams) == (None, "--prompt", 3)


def test_a_model_without_saved_settings_decodes_with_the_defaults(model_dir, tmp_path):
    for name in ("config.json", "model.safetensors"):
        (tmp_path / name).write_bytes((model_dir / name).read_bytes())
    settings, origin = resolve(None, tmp_path)
    expected = DecodingSettings(num_beams=4, length_penalty=1.0, max_new_tokens=256, max_len_a=1.5, max_len_b=10)
    assert settings == expected
    assert set(origin.values()) == {"default"}


def test_what_a_run_saves_is_what_is_read_back(tmp_path):
    """``final/``'s generation config (``save_into``) read back by the resolution rule, beam and greedy."""
    for beams, penalty in ((5, 0.7), (1, 1.0)):  # beam 1 saves no length penalty: the default comes back
        cfg = EvalConfig(num_beams=beams, length_penalty=0.7, max_new_tokens=40, max_len_a=1.2, max_len_b=3)
        generation = GenerationConfig(num_beams=4, early_stopping=True)
        DecodingSettings.from_eval(cfg).save_into(generation)
        generation.save_pretrained(tmp_path)
        settings, origin = resolve(None, tmp_path)
        assert (settings.num_beams, settings.length_penalty, settings.max_new_tokens) == (beams, penalty, 40)
        assert (settings.max_len_a, settings.max_len_b, origin["max_len_a"]) == (1.2, 3, str(tmp_path / GEN))


GEN = "generation_config.json"


def test_the_eval_section_maps_to_the_settings():
    cfg = EvalConfig(num_beams=2, length_penalty=0.6, eval_batch_size=8, decoding="mbr", mbr_samples=5, top_p=0.9)
    settings = DecodingSettings.from_eval(cfg)
    assert (settings.num_beams, settings.length_penalty, settings.batch_size) == (2, 0.6, 8)
    assert settings.mbr == MBR(samples=5, candidates="sample", epsilon=None, top_p=0.9, seed=0)
    beam = DecodingSettings.from_eval(EvalConfig())  # the recipe's MBR defaults are unused with beam search
    assert (beam.num_beams, beam.length_penalty, beam.mbr, beam.mbr_samples) == (4, 0.6, None, None)


def test_mbr_flags_and_their_refusals(model_dir):
    settings, origin = resolve(flags("--decoding", "mbr", "--mbr_samples", "6", "--epsilon", "0.1"), model_dir)
    assert settings.mbr == MBR(samples=6, candidates="sample", epsilon=0.1, top_p=None, seed=0)
    assert (origin["mbr_samples"], origin["mbr_candidates"]) == ("--mbr_samples", "default")
    assert (settings.mbr_samples, settings.mbr_candidates) == (6, "sample")  # MBR's default, filled in
    with pytest.raises(UserError, match="--top_p: only used with --decoding mbr"):
        resolve(flags("--top_p", "0.5"), model_dir)
    with pytest.raises(UserError, match="--epsilon: CTranslate2 has no epsilon sampling"):
        resolve(flags("--engine", "ct2", "--decoding", "mbr", "--epsilon", "0.1"), model_dir)
    with pytest.raises(UserError, match="--prompt"):
        resolve(flags("--prompt", "translate:"), model_dir)


def test_the_mbr_key_list_is_defined_once():
    """The MBR flags every script adds, the MBR fields of the settings and of the recipe, and what reaches
    :class:`MBR` are the one list :data:`MBR_KEYS`."""
    parser = argparse.ArgumentParser()
    add_decoding_args(parser)
    assert [a.dest for a in parser._actions if a.dest not in ("help", "decoding")] == list(MBR_KEYS)
    assert set(MBR_KEYS) <= set(DecodingSettings.__dataclass_fields__) & set(EvalConfig.__dataclass_fields__)
    values = dict(zip(MBR_KEYS, (3, "beam", 0.05, 0.5), strict=True))
    mbr = DecodingSettings(decoding="mbr", **values).mbr
    assert (mbr.samples, mbr.candidates, mbr.epsilon, mbr.top_p) == tuple(values.values())
    assert DEFAULTS == DecodingSettings() and all(getattr(DEFAULTS, key) is None for key in MBR_KEYS)


@pytest.mark.parametrize(
    ("values", "flag", "wide"),
    [({"num_beams": 7, "batch_size": 3, "max_new_tokens": 11}, "--num_beams", 7),
     ({"decoding": "mbr", "mbr_samples": 9, "num_beams": 2, "batch_size": 5, "max_new_tokens": 13}, "--mbr_samples",
      9)],
)  # fmt: skip
def test_a_batch_whose_token_ids_exceed_the_memory_is_refused_naming_its_flag(values, flag, wide):
    """One batch holds batch_size x (beams or MBR candidates) sequences of max_new_tokens ids, 8 bytes each: refused
    when that alone exceeds the memory, accepted when it fits."""
    settings = DecodingSettings(**values)
    need = values["batch_size"] * wide * values["max_new_tokens"] * 8
    settings.check_fits(need)  # exactly fits
    settings.check_fits(None)  # memory unknown: nothing refused
    with pytest.raises(UserError, match=rf"^{flag} {wide}: a batch of {values['batch_size']} sentences x {wide} x "):
        settings.check_fits(need - 1)
    with pytest.raises(UserError, match=rf"^--num_beams {10**9}: .* more than this machine's"):
        DecodingSettings(num_beams=10**9)  # the machine's own memory, at construction
