"""The config package reads and writes exactly what the single ``config.py`` it replaced did: every recipe parses to
the same values (each key, its type and its place in ``config.yaml``), every key keeps its section, default, type
and help, every flag its options, and a run's ``config.yaml`` reads back to the config that wrote it.

``before.json`` was written by the config code of commit 50852a8 (the last with ``mtkit/config.py``): a recipe
changed on purpose changes its entry there."""

import ast
import json
import typing
from pathlib import Path

import pytest
import yaml
from testing_utils import REPO

from mtkit.config import FIELDS, GROUPS, RunConfig, parse_config, train_parser

BEFORE = json.loads((Path(__file__).parent / "before.json").read_text(encoding="utf-8"))
RECIPES = sorted((REPO / "recipes").glob("*.yaml"))


def test_the_same_recipes_as_before():
    assert sorted(BEFORE["recipes"]) == [p.name for p in RECIPES]


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_every_recipe_parses_to_the_same_values_in_the_same_order(recipe, tmp_path):
    before = BEFORE["recipes"][recipe.name]
    now = parse_config(["--config", str(recipe)]).to_dict()
    assert list(now) == list(before)
    for section, values in before.items():
        assert list(now[section]) == list(values), section  # the order config.yaml writes them in
        for key, value in values.items():
            got = now[section][key]
            assert (got, type(got)) == (value, type(value)), f"{section}.{key}"
    saved = tmp_path / "config.yaml"
    parse_config(["--config", str(recipe)]).save(saved)
    assert saved.read_text(encoding="utf-8") == yaml.safe_dump(before, sort_keys=False)  # byte for byte


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_a_runs_config_yaml_reads_back_to_the_config_that_wrote_it(recipe, tmp_path):
    cfg = parse_config(["--config", str(recipe), "--max_steps", "17", "--report_to", "none"])
    cfg.save(tmp_path / "config.yaml")
    again = parse_config(["--config", str(tmp_path / "config.yaml")])
    assert again == cfg and again.train.max_steps == 17 and again.logging.report_to == "none"


def test_every_key_keeps_its_section_default_type_and_help():
    now = {
        name: {
            "section": group,
            "default": repr(f.default),
            "type": str(typing.get_type_hints(GROUPS[group])[name]),
            "help": f.metadata["help"],
        }
        for name, (group, f) in FIELDS.items()
    }
    assert list(now) == list(BEFORE["keys"])
    for name, was in BEFORE["keys"].items():
        assert now[name] == was, name


def test_every_flag_is_as_before():
    now = [
        {
            "options": a.option_strings,
            "dest": a.dest,
            "default": repr(a.default),
            "choices": repr(a.choices),
            "nargs": repr(a.nargs),
            "type": getattr(a.type, "__name__", repr(a.type)),
            "required": a.required,
            "help": a.help,
        }
        for a in train_parser()._actions
    ]
    assert len(now) == len(BEFORE["flags"])
    for got, was in zip(now, BEFORE["flags"], strict=True):
        assert got == was, was["dest"]


def test_run_config_holds_one_object_per_section():
    cfg = RunConfig()
    assert [type(getattr(cfg, name)) for name in GROUPS] == list(GROUPS.values())
    assert set(cfg.to_dict()) == set(GROUPS)


def test_one_field_helper():
    """``dataclasses.field`` is called in ``keys.py`` (the helper) and ``run.py`` (a section's default) alone."""
    callers = []
    for path in sorted((REPO / "mtkit" / "config").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "field":
                callers.append(path.name)
    assert sorted(set(callers)) == ["keys.py", "run.py"]
