"""The C allocator of a long-running process (glibc's; elsewhere nothing is done).

Every thread that allocates gets an arena of its own from glibc, up to 8 per core: the monitor's ~37 informer
threads each decode their lists and events in one, and the memory freed there stays with that arena, held for
a thread that may never allocate that much again. Two arenas, and the free memory at the top of each handed
back after the first lists, keep the process's resident memory near what it holds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..sharing import lasting

M_ARENA_MAX = -8  # glibc's malloc.h
ARENAS = 2

_libc: Any = None


def _glibc() -> Any:
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None)
            except (ImportError, OSError):  # a Python without ctypes; no C library to load
                return _libc
            if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim"):  # glibc (not musl)
                libc.malloc_trim.argtypes = [ctypes.c_size_t]
                _libc = libc
    return _libc


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most `arenas` allocator arenas from now on (before the threads start); False where unsupported, or
    where the operator chose (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in GLIBC_TUNABLES: theirs holds)."""
    if "MALLOC_ARENA_MAX" in os.environ or "arena_max" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    libc = _glibc()
    return bool(libc and libc.mallopt(M_ARENA_MAX, arenas))


def trim() -> bool:
    """Hand the allocator's free memory back to the system (after the first lists, whose pages are gone)."""
    libc = _glibc()
    return bool(libc and libc.malloc_trim(0))


@contextmanager
def long_lived() -> Iterator[None]:
    """What a command that decodes objects for as long as it runs (monitor, reconcile, `status -w`) sets up
    first: two allocator arenas, before its threads start, and one table of shared parts for its life
    (sharing.lasting)."""
    limit_arenas()
    with lasting():
        yield
