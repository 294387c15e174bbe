"""One writer per run folder: a lock file in ``--output_dir`` that a run holds from before it writes anything until it
ends, so that a second run on the same folder (a requeue beside a manual relaunch, two nodes given one folder) is
refused in one line naming the holder.

The lock is a file created with ``O_CREAT | O_EXCL`` (atomic on local file systems and on NFSv3+, Lustre and GPFS,
where ``flock``/``fcntl`` locks may be missing or local to a node, as ``filelock``'s ``SoftFileLock`` does it) that
holds the holder's host, process id and start time; a thread touches it every :data:`HEARTBEAT_S` seconds. A lock
left behind by a holder that died is stale and taken over: on the same host when its process is gone, from another
host when its heartbeat is older than :data:`STALE_S` (torchelastic's rendezvous judges dead nodes by heartbeat
age the same way)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from bias_eval.core.textio import check_writable
from mtkit.errors import UserError
from mtkit.processes import is_main_process

#: the lock's file name in the run folder
LOCK_FILE = "train.lock"
#: seconds between two touches of the lock file by its holder
HEARTBEAT_S = 30.0
#: a lock of another host whose heartbeat is older than this many seconds is stale (ten missed heartbeats)
STALE_S = 10 * HEARTBEAT_S


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def read_holder(path: Path) -> dict | None:
    """The holder a lock file names (``host``, ``pid``, ``since``), or ``None`` when it is gone or unreadable."""
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def settled_holder(path: Path, wait_s: float = 2.0) -> dict | None:
    """The holder of ``path``, read again for up to ``wait_s`` seconds while the file is still being written (a run
    that has just created it)."""
    deadline = time.monotonic() + wait_s
    while (holder := read_holder(path)) is None and path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return holder


def lock_run(folder: str | Path, flag: str = "--output_dir") -> RunLock | None:
    """The lock of a run folder, taken by the main process of a launch (``RANK`` 0 or unset) and no other: one writer
    per folder however many processes and nodes the run has."""
    return RunLock(folder, flag).acquire() if is_main_process() else None


def slurm_attempt() -> list | None:
    """This process's Slurm job and how often it was requeued (``SLURM_JOB_ID``, ``SLURM_RESTART_COUNT``)."""
    job = os.environ.get("SLURM_JOB_ID")
    return [job, int(os.environ.get("SLURM_RESTART_COUNT") or 0)] if job else None  # a list, as JSON reads it back


def is_stale(path: Path, holder: dict | None, now: float | None = None) -> bool:
    """Whether the lock at ``path`` was left by a holder that is gone: its process ended (same host), it was an
    earlier attempt of this requeued Slurm job (Slurm starts a requeued job once the last attempt has ended), or its
    heartbeat stopped :data:`STALE_S` seconds ago (any host; an unreadable lock file too, once as old)."""
    ours, theirs = slurm_attempt(), (holder or {}).get("slurm")
    if ours and isinstance(theirs, list) and len(theirs) == 2 and theirs[0] == ours[0] and theirs[1] < ours[1]:
        return True
    try:
        age = (now or time.time()) - path.stat().st_mtime
    except FileNotFoundError:
        return True
    if holder and holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
        return not _alive(holder["pid"])
    return age > STALE_S


class RunLock:
    """The lock of run folder ``folder`` (``flag`` names it in errors): :meth:`acquire`, then :meth:`release`
    (also a context manager)."""

    def __init__(self, folder: str | Path, flag: str = "--output_dir") -> None:
        self.folder, self.flag = Path(folder), flag
        self.path = self.folder / LOCK_FILE
        self.me = {"host": socket.gethostname(), "pid": os.getpid(), "since": time.time(), "id": uuid.uuid4().hex,
                   "slurm": slurm_attempt()}  # fmt: skip
        self._stop = threading.Event()
        self._made_folder = False
        self._held = False

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self) -> RunLock:
        """Take the lock, taking over a stale one; a live holder is one :class:`UserError` naming it."""
        check_writable(self.folder, self.flag)  # not a file, not read-only, not full: the run's own words
        self._made_folder = not self.folder.exists()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for _ in range(3):  # a stale lock taken over, then the race for the new one
                if self._create():
                    break
                holder = settled_holder(self.path)
                if not is_stale(self.path, holder):
                    raise UserError(f"{self.flag} {self.folder}: in use by another run ({describe(holder)}); wait "
                                    f"for it to end, or train into another {self.flag}")  # fmt: skip
                self._take_over(holder)
            else:
                raise UserError(f"{self.flag} {self.folder}: {LOCK_FILE} keeps being taken; is a run starting there?")
        except OSError as err:
            self._remove_folder()
            raise UserError(f"{self.flag} {self.folder}: cannot write {LOCK_FILE} ({err.strerror or err})") from None
        except UserError:
            self._remove_folder()
            raise
        threading.Thread(target=self._beat, name="mtkit-run-lock", daemon=True).start()
        return self

    def _create(self) -> bool:
        """Create the lock file holding :attr:`me`; False when it exists."""
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        self._held = True
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.me, handle)
        except OSError:
            self.path.unlink(missing_ok=True)  # a full disk: no half-written lock left to block the next run
            self._held = False
            raise
        return True

    def _take_over(self, holder: dict | None) -> None:
        """Move a stale lock aside, atomically, and delete it; a lock that turns out to be another's new one (taken
        between our reading and our move) is put back."""
        aside = self.path.with_name(f".{LOCK_FILE}.stale-{self.me['id']}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # another newcomer moved it first
        if read_holder(aside) != holder:  # a fresh lock, not the stale one we judged
            try:
                os.link(aside, self.path)  # fails if yet another lock stands there now
            except FileExistsError:
                pass
        aside.unlink(missing_ok=True)
        print(f"{self.flag} {self.folder}: took over the stale lock of a run that ended ({describe(holder)})")

    def _beat(self) -> None:
        """Touch the lock file every :data:`HEARTBEAT_S` seconds while it is ours."""
        while not self._stop.wait(HEARTBEAT_S):
            if read_holder(self.path) != self.me:
                return
            try:
                os.utime(self.path)
            except OSError:
                return

    def release(self) -> None:
        """Delete the lock file if it is still ours (and the run folder, if the run made it and left it empty)."""
        self._stop.set()
        if self._held and read_holder(self.path) == self.me:
            self.path.unlink(missing_ok=True)
        self._held = False
        self._remove_folder()

    def _remove_folder(self) -> None:
        if self._made_folder:
            try:
                self.folder.rmdir()  # only if empty: a run that was refused leaves nothing behind
            except OSError:
                pass


def describe(holder: dict | None) -> str:
    """``host H, process P, since 2026-11-24 22:40:03 UTC`` (what a lock file says of its holder)."""
    if not holder:
        return "holder unknown: its lock file is unreadable"
    since = holder.get("since")
    when = datetime.fromtimestamp(since, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if since else "?"
    return f"host {holder.get('host')}, process {holder.get('pid')}, since {when}"
