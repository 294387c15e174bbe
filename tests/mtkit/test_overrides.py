"""A recipe's keys overridden from the command line: ``none`` clears a data source the recipe set, and a second data
source is refused naming the recipe's key."""

import shlex

import pytest

from mtkit.config import parse_config
from mtkit.errors import UserError
from mtkit.export.card import reproduce


def recipe(tmp_path, text: str) -> str:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("spelling", ["none", "None", ""])
def test_none_clears_the_recipes_data_source(tmp_path, spelling):
    path = recipe(tmp_path, "data:\n  mtgeneval_dir: ../shared/data/mt-geneval\n  test_split: none\n")
    cfg = parse_config(["--config", path, "--mtgeneval_dir", spelling, "--data_dir", "corpus"])
    assert cfg.data.mtgeneval_dir is None
    assert cfg.data.data_dir == "corpus"
    assert cfg.data.test_split is None  # the recipe's own `none` means the same


def test_none_in_a_recipe_clears_the_key(tmp_path):
    cfg = parse_config(["--config", recipe(tmp_path, "data:\n  mtgeneval_dir: none\n  data_dir: corpus\n")])
    assert (cfg.data.mtgeneval_dir, cfg.data.data_dir) == (None, "corpus")


def test_prompt_none_keeps_its_meaning():
    assert parse_config(["--prompt", "none"]).data.prompt == "none"  # no prompt, not the model's saved one


def test_a_second_source_names_the_recipes_key(tmp_path):
    path = recipe(tmp_path, "data:\n  mtgeneval_dir: ../shared/data/mt-geneval\n")
    message = f"--data_dir: the recipe {path} sets mtgeneval_dir; pass --mtgeneval_dir none to replace it"
    with pytest.raises(UserError) as err:
        parse_config(["--config", path, "--data_dir", "corpus"])
    assert str(err.value) == message


def test_two_sources_in_the_recipe_or_on_the_command_line(tmp_path):
    path = recipe(tmp_path, "data:\n  data_dir: corpus\n  train_file: train.csv\n")
    with pytest.raises(UserError, match=r"recipe.yaml: sets both data_dir and train_file; give one"):
        parse_config(["--config", path])
    with pytest.raises(UserError, match=r"exactly one of .* \(got --data_dir and --dataset_name\)"):
        parse_config(["--data_dir", "corpus", "--dataset_name", "wmt14"])


def test_the_cards_command_spells_a_cleared_key_none(tmp_path):
    path = recipe(tmp_path, "data:\n  mtgeneval_dir: ../shared/data/mt-geneval\n")
    cfg = parse_config(["--config", path, "--mtgeneval_dir", "", "--data_dir", "corpus", "--test_split", "none"])
    words = shlex.split(reproduce(cfg, {}))
    assert "--mtgeneval_dir" not in words and "" not in words  # cleared: the default, not an empty value
    assert words[words.index("--test_split") + 1] == "none"
    assert parse_config(words[2:]).data.test_split is None  # the command runs again as it reads
