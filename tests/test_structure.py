"""The package's shape (docs/architecture.md): imports go one way through the layers, no module imports itself back
through others, every module imports, no library module changes warning filters on import, and no source file
is longer than 400 lines."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from testing_utils import REPO

#: the layers, lowest first; a module may import from its own layer or a lower one, never a higher one
LAYERS: list[tuple[str, ...]] = [
    # bias_eval: a library of its own, below all of mtkit, which uses it (its markdown, text files, BLEU, tags):
    # what both benchmarks share, then each benchmark (neither imports the other: SIBLINGS), then their comparisons
    ("bias_eval", "bias_eval.core", "bias_eval.metric"),
    ("bias_eval.mtgeneval", "bias_eval.winomt"),
    ("bias_eval.compare",),
    ("bias_eval.benchmarks",),
    ("mtkit", "mtkit.config", "mtkit.errors"),
    ("mtkit.data", "mtkit.model", "mtkit.distributed"),
    ("mtkit.decode",),
    ("mtkit.evaluation",),
    ("mtkit.train",),
    ("mtkit.export",),
    ("mtkit.pipeline", "mtkit.cli", "mtkit.demo", "benchmarks", "nbhelpers", "scripts", "sagemaker"),
]
#: where each kind of source lives (benchmarks and notebook helpers are beside their users, not in the package)
SOURCES = {
    "mtkit": REPO / "mtkit",
    "bias_eval": REPO / "bias_eval",
    "benchmarks": REPO / "scripts" / "benchmarks",
    "nbhelpers": REPO / "notebooks" / "nbhelpers.py",
    "sagemaker": REPO / "sagemaker",  # the SageMaker job's entry point and its launcher
}
MAX_LINES = 400


def module_files() -> dict[str, Path]:
    """Every first-party module name -> its file (scripts/*.py as ``scripts.<name>``)."""
    found: dict[str, Path] = {}
    for name, root in SOURCES.items():
        if root.is_file():
            found[name] = root
            continue
        for path in root.rglob("*.py"):
            parts = [name, *path.relative_to(root).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    for path in (REPO / "scripts").glob("*.py"):
        found[f"scripts.{path.stem}"] = path
    return found


MODULES = module_files()


def layer_of(module: str) -> int:
    """The index of the most specific layer prefix that ``module`` falls under."""
    best, depth = -1, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = i, prefix.count(".")
    assert best >= 0, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return best


def first_party_imports(module: str, path: Path) -> set[str]:
    """The first-party modules ``path`` imports, at top level or inside functions (``from a import b`` counts as
    ``a.b`` when that is a module, else ``a``)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


GRAPH = {module: first_party_imports(module, path) for module, path in MODULES.items()}


def test_the_layers_list_every_module_and_imports_go_one_way() -> None:
    wrong = [
        f"{module} (layer {layer_of(module)}) imports {other} (layer {layer_of(other)})"
        for module, imported in GRAPH.items()
        for other in imported
        if layer_of(other) > layer_of(module)
    ]
    assert not wrong, "imports against the layer order:\n" + "\n".join(sorted(wrong))


#: packages of one layer that never import each other (each benchmark of ``bias_eval`` stands on its own)
SIBLINGS = ("bias_eval.mtgeneval", "bias_eval.winomt")


def test_siblings_do_not_import_each_other() -> None:
    def package(module: str) -> str | None:
        return next((p for p in SIBLINGS if module == p or module.startswith(p + ".")), None)

    wrong = [
        f"{module} imports {other}"
        for module, imported in GRAPH.items()
        for other in imported
        if package(module) and package(other) and package(module) != package(other)
    ]
    assert not wrong, "one benchmark imports another:\n" + "\n".join(sorted(wrong))


def test_no_import_circle() -> None:
    """Depth-first search for a back edge; the circle found is named in full."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module], _ = 1, path.append(module)
        for other in sorted(GRAPH[module]):
            if state.get(other) == 1:
                return path[path.index(other) :] + [other]
            if other not in state and (circle := visit(other)):
                return circle
        state[module], _ = 2, path.pop()
        return None

    for module in sorted(GRAPH):
        if module not in state and (circle := visit(module)):
            pytest.fail("import circle: " + " -> ".join(circle))


def test_a_planted_circle_and_an_upward_import_are_caught(tmp_path: Path) -> None:
    """The checks above can fail: a module of the data layer importing the trainer is found by both."""
    planted = tmp_path / "planted.py"
    planted.write_text("from mtkit.train.trainer import Trainer\n")
    imported = first_party_imports("mtkit.data.planted", planted)
    assert imported == {"mtkit.train.trainer"}
    assert layer_of("mtkit.train.trainer") > layer_of("mtkit.data.planted")
    relative = tmp_path / "relative.py"
    relative.write_text("from ..model import presets\nfrom . import batching\n")
    assert first_party_imports("mtkit.data.relative", relative) == {"mtkit.model.presets", "mtkit.data.batching"}


def cli_importers(graph: dict[str, set[str]]) -> list[str]:
    """The library modules (``mtkit``'s and ``bias_eval``'s, the command line's own aside) that import from
    ``mtkit/cli/``."""
    library = [m for m in graph if m.startswith(("mtkit", "bias_eval")) and not m.startswith("mtkit.cli")]
    return sorted(f"{m} imports {o}" for m in library for o in graph[m] if o.startswith("mtkit.cli"))


def test_no_library_module_imports_the_command_line(tmp_path: Path) -> None:
    """The library (the pipeline too) calls functions, never a script's ``main`` or parser; a planted import of the
    command line is caught."""
    assert cli_importers(GRAPH) == []
    planted = tmp_path / "planted.py"
    planted.write_text("from mtkit.cli.bias_report import main\n")
    graph = {"mtkit.planted": first_party_imports("mtkit.planted", planted)}
    assert cli_importers(graph) == ["mtkit.planted imports mtkit.cli.bias_report"]


#: imports ``argv[1:]`` in a fresh interpreter where any import of ``mtkit`` fails, then checks that none happened
WITHOUT_MTKIT = textwrap.dedent(
    """
    import importlib, importlib.abc, sys

    class NoMtkit(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "mtkit" or name.startswith("mtkit."):
                raise ImportError(f"mtkit is hidden: {name}")

    sys.meta_path.insert(0, NoMtkit())
    try:
        import mtkit.errors
    except ImportError:
        pass
    else:
        sys.exit("the blocker let mtkit through")
    for module in sys.argv[1:]:
        importlib.import_module(module)
    assert not [m for m in sys.modules if m == "mtkit" or m.startswith("mtkit.")], "mtkit imported"
    """
)


def import_without_mtkit(modules: list[str], path: Path = REPO) -> subprocess.CompletedProcess:
    """:data:`WITHOUT_MTKIT` run on ``modules`` with ``path`` first on ``sys.path``."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{path}:{REPO}", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    cmd = [sys.executable, "-c", WITHOUT_MTKIT, *modules]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_bias_eval_imports_with_mtkit_hidden(tmp_path: Path) -> None:
    """Every module of ``bias_eval`` imports in an interpreter that cannot import ``mtkit``; a module that imports
    it fails there."""
    modules = sorted(m for m in MODULES if m == "bias_eval" or m.startswith("bias_eval."))
    assert "bias_eval.mtgeneval.make" in modules and "bias_eval.metric.metric" in modules
    done = import_without_mtkit([*modules, "bias_eval.mtgeneval.make"])
    assert done.returncode == 0, done.stderr
    (tmp_path / "leaky.py").write_text("import bias_eval.core.markdown\nfrom mtkit.errors import UserError\n")
    planted = import_without_mtkit(["leaky"], tmp_path)
    assert planted.returncode != 0 and "mtkit is hidden: mtkit" in planted.stderr


def test_every_module_imports() -> None:
    sys.path[:0] = [str(REPO / "scripts"), str(REPO / "notebooks")]
    try:
        for module in sorted(MODULES):
            if not module.startswith(("scripts.", "sagemaker.")):  # run as files, their folder on the path
                importlib.import_module(module)
    finally:
        del sys.path[:2]


def test_no_library_module_changes_warning_filters_on_import() -> None:
    """A top-level ``warnings.filterwarnings``/``simplefilter`` in a library module would change every importer's
    warnings; scripts and the notebook helpers may."""
    offenders = []
    for module, path in MODULES.items():
        if not module.startswith(("mtkit", "bias_eval")):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            call = node.value if isinstance(node, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                if call.func.attr in ("filterwarnings", "simplefilter"):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, offenders


def test_no_source_file_over_400_lines() -> None:
    sources = [*REPO.glob("mtkit/**/*.py"), *REPO.glob("bias_eval/**/*.py"), *REPO.glob("scripts/**/*.py")]
    sources += [*REPO.glob("notebooks/*.py"), *REPO.glob("sagemaker/*.py")]
    long = {
        str(p.relative_to(REPO)): n
        for p in sources
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_architecture_page_and_readme_name_every_package_and_module() -> None:
    """docs/architecture.md names every module of the package map, and the README's layout table every package."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = []
    for module in MODULES:
        if module.startswith(("mtkit.", "bias_eval.")) and not module.startswith("mtkit.cli."):
            package, _, name = module.rpartition(".")
            if f"`{name}`" not in page and f"`{package.rpartition('.')[2]}/`" not in page:
                missing.append(module)
    assert not missing, f"docs/architecture.md does not name: {missing}"
    packages = sorted({p.parent.name for p in (REPO / "mtkit").glob("*/__init__.py")})
    assert [p for p in packages if f"`mtkit/{p}/`" not in page] == []
    assert [p for p in packages if f"`mtkit/{p}/`" not in readme] == [], "the README's layout table misses a package"
    assert "docs/architecture.md" in readme
