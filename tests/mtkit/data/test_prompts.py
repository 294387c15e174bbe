import json

import pytest

from mtkit.data.prompts import PRESETS, Prompt, resolve
from mtkit.errors import UserError


def test_presets_render_each_language():
    assert Prompt.parse("t5").render("Hello.", "de") == "translate English to German: Hello."
    assert (
        Prompt.parse("instruction").render("Hello.", "pt")
        == 'Translate the following sentence from English to Portuguese: "Hello."'
    )
    custom = Prompt.parse("<{lang}> {source} ({lang_name}, {language})")
    assert custom.render("Hi", "it") == "<it> Hi (Italian, Italian)"
    assert Prompt.parse("{source}", source_lang="fr").render("Salut", "xx") == "Salut"


@pytest.mark.parametrize("bad", ["translate to German:", "{source} {unknown}", "{source} {"])
def test_bad_templates_are_one_line_errors(bad):
    with pytest.raises(UserError) as err:
        Prompt.parse(bad)
    assert str(err.value).startswith("--prompt:") and "\n" not in str(err.value)


def test_saved_with_the_model_and_found_again(tmp_path):
    Prompt.parse("instruction").with_languages(["de", "es"]).save(tmp_path)
    spec = json.loads((tmp_path / "prompt.json").read_text())
    assert spec == {"template": PRESETS["instruction"], "source_lang": "en", "languages": ["de", "es"]}
    loaded = resolve(None, tmp_path)
    assert loaded.template == PRESETS["instruction"] and loaded.languages == ("de", "es")
    assert resolve("t5", tmp_path).template == PRESETS["t5"]  # the flag wins
    assert resolve("none", tmp_path) is None
    assert resolve(None, tmp_path / "elsewhere") is None  # no prompt saved: none used


def test_target_language_needed_only_when_ambiguous(tmp_path):
    both = Prompt.parse("t5").with_languages(["de", "es"])
    assert both.language_for("es") == "es"
    with pytest.raises(UserError, match="--target_lang: required.*trained for de, es"):
        both.language_for(None)
    assert Prompt.parse("t5").with_languages(["fr"]).language_for(None) == "fr"
    assert Prompt.parse("summarize: {source}").with_languages(["de", "es"]).language_for(None) == "de"


def test_a_corrupt_prompt_file_is_named(tmp_path):
    (tmp_path / "prompt.json").write_text("{not json")
    with pytest.raises(UserError, match="prompt.json: not a prompt file"):
        Prompt.load(tmp_path)
