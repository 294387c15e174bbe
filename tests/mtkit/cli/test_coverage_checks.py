"""The tokenizer-coverage check in the three entry points: a tiny T5 whose tokenizer learned only Latin-script text is
refused for Russian targets (exit status 2, one line naming the language and the share, nothing written) by
``train.py``, ``translate.py`` and ``bias_report.py``, goes on with one warning under ``--force_coverage``/``--force``,
and a model whose tokenizer learned Russian passes silently."""

from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

import pytest
from coverage_helpers import RUSSIAN, latin_lines, tiny_t5, unigram
from testing_utils import train_in_process

from bias_eval.core.textio import read_lines
from mtkit.cli.bias_report import main as bias_report_main
from mtkit.cli.translate import main as translate_main
from mtkit.errors import cli_entry


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """``latin``: a tokenizer trained on Multi30k EN/DE only; ``covering``: on those lines and the Russian ones."""
    root = tmp_path_factory.mktemp("coverage-models")
    latin = latin_lines()
    return {
        "latin": tiny_t5(unigram(latin), root / "latin"),
        "covering": tiny_t5(unigram(latin + RUSSIAN), root / "covering"),
    }


def russian_share(model: Path) -> str:
    """The share of the Russian sentences' characters that ``model``'s tokenizer cannot write, counted without the
    code under test: Cyrillic letters, and the rest it maps to ``<unk>`` on their own."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    chars = [c for s in RUSSIAN for c in s if not c.isspace()]
    lost = [
        c
        for c in chars
        if "CYRILLIC" in unicodedata.name(c) or tok.unk_token_id in tok(c, add_special_tokens=False).input_ids
    ]
    return f"{len(lost) / len(chars):.1%}"


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error")]


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning") and "cannot write" in line]


def run(main, argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_translate_checks_the_target_language(models, tmp_path, capsys):
    translate = cli_entry(translate_main)
    argv = ["--model", str(models["latin"]), "--text", "A man sings.", "--max_new_tokens", "4", "--num_beams", "1"]
    code, out, err = run(translate, [*argv, "--target_lang", "ru"], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    (line,) = errors(err)
    assert f"--model {models['latin']} cannot write 100.0% of the letters of ru" in line and "--force" in line

    code, out, err = run(translate, [*argv, "--target_lang", "ru", "--force"], capsys)
    assert code == 0 and len(out.splitlines()) == 1 and len(warnings(err)) == 1 and "of ru" in warnings(err)[0]

    code, out, err = run(translate, [*argv, "--target_lang", "de"], capsys)  # Multi30k's German: covered
    assert code == 0 and warnings(err) == []
    code, out, err = run(translate, argv, capsys)  # no language known: nothing to check
    assert code == 0 and warnings(err) == []
    argv[1] = str(models["covering"])
    code, out, err = run(translate, [*argv, "--target_lang", "ru"], capsys)
    assert code == 0 and warnings(err) == []

    # the language of the model's saved prompt, when it has only one
    (models["latin"] / "prompt.json").write_text('{"template": "{source}", "languages": ["ru"]}', encoding="utf-8")
    try:
        code, _, err = run(translate, ["--model", str(models["latin"]), "--text", "A man sings."], capsys)
    finally:
        (models["latin"] / "prompt.json").unlink()
    assert code == 2 and "letters of ru" in errors(err)[0]


def write_table(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A gendered table (``ID,input_to_translate,label,gender,language_pair``): alternately feminine and masculine."""
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["ID", "input_to_translate", "label", "gender", "language_pair"])
        for i, (source, target, pair) in enumerate(rows):
            writer.writerow([i, source, target, "fm"[i % 2], pair])
    return path


def test_bias_report_checks_each_language_on_its_references(models, tmp_path, capsys):
    english, german = latin_lines(30)[:30], latin_lines(30)[30:]
    rows = [(e, d, "en_de") for e, d in zip(english, german)] + [(e, r, "en_ru") for e, r in zip(english, RUSSIAN)]
    table = write_table(tmp_path / "both.csv", rows)
    out = tmp_path / "report"
    argv = ["--data", str(table), "--out", str(out), "--num_beams", "1", "--max_new_tokens", "4"]
    argv += ["--bootstrap_samples", "0", "--device", "cpu", "--no_figures"]
    code, _, err = run(bias_report_main, [*argv, "--model", str(models["latin"])], capsys)
    assert code == 2 and "Traceback" not in err and not out.exists()  # refused before anything is translated
    (line,) = errors(err)
    assert f"cannot write {russian_share(models['latin'])} of the ru reference characters" in line
    assert "--force" in line and " de " not in line

    code, _, err = run(bias_report_main, [*argv, "--model", str(models["latin"]), "--force"], capsys)
    assert code == 0 and (out / "report.html").is_file()
    assert len(warnings(err)) == 1 and "of the ru reference characters" in warnings(err)[0]
    assert len(read_lines(out / "hyps" / "ru.feminine.txt")) == 15

    covered = ["--data", str(write_table(tmp_path / "ru.csv", rows[30:])), *argv[2:]]
    code, _, err = run(bias_report_main, [*covered, "--model", str(models["covering"])], capsys)
    assert code == 0 and warnings(err) == []


def test_training_checks_each_target_language_of_the_data(models, tmp_path):
    english, german = latin_lines(40)[:40], latin_lines(40)[40:]
    train = [(e, d, "en_de") for e, d in zip(english[:30], german)]
    train += [(e, r, "en_ru") for e, r in zip(english, RUSSIAN)]
    valid = [(e, d, "en_de") for e, d in zip(english[30:], german[30:])]
    files = []
    for name, rows in (("train", train), ("valid", valid)):
        path = tmp_path / f"{name}.csv"
        with path.open("w", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows([("source", "target", "language_pair"), *rows])
        files.append(str(path))
    out = tmp_path / "run"
    args = [
        "--train_file", files[0], "--validation_file", files[1], "--target_langs", "de,ru",
        "--model_name_or_path", str(models["latin"]), "--output_dir", str(out), "--max_steps", "1",
        "--max_tokens", "512", "--eval_steps", "1", "--eval_max_samples", "2", "--max_new_tokens", "4",
        "--num_beams", "1", "--test_split", "none", "--mixed_precision", "no", "--report_to", "none", "--disable_tqdm",
    ]  # fmt: skip
    res = train_in_process(*args)
    assert res.returncode == 2 and "Traceback" not in res.stderr and not out.exists()
    (line,) = errors(res.stderr)
    assert f"cannot write {russian_share(models['latin'])} of the ru training target characters" in line
    assert "--force_coverage" in line and f"--model_name_or_path {models['latin']}" in line

    res = train_in_process(*args, "--force_coverage")
    assert res.returncode == 0, res.stderr[-2000:]
    assert len(warnings(res.stderr)) == 1 and "(--force_coverage)" in warnings(res.stderr)[0]
    assert (out / "final" / "config.json").is_file()


def test_a_model_trained_from_scratch_is_told_its_own_tokenizer_never_saw_the_characters(
    demo_run, small_geneval, tmp_path, capsys
):
    """The demo model (its tokenizer learned from the demo corpus) on real MT-GenEval Spanish: the refusal lists
    characters the corpus never holds (read here from its training files), says what they are and advises training
    again on data that has them, not a multilingual model."""
    argv = ["--mtgeneval_dir", str(small_geneval), "--split", "test", "--target_langs", "es"]
    argv += ["--model", str(demo_run / "final"), "--out", str(tmp_path / "r"), "--num_beams", "1"]
    code, _, err = run(bias_report_main, argv, capsys)
    assert code == 2 and not (tmp_path / "r").exists()
    (line,) = errors(err)
    assert "because the model's own tokenizer never saw them: it was trained from scratch" in line
    assert "train it again on data that contains them (e.g. sentences with " in line
    assert "google/mt5-base" not in line and "--force" in line
    corpus = demo_run.with_name(f"{demo_run.name}_corpus")  # make demo's corpus, beside its run
    seen = set((corpus / "train.en").read_text(encoding="utf-8") + (corpus / "train.es").read_text(encoding="utf-8"))
    listed = re.findall(r"'(.)'", line.split("unknown or lost in decoding: ")[1].split(";")[0])
    assert listed and not set(listed) & seen  # never in the data the tokenizer learned from
    if any(c.isdigit() for c in listed):
        assert "digits" in line


def test_a_pretrained_model_is_pointed_to_multilingual_ones(models, capsys):
    translate = cli_entry(translate_main)
    argv = ["--model", str(models["latin"]), "--text", "A man sings.", "--target_lang", "ru"]
    code, _, err = run(translate, argv, capsys)
    (line,) = errors(err)
    assert code == 2 and "; letters), for which the tokenizer has no token" in line
    assert "google/mt5-base" in line and "never saw" not in line
