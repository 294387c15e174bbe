"""Strict reading of UTF-8 line files (plain or ``.gz``) and atomic writes.

Every reading problem becomes a one-line :class:`UserError` naming the file. Sentences that are scored (hypotheses,
references, a benchmark's lines) are read by :func:`read_sentences`, which gives them one Unicode normal form
(:data:`NORMAL_FORM`, by :func:`normal_text`), so that text is compared as text, not as code points.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bias_eval.core.errors import UserError

#: Longer lines are refused: no sentence is this long; a file without line ends (or with ``\r`` alone) is.
MAX_LINE_CHARS = 1 << 20

#: How files that are not UTF-8 text start: what they are, and what to do.
_RECOMPRESS = "decompress it, or recompress it with gzip as .gz"
_NOT_UTF8 = (
    (b"\xff\xfe\x00\x00", "UTF-32 (byte-order mark)", "convert it: iconv -f UTF-32 -t UTF-8"),
    (b"\x00\x00\xfe\xff", "UTF-32 (byte-order mark)", "convert it: iconv -f UTF-32 -t UTF-8"),
    (b"\xff\xfe", "UTF-16 (byte-order mark)", "convert it: iconv -f UTF-16 -t UTF-8"),
    (b"\xfe\xff", "UTF-16 (byte-order mark)", "convert it: iconv -f UTF-16 -t UTF-8"),
    (b"\x1f\x8b", "gzip-compressed", "give its name the .gz ending it lacks"),
    (b"\xfd7zXZ\x00", "xz-compressed", _RECOMPRESS),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", _RECOMPRESS),
    (b"BZh", "bzip2-compressed", _RECOMPRESS),
    (b"PK\x03\x04", "a zip archive", "extract it"),
)


def _not_utf8(head: bytes, path: Path, fallback: str) -> UserError:
    """The error for a file that starts with ``head`` and failed to decode: what it is when its first bytes say so,
    else ``fallback``."""
    for magic, what, todo in _NOT_UTF8:
        if head.startswith(magic):
            return UserError(f"{path}: {what}, not UTF-8 text; {todo}")
    return UserError(f"{path}: {fallback}")


def _check_length(lines: list[str], path: Path, first_line: int = 0) -> None:
    if lines and max(map(len, lines)) > MAX_LINE_CHARS:
        n = next(i for i, line in enumerate(lines) if len(line) > MAX_LINE_CHARS)
        raise UserError(
            f"{path}: line {first_line + n + 1} has {len(lines[n]):,} characters, more than {MAX_LINE_CHARS:,} (a "
            "file whose lines end in \\r alone, or without line ends?)"
        )


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
        raise _not_utf8(raw, path, f"invalid UTF-8 at line {line} (byte offset {err.start})") from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise _not_utf8(raw, path, f"NUL byte at line {line} (a binary or corrupt file?)")
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
                if len(data) > 4 * MAX_LINE_CHARS:  # UTF-8: at least a quarter as many characters as bytes
                    _check_length([data.decode("utf-8", "replace")], path, line_no)
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
    head = data if not offset else b""  # only the file's own first bytes say what it is
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = first_line + data.count(b"\n", 0, err.start) + 1
        raise _not_utf8(head, path, f"invalid UTF-8 at line {line} (byte offset {offset + err.start})") from None
    if "\x00" in text:
        line = first_line + text.count("\n", 0, text.index("\x00")) + 1
        raise _not_utf8(head, path, f"NUL byte at line {line} (a binary or corrupt file?)")
    if not offset:
        text = text.removeprefix("\ufeff")
    lines = [line.removesuffix("\r") for line in text[:-1].split("\n")]
    _check_length(lines, path, first_line)
    return lines


def read_lines(path: Path) -> list[str]:
    """Read a non-empty UTF-8 file as a list of lines without their line ends."""
    lines = split_lines(decode_utf8(read_bytes(path), path))
    _check_length(lines, path)
    return lines


#: The Unicode normal form every scored sentence is read in: composed (NFC), as most text is written; an ``é`` typed
#: as ``e`` and a combining accent is then the same text as one typed as ``é``.
NORMAL_FORM = "NFC"


def normal_text(text: str) -> str:
    """``text`` in :data:`NORMAL_FORM`: the one normaliser of every hypothesis, reference and benchmark line."""
    return text if unicodedata.is_normalized(NORMAL_FORM, text) else unicodedata.normalize(NORMAL_FORM, text)


def normal_lines(lines: Iterable[str]) -> list[str]:
    """:func:`normal_text` of each of ``lines``."""
    return [normal_text(line) for line in lines]


def read_sentences(path: Path) -> list[str]:
    """:func:`read_lines` of a file of sentences to score, each in :data:`NORMAL_FORM` (:func:`normal_text`)."""
    return normal_lines(read_lines(path))


def read_jsonl(path: Path, missing_ok: bool = False) -> list[tuple[int, Any]]:
    """``(line, value)`` of each non-blank line of a JSON-lines file, its lines cut by :func:`split_lines` (a U+2028
    inside a JSON string is text, not a line end). With ``missing_ok``, a missing or empty file has no lines. Every
    reading problem, and a line that is not JSON, is one :class:`UserError` naming the file and the line."""
    if missing_ok and (not path.is_file() or not path.stat().st_size):
        return []
    values = []
    for number, line in enumerate(read_lines(path), start=1):
        if line.strip():
            try:
                values.append((number, json.loads(line)))
            except json.JSONDecodeError as err:
                raise UserError(f"{path}: line {number} is not valid JSON ({err.msg})") from None
    return values


#: Every character :meth:`str.splitlines` ends a line at: text written one sentence per line must hold none.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


_LINE_BREAK = re.compile(f"[{LINE_BREAKS}]")


def line_break(text: str) -> str | None:
    """The first line-break character (:data:`LINE_BREAKS`) in ``text``, written as ``U+XXXX``; ``None`` if none."""
    found = _LINE_BREAK.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def check_writable(path: Path, flag: str, *, file: bool = False) -> None:
    """Refuse, before any work, a folder ``path`` to write into (it may not exist yet; with ``file``, the folder of
    the file ``path``) that cannot be written: a file stands where it or a parent goes, or its nearest existing parent
    takes no new file (read-only, full, not permitted). The probe file is removed again; ``flag`` names the option in
    the one-line error."""
    folder = path.parent if file else path
    existing = folder.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "exists and is not a folder" if existing == path.absolute() else f"{existing} is a file, not a folder"
        raise UserError(f"{flag} {path}: {what}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".mtkit-probe-", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise UserError(f"{flag} {path}: cannot write in {existing} ({err.strerror or err})") from None


def umask() -> int:
    """The process's file-creation mask: from ``/proc/self/status`` where there is one, else by setting it and
    setting it back at once."""
    try:
        found = re.search(r"^Umask:\s*([0-7]+)$", Path("/proc/self/status").read_text(), re.M)
    except OSError:
        found = None
    if found:
        return int(found.group(1), 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def follow_umask(path: Path | str, folder: bool = False, like: Path | None = None) -> None:
    """Give ``path`` the mode an ordinary write would: that of ``like`` when it exists (the file it replaces keeps
    its mode), else ``0o666`` (``0o777`` with ``folder``) less the umask. ``tempfile``'s files and folders are private
    (``0o600``, ``0o700``): renamed into place as they are, teammates sharing a run folder could not read them."""
    try:
        mode = stat.S_IMODE(like.stat().st_mode) if like is not None else None
    except OSError:
        mode = None
    os.chmod(path, mode if mode is not None else (0o777 if folder else 0o666) & ~umask())


def tree_modes(root: Path) -> dict[Path, int]:
    """The mode of ``root`` and of every file and folder under it (symbolic links left out); empty when ``root``
    does not exist. Given to :func:`follow_umask_tree`, they stay."""
    return {path: stat.S_IMODE(path.stat().st_mode) for path in _tree(root)}


def _tree(root: Path) -> list[Path]:
    root = Path(root)
    return [p for p in [root, *root.rglob("*")] if not p.is_symlink()] if root.exists() else []


def follow_umask_tree(root: Path, kept: dict[Path, int] | None = None) -> None:
    """:func:`follow_umask` for ``root`` and every file and folder under it (symbolic links left alone), except the
    paths of ``kept`` (:func:`tree_modes` taken before writing), which get their mode back as a file written over
    keeps its mode: for a folder written by libraries that make private files (safetensors writes
    ``model.safetensors`` as ``0o600``)."""
    kept = kept or {}
    for path in _tree(root):
        if path in kept:
            os.chmod(path, kept[path])
        else:
            follow_umask(path, folder=path.is_dir())


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``, with the mode an
    ordinary write would give it (:func:`follow_umask`); a write the file system refuses (no space, read-only, a
    file where a folder goes) is one :class:`UserError` naming ``path``, and leaves no temporary file."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        follow_umask(tmp, like=path)
        os.replace(tmp, path)
    except BaseException as err:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise UserError(f"{path}: cannot write ({err.strerror or err})") from None
        raise


def write_jsonl(path: Path, rows) -> None:
    """``rows`` (dicts) as JSON lines, UTF-8, written atomically."""
    atomic_write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8"))
