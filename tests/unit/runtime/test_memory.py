"""The long-running commands' allocator (runtime/memory.py): with the arenas limited, threads that allocate at
once share two arenas instead of one each (counted by glibc's own malloc_info), so that what one thread freed
serves the others and is not held for it; and the free memory is handed back on trim."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")

PROGRAM = textwrap.dedent(
    """
    import ctypes, sys, threading
    from kubectl_kcache.runtime import memory

    if sys.argv[1] == "limited":
        assert memory.limit_arenas()
    barrier = threading.Barrier(8)

    def work():
        barrier.wait()  # all at once: each would take an arena of its own
        kept = [bytearray(2000) for _ in range(20000)]
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
    out = subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_threads_share_two_arenas_when_limited():
    assert _heaps("limited") <= 2
    assert _heaps("default") > 2  # (what the limit changes: one arena per thread allocating at once)


def test_trim_hands_free_memory_back():
    from kubectl_kcache.runtime import memory

    blocks = [bytearray(4000) for _ in range(50000)]
    kept = blocks[::10]  # pages freed between held blocks: only a trim gives them back
    del blocks
    assert memory.trim() is True and len(kept) == 5000
