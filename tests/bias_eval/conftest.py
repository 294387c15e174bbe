"""Fixtures of the bias_eval tests: a CLI runner (``shared_geneval`` and ``small_geneval`` are in tests/conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

# Never wait for the (unreachable) Hugging Face Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``mtkit.cli.bias_report.main`` in-process; return (exit status, stdout, stderr)."""
    from mtkit.cli.bias_report import main

    def run(*argv: str) -> tuple[int, str, str]:
        try:
            status = main(list(argv))
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
