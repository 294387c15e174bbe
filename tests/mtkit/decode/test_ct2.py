"""CTranslate2 export and translation, checked against transformers on the same weights: per-token log-probabilities
of given translations (the converted weights), and the translations themselves through both engines."""

import json
from dataclasses import replace

import pytest
import torch
from testing_utils import MULTI30K, read_gz_lines, run_script, script_in_process
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from mtkit.cli.translate import main as translate_main
from mtkit.data.prompts import Prompt
from mtkit.decode.ct2 import CT2Translator
from mtkit.decode.engines import load_translator
from mtkit.decode.generate import Translator
from mtkit.decode.settings import DecodingSettings
from mtkit.errors import UserError, cli_entry
from mtkit.export.ct2 import export_ct2

PAIRS = [
    ("A man is riding a bike.", "Ein Mann fährt Fahrrad."),
    ("Two dogs play in the snow.", "Zwei Hunde spielen im Schnee."),
    ("The doctor said that she was tired.", "Die Ärztin sagte, dass sie müde war."),
]


def transformers_log_probs(model_dir, source: str, target: str) -> list[float]:
    """log p(target token | source, previous tokens) from the transformers model, computed directly."""
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    labels = tok(text_target=[target], return_tensors="pt").input_ids
    with torch.no_grad():
        logits = model(**tok([source], return_tensors="pt"), labels=labels).logits
    return logits.log_softmax(-1)[0].gather(-1, labels[0][:, None])[:, 0].tolist()


def ct2_log_probs(ct2_dir, tok, source: str, target: str) -> list[float]:
    import ctranslate2

    tokens = tok.convert_ids_to_tokens
    result = ctranslate2.Translator(str(ct2_dir)).score_batch(
        [tokens(tok(source).input_ids)], [tokens(tok(text_target=target).input_ids)]
    )[0]
    return result.log_probs


@pytest.fixture(scope="module")
def bart_ct2(tiny_run):
    """The tiny_run model converted at the end of training (``--export_ct2 float32``)."""
    return tiny_run / "final_ct2"


@pytest.fixture(scope="module")
def t5_ct2(tiny_t5, tmp_path_factory):
    return export_ct2(tiny_t5, tmp_path_factory.mktemp("ct2") / "t5", "float32")


@pytest.mark.parametrize("which", ["bart", "t5"])
def test_converted_weights_give_the_same_token_probabilities(which, tiny_run, bart_ct2, tiny_t5, t5_ct2):
    model_dir, ct2_dir = (tiny_run / "final", bart_ct2) if which == "bart" else (tiny_t5, t5_ct2)
    tok = AutoTokenizer.from_pretrained(ct2_dir)
    for source, target in PAIRS:
        expected = transformers_log_probs(model_dir, source, target)
        got = ct2_log_probs(ct2_dir, tok, source, target)
        assert got[: len(expected)] == pytest.approx(expected, abs=1e-4)


def test_training_converts_at_the_end_on_request(tiny_run, bart_ct2):
    results = json.loads((tiny_run / "results.json").read_text())
    assert results["ct2_model"] == str(bart_ct2)
    info = json.loads((bart_ct2 / "mtkit_ct2.json").read_text())
    assert info["quantization"] == "float32" and info["source"] == str((tiny_run / "final").resolve())
    for carried in ("generation_config.json", "tokenizer.json"):
        assert (bart_ct2 / carried).is_file()


def test_same_greedy_translations_as_transformers(tiny_run, bart_ct2, tiny_t5, t5_ct2):
    """Same length-sorted batches, prompts and output bounds on both engines (BART forces </s> at the bound in
    transformers; CTranslate2 is given one token less). Greedy only: the two beam searches stop by different rules
    (transformers' early-stopping heuristic), so beam outputs may differ; the benchmark compares their BLEU."""
    sources = read_gz_lines(MULTI30K / "test_2016_flickr.en.gz", 24)
    settings = DecodingSettings(num_beams=1, max_new_tokens=14, batch_size=8)
    expected = Translator(tiny_run / "final", device="cpu").translate(sources, settings)
    assert CT2Translator(bart_ct2, device="cpu").translate(sources, settings) == expected
    prompted = replace(settings, prompt=Prompt.parse("translate English to German: {source}")).render(sources, "de")
    expected = Translator(tiny_t5, device="cpu").translate(prompted, settings)
    assert CT2Translator(t5_ct2, device="cpu").translate(prompted, settings) == expected


def test_int8_model_translates(tiny_run, tmp_path):
    out = export_ct2(tiny_run / "final", tmp_path / "int8", "int8")
    assert json.loads((out / "mtkit_ct2.json").read_text())["quantization"] == "int8"
    hyps = CT2Translator(out).translate([p[0] for p in PAIRS], DecodingSettings(num_beams=2, max_new_tokens=10))
    assert len(hyps) == len(PAIRS) and all(hyps)
    assert (out / "model.bin").stat().st_size < (tiny_run / "final_ct2" / "model.bin").stat().st_size / 2


def test_translate_script_with_ct2(tiny_run, bart_ct2):
    texts = [p[0] for p in PAIRS]
    args = ["--engine", "ct2", "--model", str(bart_ct2), *[a for t in texts for a in ("--text", t)]]
    res = script_in_process(cli_entry(translate_main), *args)  # as scripts/translate.py runs it, in this process
    assert res.returncode == 0, res.stderr[-2000:]
    gen = json.loads((bart_ct2 / "generation_config.json").read_text())  # what the script takes by default
    names = ("num_beams", "length_penalty", "max_new_tokens", "max_len_a", "max_len_b")
    settings = DecodingSettings(**{name: gen[name] for name in names})
    assert res.stdout.splitlines() == CT2Translator(bart_ct2).translate(texts, settings)


def test_bad_input(tiny_run, bart_ct2, tmp_path):
    final = str(tiny_run / "final")
    res = run_script("export_ct2.py", final, str(tmp_path / "x"), "--quantization", "int4")
    assert res.returncode == 2 and not (tmp_path / "x").exists()
    assert res.stderr.strip().splitlines() == [
        "error: argument --quantization: invalid choice: 'int4' (choose from 'auto', 'int8', 'int8_float16', "
        "'int8_bfloat16', 'int16', 'float16', 'bfloat16', 'float32')"
    ]
    with pytest.raises(UserError, match="exists"):
        export_ct2(final, bart_ct2)
    with pytest.raises(UserError, match=r"no config.json \(not a folder written by save_pretrained\)"):
        export_ct2(tmp_path, tmp_path / "y")
    with pytest.raises(UserError, match="not a CTranslate2 model"):
        load_translator(final, "ct2")
    with pytest.raises(UserError, match="--engine ct2"):
        load_translator(bart_ct2, "hf")
    with pytest.raises(UserError, match="--dtype"):
        load_translator(bart_ct2, "ct2", dtype="bf16")
    assert not list(tmp_path.glob(".*tmp"))
