"""A report's files: strict JSON (``clean_json``, :func:`jsonl`), all of a report's files written at once
(:func:`write_report`), and a report folder checked before any work (:func:`check_report_folder`)."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bias_eval.core.errors import UserError
from bias_eval.core.textio import follow_umask


def clean_json(value: Any) -> Any:
    """``value`` with NaN/inf turned into ``None`` and tuples into lists, so that it is strict JSON."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


def jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    """One strict-JSON object per line."""
    return "".join(json.dumps(clean_json(row), ensure_ascii=False) + "\n" for row in rows)


def write_report(outdir: Path, files: Mapping[str, bytes]) -> None:
    """Write all ``files`` into ``outdir`` at once: into a temporary sibling folder, then moved in place.

    A new OUTDIR appears by a single rename; in an existing OUTDIR (e.g. holding the hypothesis cache)
    each file is replaced atomically, after all of them have been written successfully.
    """
    outdir = outdir.absolute()
    outdir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{outdir.name}.", suffix=".tmp", dir=outdir.parent))
    follow_umask(staging, folder=True)  # mkdtemp's folder is private (0o700); a new OUTDIR is this folder renamed
    try:
        for name, data in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)  # figures/
            (staging / name).write_bytes(data)
        if not outdir.exists():
            os.rename(staging, outdir)
            return
        for name in files:
            (outdir / name).parent.mkdir(parents=True, exist_ok=True)
            follow_umask(staging / name, like=outdir / name)  # a report file written over keeps its mode
            os.replace(staging / name, outdir / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def report_benchmark(folder: Path) -> str | None:
    """The benchmark of the report ``folder`` holds: its ``metrics.json``'s ``benchmark`` (``mtgeneval`` when it
    names none, as an MT-GenEval report does); ``None`` when it holds no ``metrics.json``."""
    path = folder / "metrics.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return "unreadable"
    return str(doc.get("benchmark", "mtgeneval")) if isinstance(doc, dict) else "unreadable"


def check_report_folder(out: Path, benchmark: str, flag: str = "--out") -> None:
    """Refuse, before any work, a report folder ``out`` that holds another benchmark's report (or a ``metrics.json``
    that is no report): the new report's files would mix with its own. One line naming ``flag``."""
    found = report_benchmark(out)
    if found is not None and found != benchmark:
        what = "a metrics.json that is no report" if found == "unreadable" else f"a {found} report (metrics.json)"
        raise UserError(f"{flag} {out}: holds {what}; a {benchmark} report would mix with its files: give another "
                        "folder")  # fmt: skip
