"""Every script's decoding flags take training's ranges (mtkit.cli.args.ranged over mtkit.ranges.RANGES): a value
train.py refuses, each script refuses with the same words; a value train.py takes, each script takes."""

from __future__ import annotations

import typing
from pathlib import Path

import benchmark
import pytest

from mtkit.cli import bias_report, translate
from mtkit.config import parse_config
from mtkit.errors import UserError

#: flag -> (values train.py refuses, values it takes); the scripts' --batch_size is train.py's --eval_batch_size
BOUNDS = {
    "num_beams": (["0", "-2"], ["1", "5"]),
    "max_new_tokens": (["0", "-1"], ["1", "300"]),
    "length_penalty": (["nan", "inf", "-inf"], ["-0.5", "0", "1.2"]),
    "max_len_a": (["-0.1", "nan"], ["0", "1.5"]),
    "max_len_b": (["-1"], ["0", "10"]),
    "batch_size": (["0", "-8"], ["1", "64"]),
}
TRAIN_KEY = {"batch_size": "eval_batch_size"}


def parsed(parser, *args: str) -> dict:
    return vars(parser.parse_args(list(args)))


#: script -> (its parser's arguments apart from the flag, the flags of BOUNDS it has, where it stores --num_beams)
SCRIPTS = {
    "translate.py": (lambda *a: parsed(translate.build_parser(), "--model", "m", "--text", "x", *a), list(BOUNDS)),
    "bias_report.py": (
        lambda *a: parsed(bias_report.build_parser(), "--hub", "--model", "m", "--out", "o", *a),
        list(BOUNDS),
    ),
    "benchmark.py translate": (
        lambda *a: parsed(benchmark.parser(), "translate", "--model", "m", "--source", "s", "--reference", "r", *a),
        ["num_beams", "max_new_tokens", "batch_size"],  # its length penalty and bound are the model's own
    ),
}
CASES = [(script, flag) for script, (_, flags) in SCRIPTS.items() for flag in flags]


def train_error(key: str, value: str) -> str | None:
    try:
        parse_config([f"--{key}={value}"])
    except UserError as err:
        return str(err)
    return None


@pytest.mark.parametrize(("script", "flag"), CASES)
def test_a_decoding_flag_has_training_s_range_in_every_script(script, flag):
    parse, key = SCRIPTS[script][0], TRAIN_KEY.get(flag, flag)
    refused, taken = BOUNDS[flag]
    for value in refused:
        expected = train_error(key, value)
        assert expected is not None and expected.startswith(f"--{key}: must be "), expected
        with pytest.raises(UserError) as raised:
            parse(f"--{flag}={value}")
        assert str(raised.value) == expected.replace(f"--{key}:", f"--{flag}:")
    for value in taken:
        assert train_error(key, value) is None
        values = parse(f"--{flag}={value}")
        assert values["beam_size" if script.startswith("benchmark") and flag == "num_beams" else flag] == float(value)


def test_every_decoding_flag_of_every_script_is_checked_here():
    decoding = {"num_beams", "beam_size", "length_penalty", "max_new_tokens", "max_len_a", "max_len_b", "batch_size"}
    parsers = {
        "translate.py": translate.build_parser(),
        "bias_report.py": bias_report.build_parser(),
        "benchmark.py translate": benchmark.parser()._subparsers._group_actions[0].choices["translate"],
    }
    for script, parser in parsers.items():
        flags = {s.lstrip("-") for a in parser._actions for s in a.option_strings if s.lstrip("-") in decoding}
        covered = set(SCRIPTS[script][1]) | ({"beam_size"} if "num_beams" in SCRIPTS[script][1] else set())
        assert flags <= covered, (script, flags - covered)


def test_a_number_that_is_no_number_is_named_like_train_py_names_it():
    with pytest.raises(UserError) as raised:
        parse_config(["--num_beams", "four"])
    with pytest.raises(UserError) as also:
        translate.build_parser().parse_args(["--model", "m", "--num_beams", "four"])
    assert str(also.value) == str(raised.value) == "argument --num_beams: invalid int value: 'four'"


def test_the_decision_flags_share_one_default_and_one_range() -> None:
    """compare_reports.py's --p_adjust and --min_effect and a mitigation's recipe keys take bias_eval.core.decision's
    defaults; a negative --min_effect is one line naming the flag."""
    from bias_eval.core.decision import MIN_EFFECT, P_ADJUSTS
    from mtkit.cli.compare_reports import build_parser
    from mtkit.config.mitigation import MitigationConfig

    args = build_parser().parse_args(["a", "b"])
    config = MitigationConfig()
    assert (args.p_adjust, args.min_effect) == (config.p_adjust, config.min_effect) == (P_ADJUSTS[0], MIN_EFFECT)
    hints = typing.get_type_hints(MitigationConfig)
    assert typing.get_args(hints["p_adjust"]) == P_ADJUSTS and config.rule().p_adjust == "holm"  # the one list
    assert build_parser().parse_args(["a", "b", "--p-adjust", "none"]).p_adjust == "none"
    with pytest.raises(UserError, match=r"^--min_effect: must be >= 0, got -1.0$"):
        build_parser().parse_args(["a", "b", "--min_effect", "-1"])


def test_a_reports_min_effect_flag_reaches_its_options_and_its_command() -> None:
    """bias_report.py --min_effect: the report's options hold it, the command that rebuilds the report names it,
    and a negative one is refused in one line."""
    from mtkit.cli.bias_report import build_parser, gendered_source, report_options
    from mtkit.evaluation.report_inputs import rebuild_command

    args = build_parser().parse_args(["--hyp_dir", "h", "--mtgeneval_dir", "m", "--out", "o", "--min_effect", "0.5"])
    options = report_options(args)
    command = rebuild_command(gendered_source(args), Path("h"), Path("o"), options)
    assert options.min_effect == 0.5 and "--min_effect 0.5" in command
    with pytest.raises(UserError, match=r"^--min_effect: must be >= 0, got -2.0$"):
        build_parser().parse_args(["--hyp_dir", "h", "--out", "o", "--min_effect", "-2"])
