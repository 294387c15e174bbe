"""What a report is made of (mtkit.evaluation.report_inputs): the command line a report records to rebuild itself is
one ``scripts/bias_report.py``'s own parser accepts, and the objects its command line resolves from it are the ones
the report was made of, for every source, option and decoding setting."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_eval.core.latex import Layout
from bias_eval.core.settings import ReportOptions
from mtkit.cli.bias_report import build_parser, gendered_source, hypotheses, report_options, winomt_source
from mtkit.evaluation.report_inputs import GenderedSource, Translator, WinoMTSource, rebuild_command

LANGS = st.lists(st.sampled_from(["de", "es", "fr", "it", "pt"]), min_size=1, max_size=3, unique=True)
NAME = st.none() | st.text(st.characters(codec="utf-8", categories=["L", "N", "Zs"]), min_size=1, max_size=12)
OPTIONS = st.builds(
    ReportOptions,
    bootstrap_samples=st.integers(0, 5000),
    seed=st.integers(0, 2**31),
    examples=st.integers(0, 50),
    name=NAME,
    min_effect=st.sampled_from([0.0, 0.5, 2.0]),
    layout=st.builds(Layout, label=st.none() | st.sampled_from(["tab:a", "tab:b c"]), wide=st.booleans()),
    figures=st.booleans(),
)


def _parsed(command: str):
    """``command``'s arguments as the script's parser reads them (the script's name and interpreter dropped)."""
    words = shlex.split(command)
    assert words[:2] == ["python", "scripts/bias_report.py"]
    return build_parser().parse_args(words[2:])


@settings(max_examples=60, deadline=None)
@given(
    where=st.sampled_from(["mtgeneval_dir", "hub", "table"]),
    split=st.sampled_from(["dev", "test"]),
    langs=st.none() | LANGS,
    context=st.booleans(),
    options=OPTIONS,
)
def test_an_mtgeneval_report_s_command_gives_back_its_source_and_options(
    where: str, split: str, langs, context: bool, options: ReportOptions
) -> None:
    if where == "table":
        context = False  # only MT-GenEval has a contextual subset
    source = GenderedSource(
        mtgeneval_dir=Path("data/mt geneval") if where == "mtgeneval_dir" else None,
        hub=where == "hub",
        table=Path("gendered.csv") if where == "table" else None,
        split=split if where != "table" else "dev",  # a table has no split: its flag is not written
        langs=tuple(langs) if langs else None,
        context=context,
    )
    args = _parsed(rebuild_command(source, Path("hyps dir"), Path("out"), options))
    expected = replace(source, langs=tuple(sorted(langs)) if langs else None)
    assert gendered_source(args) == expected
    assert report_options(args) == options
    assert hypotheses(args, "hyp_dir") == Path("hyps dir") and Path(args.out) == Path("out")


@settings(max_examples=40, deadline=None)
@given(lang=st.sampled_from(["de", "es", "fr", "it", "ru", "uk", "he", "ar"]), options=OPTIONS)
def test_a_winomt_report_s_command_gives_back_its_source_and_options(lang: str, options: ReportOptions) -> None:
    source = WinoMTSource(Path("win omt"), lang)  # --max_samples is --model's: below
    args = _parsed(rebuild_command(source, Path("google.txt"), Path("out"), options))
    assert winomt_source(args) == source
    # WinoMT's gaps have no findings and it shows no worst examples: those two are the flags' defaults
    assert report_options(args) == replace(options, examples=10, min_effect=0.0)
    assert hypotheses(args, "hyp_file") == Path("google.txt")


@pytest.mark.parametrize(
    "given",
    [{}, {"num_beams": 2, "prompt": "instruction", "max_len_b": 3, "batch_size": 5}, {"decoding": "mbr", "top_p": 0.9}],
)
def test_a_model_s_settings_resolved_once_are_what_its_command_resolves(tiny_t5: Path, given: dict) -> None:
    """A translator's flags spell out every setting: resolved from the command line they decode as the translator
    the report was made with, whatever the model saved (its saved settings and defaults are all spelled out)."""
    translator = Translator.resolve(str(tiny_t5), given | {"seed": 7}, force=True)
    source = GenderedSource(Path("m"), langs=("de",), max_samples=50)  # a subset: only with --model
    args = _parsed(rebuild_command(source, translator, Path("out"), ReportOptions(seed=7)))
    assert gendered_source(args) == source
    again = hypotheses(args, "hyp_dir")
    assert isinstance(again, Translator) and again.decoding == translator.decoding and again.force
    assert set(again.origins.values()) <= {f"--{key}" for key in again.origins}  # every one from a flag now
    winomt = WinoMTSource(Path("w"), "de", max_samples=40)
    args = _parsed(rebuild_command(winomt, translator, Path("out"), ReportOptions(seed=7)))
    assert winomt_source(args) == winomt and not args.force  # WinoMT checks no tokenizer's coverage
