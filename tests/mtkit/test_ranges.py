"""The range table covers every numeric key of the run config and every numeric flag of every script, and each
range is what the libraries behind the key accept."""

from __future__ import annotations

import typing

import numpy as np
import pytest
from testing_utils import parser_actions, script_parsers

from mtkit.config import FIELDS, GROUPS, parse_config
from mtkit.data.tokenizer import SPECIAL_TOKENS, train_tokenizer
from mtkit.errors import UserError
from mtkit.ranges import RANGES, SCRIPT_RANGES, SEED_MAX
from mtkit.ranges import SPECIAL_TOKENS as SPECIAL_COUNT

PARSERS = script_parsers()


def numeric(hint) -> bool:
    return bool({int, float} & ({hint} | set(typing.get_args(hint)))) and hint is not bool


def test_every_numeric_run_config_key_has_a_range():
    keys = [k for k, (g, _) in FIELDS.items() if numeric(typing.get_type_hints(GROUPS[g])[k])]
    assert len(keys) > 40  # the introspection finds the numbers (ints and floats, optional or not)
    assert [k for k in keys if k not in RANGES] == []
    assert set(RANGES) <= set(keys)  # and no range of a key that is gone


@pytest.mark.parametrize("script", PARSERS)
def test_every_numeric_flag_of_every_script_has_a_range(script):
    """A numeric flag parses through :func:`mtkit.cli.args.ranged` (the table's entry), or is training's own
    (HfArgumentParser's int/float of a run-config key, checked by ``check_ranges``); no bare ``int``/``float``."""
    bare, unknown, ranged = [], [], 0
    for action in parser_actions(PARSERS[script]):
        key = getattr(action.type, "range_key", None)
        ranged += key is not None
        if key is not None and key not in RANGES and key not in SCRIPT_RANGES:
            unknown.append(action.option_strings[0])
        if action.type in (int, float) and not (script == "train.py" and action.dest in RANGES):
            bare.append(action.option_strings[0])
    assert bare == [] and unknown == []


def test_numpy_takes_exactly_the_seed_range():
    np.random.seed(SEED_MAX)  # the largest accepted
    for outside in (SEED_MAX + 1, -1):
        with pytest.raises(ValueError):
            np.random.seed(outside)
    ok = RANGES["seed"][0]
    assert ok(0) and ok(SEED_MAX) and not ok(SEED_MAX + 1) and not ok(-1)


def test_a_vocabulary_must_hold_more_than_the_special_tokens():
    assert SPECIAL_COUNT == len(SPECIAL_TOKENS)
    tok = train_tokenizer(["a b c"] * 10, vocab_size=SPECIAL_COUNT + 1)
    assert all(t in tok.get_vocab() for t in SPECIAL_TOKENS)
    with pytest.raises(UserError, match=r"--vocab_size: must be > 4"):
        parse_config(["--vocab_size", str(len(SPECIAL_TOKENS))])


@pytest.mark.parametrize(
    ("script", "argv", "message"),
    [
        ("train.py", ["--seed", str(2**32)], "--seed: must be in [0, 4294967295]"),
        ("translate.py", ["--model", "m", "--seed", "-1"], "--seed: must be in [0, 4294967295]"),
        ("bias_report.py", ["--hub", "--hyp_dir", "h", "--out", "o", "--seed", str(2**40)], "--seed: must be in"),
        ("demo_corpus.py", ["out", "--seed", str(2**32)], "--seed: must be in"),
        ("average_checkpoints.py", ["r", "o", "--best", "0"], "--best: must be >= 1, got 0"),
        ("export_ct2.py", ["m", "o", "--check_samples=-1"], "--check_samples: must be >= 0"),
        ("benchmark.py", ["quality", "--minutes", "0"], "--minutes: must be > 0"),
        ("benchmark.py", ["preprocess", "--source", "s", "--target", "t", "--tokenizer", "k", "--workers", "0"],
         "--workers: must be >= 1"),
    ],
)  # fmt: skip
def test_out_of_range_script_flags_are_refused_in_training_words(script, argv, message):
    with pytest.raises(UserError) as err:
        if script == "train.py":
            parse_config(argv)
        else:
            PARSERS[script].parse_args(argv)
    assert message in str(err.value)
