"""The README documents every recipe key, script and recipe that exists."""

from testing_utils import REPO

from mtkit.config import FIELDS
from mtkit.train.checks import RESUMABLE


def test_readme_documents_every_key_script_and_recipe():
    readme = (REPO / "README.md").read_text()
    assert [k for k in FIELDS if f"| `{k}` |" not in readme] == []
    assert [p.name for p in (REPO / "scripts").glob("*.py") if f"scripts/{p.name}" not in readme] == []
    assert [p.name for p in (REPO / "recipes").glob("*.yaml") if f"recipes/{p.name}" not in readme] == []
    assert [p.stem for p in (REPO / "accelerate_configs").glob("*.yaml") if f"`{p.stem}`" not in readme] == []


def test_readme_lists_what_may_change_on_resume_with_its_reason():
    """The table under "What may change on resume" is RESUMABLE, key for key and reason for reason."""
    readme = (REPO / "README.md").read_text()
    table = readme.split("**What may change on resume.**")[1].split("| keys | why they may change |\n|---|---|\n")[1]
    rows = [line.strip("| ").split(" | ") for line in table.split("\n\n")[0].splitlines()]
    listed = {key.strip("`"): why for keys, why in rows for key in keys.split(", ")}
    assert listed == RESUMABLE
