"""final/'s generation config: the loaded model's own, carried over without asking the hub again."""

import json

from accelerate import Accelerator
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from mtkit.config import parse_config
from mtkit.train.final import export_model


def test_final_keeps_the_loaded_models_generation_config_with_the_hub_out_of_reach(family_dir, tmp_path, monkeypatch):
    """A run of a hub model (here the hub is out of reach by the end of it) keeps what the model was loaded with
    (Marian's bad_words_ids, max_length) and the run's own beam."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # what a run online sees: the hub asked, and not answering
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    folder = family_dir("marian_multi")
    model, tok = AutoModelForSeq2SeqLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    cfg = parse_config(
        ["--model_name_or_path", "Helsinki-NLP/opus-mt-en-ROMANCE", "--target_lang", "es", "--num_beams", "2"]
    )
    export_model(cfg, Accelerator(cpu=True), model, tok, tmp_path / "final", None)
    saved = json.loads((tmp_path / "final" / "generation_config.json").read_text())
    pretrained = json.loads((folder / "generation_config.json").read_text())
    assert saved["bad_words_ids"] == pretrained["bad_words_ids"] and saved["max_length"] == pretrained["max_length"]
    assert saved["num_beams"] == 2
