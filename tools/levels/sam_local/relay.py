"""A TCP relay from the Docker bridge to a service that listens on loopback only.

A Lambda container reaches this host at the bridge address (172.17.0.1), never at
127.0.0.1: the shared PostgreSQL, Redis, moto's server and the stand-ins listen on loopback.
The relay listens on ``bridge:port`` and pipes each connection to ``127.0.0.1:<port>``, so
only traffic between the containers and this host is opened, and only while invoking.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from typing import Any

from sam_emulator.background import ThreadedServer

BUFFER_BYTES = 64 * 1024


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    request_queue_size = 64


class TcpRelay:
    """``with TcpRelay(("172.17.0.1", 5432), ("127.0.0.1", 5432)):`` — connections on the first go to the second."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int]) -> None:
        self.listen = listen
        self.target = target
        self._server: ThreadedServer | None = None

    def start(self) -> TcpRelay:
        relay = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                try:
                    upstream = socket.create_connection(relay.target)  # read per connection: it may move
                except OSError:
                    return  # the client sees its connection closed, as with the service down
                with upstream:
                    _pipe(self.request, upstream)

        self._server = ThreadedServer(_Server(self.listen, Handler), "sam-local-relay", poll_interval_s=0.1).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            server.stop()

    def __enter__(self) -> TcpRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until either side closes; then close the other's writing half."""

    def copy(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(BUFFER_BYTES):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=copy, args=(b, a), daemon=True)
    other.start()
    copy(a, b)
    other.join()


def reachable(address: tuple[str, int], timeout_s: float = 1.0) -> bool:
    try:
        with socket.create_connection(address, timeout=timeout_s):
            return True
    except OSError:
        return False


def relay_unless_reachable(listen: tuple[str, int], target: tuple[str, int]) -> Any:
    """A relay, or nothing when the service already listens on the bridge (e.g. on 0.0.0.0)."""
    return contextlib.nullcontext() if reachable(listen) else TcpRelay(listen, target)
