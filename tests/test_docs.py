"""The guides in docs/ and the README name only files that exist, link only to files and headings that exist, and
their commands use only flags the scripts accept: every ``scripts/train.py`` command line (also
``scripts/preprocess.py`` and the Slurm templates, whose arguments go to train.py) is parsed by train.py's own parser,
and so are the command lines of ``scripts/bias_report.py``, ``scripts/compare_reports.py``, ``scripts/translate.py``,
``scripts/push_to_hub.py`` and ``sagemaker/launch.py``."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from testing_utils import REPO

from mtkit.cli import bias_report as bias_cli
from mtkit.cli import bias_study as study_cli
from mtkit.cli import compare_reports as compare_cli
from mtkit.cli import push_to_hub as push_cli
from mtkit.cli import translate
from mtkit.config import parse_config
from mtkit.errors import UserError

DOCS = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
#: folders whose files the guides may name: a name under one of them must exist
FOLDERS = (
    "accelerate_configs", "recipes", "scripts", "ds_configs", "notebooks", "cluster", "sagemaker", "mtkit",
    "bias_eval", "tests",
)  # fmt: skip
# Not preceded by a path character, so that the tail of a URL or of /home/.../mtkit is no repository path.
PATH = re.compile(r"(?<![\w./~-])((?:" + "|".join(FOLDERS) + r")/[\w./-]*)")
CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`]+)`", re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+\s+(.*?)\s*$", re.M)
#: scripts whose arguments train.py parses (the Slurm templates hand theirs to train.py)
TRAIN_SCRIPTS = (
    "scripts/train.py", "scripts/preprocess.py", "cluster/slurm/train.sbatch", "cluster/slurm/train_single_node.sbatch",
)  # fmt: skip
SHELL_OPERATORS = {"&&", "||", ";", "|", "&", ">", ">>", "2>&1"}


def _parse_train(args: list[str]) -> None:
    parse_config(args)


def _argparse(parser_factory: Callable) -> Callable[[list[str]], None]:
    def parse(args: list[str]) -> None:
        parser_factory().parse_args(args)

    return parse


def _launch_parse_args() -> Callable[[list[str]], object] | None:
    """``sagemaker/launch.py``'s ``parse_args``, loaded as a module of its own (its folder is no package; it imports
    ``entry`` from beside it)."""
    path = REPO / "sagemaker" / "launch.py"
    if not path.is_file():
        return None
    name = "mtkit_docs_sagemaker_launch"
    if name not in sys.modules:
        saved = list(sys.path)
        sys.path.insert(0, str(path.parent))
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[name] = module
        finally:  # entry.py puts the repository root on sys.path, where sagemaker/ would shadow the SageMaker SDK
            sys.path[:] = saved
            sys.modules.pop("entry", None)
    return sys.modules[name].parse_args


def parsers() -> dict[str, Callable[[list[str]], object]]:
    """script path -> a function that parses its arguments and raises (UserError, SystemExit) when they are bad."""
    found: dict[str, Callable[[list[str]], object]] = dict.fromkeys(TRAIN_SCRIPTS, _parse_train)
    found["scripts/bias_report.py"] = _argparse(bias_cli.build_parser)
    found["scripts/compare_reports.py"] = _argparse(compare_cli.build_parser)
    found["scripts/bias_study.py"] = _argparse(study_cli.build_parser)
    found["scripts/translate.py"] = _argparse(translate.build_parser)
    found["scripts/push_to_hub.py"] = _argparse(push_cli.build_parser)
    launch = _launch_parse_args()
    if launch is not None:
        found["sagemaker/launch.py"] = launch
    return found


def code_lines(text: str) -> Iterator[str]:
    """Every line of code in a markdown text (fenced blocks and inline spans), continuation lines joined."""
    for match in CODE.finditer(text):
        if match.group(1) is not None:
            code = match.group(1)
        else:
            code = match.group(2).replace("\n", " ")
        yield from code.replace("\\\n", " ").splitlines()


def command_problems(text: str, seen: dict[str, int]) -> list[str]:
    """Command lines of ``text`` whose script rejects their arguments; counts the commands checked in ``seen``."""
    problems = []
    scripts = parsers()
    makefile = (REPO / "Makefile").read_text()
    for line in code_lines(text):
        if not any(script in line for script in scripts) and not re.search(r"(^|\s)make\s", line):
            continue
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as err:
            problems.append(f"{line!r}: cannot be split like a shell would ({err})")
            continue
        if "..." in tokens or any(token.startswith("[") for token in tokens):
            continue  # a synopsis (`translate.py --engine ct2 --model DIR ...`, `[--out DIR]`), not a command
        for i, token in enumerate(tokens):
            if token == "make" and "-C" not in tokens[i:]:
                for target in tokens[i + 1 :]:
                    if target in SHELL_OPERATORS:
                        break
                    if target.startswith("-") or "=" in target:
                        continue
                    if target != ".venv/.installed" and not re.search(rf"^{re.escape(target)}:", makefile, re.M):
                        problems.append(f"{line!r}: the Makefile has no target {target!r}")
                continue
            script = next((s for s in scripts if token == s or token.endswith("/" + s)), None)
            if script is None:
                continue
            args = []
            for arg in tokens[i + 1 :]:
                if arg in SHELL_OPERATORS or arg.startswith(">"):
                    break
                args.append(arg)
            if not args:
                break  # a mention of the script, not a command
            seen[script] = seen.get(script, 0) + 1
            stderr = io.StringIO()
            try:
                with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                    scripts[script](args)
            except UserError as err:
                problems.append(f"{line!r}: {script} refuses it: {err}")
            except SystemExit as err:
                if err.code not in (0, None):
                    problems.append(f"{line!r}: {script} refuses it: {stderr.getvalue().strip()}")
            break
    return problems


def path_problems(text: str) -> list[str]:
    """Repository paths named in ``text`` that do not exist."""
    names = {m.group(1).rstrip(".") for m in PATH.finditer(text)}
    return sorted(f"{name}: no such file or folder in the repository" for name in names if not (REPO / name).exists())


def slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def link_problems(doc: Path, text: str) -> list[str]:
    """Relative links of ``text`` (written in ``doc``) to files or headings that do not exist."""
    problems = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        name, _, anchor = target.partition("#")
        file = (doc.parent / name).resolve() if name else doc
        if not file.exists():
            problems.append(f"link {target}: {file} does not exist")
        elif anchor and file.suffix == ".md" and anchor not in {slug(h) for h in HEADING.findall(file.read_text())}:
            problems.append(f"link {target}: no heading #{anchor} in {file.name}")
    return problems


def test_guides_exist():
    assert {str(p.relative_to(REPO)) for p in DOCS} >= {
        "README.md", "docs/README.md", "docs/ec2_p5.md", "docs/sagemaker.md", "docs/which_config.md",
        "docs/training.md", "docs/launchers.md", "docs/finetuning.md", "docs/translation.md",
        "docs/bias_evaluation.md", "docs/sharing.md", "docs/benchmarks.md", "docs/troubleshooting.md",
        "docs/testing.md",
    }  # fmt: skip


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_guide_names_only_existing_paths_and_links(doc):
    text = doc.read_text()
    assert path_problems(text) + link_problems(doc, text) == []


def test_guide_commands_use_only_accepted_flags(monkeypatch):
    monkeypatch.chdir(REPO)  # recipes are named relative to the repository root
    seen: dict[str, int] = {}
    problems = [f"{doc.name}: {p}" for doc in DOCS for p in command_problems(doc.read_text(), seen)]
    assert problems == []
    # the check is not vacuous: the guides do run these scripts
    assert sum(seen.get(script, 0) for script in TRAIN_SCRIPTS) >= 5
    assert seen.get("scripts/bias_report.py", 0) >= 1
    assert seen.get("sagemaker/launch.py", 0) >= 2 or not (REPO / "sagemaker" / "launch.py").exists()


def test_checks_catch_a_missing_file_an_unknown_flag_and_a_dead_link(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    text = """See `recipes/no_such_recipe.yaml` and [the config](which_config.md#no-such-heading).

```bash
accelerate launch --config_file accelerate_configs/multi_gpu.yaml scripts/train.py \\
    --config recipes/demo.yaml --max_step 10
python scripts/bias_report.py --mtgeneval_dir data --out reports/x
make no-such-target
```
"""
    seen: dict[str, int] = {}
    commands = command_problems(text, seen)
    assert len(commands) == 3, commands
    assert "max_step" in commands[0] and "did you mean 'max_steps'" in commands[0]
    assert "bias_report.py" in commands[1] and "no-such-target" in commands[2]
    assert path_problems(text) == ["recipes/no_such_recipe.yaml: no such file or folder in the repository"]
    doc = REPO / "docs" / "README.md"
    dead = "link which_config.md#no-such-heading: no heading #no-such-heading in which_config.md"
    assert link_problems(doc, text) == [dead]
