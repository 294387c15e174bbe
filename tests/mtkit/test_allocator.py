"""Which allocator a process runs on, read from its own memory map; a preloaded tcmalloc is found."""

import subprocess
import sys

import pytest

from mtkit.allocator import allocator


def installed(name: str) -> str | None:
    """The loader cache's path of ``name`` (ldconfig, not the code under test), or None."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    return next((line.split("=>")[-1].strip() for line in out.splitlines() if name in line), None)


def test_the_memory_map_names_the_allocator(tmp_path):
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 42 /usr/lib/x86_64-linux-gnu/libc.so.6\n")
    assert allocator(maps) == "glibc"
    maps.write_text(maps.read_text() + "7f02-7f03 r-xp 00000000 08:01 43 /usr/lib/libjemalloc.so.2\n")
    assert allocator(maps) == "jemalloc"
    assert allocator(tmp_path / "absent") == "system"


def run_child(env_preload: str | None) -> str:
    code = "from mtkit.allocator import allocator, cpu_note; print(allocator()); print(cpu_note())"
    env = {"PATH": "/usr/bin:/bin", **({"LD_PRELOAD": env_preload} if env_preload else {})}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout


@pytest.mark.skipif(installed("libtcmalloc_minimal.so.4") is None, reason="tcmalloc is not installed")
def test_a_preloaded_tcmalloc_is_seen_and_glibc_gets_the_note():
    preloaded = run_child(installed("libtcmalloc_minimal.so.4")).splitlines()
    assert preloaded == ["tcmalloc", "None"]
    plain = run_child(None).splitlines()
    assert plain[0] == "glibc" and plain[1].startswith("note: training on the CPU with glibc's malloc; start it with")
