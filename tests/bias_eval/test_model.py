"""``--model``: a tiny random BART built offline translates (garbage), the report is still produced and the
hypotheses are cached in OUTDIR/hyps and reused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from geneval_helpers import geneval_file, read_plain


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


def test_model_report_and_cache(run_cli, small_geneval: Path, tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = [
        "--mtgeneval-dir",
        str(small_geneval),
        "--split",
        "test",
        "--langs",
        "es",
        "--model",
        str(tiny_model),
        "--out",
        str(out),
        "--beam-size",
        "2",
        "--max-new-tokens",
        "6",
        "--batch-size",
        "16",
        "--bootstrap-samples",
        "50",
        "--device",
        "cpu",
    ]
    status, stdout, err = run_cli(*args)
    assert status == 0, err
    assert "translating 25 es feminine sentences" in err and "fair BLEU" in stdout
    for kind in ("feminine", "masculine"):
        hyp = out / "hyps" / f"es.{kind}.txt"
        assert len(read_plain(hyp)) == 25
        assert (out / "hyps" / f"es.{kind}.key").is_file()
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["config"]["hypotheses"]["model"] == str(tiny_model)
    assert metrics["config"]["hypotheses"]["generation"]["beam_size"] == 2
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
        *("--mtgeneval-dir", str(small_geneval), "--split", "test", "--langs", "de"),
        *("--model", str(tiny_model), "--out", str(out), "--beam-size", "1"),
        *("--bootstrap-samples", "20", "--device", "cpu"),
    )
    assert status == 0, err
    assert "warning: --max-new-tokens 256 exceeds the model's 22 positions; using 22" in err
    config = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["config"]
    generation = config["hypotheses"]["generation"]
    assert generation["max_new_tokens"] == 22 and generation["max_source_tokens"] == 22
    sources = read_plain(geneval_file(small_geneval, "de", "feminine", "en", "test"))
    assert max(len(s.split()) for s in sources) > 22


def test_bad_model_or_prompt(run_cli, small_geneval: Path, tmp_path: Path) -> None:
    base = ["--mtgeneval-dir", str(small_geneval), "--split", "test", "--out", str(tmp_path / "o")]
    status, _, err = run_cli(*base, "--model", str(tmp_path))
    assert status == 2 and "--model:" in err and "no config.json" in err
    status, _, err = run_cli(*base, "--model", str(tmp_path), "--prompt", "translate to {language}")
    assert status == 2 and "--prompt:" in err
    assert not (tmp_path / "o").exists()
