import gzip

import pytest

from mtkit.errors import UserError
from mtkit.textio import atomic_write, read_lines


def test_plain_gz_bom_and_crlf(tmp_path):
    (tmp_path / "a.txt").write_bytes("\ufeffeins\r\nzwei\r\n".encode())
    assert read_lines(tmp_path / "a.txt") == ["eins", "zwei"]
    with gzip.open(tmp_path / "b.de.gz", "wt", encoding="utf-8") as f:
        f.write("drei\nvier\u2028noch vier\n")
    assert read_lines(tmp_path / "b.de.gz") == ["drei", "vier\u2028noch vier"]  # only \n ends a line


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "file is empty"), (b"ok\nbad \xff\n", "invalid UTF-8 at line 2"), (b"\x1f\x8b broken", "cannot read")],
)
def test_bad_files(tmp_path, data, message):
    path = tmp_path / ("x.gz" if data.startswith(b"\x1f\x8b") else "x.txt")
    path.write_bytes(data)
    with pytest.raises(UserError, match=message):
        read_lines(path)
    with pytest.raises(UserError, match="file not found"):
        read_lines(tmp_path / "missing.txt")


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    atomic_write(target, b"one\n")
    atomic_write(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]
