from pathlib import Path

import pytest
import yaml

from mtkit.config import FIELDS, RunConfig, load_recipe, parse_config
from mtkit.errors import UserError

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path, text: str) -> str:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return str(path)


def test_grouped_recipe_then_command_line_overrides(tmp_path):
    recipe = write(tmp_path, "data:\n  target_lang: fr\noptim:\n  learning_rate: 5e-4\ntrain:\n  max_steps: 10\n")
    cfg = parse_config(["--config", recipe, "--max_steps", "20", "--no_load_best_model_at_end"])
    assert cfg.data.target_lang == "fr"
    assert cfg.optim.learning_rate == 5e-4
    assert cfg.train.max_steps == 20
    assert cfg.train.load_best_model_at_end is False
    assert cfg.optim.label_smoothing == 0.1  # untouched default


def test_flat_keys_at_top_level(tmp_path):
    assert load_recipe(write(tmp_path, "max_steps: 7\nvocab_size: 500\n")) == {"max_steps": 7, "vocab_size": 500}


def test_unknown_keys_suggest_the_closest_name(tmp_path):
    with pytest.raises(UserError, match="unknown key 'max_step'; did you mean 'max_steps'"):
        parse_config(["--max_step", "3"])
    with pytest.raises(UserError, match=r"recipe.yaml: unknown key 'lerning_rate'; did you mean 'learning_rate'"):
        load_recipe(write(tmp_path, "optim:\n  lerning_rate: 0.1\n"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("train:\n  max_steps: ten\n", "key 'max_steps' expects int"),
        ("train: [1, 2]\n", "section 'train' must be a mapping"),
        ("optim:\n  max_steps: 3\n", "key 'max_steps' belongs in section 'train'"),
        ("tokenizer:\n  tokenizer_type: wordpiece\n", "must be one of"),
        ("data:\n  data_dir: [unclosed\n", "malformed YAML at line"),
        ("- a\n- b\n", "expected a mapping"),
    ],
)
def test_malformed_recipes(tmp_path, text, message):
    with pytest.raises(UserError, match=message):
        load_recipe(write(tmp_path, text))


def test_missing_recipe_and_bad_flag_value(tmp_path):
    with pytest.raises(UserError, match="file not found"):
        parse_config(["--config", str(tmp_path / "nope.yaml")])
    with pytest.raises(UserError, match="invalid int value"):
        parse_config(["--max_steps", "abc"])


@pytest.mark.parametrize("recipe", sorted((REPO / "recipes").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_recipes_parse(recipe):
    cfg = parse_config(["--config", str(recipe)])
    assert cfg.train.output_dir.startswith("runs/")


def test_resolved_config_round_trips(tmp_path):
    cfg = parse_config(["--max_steps", "42", "--target_lang", "fr"])
    cfg.save(tmp_path / "config.yaml")
    again = parse_config(["--config", str(tmp_path / "config.yaml")])
    assert again == cfg
    assert set(yaml.safe_load((tmp_path / "config.yaml").read_text())) == {
        "data", "tokenizer", "model", "optim", "train", "eval", "logging", "mitigation"
    }  # fmt: skip
    assert isinstance(cfg, RunConfig) and len(FIELDS) == len(cfg.flat())
