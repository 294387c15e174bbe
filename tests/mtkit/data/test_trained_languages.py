"""A target language a fine-tuned model never trained on gets one warning line naming the ones it did: in
translate.py and in the bias report (with --max_samples, whole pairs balanced across languages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from accelerate import Accelerator
from geneval_helpers import geneval_file, read_plain
from testing_utils import MTGENEVAL
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from mtkit.cli import bias_report, translate
from mtkit.config import parse_config
from mtkit.data.trained_languages import trained_languages, untrained
from mtkit.train.final import export_model


@pytest.fixture(scope="module")
def finetuned(family_dir, tmp_path_factory) -> Path:
    """final/ of a run that fine-tuned a (tiny) NLLB model for de and es."""
    folder = family_dir("nllb")
    model, tok = AutoModelForSeq2SeqLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    cfg = parse_config(["--model_name_or_path", "facebook/nllb-200-distilled-600M", "--target_langs", "de,es"])
    final = tmp_path_factory.mktemp("run") / "final"
    export_model(cfg, Accelerator(cpu=True), model, tok, final, None)
    return final


def test_final_records_its_languages(finetuned: Path, family_dir) -> None:
    saved = json.loads((finetuned / "generation_config.json").read_text(encoding="utf-8"))
    assert saved["target_langs"] == ["de", "es"] and trained_languages(finetuned) == ("de", "es")
    assert trained_languages(family_dir("nllb")) == () and untrained(family_dir("nllb"), ["fr"]) is None  # base
    assert trained_languages("facebook/nllb-200-distilled-600M") == ()  # a hub id: nothing said


def test_translate_warns_for_a_language_outside_the_fine_tune(finetuned: Path, capsys) -> None:
    base = ["--model", str(finetuned), "--text", "The doctor is here.", "--num_beams", "1", "--max_new_tokens", "3"]
    translate.main([*base, "--target_lang", "fr", "--force"])
    said = [line for line in capsys.readouterr().err.splitlines() if "fine-tuned" in line]  # --force's apart
    assert said == [f"warning: --target_lang: {finetuned} was fine-tuned for de, es only, not fr: expect poor "
                    "translations, or ones in another language"]  # fmt: skip
    translate.main([*base, "--target_lang", "es", "--force"])
    assert "fine-tuned for" not in capsys.readouterr().err


def test_bias_report_warns_and_takes_a_balanced_subset(finetuned: Path, tmp_path: Path, capsys) -> None:
    if not (MTGENEVAL / "sentences" / "dev").is_dir():
        pytest.skip(f"shared MT-GenEval data not found at {MTGENEVAL}")
    out = tmp_path / "report"
    status = bias_report.main([
        "--mtgeneval_dir", str(MTGENEVAL), "--split", "dev", "--target_langs", "de", "fr", "--model", str(finetuned),
        "--max_samples", "10", "--num_beams", "1", "--max_new_tokens", "4", "--bootstrap_samples", "0",
        "--device", "cpu", "--force", "--out", str(out),
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    said = [line for line in err.splitlines() if "fine-tuned for" in line]
    assert said == [f"warning: --target_langs: {finetuned} was fine-tuned for de, es only, not fr: expect poor "
                    "translations, or ones in another language"]  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    counts = {lang: m["n"] for lang, m in metrics["languages"].items()}
    assert counts == {"de": 6, "fr": 4}  # 5 whole pairs, the languages in turn: de, fr, de, fr, de
    assert metrics["config"]["max_samples"] == 10 and "--max_samples 10" in metrics["config"]["command"]
    for lang, n in counts.items():  # the first n/2 sentences of each gender, as the files hold them
        for gender in ("feminine", "masculine"):
            hyps = (out / "hyps" / f"{lang}.{gender}.txt").read_text(encoding="utf-8").splitlines()
            assert len(hyps) == n // 2
        detail = [json.loads(line) for line in (out / f"{lang}.details.jsonl").read_text().splitlines()]
        sources = read_plain(geneval_file(MTGENEVAL, lang, "feminine", "en"))[: n // 2]
        assert [d["source_feminine"] for d in detail] == sources
