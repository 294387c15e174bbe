"""The README is short and leads into docs/, whose pages document every recipe key, script, recipe and launcher
config that exists, and no page narrates its own history."""

import re

from test_docs import HEADING, LINK, slug
from testing_utils import REPO

from mtkit.config import FIELDS
from mtkit.train.checks import RESUMABLE

README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
#: the most lines a newcomer's README may have
MAX_README_LINES = 250
#: words of a page that tells its own history instead of what the toolkit does
HISTORY = re.compile(
    r"\bissue \d+|\bissue's\b|\bthis session\b|\bafter [^.\n]*\bchanges\b|\bmeasured again\b|\bre-?measur"
    r"|\bbefore this change\b|\bthe old code\b|\bare \**not met\b|\bthis project's sessions\b",
    re.I,
)


def page(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def test_the_docs_document_every_key_script_recipe_and_launcher():
    training, launchers, readme = page("docs/training.md"), page("docs/launchers.md"), page("README.md")
    assert [k for k in FIELDS if f"| `{k}` |" not in training] == []
    assert [p.name for p in (REPO / "scripts").glob("*.py") if f"`{p.name}`" not in readme] == []
    assert [p.name for p in (REPO / "recipes").glob("*.yaml") if f"recipes/{p.name}" not in training] == []
    assert [p.stem for p in (REPO / "accelerate_configs").glob("*.yaml") if f"`{p.stem}`" not in launchers] == []


def test_the_docs_list_what_may_change_on_resume_with_its_reason():
    """The table under "What may change on resume" is RESUMABLE, key for key and reason for reason."""
    section = page("docs/training.md").split("## What may change on resume\n")[1].split("\n## ")[0]
    table = section.split("| keys | why they may change |\n|---|---|\n")[1]
    rows = [line.strip("| ").split(" | ") for line in table.split("\n\n")[0].splitlines()]
    listed = {key.strip("`"): why for keys, why in rows for key in keys.split(", ")}
    assert listed == RESUMABLE


def contents_links(text: str) -> list[str]:
    """The link targets of the README's contents list (the bullet list under ``## Contents``)."""
    section = text.split("\n## Contents\n", 1)[1].split("\n## ", 1)[0]
    return [target for line in section.splitlines() if line.startswith("- ") for target in LINK.findall(line)]


def test_the_readme_is_short_and_its_contents_list_resolves():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    links = contents_links(text)
    headings = {slug(h) for h in HEADING.findall(text)}
    assert len(links) >= 8  # one entry per job at least: demo, train, fine-tune, translate, bias, scale out, ...
    assert [link for link in links if not link.startswith("#") or link[1:] not in headings] == []
    # every section of the README is in the list, and the README leads into docs/
    sections = {slug(h) for h in re.findall(r"^## (.*)$", text, re.M)} - {"contents"}
    assert sections == {link[1:] for link in links}
    linked_docs = {target.split("#")[0] for target in LINK.findall(text) if target.startswith("docs/")}
    assert {"docs/README.md", "docs/training.md", "docs/launchers.md", "docs/finetuning.md"} <= linked_docs
    assert {"docs/translation.md", "docs/bias_evaluation.md", "docs/benchmarks.md", "docs/troubleshooting.md"} <= (
        linked_docs
    )


def test_the_checks_catch_a_long_readme_a_dead_entry_and_history_words():
    long_readme = "# x\n\n## Contents\n\n- [Two](#two)\n- [Gone](#gone)\n\n## Two\n" + "line\n" * MAX_README_LINES
    assert len(long_readme.splitlines()) > MAX_README_LINES
    assert contents_links(long_readme) == ["#two", "#gone"]
    assert "gone" not in {slug(h) for h in HEADING.findall(long_readme)}
    for told in (
        "measured again on 2026-11-24, after this session's changes",
        "issue 20's measurement",
        "The issue's CPU targets are **not met**",
        "Before this change the run peaked at 2.9 GB",
    ):
        assert HISTORY.search(told), told
    assert not HISTORY.search("Measured on 2 CPU cores (2026-11-24); see CTranslate2 #1074 and the changes it lists")


def test_no_page_tells_its_own_history():
    found = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()}"
        for p in PAGES
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert found == []
