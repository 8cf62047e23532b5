"""A loopback HTTP provider stand-in whose answers each test scripts: real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator


class _Servidor(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and left makes the handler's write fail: expected here, not noise


class Proveedor:
    """Answers requests from a script: ``responder(503)``, ``responder(429, retry_after="2")``,
    ``retener()`` (no answer until the test is over: any read timeout fires, however busy the
    machine), ``cortar()`` (TCP reset). When the script runs out, 200 ``{}``."""

    def __init__(self) -> None:
        self.guion: list[tuple[str, Any]] = []
        self.peticiones: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._fin = threading.Event()  # releases held requests when the test is over
        self.servidor = _Servidor(("127.0.0.1", 0), self._manejador())
        self.url = f"http://127.0.0.1:{self.servidor.server_address[1]}"
        threading.Thread(target=self.servidor.serve_forever, args=(0.02,), daemon=True).start()

    def responder(self, status: int, cuerpo: Any = None, *, retry_after: str | None = None, crudo: bytes | None = None):
        self.guion.append(("responder", (status, cuerpo, retry_after, crudo)))

    def retener(self) -> None:
        self.guion.append(("retener", None))

    def cortar(self) -> None:
        self.guion.append(("cortar", None))

    def _siguiente(self, peticion: dict[str, Any]) -> tuple[str, Any]:
        with self._lock:
            self.peticiones.append(peticion)
            return self.guion.pop(0) if self.guion else ("responder", (200, {}, None, None))

    def _manejador(self) -> type[BaseHTTPRequestHandler]:
        proveedor = self

        class Manejador(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                self._atender()

            def do_POST(self) -> None:
                self._atender()

            def _atender(self) -> None:
                largo = int(self.headers.get("Content-Length") or 0)
                cuerpo = self.rfile.read(largo) if largo else b""
                accion, args = proveedor._siguiente(
                    {"metodo": self.command, "ruta": self.path, "cabeceras": dict(self.headers), "cuerpo": cuerpo}
                )
                if accion == "cortar":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                if accion == "retener":
                    proveedor._fin.wait()
                    return
                status, datos, retry_after, crudo = args
                contenido = crudo if crudo is not None else json.dumps(datos if datos is not None else {}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(contenido)))
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.end_headers()
                self.wfile.write(contenido)

        return Manejador

    def cerrar(self) -> None:
        self._fin.set()
        self.servidor.shutdown()
        self.servidor.server_close()


@pytest.fixture
def proveedor() -> Iterator[Proveedor]:
    p = Proveedor()
    yield p
    p.cerrar()
