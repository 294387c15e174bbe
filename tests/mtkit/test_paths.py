"""An output that is, contains or lies inside an input is refused in one line naming both (links resolved)."""

from __future__ import annotations

import pytest

from mtkit.errors import UserError
from mtkit.paths import check_apart


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.en").write_text("a\n")
    (tmp_path / "link").symlink_to(tmp_path / "data")
    return tmp_path


@pytest.mark.parametrize(
    ("output", "how"),
    [
        ("data", "is"),
        ("link", "is"),  # the same folder through a symbolic link
        ("data/run", "lies inside"),
        ("link/run/deeper", "lies inside"),
        (".", "contains"),
    ],
)
def test_an_output_among_the_inputs_is_refused(tree, output, how):
    with pytest.raises(UserError) as err:
        check_apart({"--data_dir": tree / "data", "--text": None}, {"--output_dir": tree / output})
    message = str(err.value)
    assert message.startswith(f"--output_dir {tree / output}: {how} the input --data_dir {tree / 'data'}")
    assert "\n" not in message


def test_outputs_apart_from_the_inputs_and_missing_inputs_pass(tree):
    check_apart({"--data_dir": tree / "data"}, {"--output_dir": tree / "run", "--json": None})
    check_apart({"--data_dir": tree / "data2"}, {"--output_dir": tree / "data2" / "run"})  # nothing there to lose
    check_apart({"--model": "google/flan-t5-small"}, {"--out": "google"})  # a hub id is no path here
    check_apart({"--data_dir": [tree / "data", None]}, {"--output_dir": tree / "datarun"})  # a prefix is no parent


def test_every_input_of_a_list_is_checked(tree):
    (tree / "b.txt").write_text("b\n")
    with pytest.raises(UserError, match=r"--output .*b\.txt: is the input --text"):
        check_apart({"--text": [tree / "a.txt", tree / "b.txt"]}, {"--output": tree / "b.txt"})
