"""Which allocator a process runs on, read from its own memory map; a preloaded tcmalloc is found."""

import os
import subprocess
import sys

import pytest
from testing_utils import REPO, system_library

from mtkit.allocator import GPU_MARKERS, allocator, tcmalloc_library

TCMALLOC = system_library("libtcmalloc_minimal.so.4")
#: where a training script starts itself again on tcmalloc: installed, and no NVIDIA driver
RESTARTS = tcmalloc_library() is not None and not any(marker.exists() for marker in GPU_MARKERS)


def test_the_memory_map_names_the_allocator(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    assert allocator(maps) == "glibc"
    maps.write_text(maps.read_text() + "7f02-7f03 r-xp 00000000 08:01 43 /usr/lib/libjemalloc.so.2\n")
    assert allocator(maps) == "jemalloc"
    assert allocator(tmp_path / "absent") == "system"


def run_child(preload: str | None, code: str = "", env: dict | None = None, args: tuple = ()) -> list[str]:
    code += "from mtkit.allocator import allocator, cpu_note; print(allocator()); print(cpu_note())"
    env = {"PATH": "/usr/bin:/bin", **({"LD_PRELOAD": preload} if preload else {}), **(env or {})}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.splitlines()


@pytest.mark.skipif(TCMALLOC is None, reason="tcmalloc is not installed")
def test_a_preloaded_tcmalloc_is_seen_and_glibc_gets_the_note():
    assert run_child(TCMALLOC) == ["tcmalloc", "None"]
    plain = run_child(None)
    assert plain[0] == "glibc" and plain[1].startswith("note: training on the CPU with glibc's malloc; start it with")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_without_tcmalloc_the_note_says_what_to_install():
    absent = "import mtkit.allocator as a; a.tcmalloc_library = lambda: None; "
    assert run_child(None, absent)[1].startswith("note: training on the CPU with glibc's malloc; install tcmalloc")


RESTART = "import sys; from mtkit.allocator import start_on_tcmalloc; start_on_tcmalloc(); print(sys.argv[1:]); "


@pytest.mark.skipif(not RESTARTS, reason="tcmalloc is not installed, or an NVIDIA driver is")
def test_a_script_starts_itself_again_on_tcmalloc_with_its_arguments():
    assert run_child(None, RESTART, args=("--config", "a b.yaml")) == ["['--config', 'a b.yaml']", "tcmalloc", "None"]


@pytest.mark.skipif(not RESTARTS, reason="tcmalloc is not installed, or an NVIDIA driver is")
def test_the_restart_is_turned_off_by_the_variable_and_happens_once():
    off = run_child(None, RESTART, env={"MTKIT_TCMALLOC": "0"})
    assert off[1] == "glibc" and off[2].startswith("note: training on the CPU with glibc's malloc; start it with")
    # the restarted process's marker: a preload that did not take does not start it again and again
    assert run_child(None, RESTART, env={"MTKIT_TCMALLOC_RESTARTED": "1"})[1] == "glibc"


@pytest.mark.skipif(not RESTARTS, reason="tcmalloc is not installed, or an NVIDIA driver is")
def test_a_script_read_from_standard_input_runs_once_where_it_is():
    code = RESTART + "from mtkit.allocator import allocator; print(allocator())"
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines() == ["[]", "glibc"]  # not started again: its source could not be read twice


@pytest.mark.skipif(not RESTARTS, reason="tcmalloc is not installed, or an NVIDIA driver is")
@pytest.mark.parametrize("path", ["/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"])
def test_a_script_piped_through_a_path_of_standard_input_runs_once(path, tmp_path):
    """``cat script.py | python /dev/stdin``: the pipe cannot be read again, so the script's body runs where it is,
    once; the same script redirected from a regular file (read again at that path) is started again on tcmalloc."""
    code = RESTART + "from mtkit.allocator import allocator; print(allocator())"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    piped = subprocess.run([sys.executable, path], input=code, capture_output=True, text=True, env=env, check=True)
    assert piped.stdout.splitlines() == ["[]", "glibc"]
    script = tmp_path / "script.py"
    script.write_text(code, encoding="utf-8")
    with script.open(encoding="utf-8") as stdin:
        redirected = subprocess.run([sys.executable, path], stdin=stdin, capture_output=True, text=True, env=env)
    assert redirected.stdout.splitlines() == ["[]", "tcmalloc"]


@pytest.mark.skipif(not RESTARTS, reason="tcmalloc is not installed, or an NVIDIA driver is")
def test_a_script_run_inside_another_program_does_not_start_that_program_again(tmp_path):
    """A training script run by ``runpy`` inside another program (a test runner, an entry point) on glibc's malloc:
    the other program goes on, once, where it is; the same script started as the program is started again."""
    script = tmp_path / "script.py"
    script.write_text(RESTART + "from mtkit.allocator import allocator; print(allocator())", encoding="utf-8")
    host = f"import runpy, sys; print('host'); sys.argv = [{str(script)!r}, '--x']; runpy.run_path(sys.argv[0])"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    inside = subprocess.run([sys.executable, "-c", host], capture_output=True, text=True, env=env, check=True)
    assert inside.stdout.splitlines() == ["host", "['--x']", "glibc"]  # the host's line once: not started again
    alone = subprocess.run([sys.executable, str(script), "--x"], capture_output=True, text=True, env=env, check=True)
    assert alone.stdout.splitlines() == ["['--x']", "tcmalloc"]


@pytest.mark.skipif(not RESTARTS, reason="tcmalloc is not installed, or an NVIDIA driver is")
def test_a_script_read_from_a_fifo_runs_once_where_it_is(tmp_path):
    code = RESTART + "from mtkit.allocator import allocator; print(allocator())"
    fifo = tmp_path / "script.fifo"
    os.mkfifo(fifo)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, str(fifo)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        fifo.write_text(code, encoding="utf-8")
        out, _ = child.communicate(timeout=20)  # started again, it would wait for a second writer
    finally:
        child.kill()
    assert child.returncode == 0 and out.splitlines() == ["[]", "glibc"]
