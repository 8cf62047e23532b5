"""mf-smoke's client of the store: a request with no answer or a 429/5xx is sent again with the same key.

The store is a loopback HTTP server whose first answer to each order is the fault: a 503 with
``Retry-After``, a connection closed with no answer, or no answer at all until the client asks again.
"""

from __future__ import annotations

import http.server
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
import urllib3
from mercadofresco_ops.smoke import ClienteTienda

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def tienda(fallo: str) -> Iterator[tuple[str, list[str]]]:
    """A store whose first POST gets ``fallo``, every later one 201; yields its URL and each request's key."""
    claves: list[str] = []
    segunda = threading.Event()  # the held first request is answered only once the client asked again

    class Manejador(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            claves.append(self.headers["Idempotency-Key"])
            if len(claves) > 1:
                segunda.set()
                self._responder(201, b'{"pedido_id": "PED-1"}')
            elif fallo == "503":
                self._responder(503, b'{"message": "ocupado"}', {"Retry-After": "0"})
            elif fallo == "cierre":
                self.close_connection = True  # no status line: the client sees the connection end
            elif fallo == "sin-respuesta":
                segunda.wait(timeout=60)  # a hang guard; the client times out and asks again first

        def _responder(self, estado: int, cuerpo: bytes, cabeceras: dict[str, str] | None = None) -> None:
            self.send_response(estado)
            for nombre, valor in {"Content-Type": "application/json", **(cabeceras or {})}.items():
                self.send_header(nombre, valor)
            self.send_header("Content-Length", str(len(cuerpo)))
            self.end_headers()
            self.wfile.write(cuerpo)

        def log_message(self, *_args: object) -> None:
            pass

    servidor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Manejador)
    hilo = threading.Thread(target=servidor.serve_forever, daemon=True)
    hilo.start()
    try:
        yield f"http://127.0.0.1:{servidor.server_address[1]}", claves
    finally:
        segunda.set()
        servidor.shutdown()
        servidor.server_close()


@pytest.mark.parametrize("fallo", ["503", "cierre", "sin-respuesta"])
def test_an_order_the_store_did_not_answer_is_sent_again_with_the_same_key(fallo: str) -> None:
    # GIVEN a store whose first answer is the fault, and mf-smoke's client (retries on)
    with tienda(fallo) as (url, claves):
        cliente = ClienteTienda(url, firmar=False, timeout_s=2, reintentos=2)
        # WHEN it places one order
        estado, cuerpo = cliente.crear({"cliente_id": "CLI-1"}, "mf-smoke-abc-1")
    # THEN it was created by the second request, which carried the same Idempotency-Key (the same order)
    assert (estado, cuerpo) == (201, {"pedido_id": "PED-1"})
    assert claves == ["mf-smoke-abc-1", "mf-smoke-abc-1"]


def test_a_client_without_retries_reports_the_first_answer_and_sends_once() -> None:
    # GIVEN the deploy level's client, which counts each answer itself (reintentos=0)
    with tienda("503") as (url, claves):
        estado, _ = ClienteTienda(url, firmar=False, timeout_s=2).crear({"cliente_id": "CLI-1"}, "k-1")
        assert (estado, claves) == (503, ["k-1"])
    # ...and a connection closed with no answer is urllib3's error, which mf-smoke reports in one line
    with tienda("cierre") as (url, claves), pytest.raises(urllib3.exceptions.HTTPError):
        ClienteTienda(url, firmar=False, timeout_s=2).crear({"cliente_id": "CLI-1"}, "k-2")
