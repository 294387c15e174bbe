"""The one main-process check: RANK 0 or unset is the main process, any other rank is not (LOCAL_RANK alike for the
main process of a host), and no other module reads RANK or LOCAL_RANK itself."""

import re
import subprocess
import sys

import pytest
from testing_utils import REPO

from mtkit.processes import is_local_main_process, is_main_process


@pytest.mark.parametrize(("rank", "main"), [(None, True), ("0", True), ("1", False), ("7", False)])
def test_rank_zero_or_unset_is_the_main_process(monkeypatch, rank, main):
    if rank is None:
        monkeypatch.delenv("RANK", raising=False)
    else:
        monkeypatch.setenv("RANK", rank)
    assert is_main_process() is main


@pytest.mark.parametrize(("rank", "main"), [(None, True), ("0", True), ("1", False)])
def test_a_given_environment_is_read_for_the_launch_and_the_host(rank, main):
    env = {} if rank is None else {"RANK": rank, "LOCAL_RANK": rank}
    assert is_main_process(env) is main and is_local_main_process(env) is main
    assert is_main_process({"RANK": "2", "LOCAL_RANK": "0"}) is False  # the main process of a host, not the launch's
    assert is_local_main_process({"RANK": "2", "LOCAL_RANK": "0"}) is True


def test_a_launched_child_reads_its_own_rank():
    """As a launcher starts it: a fresh interpreter with RANK in its environment."""
    code = "from mtkit.processes import is_main_process; print(is_main_process())"
    for rank, expected in (("0", "True"), ("3", "False")):
        env = {"RANK": rank, "PYTHONPATH": str(REPO), "PATH": ""}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected


def test_no_other_module_reads_rank_itself():
    read = re.compile(r"""(\.get\(|\w\[)\s*["'](LOCAL_)?RANK["']""")  # env.get("RANK"), os.environ["LOCAL_RANK"]
    readers = [
        str(path.relative_to(REPO))
        for root in ("mtkit", "bias_eval", "scripts", "sagemaker", "cluster", "notebooks")
        for path in (REPO / root).rglob("*.py")
        if read.search(path.read_text(encoding="utf-8")) and path.name != "processes.py"
    ]
    assert readers == []
    assert read.search('os.environ.get("LOCAL_RANK", "0")') and read.search("env['RANK']")  # the check can see one
