"""Shared fixtures: the shared MT-GenEval copy, small copies of its layout, and a CLI runner."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from geneval_helpers import SHARED_GENEVAL, make_subset

# Never wait for the (unreachable) Hugging Face Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def shared_geneval() -> Path:
    """The shared MT-GenEval dev data (tests that need it are skipped when it is absent)."""
    if not (SHARED_GENEVAL / "sentences" / "dev").is_dir():
        pytest.skip(f"shared MT-GenEval data not found at {SHARED_GENEVAL}")
    return SHARED_GENEVAL


@pytest.fixture
def small_geneval(shared_geneval: Path, tmp_path: Path) -> Path:
    """A 25-line, two-language (de, es) ``test`` split with only sentences/ (like the demo corpus)."""
    return make_subset(shared_geneval, tmp_path / "geneval", ("de", "es"), 25)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``bias_eval.cli.main`` in-process; return (exit status, stdout, stderr)."""
    from bias_eval.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
