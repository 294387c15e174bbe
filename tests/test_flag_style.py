"""One flag style across every script: underscores in ``--help`` and errors, the dashed spellings of earlier
versions still accepted, and one name per concept (train.py's) wherever the concept appears."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import sys

import pytest
from testing_utils import REPO

from mtkit.cli import bias_report, translate
from mtkit.config import FIELDS, parse_config
from mtkit.errors import UserError

SCRIPTS = sorted(p.name for p in (REPO / "scripts").glob("*.py"))
#: an option's line in argparse's help: two spaces, its option strings (with their metavars), two spaces or the end
OPTION_LINE = re.compile(r"^  (-[^\n]*?)(?:  |$)", re.M)


def run_script_in_process(script: str, *args: str) -> tuple[int, str, str]:
    """``scripts/<script> ARGS`` run by runpy in this process: exit status, standard output and error."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = [str(REPO / "scripts" / script), *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(str(REPO / "scripts" / script), run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.argv = saved
    return code, out.getvalue(), err.getvalue()


def shown_options(help_text: str) -> tuple[list[str], list[str]]:
    """The long option strings ``--help`` shows in its usage line, and the option strings of each option's line."""
    usage = help_text.split("\n\n", 1)[0]
    lines = [re.findall(r"--[\w-]+", m.group(1)) for m in OPTION_LINE.finditer(help_text)]
    return re.findall(r"[\[(|] ?(--[\w-]+)", usage), [names for names in lines if names]


def script_helps() -> list[tuple[str, ...]]:
    """``(script, [subcommand,] --help)`` for every script (each subcommand of scripts/benchmark.py)."""
    calls = [(script, "--help") for script in SCRIPTS]
    _, out, _ = run_script_in_process("benchmark.py", "--help")
    subcommands = re.search(r"\{([\w,]+)\}", out).group(1).split(",")
    return calls + [("benchmark.py", sub, "--help") for sub in subcommands]


@pytest.mark.parametrize("call", script_helps(), ids=" ".join)
def test_help_shows_only_underscore_names(call):
    code, out, err = run_script_in_process(*call)
    assert code == 0, err
    usage, lines = shown_options(out)
    assert len(usage) + len(lines) >= 2 or call == ("benchmark.py", "--help"), out  # the help was read
    assert [name for name in usage + sum(lines, []) if "-" in name[2:]] == []
    assert [names for names in lines if len(names) > 1] == [], "an alias is shown beside its option"


def test_the_check_sees_a_dashed_option_and_a_shown_alias():
    text = "usage: x.py [-h] [--beam-size N]\n\noptions:\n  -h, --help  help\n  --a_b N, --a-b N  an a\n"
    assert shown_options(text) == (["--beam-size"], [["--help"], ["--a_b", "--a-b"]])


def test_earlier_dashed_command_lines_still_parse_to_the_same_arguments():
    new = ["--mtgeneval_dir", "D", "--split", "test", "--target_langs", "de", "es", "--model", "M", "--num_beams", "2"]
    new += ["--length_penalty", "0.6", "--max_new_tokens", "9", "--max_len_a", "1", "--max_len_b", "3"]
    new += ["--batch_size", "4", "--bootstrap_samples", "5", "--out", "O"]
    old = ["--mtgeneval-dir", "D", "--split", "test", "--langs", "de", "es", "--model", "M", "--beam-size", "2"]
    old += ["--length-penalty", "0.6", "--max-new-tokens", "9", "--max-len-a", "1", "--max-len-b", "3"]
    old += ["--batch-size", "4", "--bootstrap-samples", "5", "--out", "O"]
    parser = bias_report.build_parser()
    assert vars(parser.parse_args(old)) == vars(parser.parse_args(new))
    assert vars(parser.parse_args(new))["num_beams"] == 2
    assert parse_config(["--max-steps", "7", "--eval-batch-size", "3"]).train.max_steps == 7


def test_errors_name_an_option_by_its_underscore_name():
    with pytest.raises(UserError) as raised:
        bias_report.build_parser().parse_args(["--hub", "--hyp_dir", "h", "--out", "o", "--beam-size", "x"])
    assert str(raised.value) == "argument --num_beams: invalid int value: 'x'"  # as train.py --num_beams x says
    code, _, err = run_script_in_process("demo_corpus.py", "out", "--n-train", "many")
    assert (code, err.strip()) == (2, "error: argument --n_train: invalid int value: 'many'")


def test_a_concept_has_train_py_s_name_in_every_script():
    """The decoding settings and the MT-GenEval inputs are named as train.py names them (recipe keys)."""
    shared = {"num_beams", "length_penalty", "max_new_tokens", "max_len_a", "max_len_b", "prompt"}
    report = {a.dest for a in bias_report.build_parser()._actions}
    translating = {a.dest for a in translate.build_parser()._actions}
    assert shared <= report and shared <= translating and shared <= set(FIELDS)
    assert {"mtgeneval_dir", "target_langs"} <= report & set(FIELDS)
    assert not {"beam_size", "langs", "hyp-dir"} & (report | translating)
