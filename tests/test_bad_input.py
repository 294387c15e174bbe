"""Bad input, across the scripts: each case ends with one ``error:`` line naming the file or flag and what is
wrong, a non-zero status, no traceback, and nothing written. The scripts' entry points run in this process (as
``cli_entry`` wraps them) to keep the suite fast; tests/scripts/ runs each script for real."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from testing_utils import FAST_RUN

from mtkit.cli.bias_report import main as bias_report_main
from mtkit.cli.export_model import main as export_main
from mtkit.cli.push_to_hub import main as push_main
from mtkit.cli.translate import main as translate_main
from mtkit.config import parse_config
from mtkit.data.preprocess import preprocess
from mtkit.errors import cli_entry
from mtkit.pipeline import run

SCRIPTS = {
    "train": lambda argv: cli_entry(lambda: run(parse_config(argv)))(),
    "preprocess": lambda argv: cli_entry(lambda: preprocess(parse_config(argv)))(),
    "translate": lambda argv: cli_entry(translate_main)(argv),
    "bias_report": bias_report_main,
    "export": lambda argv: cli_entry(export_main)(argv),
    "push": push_main,
}


def files(root: Path) -> dict[str, bytes]:
    root.mkdir(parents=True, exist_ok=True)
    made = {
        "ok/train.en": b"a small cat\nthe dog\n", "ok/train.de": b"eine Katze\nder Hund\n",
        "ok/val.en": b"a cat\n", "ok/val.de": b"eine Katze\n",
        "uneven/train.en": b"a\nb\n", "uneven/train.de": b"x\n",
        "utf/train.en": b"caf\xe9\n", "utf/train.de": b"x\n",
        "nul/train.en": b"a\x00b\n", "nul/train.de": b"x\n",
        "empty/train.en": b"", "empty/train.de": b"x\n",
        "gap/train.en": b"a\n\nc\n", "gap/train.de": b"x\ny\nz\n",
        "blank/train.en": b" \n\n", "blank/train.de": b"x\ny\n",
        "rows.csv": b"source,target\n", "cols.csv": b"foo,bar\n1,2\n",
        "gender.csv": b"ID,input_to_translate,label,gender,language_pair\n1,a,b,neutral,en-de\n",
        "typo.yaml": b"max_step: 5\n", "type.yaml": b"learning_rate: fast\n", "broken.yaml": b"a: [\n",
        "ds_broken.json": b'{"zero_optimization": ', "ds_list.json": b"[1, 2]",
        "noconfig/weights.bin": b"", "badconfig/config.json": b"{}", "text.txt": b"Hello.\n",
        "lines.jsonl": b'{"source": "a", "target": "b"}\n{"source": \n',
    }  # fmt: skip
    for name, data in made.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "gz").mkdir(exist_ok=True)
    (root / "gz" / "train.en.gz").write_bytes(b"not gzip")
    (root / "gz" / "train.de").write_bytes(b"x\n")
    (root / "taken").mkdir(exist_ok=True)
    (root / "taken" / "x").write_text("")
    return made


def data_args(folder: Path, *extra: str) -> list[str]:
    base = [a for a in FAST_RUN if a not in ("--validation_split", "val", "--test_split", "test_2016_flickr")]
    return ["--data_dir", str(folder), *base, "--validation_split", "none", "--test_split", "none", *extra]


def cases(d: Path, run: Path) -> list[tuple[str, str, list[str], str]]:
    """(id, script, arguments, what the error line must contain); ``run`` is a finished tiny run."""
    final = run / "final"
    ok_args = ["--data_dir", str(d / "ok"), *FAST_RUN]  # good data: these cases are about the flags
    return [
        ("data_dir missing", "train", data_args(d / "nowhere"), "--data_dir"),
        ("data_dir is a file", "train", data_args(d / "text.txt"), "not a folder"),
        ("line counts differ", "train", data_args(d / "uneven"), "2 source lines but 1 target lines"),
        ("invalid UTF-8", "train", data_args(d / "utf"), "invalid UTF-8 at line 1"),
        ("NUL byte", "train", data_args(d / "nul"), "NUL byte at line 1"),
        ("empty file", "train", data_args(d / "empty"), "file is empty"),
        ("not gzip", "train", data_args(d / "gz"), "train.en.gz: cannot read"),
        ("empty line", "train", data_args(d / "gap"), "empty source sentence at line 2"),
        ("nothing usable", "train", data_args(d / "blank", "--skip_empty_pairs"), "no usable sentence pairs"),
        ("unknown language", "train", [*ok_args, "--target_lang", "xx"], "no file train.xx"),
        ("train_file missing", "train", ["--train_file", str(d / "no.csv"), *FAST_RUN], "no.csv: file not found"),
        ("train_file a folder", "train", ["--train_file", str(d / "ok"), *FAST_RUN], "is a directory"),
        ("CSV without rows", "train", ["--train_file", str(d / "rows.csv"), *FAST_RUN], "no rows"),
        ("CSV columns", "train", ["--train_file", str(d / "cols.csv"), *FAST_RUN], "no source/target columns"),
        ("JSONL line", "train", ["--train_file", str(d / "lines.jsonl"), *FAST_RUN], "line 2 is not valid JSON"),
        ("gender value", "train", ["--train_file", str(d / "gender.csv"), *FAST_RUN], "gender 'neutral'"),
        ("recipe missing", "train", ["--config", str(d / "no.yaml")], "no.yaml: file not found"),
        ("recipe typo", "train", ["--config", str(d / "typo.yaml")], "did you mean 'max_steps'?"),
        ("recipe type", "train", ["--config", str(d / "type.yaml")], "'learning_rate' expects float"),
        ("recipe YAML", "train", ["--config", str(d / "broken.yaml")], "malformed YAML at line 2"),
        ("flag typo", "train", [*ok_args, "--max_step", "3"], "unknown key 'max_step'; did you mean"),
        ("flag type", "train", [*ok_args, "--max_steps", "many"], "--max_steps"),
        ("negative lr", "train", [*ok_args, "--learning_rate", "-1"], "--learning_rate: must be > 0"),
        ("zero budget", "train", [*ok_args, "--max_tokens", "0"], "--max_tokens: must be > 0"),
        ("eval_steps 0", "train", [*ok_args, "--eval_steps", "0"], "--eval_steps: must be > 0"),
        ("smoothing", "train", [*ok_args, "--label_smoothing", "1.5"], "--label_smoothing: must be in [0, 1)"),
        ("fraction", "train", ["--train_file", str(d / "gender.csv"), *FAST_RUN, "--validation_fraction", "1"],
         "--validation_fraction"),
        ("preset", "train", [*ok_args, "--model", "transformer-huge"], "--model: unknown preset"),
        ("model folder missing", "train", [*ok_args, "--model_name_or_path", str(d / "nomodel")], "no such folder"),
        ("model without config", "train", [*ok_args, "--model_name_or_path", str(d / "noconfig")], "no config.json"),
        ("model config empty", "train", [*ok_args, "--model_name_or_path", str(d / "badconfig")],
         "--model_name_or_path"),
        ("preprocess data", "preprocess", data_args(d / "uneven"), "2 source lines but 1 target lines"),
        ("translate model", "translate", ["--model", str(d / "nomodel"), "--text", "Hi."], "--model"),
        ("translate input", "translate", ["--model", str(final), "--input", str(d / "no.txt")], "no.txt"),
        ("translate output", "translate", ["--model", str(final), "--output", str(d / "o.txt")], "--output"),
        ("report data", "bias_report", ["--mtgeneval_dir", str(d / "nowhere"), "--hyp_dir", str(d), "--out",
                                        str(d / "report")], "--mtgeneval_dir"),
        ("report model", "bias_report", ["--data", str(d / "gender.csv"), "--model", str(d / "nomodel"), "--out",
                                         str(d / "report")], "gender"),
        ("export checkpoint", "export", [str(d / "nowhere"), str(d / "exported")], "CHECKPOINT"),
        ("export out taken", "export", [str(run), str(d / "taken")], "OUT"),
        ("hub id alone", "train", [*ok_args, "--hub_model_id", "me/x"], "--hub_model_id: only used with --push_to_hub"),
        ("hub id", "train", [*ok_args, "--push_to_hub", "--hub_model_id", "me/a b"], "--hub_model_id: 'me/a b'"),
        ("push folder", "push", [str(d / "nowhere"), "me/x"], "no such folder"),
        ("push no model", "push", [str(d / "noconfig"), "me/x"], "not a model folder (no config.json)"),
        ("push no card", "push", [str(d / "badconfig"), "me/x"], "no README.md model card"),
        ("push repo id", "push", [str(final), "me/x/y"], "REPO_ID: 'me/x/y' is not a hub repository id"),
    ]  # fmt: skip


def test_every_bad_input_is_one_clear_line(tiny_run, tmp_path, monkeypatch):
    made = files(tmp_path / "in")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    found = cases(tmp_path / "in", tiny_run)
    assert len(found) >= 30
    problems = []
    for name, script, argv, expected in found:
        out = tmp_path / "out" / name.replace(" ", "_")
        if script in ("train", "preprocess"):
            argv = [*argv, "--output_dir", str(out)]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = SCRIPTS[script](argv)
            except SystemExit as exit_:
                code = exit_.code
        errors = [line for line in err.getvalue().splitlines() if line.startswith("error")]
        if not code or "Traceback" in err.getvalue() or len(errors) != 1 or expected not in errors[0]:
            problems.append(f"{name}: status {code}, {errors or err.getvalue()[-300:]!r}")
        if out.exists():
            problems.append(f"{name}: wrote {out}")
    assert not problems, "\n".join(problems)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if "out" not in p.parts) == before
    assert all((tmp_path / "in" / n).read_bytes() == b for n, b in made.items())  # inputs untouched


def test_a_ds_config_that_is_not_json_is_one_line(multi30k_small, tmp_path, monkeypatch):
    files(tmp_path / "in")
    for name, expected in (("ds_broken.json", "malformed JSON at line 1"), ("ds_list.json", "a JSON object")):
        monkeypatch.setenv("ACCELERATE_USE_DEEPSPEED", "true")
        monkeypatch.setenv("ACCELERATE_DEEPSPEED_CONFIG_FILE", str(tmp_path / "in" / name))
        out = tmp_path / name
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
            SCRIPTS["train"](["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out)])
        assert exit_.value.code == 2 and not out.exists()
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: deepspeed_config_file {tmp_path / 'in' / name}: ")
        assert expected in lines[0]
