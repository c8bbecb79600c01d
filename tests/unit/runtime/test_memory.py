"""The long-running commands' allocator (runtime/memory.py): with the arenas limited, threads that allocate at
once share two arenas instead of one each (counted by glibc's own malloc_info), so that what one thread freed
serves the others and is not held for it; and the free memory is handed back on trim."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from kubectl_kcache.runtime import memory

pytestmark = pytest.mark.skipif(not memory._glibc(), reason="glibc's allocator")

PROGRAM = textwrap.dedent(
    """
    import ctypes, sys, threading
    from kubectl_kcache.runtime import memory

    if sys.argv[1] == "limited":
        assert memory.limit_arenas()
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()  # all at once: each would take an arena of its own
        kept = [bytearray(2000) for _ in range(200)]
        barrier.wait()
        del kept

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    libc = ctypes.CDLL(None)
    libc.open_memstream.restype = ctypes.c_void_p
    buf, size = ctypes.c_char_p(), ctypes.c_size_t()
    stream = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    libc.malloc_info(0, ctypes.c_void_p(stream))
    libc.fclose(ctypes.c_void_p(stream))
    print(buf.value.decode().count("<heap nr="))
    """
)


def _heaps(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, check=True, env=env)
    return int(out.stdout)


def test_threads_share_two_arenas_when_limited():
    assert _heaps("limited") <= 2
    assert _heaps("default") > 2  # (what the limit changes: one arena per thread allocating at once)


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        return next(int(x.split()[1]) for x in fh if x.startswith("VmRSS:")) / 1024


def test_trim_hands_free_memory_back():
    blocks = [bytearray(4000) for _ in range(10000)]  # ~40 MB in the C allocator (too large for Python's own)
    kept = blocks[::10]  # the pages freed between held blocks: only a trim gives them back
    del blocks
    before = _rss_mb()
    assert memory.trim() is True
    assert before - _rss_mb() > 15 and len(kept) == 1000  # of ~36 MB freed


def test_an_operators_arena_setting_holds(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_arenas() is False
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=8")
    assert memory.limit_arenas() is False
