"""The README documents every recipe key, script and recipe that exists."""

from testing_utils import REPO

from mtkit.config import FIELDS


def test_readme_documents_every_key_script_and_recipe():
    readme = (REPO / "README.md").read_text()
    assert [k for k in FIELDS if f"| `{k}` |" not in readme] == []
    assert [p.name for p in (REPO / "scripts").glob("*.py") if f"scripts/{p.name}" not in readme] == []
    assert [p.name for p in (REPO / "recipes").glob("*.yaml") if f"recipes/{p.name}" not in readme] == []
    assert [p.stem for p in (REPO / "accelerate_configs").glob("*.yaml") if f"`{p.stem}`" not in readme] == []
