"""Which allocator a process runs on, read from its own memory map; a preloaded tcmalloc is found."""

import subprocess
import sys

import pytest
from testing_utils import system_library

from mtkit.allocator import allocator

TCMALLOC = system_library("libtcmalloc_minimal.so.4")


def test_the_memory_map_names_the_allocator(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    assert allocator(maps) == "glibc"
    maps.write_text(maps.read_text() + "7f02-7f03 r-xp 00000000 08:01 43 /usr/lib/libjemalloc.so.2\n")
    assert allocator(maps) == "jemalloc"
    assert allocator(tmp_path / "absent") == "system"


def run_child(preload: str | None, code: str = "") -> list[str]:
    code += "from mtkit.allocator import allocator, cpu_note; print(allocator()); print(cpu_note())"
    env = {"PATH": "/usr/bin:/bin", **({"LD_PRELOAD": preload} if preload else {})}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
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
