"""A fault-injecting HTTP proxy on loopback, in front of an S3 server (moto's), stdlib only.

Each request is forwarded to the server, unless the proxy's ``decide`` picks a fault for it:
``slowdown`` (answered ``503 SlowDown`` without reaching the server), ``error`` (``500
InternalError``, likewise), ``reset`` (forwarded, so the server acted on it, then the answer
cut half-way, inside its body when it has one, and the connection reset), ``stall``
(forwarded, then nothing sent for ``stall`` seconds, then the connection closed). A client
sees what S3 under load shows: the last two leave it not knowing whether a write happened.
"""

from __future__ import annotations

import contextlib
import http.client
import random
import socket
import socketserver
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

FAULTS = ("slowdown", "error", "reset", "stall")


@dataclass(frozen=True)
class Request:
    """One request as the proxy read it."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names

    def header(self, name: str) -> str:
        """Return a header's value, "" when absent."""
        return self.headers.get(name.lower(), "")


# Picks the fault a request gets (one of FAULTS), or None: forward it.
Decide = Callable[[Request], str | None]


def at_rate(rate: float, seed: int = 0, faults: tuple[str, ...] = FAULTS) -> Decide:
    """Return a ``decide`` that faults a share ``rate`` of requests, each kind as often."""
    chosen = random.Random(seed)
    lock = threading.Lock()

    def decide(request: Request) -> str | None:
        with lock:
            if chosen.random() >= rate:
                return None
            return chosen.choice(faults)

    return decide


def _error_body(code: str, message: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
        f"<Message>{message}</Message><RequestId>faultproxy</RequestId></Error>"
    ).encode()


_CANNED = {
    "slowdown": (503, "Slow Down", _error_body("SlowDown", "Please reduce your request rate.")),
    "error": (
        500,
        "Internal Server Error",
        _error_body("InternalError", "We encountered an internal error. Please try again."),
    ),
}


@dataclass
class FaultProxy:
    """The proxy's settings and what it did: requests seen, faults injected by kind."""

    upstream: tuple[str, int]
    decide: Decide = lambda request: None
    stall: float = 3.0
    requests: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    faulted: list[tuple[str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, request: Request, fault: str | None) -> None:
        """Count a request, and the fault it got."""
        with self.lock:
            self.requests += 1
            if fault is not None:
                self.injected[fault] += 1
                self.faulted.append((fault, request.method, request.path))


def _read_request(rfile: BinaryIO, go_on: Callable[[], None]) -> tuple[Request, bytes] | None:
    """Read one request from a client; return it and its raw bytes, None at end of stream.

    ``go_on`` sends ``100 Continue`` to a client that asked to wait for it (``Expect``).
    """
    line = rfile.readline(65537)
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    head = [line]
    headers: dict[str, str] = {}
    expect = False
    while True:
        raw = rfile.readline(65537)
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        if name.strip().lower() == "expect":
            expect = True
            continue  # answered here, not by the server
        headers[name.strip().lower()] = value.strip()
        head.append(raw)
    if expect:
        go_on()
    body = b""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size_line = rfile.readline()
            chunks.append(size_line)
            size = int(size_line.split(b";")[0], 16)
            chunks.append(rfile.read(size + 2))
            if size == 0:
                break
        body = b"".join(chunks)
    elif "content-length" in headers:
        body = rfile.read(int(headers["content-length"]))
    return Request(method, path, headers), b"".join(head) + b"\r\n" + body


def _forward(upstream: tuple[str, int], method: str, raw: bytes) -> bytes:
    """Send a request to the server; return its whole answer, re-framed with a length."""
    with socket.create_connection(upstream, timeout=30) as sock:
        sock.sendall(raw)
        response = http.client.HTTPResponse(sock, method=method)
        response.begin()
        body = response.read()
        lines = [f"HTTP/1.1 {response.status} {response.reason}\r\n"]
        for name, value in response.getheaders():
            if name.lower() in ("transfer-encoding", "connection", "content-length"):
                continue
            lines.append(f"{name}: {value}\r\n")
        length = response.getheader("content-length") if method == "HEAD" else str(len(body))
        if length is not None:
            lines.append(f"Content-Length: {length}\r\n")
        lines.append("Connection: keep-alive\r\n\r\n")
        return "".join(lines).encode("latin-1") + body


def _reset(sock: socket.socket) -> None:
    """Close a connection with a TCP reset (SO_LINGER 0), not a clean FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class _Handler(socketserver.StreamRequestHandler):
    """One client connection: requests in turn (keep-alive), each forwarded or faulted."""

    server: _Server

    def handle(self) -> None:
        proxy = self.server.proxy
        while True:
            try:
                read = _read_request(self.rfile, self._go_on)
            except (OSError, ValueError):
                return
            if read is None:
                return
            request, raw = read
            fault = proxy.decide(request)
            proxy.note(request, fault)
            if fault in _CANNED:
                status, reason, body = _CANNED[fault]
                self.wfile.write(
                    f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n".encode()
                    + body
                )
                self.wfile.flush()
                continue
            try:
                answer = _forward(proxy.upstream, request.method, raw)
            except OSError:
                _reset(self.connection)
                return
            if fault == "reset":
                head_end = answer.index(b"\r\n\r\n") + 4
                body_len = len(answer) - head_end
                cut = head_end + body_len // 2 if body_len > 1 else head_end // 2
                with contextlib.suppress(OSError):
                    self.wfile.write(answer[:cut])
                    self.wfile.flush()
                _reset(self.connection)
                return
            if fault == "stall":
                time.sleep(proxy.stall)
                _reset(self.connection)
                return
            try:
                self.wfile.write(answer)
                self.wfile.flush()
            except OSError:
                return

    def _go_on(self) -> None:
        self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    # Its handler threads are joined when it closes (after their connections are shut down):
    # a keep-alive connection a client pool still holds would leave a thread reading it, and
    # a later test in the process would see threads it did not start.
    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True
    proxy: FaultProxy

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.open: set[socket.socket] = set()
        self.open_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.open_lock:
            self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.open_lock:
            self.open.discard(request)
        super().shutdown_request(request)

    def hang_up(self) -> None:
        """Shut every open connection down, so that each handler thread returns."""
        with self.open_lock:
            open_now = list(self.open)
        for sock in open_now:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def fault_proxy(
    upstream: str, decide: Decide | None = None, stall: float = 3.0
) -> Iterator[tuple[str, FaultProxy]]:
    """Run a proxy in front of ``upstream`` (``http://host:port``); yield its URL and settings."""
    host, _, port = upstream.removeprefix("http://").partition(":")
    proxy = FaultProxy((host, int(port)), decide or (lambda request: None), stall)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.proxy = proxy
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", proxy
    finally:
        server.shutdown()
        server.hang_up()
        server.server_close()  # joins the handler threads
        thread.join(10)
