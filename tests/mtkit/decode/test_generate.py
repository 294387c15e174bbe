import logging
import math
import warnings
from dataclasses import replace

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

from mtkit.data.tokenizer import train_tokenizer
from mtkit.decode.bounds import output_bound, position_limit
from mtkit.decode.generate import Translator, generate_translations
from mtkit.decode.settings import DecodingSettings
from mtkit.errors import UserError
from mtkit.model.presets import preset_config

TEXT = ["a cat sat on the mat", "the dog", "a very long sentence about many cats and dogs in the park", "hi"]


@pytest.fixture(scope="module")
def model_and_tokenizer():
    torch.manual_seed(0)
    tok = train_tokenizer(TEXT * 5, vocab_size=80)
    config = preset_config(
        "transformer-tiny", vocab_size=len(tok), pad_token_id=1, bos_token_id=0, eos_token_id=2, max_positions=12
    )
    return AutoModelForSeq2SeqLM.from_config(config).eval(), tok


def test_order_is_restored_and_long_inputs_fit_the_positions(model_and_tokenizer):
    model, tok = model_and_tokenizer
    assert position_limit(model.config) == 10
    sentences = [TEXT[2] * 3, *TEXT, TEXT[0]]  # the first is longer than the 12-position table
    out = generate_translations(model, tok, sentences, DecodingSettings(num_beams=2, max_new_tokens=100, batch_size=2))
    assert len(out) == len(sentences) and out[1] == out[-1]  # same input, same place in the output
    assert all(len(tok(o).input_ids) <= 11 for o in out)  # capped at the limit (+ </s>)
    assert model.training is False


def test_translator_loads_a_saved_model(model_and_tokenizer, tmp_path):
    model, tok = model_and_tokenizer
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    greedy = DecodingSettings(num_beams=1, max_new_tokens=5)
    expected = generate_translations(model, tok, TEXT, greedy)
    assert Translator(tmp_path, device="cpu").translate(TEXT, greedy) == expected
    with pytest.raises(UserError, match="--dtype"):
        Translator(tmp_path, dtype="fp8")


def test_output_bound_is_fairseqs_formula_capped_by_max_new_tokens():
    assert output_bound(10, 256, 1.5, 10) == 25
    assert output_bound(3, 256, 1.5, 10) == 15  # ceil(14.5)
    assert output_bound(10, 20, 1.5, 10) == 20
    assert output_bound(10, 256, 0, 7) == 7  # a fixed length, as fairseq's max_len_a 0
    assert output_bound(0, 256, 0, 0) == 1  # never an empty budget


def test_each_batch_stops_at_its_bound(model_and_tokenizer):
    """Each batch generates at most ceil(a * its longest source + b) new tokens: what ``generate`` gives when called
    directly with that many (a random model rarely ends early, so the bound is what stops it)."""
    model, tok = model_and_tokenizer
    a, b = 0.5, 1
    words = {"suppress_tokens": [tok.bos_token_id, tok.pad_token_id, tok.unk_token_id]}  # else it repeats <s>

    def direct(batch: list[str]) -> list[str]:
        enc = tok(batch, return_tensors="pt", padding=True)
        bound = math.ceil(a * max(len(tok(s).input_ids) for s in batch) + b)
        ids = model.generate(**enc, num_beams=1, max_new_tokens=bound, **words)
        return [t.strip() for t in tok.batch_decode(ids, skip_special_tokens=True)]

    short = [s for s in TEXT if len(tok(s).input_ids) <= 8]  # within the model's positions, no truncation
    assert len(short) == 3
    bounded = DecodingSettings(num_beams=1, max_len_a=a, max_len_b=b, batch_size=1)
    ones = generate_translations(model, tok, short, bounded, **words)
    assert ones == [direct([s])[0] for s in short]
    pair = [TEXT[1], TEXT[3]]  # one batch: the longer source sets the bound for both
    assert generate_translations(model, tok, pair, replace(bounded, batch_size=2), **words) == direct(pair)
    unbounded = generate_translations(model, tok, short, replace(bounded, max_len_a=0, max_len_b=100), **words)
    assert all(ones)
    assert sum(map(len, ones)) < sum(map(len, unbounded))  # the bound did stop something


def test_no_length_warning_from_transformers_and_the_same_translations(model_and_tokenizer):
    """A generation config with ``max_length`` (as NLLB's and Marian's have) gave transformers' "Both `max_new_tokens`
    and `max_length` seem to have been set" on every batch; the translations do not depend on it."""
    model, tok = model_and_tokenizer
    settings = DecodingSettings(num_beams=2, max_new_tokens=6, batch_size=2)
    plain = generate_translations(model, tok, TEXT, settings)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    hf_logger = logging.getLogger("transformers")
    model.generation_config.max_length, model.generation_config.min_length = 200, 0
    hf_logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with_lengths = generate_translations(model, tok, TEXT, settings)
    finally:
        hf_logger.removeHandler(handler)
        said = [r.getMessage() for r in records] + [str(w.message) for w in caught]
        lengths = model.generation_config.max_length, model.generation_config.min_length
        model.generation_config.max_length = model.generation_config.min_length = None
    assert not [m for m in said if "seem to have been set" in m], said
    assert with_lengths == plain
    assert lengths == (200, 0)  # the model's own config as it was
