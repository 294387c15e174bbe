"""The code base is ruff clean (lint rules and formatting from pyproject.toml)."""

from testing_utils import run_script


def test_ruff_check_and_format():
    check = run_script("-", "ruff", "check", ".")
    assert check.returncode == 0, check.stdout[-3000:]
    fmt = run_script("-", "ruff", "format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout[-3000:]
