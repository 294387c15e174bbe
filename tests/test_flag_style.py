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


def test_train_help_is_grouped_by_recipe_section_with_config_first():
    import dataclasses

    from mtkit.config import GROUPS

    code, out, _ = run_script_in_process("train.py", "--help")
    assert code == 0
    options = re.findall(r"^  (--\w+)", out, re.M)
    assert options[0] == "--config" and "[-h] [--config CONFIG] [--data_dir" in out  # the recipe first
    sections = re.split(r"^(\w+) \(.*\):$", out, flags=re.M)
    titles = sections[1::2]
    assert titles == list(GROUPS), titles
    for title, body in zip(titles, sections[2::2]):
        shown = set(re.findall(r"^  --(\w+)", body, re.M)) - {f"no_{f.name}" for f in dataclasses.fields(GROUPS[title])}
        assert shown == {f.name for f in dataclasses.fields(GROUPS[title])}, title


@pytest.mark.parametrize("script", ["train.py", "preprocess.py"])
def test_every_option_states_one_default(script):
    from mtkit.model.presets import ALL_PRESETS

    code, out, _ = run_script_in_process(script, "--help")
    blocks = re.split(r"^  (?=-)", out.split("\n\n", 1)[1], flags=re.M)[1:]
    assert len(blocks) > 50
    for block in blocks:
        text = " ".join(block.split())
        assert len(re.findall(r"\bdefault[: ]", text.lower())) <= 1, text
        assert "(default: None)" not in text, text
    model = next(" ".join(b.split()) for b in blocks if b.startswith("--model "))
    assert all(name in model for name in ALL_PRESETS) and "mtkit.model.presets" not in model


def test_no_parser_takes_an_abbreviation():
    from testing_utils import parser_actions, script_parsers

    for script, parser in script_parsers().items():
        subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        assert parser.allow_abbrev is False, script
        assert all(p.allow_abbrev is False for a in subs for p in a.choices.values()), script
        assert list(parser_actions(parser))
    with pytest.raises(UserError, match="unrecognized arguments: --num_beam 2"):
        translate.build_parser().parse_args(["--model", "m", "--num_beam", "2"])
    with pytest.raises(UserError, match="unknown key 'num_beam'; did you mean 'num_beams'"):
        parse_config(["--num_beam", "2"])


def test_enumerated_flags_show_their_choices():
    _, out, _ = run_script_in_process("translate.py", "--help")
    assert "--dtype {auto,fp32,bf16,fp16}" in out and "--engine {hf,ct2}" in out
    _, out, _ = run_script_in_process("export_ct2.py", "--help")
    assert "--quantization {auto,int8," in out


def test_list_flags_take_commas_and_words_alike():
    from mtkit.cli import compare_reports

    for spelled in (["de,es"], ["de", "es"], ["de,", "es"]):
        cfg = parse_config(["--target_langs", *spelled, "--report_to", "none"])
        assert cfg.data.languages() == ["de", "es"]
    assert parse_config(["--lora_target_modules", "q", "v"]).model.lora_target_modules == "q,v"
    assert compare_reports.build_parser().parse_args(["a", "b", "--names", "x", "y"]).names == "x,y"
    assert bias_report.build_parser().parse_args(["--hub", "--hyp_dir", "h", "--out", "o", "--target_langs", "de",
                                                  "es"]).target_langs == ["de", "es"]  # fmt: skip


def test_a_stray_word_is_one_line_naming_it():
    with pytest.raises(UserError) as err:
        parse_config(["--max_steps", "3", "extra", "--seed", "2"])
    assert str(err.value) == (
        "command line: unexpected 'extra' after --max_steps 3 (not a flag, nor a value of the flag before it)"
    )
    code, _, err_text = run_script_in_process("translate.py", "--model", "m", "--text", "a", "b")
    assert code == 2 and err_text.strip() == "error: unrecognized arguments: b (see --help)"
