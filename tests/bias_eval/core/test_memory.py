"""Sizes refused before they are allocated: the machine's memory as the system reports it, and the one check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bias_eval.core.errors import UserError
from bias_eval.core.memory import check_fits, machine_memory


def test_the_machines_memory_is_what_the_kernel_reports():
    meminfo = Path("/proc/meminfo")
    if not meminfo.is_file():
        pytest.skip("no /proc/meminfo here")
    total_kib = int(re.search(r"^MemTotal:\s+(\d+) kB$", meminfo.read_text(), re.M).group(1))
    assert abs(machine_memory() - total_kib * 1024) < 64 * 2**20  # the kernel keeps a few pages of its own


def test_a_size_past_the_memory_is_one_line_naming_the_flag():
    check_fits(2**30, 2**30, "--x 5", "five things")
    check_fits(2**60, None, "--x 5", "five things")  # memory unknown: nothing refused
    with pytest.raises(UserError, match=r"^--x 5: five things is 2 GiB, more than this machine's 1 GiB; lower --x$"):
        check_fits(2**31, 2**30, "--x 5", "five things")
