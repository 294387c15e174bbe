import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

from mtkit.errors import UserError
from mtkit.presets import preset_config
from mtkit.tokenizer import train_tokenizer
from mtkit.translate import Translator, generate_translations, position_limit

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
    out = generate_translations(model, tok, sentences, beam_size=2, max_new_tokens=100, batch_size=2)
    assert len(out) == len(sentences) and out[1] == out[-1]  # same input, same place in the output
    assert all(len(tok(o).input_ids) <= 11 for o in out)  # capped at the limit (+ </s>)
    assert model.training is False


def test_prompt_must_have_a_source_placeholder(model_and_tokenizer):
    model, tok = model_and_tokenizer
    with pytest.raises(UserError, match="--prompt"):
        generate_translations(model, tok, ["x"], prompt="translate:")


def test_translator_loads_a_saved_model(model_and_tokenizer, tmp_path):
    model, tok = model_and_tokenizer
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    expected = generate_translations(model, tok, TEXT, beam_size=1, max_new_tokens=5)
    assert Translator(tmp_path, device="cpu").translate(TEXT, beam_size=1, max_new_tokens=5) == expected
    with pytest.raises(UserError, match="--dtype"):
        Translator(tmp_path, dtype="fp8")
