"""A check made at the last moment before a mutating request leaves the process.

A writer that may write only while it can prove something (the reconcile loop: that it still holds its
Lease) must check it as late as possible: a check before the request is built leaves the time of the
build, the connection and any pause of the process (SIGSTOP, a GC, a VM stall) between the check and the
bytes on the wire. Here the connection holds every byte of the request, calls the guard, and only then
hands them to the kernel in one write. If the guard raises, the connection is closed and not one byte
was sent.

A guard with a `deadline()` (a time on this module's clock, `now`) gets a final check that leaves no
Python bytecode between reading the clock and the write system call: the clock read, the comparison and
the write are chained C calls (`_send_before`). Between bytecodes the interpreter may hand its lock to
another thread for milliseconds, and a pause that lands there would let the request out when the process
resumes. The final write is made on a blocking socket: a socket with a timeout first polls it with the
interpreter lock released and must take the lock back before it writes (139-449 ms at p99 with 8 busy
threads, measured), while a blocking one goes from the comparison straight to the write. What remains is
CPython releasing its lock around the system call itself: when another thread asked for the lock, the
releasing thread waits until that one has it (about 5 ms at most in the same measurement). A bound on a
blocked send stays: the kernel's send timeout (SO_SNDTIMEO) is the time left before the deadline.

`abort_in_flight(guard)` resets the connections whose guarded request was sent but not yet answered, so
that bytes still queued in this machine's kernel (a partition: the peer is not acknowledging them) are
dropped instead of delivered when the network heals. Bytes the other side already acknowledged cannot be
called back; nothing on the client side can (Kubernetes has no fencing tokens).

The guard is chosen per thread (`guarding`), so one connection pool serves guarded and unguarded requests.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import compress, starmap
from typing import Any

from ..errors import IncompleteError

Guard = Callable[[], None]

# CLOCK_BOOTTIME keeps counting while the machine is suspended (CLOCK_MONOTONIC does not); both are
# monotonic, unlike the wall clock
_CLOCK_ID = getattr(time, "CLOCK_BOOTTIME", None)
_CLOCK: tuple[Callable[..., float], tuple[Any, ...]] = (
    (time.clock_gettime, (_CLOCK_ID,)) if _CLOCK_ID is not None else (time.monotonic, ())
)

_local = threading.local()
_in_flight: dict[Any, Guard] = {}  # connection -> the guard its unanswered request passed
_in_flight_lock = threading.Lock()
_classes: dict[str, Any] = {}


class WriteRefused(IncompleteError):
    """A guard refused to let a write leave the process. Raised by guards; passes through the client as is."""


def now() -> float:
    """Seconds on the clock guards' deadlines are given on."""
    return _CLOCK[0](*_CLOCK[1])


@contextmanager
def guarding(guard: Guard | None) -> Iterator[None]:
    """Requests sent by this thread inside the block are checked by `guard` just before they are sent."""
    previous = getattr(_local, "guard", None)
    _local.guard = guard
    try:
        yield
    finally:
        _local.guard = previous


def install(pool_manager: Any) -> None:
    """Make the connections of a urllib3 PoolManager (or ProxyManager) honour `guarding`."""
    if not _classes:
        _classes.update(_build_classes())
    pool_manager.pool_classes_by_scheme = {"http": _classes["http"], "https": _classes["https"]}


def abort_in_flight(guard: Guard) -> int:
    """Reset every connection whose request passed `guard` and has no answer yet; returns how many."""
    with _in_flight_lock:
        conns = [conn for conn, g in _in_flight.items() if g == guard]
    for conn in conns:
        sock = getattr(conn, "sock", None)
        if sock is None:
            continue
        try:
            # linger 0: the close that follows resets the connection and drops unsent bytes; SHUT_RD wakes
            # the thread blocked reading the answer (a close from another thread would not)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            socket.socket.shutdown(sock, socket.SHUT_RD)
        except OSError:
            pass
    return len(conns)


def _build_classes() -> dict[str, Any]:
    """urllib3 is imported here, on first use (`kubectl kcache --help` stays fast)."""
    import urllib3
    from urllib3.connection import HTTPConnection, HTTPSConnection

    class Held:
        """Holds a guarded request's bytes until the request is complete, then checks and sends once."""

        _held: list[bytes] | None = None

        def request(self, method: str, url: str, body: Any = None, headers: Any = None, **kw: Any) -> None:
            guard = getattr(_local, "guard", None)
            if guard is None:
                super().request(method, url, body=body, headers=headers, **kw)  # type: ignore[misc]
                return
            if self.sock is None:  # type: ignore[attr-defined]
                self.connect()  # type: ignore[attr-defined] # (and a proxy tunnel) before holding any byte
            self._held = []
            try:
                super().request(method, url, body=body, headers=headers, **kw)  # type: ignore[misc]
                data = b"".join(self._held)
            finally:
                self._held = None
            try:
                guard()
            except BaseException:
                self.close()
                raise
            with _in_flight_lock:
                _in_flight[self] = guard
            deadline = getattr(guard, "deadline", None)
            if deadline is None:
                super().send(data)  # type: ignore[misc]
            elif not _send_before(self.sock, data, deadline()):  # type: ignore[attr-defined]
                _forget(self)
                self.close()
                guard()  # it ran out since the check above: raises
                raise WriteRefused("the write guard's deadline passed")

        def send(self, data: Any) -> None:
            if self._held is not None:
                self._held.append(bytes(data))
                return
            super().send(data)  # type: ignore[misc]

        def getresponse(self) -> Any:
            try:
                return super().getresponse()  # type: ignore[misc]
            finally:
                _forget(self)

        def close(self) -> None:
            _forget(self)
            super().close()  # type: ignore[misc]

    class GuardedHTTPConnection(Held, HTTPConnection):
        pass

    class GuardedHTTPSConnection(Held, HTTPSConnection):
        pass

    class GuardedHTTPConnectionPool(urllib3.HTTPConnectionPool):
        ConnectionCls = GuardedHTTPConnection

    class GuardedHTTPSConnectionPool(urllib3.HTTPSConnectionPool):
        ConnectionCls = GuardedHTTPSConnection

    return {"http": GuardedHTTPConnectionPool, "https": GuardedHTTPSConnectionPool}


def _send_before(sock: Any, data: bytes, until: float) -> bool:
    """Send `data` only if the clock still reads before `until`; False (nothing sent) otherwise.

    Written as chained C calls on purpose: `list` drains `map(write, compress(...))`, which reads the clock,
    compares and writes without running a Python bytecode in between, so no other thread can be scheduled
    there. TLS sockets write through their C object (`_sslobj.write`, which writes everything or raises);
    plain sockets through `socket.sendall`. Anything else (urllib3's TLS-in-TLS) gets the Python check."""
    sslobj = getattr(sock, "_sslobj", None)
    if sslobj is not None:
        write = sslobj.write
    elif type(sock) is socket.socket:
        write = sock.sendall
    else:
        if now() >= until:
            return False
        sock.sendall(data)
        return True
    timeout = sock.gettimeout()
    _blocking_until(sock, until)
    try:
        done = list(map(write, compress((data,), map(until.__gt__, starmap(_CLOCK[0], (_CLOCK[1],))))))
    finally:
        _restore(sock, timeout)
    if not done:
        return False
    if isinstance(done[0], int) and done[0] < len(data):  # a partial TLS write: finish the request
        sock.sendall(data[done[0] :])
    return True


def _blocking_until(sock: Any, until: float) -> None:
    """Blocking mode for the final write (no poll, so no wait for the interpreter lock between the check
    and the write), with the kernel's send timeout as the bound a socket timeout gave: the time left."""
    left = max(until - now(), 0.001)
    sock.settimeout(None)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(left))


def _restore(sock: Any, timeout: float | None) -> None:
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(0))
        sock.settimeout(timeout)
    except OSError:
        pass  # the connection broke during the write: it is closed by the caller


def _timeval(seconds: float) -> bytes:
    whole = int(seconds)
    return struct.pack("ll", whole, int((seconds - whole) * 1e6))


def _forget(conn: Any) -> None:
    with _in_flight_lock:
        _in_flight.pop(conn, None)
