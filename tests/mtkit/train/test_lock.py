"""One writer per run folder: two train.py started together on one --output_dir, one refused in one line naming the
holder, the other finished; a lock left by a dead holder (or a silent host) taken over; released at the end."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from testing_utils import FAST_RUN, run_script, train_in_process
from transformers import AutoModelForSeq2SeqLM

from mtkit.errors import UserError
from mtkit.train import lock as lock_module
from mtkit.train.lock import LOCK_FILE, STALE_S, RunLock, lock_run


def dead_pid() -> int:
    """The id of a process of this host that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write_lock(folder, host: str, pid: int, age_s: float = 0.0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    path.write_text(json.dumps({"host": host, "pid": pid, "since": time.time() - age_s, "id": "x"}))
    os.utime(path, (time.time() - age_s, time.time() - age_s))


def test_two_runs_started_together_one_is_refused_one_finishes(multi30k_small, tmp_path):
    out = tmp_path / "run"
    # the lock is taken before the data is read: the run that wins holds it through the data, the tokenizer's training
    # and the model's creation, seconds after the other has reached the lock
    argv = ["--data_dir", str(multi30k_small), *FAST_RUN, "--output_dir", str(out), "--max_steps", "4",
            "--eval_steps", "4", "--save_steps", "4", "--eval_max_samples", "4", "--max_new_tokens", "4",
            "--test_split", "none"]  # fmt: skip
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: run_script("train.py", *argv), range(2))
    results = sorted([first, second], key=lambda r: r.returncode)
    done, refused = results
    assert (done.returncode, refused.returncode) == (0, 2), (done.stderr[-2000:], refused.stderr[-2000:])
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in refused.stderr
    pattern = (
        rf"error: --output_dir {re.escape(str(out))}: in use by another run \(host {re.escape(socket.gethostname())}, "
        r"process \d+, since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); wait for it to end"
    )
    assert re.match(pattern, lines[0]), lines[0]
    assert AutoModelForSeq2SeqLM.from_pretrained(out / "final").config.model_type == "bart"
    assert not (out / LOCK_FILE).exists()  # released at the end
    again = train_in_process(*argv)  # a relaunch after the run ended is not refused: it resumes (and stops)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resum" in (again.stdout + again.stderr).lower()


def test_a_live_holder_is_named_and_nothing_is_written(tmp_path):
    write_lock(tmp_path / "run", socket.gethostname(), os.getpid())
    before = (tmp_path / "run" / LOCK_FILE).read_bytes()
    with pytest.raises(UserError, match=rf"in use by another run \(host {socket.gethostname()}, process {os.getpid()}"):
        RunLock(tmp_path / "run").acquire()
    assert (tmp_path / "run" / LOCK_FILE).read_bytes() == before
    write_lock(tmp_path / "far", "another-host", 1, age_s=STALE_S / 2)  # a heartbeat not yet too old
    with pytest.raises(UserError, match=r"in use by another run \(host another-host, process 1, since "):
        RunLock(tmp_path / "far").acquire()


@pytest.mark.parametrize(("host", "age_s"), [("this", 0.0), ("another-host", STALE_S + 60)])
def test_a_stale_lock_is_taken_over(tmp_path, capsys, host, age_s):
    """A holder whose process is gone (this host), or whose heartbeat stopped (another host)."""
    write_lock(tmp_path, socket.gethostname() if host == "this" else host, dead_pid(), age_s)
    with RunLock(tmp_path) as held:
        assert json.loads((tmp_path / LOCK_FILE).read_text()) == held.me
        assert held.me["pid"] == os.getpid() and held.me["host"] == socket.gethostname()
    assert "took over the stale lock" in capsys.readouterr().out
    assert not (tmp_path / LOCK_FILE).exists()


def test_a_requeued_slurm_job_takes_over_its_earlier_attempt_s_lock(tmp_path, monkeypatch):
    """A requeue lands on another node at once: the earlier attempt's lock (same job, lower restart count, heartbeat
    still fresh) is taken over; another job's is not."""
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")
    for job, taken in (("41", False), ("42", True)):
        write_lock(tmp_path / job, "node-a", 1)
        holder = json.loads((tmp_path / job / LOCK_FILE).read_text()) | {"slurm": [job, 0]}
        (tmp_path / job / LOCK_FILE).write_text(json.dumps(holder))
        if taken:
            with RunLock(tmp_path / job) as held:
                assert held.me["slurm"] == ["42", 1]
            assert not (tmp_path / job / LOCK_FILE).exists()  # released: what it wrote is what it reads back
        else:
            with pytest.raises(UserError, match="in use by another run"):
                RunLock(tmp_path / job).acquire()


def test_the_heartbeat_touches_the_lock_and_release_leaves_no_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(lock_module, "HEARTBEAT_S", 0.05)
    folder = tmp_path / "new" / "run"
    held = RunLock(folder).acquire()
    old = time.time() - 1000
    os.utime(folder / LOCK_FILE, (old, old))
    deadline = time.time() + 10
    while (folder / LOCK_FILE).stat().st_mtime < old + 500 and time.time() < deadline:
        time.sleep(0.05)
    assert (folder / LOCK_FILE).stat().st_mtime > old + 500  # touched again
    held.release()
    assert not folder.exists() and (tmp_path / "new").is_dir()  # the folder it made, left empty, is gone


def test_only_the_main_process_of_a_launch_locks(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    assert lock_run(tmp_path / "run") is None and not (tmp_path / "run").exists()
    monkeypatch.setenv("RANK", "0")
    held = lock_run(tmp_path / "run")
    assert held is not None and (tmp_path / "run" / LOCK_FILE).is_file()
    held.release()
