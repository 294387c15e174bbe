"""Strict reading of UTF-8 line files (plain or ``.gz``) and atomic writes.

Every reading problem becomes a one-line :class:`UserError` naming the file.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mtkit.errors import UserError


def read_bytes(path: Path) -> bytes:
    """Return the bytes of ``path`` (decompressed if it ends in ``.gz``); missing, unreadable or empty is an error."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a file") from None
    except (OSError, EOFError) as err:
        raise UserError(f"{path}: cannot read ({getattr(err, 'strerror', None) or err})") from None
    if not raw:
        raise UserError(f"{path}: file is empty")
    return raw


def decode_utf8(raw: bytes, path: Path) -> str:
    """Decode ``raw`` as UTF-8 (a leading BOM is dropped); invalid bytes are reported with their line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise UserError(f"{path}: invalid UTF-8 at line {line} (byte offset {err.start})") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise UserError(f"{path}: NUL byte at line {line} (a binary or corrupt file?)")
    return text.removeprefix("\ufeff")


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only (never on U+2028 and friends, which may occur inside a sentence).

    A final newline does not start an extra line; a ``\\r`` before each newline is dropped.
    """
    if text.endswith("\n"):
        text = text[:-1]
    return [line.removesuffix("\r") for line in text.split("\n")]


def iter_lines(path: Path, chunk_bytes: int = 1 << 20) -> Iterator[str]:
    """The lines of ``path`` (plain or ``.gz``) one by one, with :func:`read_lines`' checks and messages, holding
    one chunk of the file in memory at a time."""
    try:
        handle = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a file") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read ({err.strerror or err})") from None
    line_no, offset, rest = 0, 0, b""
    with handle:
        while True:
            try:
                chunk = handle.read(chunk_bytes)
            except (OSError, EOFError) as err:
                raise UserError(f"{path}: cannot read ({getattr(err, 'strerror', None) or err})") from None
            if not chunk:
                break
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            if not cut:  # no line end yet: keep reading
                rest = data
                continue
            yield from _decode_chunk(data[:cut], path, line_no, offset)
            line_no, offset, rest = line_no + data.count(b"\n", 0, cut), offset + cut, data[cut:]
    if rest:
        yield from _decode_chunk(rest + b"\n", path, line_no, offset)
    elif not offset:
        raise UserError(f"{path}: file is empty")


def _decode_chunk(data: bytes, path: Path, first_line: int, offset: int) -> list[str]:
    """Whole lines (``data`` ends in a newline) decoded strictly; errors name the line and the file offset."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = first_line + data.count(b"\n", 0, err.start) + 1
        raise UserError(f"{path}: invalid UTF-8 at line {line} (byte offset {offset + err.start})") from None
    if "\x00" in text:
        line = first_line + text.count("\n", 0, text.index("\x00")) + 1
        raise UserError(f"{path}: NUL byte at line {line} (a binary or corrupt file?)")
    if not offset:
        text = text.removeprefix("\ufeff")
    return [line.removesuffix("\r") for line in text[:-1].split("\n")]


def read_lines(path: Path) -> list[str]:
    """Read a non-empty UTF-8 file as a list of lines without their line ends."""
    return split_lines(decode_utf8(read_bytes(path), path))


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl(path: Path, rows) -> None:
    """``rows`` (dicts) as JSON lines, UTF-8, written atomically."""
    atomic_write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8"))


def markdown_table(records: list[dict], columns: list[tuple[str, str, str]], label: str = "system") -> str:
    """``records`` as a markdown table: the ``label`` column, then one per ``(key, title, format)`` in ``columns``
    (``n/a`` where a record lacks the key)."""
    head = [label, *(title for _, title, _ in columns)]
    rows = [[str(r[label]), *(fmt.format(r[k]) if k in r else "n/a" for k, _, fmt in columns)] for r in records]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])
