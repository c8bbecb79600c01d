"""kube/write_guard.py over a plain local TCP server: the guard runs after the whole request is built and
before any byte of it is sent; a refused request sends nothing; an unanswered one can be reset."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import urllib3

from kubectl_kcache.kube import write_guard


class Server:
    """Records what each connection received; answers every request unless told to stay silent."""

    def __init__(self, answer: bool = True):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        self.received = bytearray()
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        buf = b""
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.received += data
            buf += data
            if b"\r\n\r\n" in buf:
                head, _, rest = buf.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                if len(rest) >= length:
                    buf = rest[length:]
                    if self.answer:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    def got(self) -> bytes:
        with self.lock:
            return bytes(self.received)


@pytest.fixture
def pool():
    manager = urllib3.PoolManager(retries=False)
    write_guard.install(manager)
    return manager


def test_the_guard_sees_nothing_sent_and_the_request_goes_out_whole(pool):
    server = Server()
    seen_at_check: list[bytes] = []

    def guard() -> None:
        seen_at_check.append(server.got())

    body = b'{"kind":"DeleteOptions","preconditions":{"uid":"u-1","resourceVersion":"42"}}'
    with write_guard.guarding(guard):
        resp = pool.request("DELETE", f"http://127.0.0.1:{server.port}/apis/x/v1/things/a", body=body)
    assert resp.status == 200 and resp.data == b"ok"
    assert seen_at_check == [b""]  # one check, before a single byte (headers included) left
    got = server.got()
    assert got.startswith(b"DELETE /apis/x/v1/things/a HTTP/1.1\r\n") and got.endswith(body)


def test_a_refused_request_sends_not_one_byte_and_closes_the_connection(pool):
    server = Server()
    pool.request("GET", f"http://127.0.0.1:{server.port}/warm")  # a pooled, connected connection
    before = server.got()

    def refuse() -> None:
        raise write_guard.WriteRefused("lease lost")

    with write_guard.guarding(refuse), pytest.raises(write_guard.WriteRefused):
        pool.request("POST", f"http://127.0.0.1:{server.port}/apis/x/v1/things", body=b'{"a": 1}')
    time.sleep(0.1)
    assert server.got() == before
    # the pool is still usable, unguarded requests are not checked
    assert pool.request("GET", f"http://127.0.0.1:{server.port}/after").status == 200


def test_the_guard_is_per_thread(pool):
    server = Server()
    calls: list[str] = []
    barrier = threading.Barrier(2)

    def guarded() -> None:
        with write_guard.guarding(lambda: calls.append("checked")):
            barrier.wait()
            pool.request("PUT", f"http://127.0.0.1:{server.port}/a", body=b"x")

    t = threading.Thread(target=guarded)
    t.start()
    barrier.wait()
    pool.request("PUT", f"http://127.0.0.1:{server.port}/b", body=b"y")  # this thread has no guard
    t.join(5)
    assert calls == ["checked"]


def test_abort_in_flight_resets_an_unanswered_guarded_request(pool):
    server = Server(answer=False)

    def guard() -> None:
        return None

    errors: list[BaseException] = []

    def send() -> None:
        try:
            with write_guard.guarding(guard):
                pool.request("DELETE", f"http://127.0.0.1:{server.port}/a", body=b"x", timeout=30)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            errors.append(exc)

    t = threading.Thread(target=send)
    t.start()
    deadline = time.monotonic() + 5
    while not server.got().endswith(b"x") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert write_guard.abort_in_flight(lambda: None) == 0  # another guard's requests are left alone
    started = time.monotonic()
    assert write_guard.abort_in_flight(guard) == 1
    t.join(5)
    assert not t.is_alive() and time.monotonic() - started < 2
    assert errors and not isinstance(errors[0], write_guard.WriteRefused)
    assert write_guard.abort_in_flight(guard) == 0


class Deadline:
    """A guard whose Python check passes but whose deadline (checked in C just before the write) is given."""

    def __init__(self, until: float):
        self.until = until
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls > 1:
            raise write_guard.WriteRefused("ran out")

    def deadline(self) -> float:
        return self.until


def test_a_deadline_passed_after_the_python_check_still_sends_nothing(pool):
    server = Server()
    guard = Deadline(write_guard.now() - 0.001)
    with write_guard.guarding(guard), pytest.raises(write_guard.WriteRefused, match="ran out"):
        pool.request("DELETE", f"http://127.0.0.1:{server.port}/a", body=b"x")
    time.sleep(0.1)
    assert server.got() == b""
    assert write_guard.abort_in_flight(guard) == 0  # nothing left registered


def test_a_deadline_ahead_lets_the_request_out_whole(pool):
    server = Server()
    with write_guard.guarding(Deadline(write_guard.now() + 60)):
        resp = pool.request("PATCH", f"http://127.0.0.1:{server.port}/a", body=b'{"spec": {}}')
    assert resp.status == 200 and server.got().endswith(b'{"spec": {}}')


def test_send_before_reads_the_clock_in_c_and_sends_only_before_the_deadline():
    a, b = socket.socketpair()
    with a, b:
        assert not write_guard._send_before(a, b"late", write_guard.now() - 1)
        assert write_guard._send_before(a, b"in time", write_guard.now() + 60)
        b.settimeout(1)
        assert b.recv(100) == b"in time"


def test_the_final_write_is_blocking_and_the_socket_gets_its_timeout_back():
    """A socket with a timeout polls before it writes and must take the interpreter lock back in between;
    the final write is made in blocking mode, and the socket's own timeout is restored afterwards."""
    a, b = socket.socketpair()
    with a, b:
        a.settimeout(7.5)
        seen: list[float | None] = []
        real = write_guard._blocking_until

        def spy(sock, until):
            real(sock, until)
            seen.append(sock.gettimeout())

        write_guard._blocking_until = spy
        try:
            assert write_guard._send_before(a, b"in time", write_guard.now() + 60)
        finally:
            write_guard._blocking_until = real
        assert seen == [None]
        assert a.gettimeout() == 7.5
        b.settimeout(1)
        assert b.recv(100) == b"in time"


def test_a_final_write_the_peer_does_not_take_gives_up_at_the_deadline():
    """Blocking mode keeps a bound: the kernel's send timeout is the time left before the deadline."""
    a, b = socket.socketpair()
    with a, b:
        a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        a.settimeout(30)
        started = time.monotonic()
        with pytest.raises(OSError):
            write_guard._send_before(a, b"x" * (8 << 20), write_guard.now() + 0.3)  # b never reads
        assert time.monotonic() - started < 3
        assert a.gettimeout() == 30
