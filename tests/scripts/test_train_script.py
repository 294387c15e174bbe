"""Training on bad input: one ``error:`` line, exit status 2, nothing written."""

import pytest
from testing_utils import FAST_RUN, run_script

from mtkit.config import parse_config
from mtkit.errors import UserError
from mtkit.pipeline import run


def corpus(root, **files: bytes):
    root.mkdir()
    for name, data in files.items():
        (root / name.replace("_", ".")).write_bytes(data)
    return root


GOOD = {"valid_en": b"a cat\n", "valid_de": b"eine Katze\n"}
FAST = [a for a in FAST_RUN if a not in ("--model", "transformer-tiny")]


@pytest.mark.parametrize(
    ("files", "extra", "message"),
    [
        ({"train_en": b"a\nb\n", "train_de": b"x\n", **GOOD}, [], "2 source lines but 1 target lines"),
        ({"train_en": b"", "train_de": b"", **GOOD}, [], "train.en: file is empty"),
        ({"train_en": b"a\n\xc3\x28\n", "train_de": b"x\ny\n", **GOOD}, [], "train.en: invalid UTF-8 at line 2"),
        ({"train_en": b"a\n", "train_de": b"x\n", **GOOD}, ["--target_lang", "fr"], "no file train.fr"),
        ({"train_en": b"a\n", "train_de": b"x\n", **GOOD}, ["--target_lang", "xx"], "'xx' is not a language code"),
        ({"train_en": b"a\n", "train_de": b"x\n", **GOOD}, ["--model", "transformer-huge"], "unknown preset"),
        ({"train_en": b"a\n", "train_de": b"x\n", **GOOD}, ["--max_step", "3"], "did you mean 'max_steps'"),
    ],
    ids=["line-count", "empty", "utf8", "language", "not-a-language", "preset", "unknown-key"],
)
def test_bad_input_writes_nothing(tmp_path, files, extra, message):
    data = corpus(tmp_path / "data", **files)
    out = tmp_path / "run"
    with pytest.raises(UserError, match=message) as err:
        run(parse_config(["--data_dir", str(data), *FAST, "--output_dir", str(out), *extra]))
    assert "\n" not in str(err.value)
    assert not out.exists()


def test_script_prints_one_error_line_and_exits_2(tmp_path):
    """The real exit status and stream of one case (tests/test_bad_input.py has them all, in process, the malformed
    recipe included): a corpus whose line counts differ, found once the run has started reading its data."""
    data = corpus(tmp_path / "data", train_en=b"a\nb\n", train_de=b"x\n", **GOOD)
    res = run_script("train.py", "--data_dir", str(data), "--output_dir", str(tmp_path / "run"))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith("error: ") and "2 source lines but 1 target lines" in lines[0]
    assert not (tmp_path / "run").exists()
