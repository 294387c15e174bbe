"""Which memory allocator this process runs on, and the tcmalloc a CPU run should be started with.

Training on a CPU frees and allocates the same large tensors every update (the logits of a 4,096-token batch
over a 10k vocabulary are 160 MB). glibc's malloc hands blocks above its 32 MB mmap limit back to the kernel
and takes them again, zero-filled page by page, so most of an update can go to page faults; tcmalloc keeps
them. A library cannot swap the allocator of a running process: it has to be preloaded at start
(``LD_PRELOAD``), which the Makefile does where tcmalloc is installed (docs/training.md#cpu-speed).
"""

from __future__ import annotations

import ctypes.util
from pathlib import Path

#: a name in a shared object's path -> the allocator it is
KNOWN = {"libtcmalloc": "tcmalloc", "libjemalloc": "jemalloc", "libmimalloc": "mimalloc"}


def allocator(maps: Path = Path("/proc/self/maps")) -> str:
    """``tcmalloc``, ``jemalloc`` or ``mimalloc`` when one is loaded into this process, else ``glibc`` (Linux)
    or ``system`` (where ``/proc`` says nothing)."""
    try:
        text = maps.read_text()
    except OSError:
        return "system"
    for marker, name in KNOWN.items():
        if marker in text:
            return name
    return "glibc"


def tcmalloc_library() -> str | None:
    """tcmalloc's shared object as ``LD_PRELOAD`` takes it (a soname the loader finds), or None if absent."""
    return ctypes.util.find_library("tcmalloc_minimal") or ctypes.util.find_library("tcmalloc")


def cpu_note() -> str | None:
    """One line for a CPU run on glibc's malloc: how to start it on tcmalloc, or how to install it."""
    if allocator() != "glibc":
        return None
    found = tcmalloc_library()
    how = f"start it with LD_PRELOAD={found}" if found else "install tcmalloc (Debian: libtcmalloc-minimal4)"
    return f"note: training on the CPU with glibc's malloc; {how} for up to 1.8x the speed (docs/training.md#cpu-speed)"
