"""The suite's own set-up (tests/conftest.py): the files it starts first are files of the suite."""

from conftest import FIRST
from testing_utils import REPO


def test_the_files_started_first_exist():
    assert len(set(FIRST)) == len(FIRST)
    assert [path for path in FIRST if not (REPO / path).is_file() or not path.startswith("tests/")] == []
