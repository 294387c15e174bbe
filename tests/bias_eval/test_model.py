"""``--model``: a tiny random BART built offline translates (garbage), the report is still produced and the
hypotheses are cached in OUTDIR/hyps and reused."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from geneval_helpers import geneval_file, make_subset, read_plain

from mtkit.decode.settings import DecodingSettings


@pytest.fixture(scope="module")
def tiny_model(shared_geneval: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import AutoModelForSeq2SeqLM, BartConfig, PreTrainedTokenizerFast

    lines = []
    for gender in ("feminine", "masculine"):
        for side in ("en", "es"):
            lines += read_plain(geneval_file(shared_geneval, "es", gender, side))[:100]
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(lines, trainers.WordLevelTrainer(vocab_size=2000, special_tokens=specials))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = BartConfig(
        vocab_size=tok.get_vocab_size(),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=24,  # shorter than many MT-GenEval sentences
        bos_token_id=0,
        pad_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    model = AutoModelForSeq2SeqLM.from_config(config)
    folder = tmp_path_factory.mktemp("tiny-bart")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def run_cli(run_cli):
    """The report script without figures: these tests are about the model's hypotheses and their settings, not the
    page (tests/bias_eval/test_cli.py checks a report made without figures against one made with them)."""
    return lambda *argv: run_cli(*argv, "--no_figures")


def test_model_report_and_cache(run_cli, small_geneval: Path, tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = [
        "--mtgeneval_dir",
        str(small_geneval),
        "--split",
        "test",
        "--target_langs",
        "es",
        "--model",
        str(tiny_model),
        "--out",
        str(out),
        "--num_beams",
        "2",
        "--max_new_tokens",
        "6",
        "--batch_size",
        "16",
        "--bootstrap_samples",
        "50",
        "--device",
        "cpu",
        "--force",  # the 2,000 words of the vocabulary leave some of the references' words unknown
    ]
    status, stdout, err = run_cli(*args)
    assert status == 0, err
    assert "translating 25 es feminine sentences" in err and "Gap, masculine" in stdout  # main table
    for kind in ("feminine", "masculine"):
        hyp = out / "hyps" / f"es.{kind}.txt"
        assert len(read_plain(hyp)) == 25
        assert (out / "hyps" / f"es.{kind}.key").is_file()
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["config"]["hypotheses"]["model"] == str(tiny_model)
    assert metrics["config"]["hypotheses"]["generation"]["num_beams"] == 2
    assert 0.0 <= metrics["languages"]["es"]["bleu"] < 5.0  # a random model
    assert (out / "report.html").is_file() and (out / "es.details.jsonl").is_file()

    cached = (out / "hyps" / "es.feminine.txt").stat().st_mtime_ns
    status, _, err = run_cli(*args)
    assert status == 0 and "reusing cached hypotheses" in err and "translating" not in err
    assert (out / "hyps" / "es.feminine.txt").stat().st_mtime_ns == cached
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8"))["languages"] == metrics["languages"]

    status, _, err = run_cli(*[a if a != "6" else "4" for a in args])  # other settings: translate again
    assert status == 0 and "translating 25 es feminine sentences" in err


def test_long_sources_fit_the_model(run_cli, small_geneval: Path, tiny_model: Path, tmp_path: Path) -> None:
    """Sources longer than the model's 22 positions are truncated and generation is capped: no crash."""
    out = tmp_path / "report"
    status, _, err = run_cli(
        *("--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "de"),
        *("--model", str(tiny_model), "--out", str(out), "--num_beams", "1"),
        *("--bootstrap_samples", "20", "--device", "cpu", "--force"),  # a Spanish vocabulary, German references
    )
    assert status == 0, err
    assert "warning: max_new_tokens 256 (default) exceeds the model's 22 positions; using 22" in err
    config = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["config"]
    generation = config["hypotheses"]["generation"]
    assert generation["max_new_tokens"] == 22 and generation["max_source_tokens"] == 22
    sources = read_plain(geneval_file(small_geneval, "de", "feminine", "en", "test"))
    assert max(len(s.split()) for s in sources) > 22


def test_bad_model_or_prompt(run_cli, small_geneval: Path, tiny_model: Path, tmp_path: Path) -> None:
    empty = tmp_path / "model"  # a folder that is no model
    empty.mkdir()
    base = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--out", str(tmp_path / "o")]
    status, _, err = run_cli(*base, "--model", str(empty))
    assert status == 2 and "--model" in err and "no config.json" in err
    status, _, err = run_cli(*base, "--model", str(tiny_model), "--prompt", "translate to {language}")
    assert status == 2 and "--prompt:" in err
    assert not (tmp_path / "o").exists()


@pytest.fixture(scope="module")
def tuned_model(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model as a fine-tuning run leaves it: generation settings and the prompt saved alongside.

    Larger random weights and a raised end-of-sentence logit make its (garbage) output depend on the source,
    the prompt, the beam size and the length penalty, so a wrong setting shows in the hypotheses.
    """
    import torch
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, GenerationConfig

    config = AutoConfig.from_pretrained(tiny_model)
    config.init_std = 0.5
    torch.manual_seed(0)
    model = AutoModelForSeq2SeqLM.from_config(config)
    with torch.no_grad():
        model.final_logits_bias[0, config.eos_token_id] = 8.0
    folder = tmp_path_factory.mktemp("tuned") / "final"
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_model).save_pretrained(folder)
    generation = GenerationConfig.from_pretrained(folder)
    generation.update(num_beams=3, length_penalty=0.6, max_new_tokens=7)
    generation.save_pretrained(folder)
    prompt = {
        "template": "translate {src_lang_name} to {lang_name}: {source}",
        "source_lang": "en",
        "languages": ["es"],
    }
    (folder / "prompt.json").write_text(json.dumps(prompt), encoding="utf-8")
    return folder


def _es_args(geneval: Path, model: Path, out: Path, *extra: str) -> list[str]:
    return [
        *("--mtgeneval_dir", str(geneval), "--split", "test", "--target_langs", "es", "--model", str(model)),
        *("--out", str(out), "--bootstrap_samples", "20", "--device", "cpu", "--force", *extra),  # 2,000 words
    ]


def _run_es(run_cli, geneval: Path, model: Path, out: Path, *extra: str) -> tuple[dict, str]:
    status, _, err = run_cli(*_es_args(geneval, model, out, *extra))
    assert status == 0, err
    return json.loads((out / "metrics.json").read_text(encoding="utf-8"))["config"], err


@pytest.fixture(scope="module")
def saved_report(shared_geneval: Path, tuned_model: Path, tmp_path_factory: pytest.TempPathFactory):
    """(data, report folder, its config): the tuned model's es report with no decoding flag (its saved settings), on
    a 25-line de and es test split; shared by the two tests that read it."""
    from mtkit.cli.bias_report import main

    tmp = tmp_path_factory.mktemp("saved")
    root, out = make_subset(shared_geneval, tmp / "geneval", ("de", "es"), 25), tmp / "report"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        assert main(_es_args(root, tuned_model, out)) == 0, err.getvalue()
    return root, out, json.loads((out / "metrics.json").read_text(encoding="utf-8"))["config"]


def test_model_decodes_with_its_saved_settings(saved_report, tuned_model: Path) -> None:
    from mtkit.decode.generate import Translator

    small_geneval, out, config = saved_report
    hypotheses = config["hypotheses"]
    generation = hypotheses["generation"]
    assert (generation["num_beams"], generation["length_penalty"], generation["max_new_tokens"]) == (3, 0.6, 7)
    assert hypotheses["prompts"] == {"es": "translate English to Spanish: {source}"}
    saved = str(tuned_model / "generation_config.json")
    assert hypotheses["settings_from"] == {
        "num_beams": saved,
        "length_penalty": saved,
        "max_new_tokens": saved,
        "max_len_a": "default",
        "max_len_b": "default",
        "prompt": str(tuned_model / "prompt.json"),
    }
    command = config["command"]
    assert "--num_beams 3 --length_penalty 0.6 --max_new_tokens 7" in command
    assert "--prompt 'translate {src_lang_name} to {lang_name}: {source}'" in command
    md = (out / "report.md").read_text(encoding="utf-8")
    assert command in md and "beam 3, length penalty 0.6, at most 7 new tokens" in md
    # the hypotheses are what the model gives with exactly these settings and this prompt
    sources = read_plain(geneval_file(small_geneval, "es", "feminine", "en", "test"))
    prompted = [f"translate English to Spanish: {s}" for s in sources]
    translator = Translator(str(tuned_model), device="cpu")
    expected = translator.translate(prompted, DecodingSettings(num_beams=3, length_penalty=0.6, max_new_tokens=7))
    written = (out / "hyps" / "es.feminine.txt").read_text(encoding="utf-8")
    assert written == "".join(" ".join(h.split()) + "\n" for h in expected)
    assert max(len(h.split()) for h in expected) <= 7
    for other in (  # each saved setting matters for this model: the check above would see a wrong one
        translator.translate(prompted, DecodingSettings(num_beams=1, length_penalty=0.6, max_new_tokens=7)),
        translator.translate(prompted, DecodingSettings(num_beams=3, length_penalty=1.0, max_new_tokens=7)),
        translator.translate(sources, DecodingSettings(num_beams=3, length_penalty=0.6, max_new_tokens=7)),
    ):
        assert other != expected


def test_flags_override_the_saved_settings(run_cli, small_geneval: Path, tuned_model: Path, tmp_path: Path) -> None:
    from mtkit.decode.generate import Translator

    flags = ("--num_beams", "2", "--length_penalty", "1.3", "--max_new_tokens", "5", "--max_len_a", "0")
    flags += ("--max_len_b", "3", "--prompt", "{language}: {source}")
    config, _ = _run_es(run_cli, small_geneval, tuned_model, tmp_path / "a", *flags)
    hypotheses = config["hypotheses"]
    generation = hypotheses["generation"]
    assert (generation["num_beams"], generation["length_penalty"], generation["max_new_tokens"]) == (2, 1.3, 5)
    assert (generation["max_len_a"], generation["max_len_b"]) == (0, 3)
    assert hypotheses["prompts"] == {"es": "Spanish: {source}"}  # the older {language} placeholder
    assert hypotheses["settings_from"] == {
        "num_beams": "--num_beams",
        "length_penalty": "--length_penalty",
        "max_new_tokens": "--max_new_tokens",
        "max_len_a": "--max_len_a",
        "max_len_b": "--max_len_b",
        "prompt": "--prompt",
    }
    assert "--num_beams 2 --length_penalty 1.3 --max_new_tokens 5" in config["command"]
    assert "--max_len_a 0.0 --max_len_b 3" in config["command"]
    # decoded with the bound the flags give (3 tokens here, the 5 of --max_new_tokens otherwise)
    prompted = [f"Spanish: {s}" for s in read_plain(geneval_file(small_geneval, "es", "feminine", "en", "test"))]
    translator = Translator(str(tuned_model), device="cpu")
    options = DecodingSettings(num_beams=2, length_penalty=1.3, max_new_tokens=5)
    expected = translator.translate(prompted, replace(options, max_len_a=0, max_len_b=3))
    written = (tmp_path / "a" / "hyps" / "es.feminine.txt").read_text(encoding="utf-8")
    assert written == "".join(" ".join(h.split()) + "\n" for h in expected)
    assert expected != translator.translate(prompted, options)

    config, _ = _run_es(run_cli, small_geneval, tuned_model, tmp_path / "b", "--prompt", "instruction")
    assert config["hypotheses"]["prompts"] == {
        "es": 'Translate the following sentence from English to Spanish: "{source}"'
    }
    assert config["hypotheses"]["generation"]["num_beams"] == 3  # the rest still from the model

    config, _ = _run_es(run_cli, small_geneval, tuned_model, tmp_path / "c", "--prompt", "none")
    assert config["hypotheses"]["prompts"] == {"es": None} and "--prompt none" in config["command"]


def test_without_saved_settings_the_defaults_are_used(
    run_cli, small_geneval: Path, tiny_model: Path, tmp_path: Path
) -> None:
    config, err = _run_es(run_cli, small_geneval, tiny_model, tmp_path / "o", "--max_new_tokens", "6")
    generation = config["hypotheses"]["generation"]
    assert (generation["num_beams"], generation["length_penalty"]) == (4, 1.0)
    assert config["hypotheses"]["settings_from"]["num_beams"] == "default"
    assert config["hypotheses"]["settings_from"]["prompt"] == "default" and config["hypotheses"]["prompts"] == {
        "es": None
    }


def test_prompt_saved_for_other_languages_warns(
    run_cli, small_geneval: Path, tuned_model: Path, tmp_path: Path
) -> None:
    status, _, err = run_cli(
        *("--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "de"),
        *("--model", str(tuned_model)),
        *("--out", str(tmp_path / "o"), "--bootstrap_samples", "0", "--device", "cpu", "--force"),  # de: unknown
    )
    assert status == 0, err
    assert f"warning: --target_langs: {tuned_model} was fine-tuned for es only, not de: expect poor" in err


def test_generation_flags_need_a_model(run_cli, small_geneval: Path, tmp_path: Path) -> None:
    args = [
        "--mtgeneval_dir",
        str(small_geneval),
        "--split",
        "test",
        "--hyp_dir",
        str(tmp_path / "hyps"),
        "--out",
        str(tmp_path / "o"),
    ]
    (tmp_path / "hyps").mkdir()
    status, _, err = run_cli(*args, "--length_penalty", "0.6")
    assert status == 2 and err.strip() == "error: --length_penalty: only used with --model"
    assert not (tmp_path / "o").exists()


def test_recorded_command_reproduces_the_report(run_cli, saved_report, tmp_path: Path) -> None:
    """The command in metrics.json, run again into another folder, translates afresh and gives the same figures."""
    _, first_out, config = saved_report
    argv = shlex.split(config["command"])
    assert argv[:2] == ["python", "scripts/bias_report.py"]
    argv = argv[2:]
    argv[argv.index("--out") + 1] = str(tmp_path / "again")
    status, _, err = run_cli(*argv, "--device", "cpu")
    assert status == 0 and "translating 25 es feminine sentences" in err, err
    first, again = (
        json.loads((d / "metrics.json").read_text(encoding="utf-8")) for d in (first_out, tmp_path / "again")
    )
    assert again["languages"] == first["languages"]
    assert again["config"]["hypotheses"]["generation"] == first["config"]["hypotheses"]["generation"]
    for kind in ("feminine", "masculine"):
        assert read_plain(tmp_path / "again" / "hyps" / f"es.{kind}.txt") == read_plain(
            first_out / "hyps" / f"es.{kind}.txt"
        )


def test_ct2_engine_gives_the_same_hypotheses(run_cli, small_geneval: Path, tuned_model: Path, tmp_path: Path) -> None:
    """The same report through CTranslate2 (the model converted with scripts/export_ct2.py, its saved prompt and
    settings carried over): greedy hypotheses equal transformers' for this source-sensitive model."""
    from mtkit.export.ct2 import export_ct2

    ct2 = export_ct2(tuned_model, tmp_path / "ct2", "float32")
    config, _ = _run_es(run_cli, small_geneval, ct2, tmp_path / "ct2-report", "--engine", "ct2", "--num_beams", "1")
    assert "--engine ct2" in config["command"]
    assert config["hypotheses"]["prompts"] == {"es": "translate English to Spanish: {source}"}
    assert config["hypotheses"]["generation"]["max_new_tokens"] == 7  # carried over from the model
    _run_es(run_cli, small_geneval, tuned_model, tmp_path / "hf-report", "--num_beams", "1")
    for gender in ("feminine", "masculine"):
        name = f"hyps/es.{gender}.txt"
        hf = (tmp_path / "hf-report" / name).read_text(encoding="utf-8")
        assert (tmp_path / "ct2-report" / name).read_text(encoding="utf-8") == hf
        assert len(set(hf.splitlines())) > 1


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"num_beams": 2, "prompt": "instruction", "max_len_b": 3},
        {"decoding": "mbr", "mbr_samples": 4, "top_p": 0.9},
    ],
)
def test_the_reports_resolution_is_the_toolkits(tuned_model: Path, tmp_path: Path, flags: dict) -> None:
    """The report resolves a saved model folder's settings as ``mtkit.decode.settings.resolve`` does (its
    generation_config.json and prompt.json under the same flags), and records the resolved object."""
    from mtkit.decode.settings import resolve
    from mtkit.evaluation.generation import resolve_report

    decoding, origin = resolve_report(str(tuned_model), flags)
    expected, found = resolve(argparse.Namespace(**flags), tuned_model)
    assert decoding.settings == expected and decoding.max_source_tokens == 22  # the tiny model's positions
    assert (expected.num_beams, expected.length_penalty) == (flags.get("num_beams", 3), 0.6)  # from the file
    assert origin == {key: found[key] for key in origin} and origin["length_penalty"].endswith("generation_config.json")
    record = decoding.record()
    assert record["num_beams"] == expected.num_beams and record["prompt"] == expected.prompt.template
    assert record["mbr"] == (None if expected.mbr is None else {**record["mbr"], "samples": 4, "top_p": 0.9})
