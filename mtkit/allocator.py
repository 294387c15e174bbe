"""Which memory allocator this process runs on, and the tcmalloc a CPU run should be started with.

Training on a CPU frees and allocates the same large tensors every update (the logits of a 4,096-token batch
over a 10k vocabulary are 160 MB). glibc's malloc hands blocks above its 32 MB mmap limit back to the kernel
and takes them again, zero-filled page by page, so most of an update can go to page faults; tcmalloc keeps
them. A library cannot swap the allocator of a running process: it has to be preloaded at start
(``LD_PRELOAD``). The training scripts therefore start themselves again on tcmalloc where it is installed
(:func:`start_on_tcmalloc`), and the Makefile preloads it for every command (docs/training.md#cpu-speed).
"""

from __future__ import annotations

import ctypes.util
import os
import stat
import sys
from pathlib import Path

#: a name in a shared object's path -> the allocator it is
KNOWN = {"libtcmalloc": "tcmalloc", "libjemalloc": "jemalloc", "libmimalloc": "mimalloc"}
#: ``MTKIT_TCMALLOC=0`` keeps a training script on the allocator it was started with
OPT_OUT = "MTKIT_TCMALLOC"
#: set in the environment of the process started again, so that it is started again at most once
RESTARTED = "MTKIT_TCMALLOC_RESTARTED"
#: tcmalloc's report of every large allocation on stderr, silenced
QUIET = {"TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD": str(2**40)}
#: the device files of an NVIDIA driver: on such a machine tensors live in CUDA's allocator, and nothing is restarted
GPU_MARKERS = (Path("/dev/nvidiactl"), Path("/proc/driver/nvidia"))


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


def child_env(library: str | None, restart: bool = False) -> dict[str, str]:
    """This process's environment for a child started on ``library`` alone (``LD_PRELOAD``), or with nothing
    preloaded (``None``; the training scripts' own restart on tcmalloc then off unless ``restart``); this module's
    markers are never passed on."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", RESTARTED, OPT_OUT)}
    if library is not None:
        return QUIET | env | {"LD_PRELOAD": library}  # tcmalloc's reports silenced unless the user set their threshold
    return env if restart else env | {OPT_OUT: "0"}


def rereadable(program: str) -> bool:
    """Whether a new interpreter can read ``program`` (``sys.argv[0]``) again: ``-c`` code, or a script that is a
    regular file; not standard input (``-``, ``/dev/stdin``, ``/proc/self/fd/0``), a pipe or a FIFO, whose text the
    first process has consumed."""
    if program == "-c":
        return True
    if program in ("", "-"):
        return False
    try:
        return stat.S_ISREG(os.stat(program).st_mode)
    except OSError:
        return False


def started_as(program: str) -> bool:
    """Whether this interpreter was started to run ``program`` (``sys.argv[0]``): its own command line
    (``sys.orig_argv``) names it. A script run inside another program (``runpy`` from a test runner or an entry point)
    is not: starting that command again would run the other program again from its beginning."""
    return program in getattr(sys, "orig_argv", [])[1:]


def start_on_tcmalloc() -> None:
    """Replace this process by the same command started with tcmalloc preloaded (``os.execve``: the same process id
    and arguments; the environment gains ``LD_PRELOAD`` and a marker), on Linux without an NVIDIA driver, where
    tcmalloc is installed and this process runs on glibc's malloc; never twice, not with ``MTKIT_TCMALLOC=0``, and not
    for a script that cannot be read again (:func:`rereadable`) or that runs inside another program
    (:func:`started_as`). Where the restart cannot happen the process
    goes on as it is. Call it before anything heavy is imported: what the process did before is done again."""
    if (
        os.environ.get(OPT_OUT) == "0"
        or os.environ.get(RESTARTED)
        or not sys.platform.startswith("linux")
        or not sys.executable
        or not rereadable(sys.argv[0])
        or not started_as(sys.argv[0])
        or any(marker.exists() for marker in GPU_MARKERS)
        or allocator() != "glibc"
        or (library := tcmalloc_library()) is None
    ):
        return
    env = dict(os.environ) | {
        RESTARTED: "1",
        "LD_PRELOAD": " ".join(filter(None, (library, os.environ.get("LD_PRELOAD")))),
    }
    env = QUIET | env  # no line per large block on stderr, unless the user set its threshold
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError as err:  # the interpreter cannot be started again: carry on, on glibc's malloc
        print(f"note: could not start again on tcmalloc ({err}); going on with glibc's malloc", file=sys.stderr)
