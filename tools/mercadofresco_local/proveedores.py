"""Loopback HTTP stand-ins for MercadoFresco's external providers, with injectable faults.

Real HTTP on 127.0.0.1 (a ``ThreadingHTTPServer`` on port 0 each; ``.url`` says where), so
the layer's HTTP client, timeouts, retries and circuit breaker run exactly as they would
against the real providers. Nothing here fakes an AWS service or a database. What each route
answers is :class:`simulador.Simulador`, the same logic the deployed
``simulador-*`` function URLs run (state in memory here, in DynamoDB there).

Providers and routes (JSON in, JSON out):

- :class:`Pasarela` (payment gateway): ``POST /cobros`` ``{pedido_id, importe_centimos,
  moneda, token_tarjeta | cliente_id}`` (a card token, or the customer's card on file) -> 201
  ``{referencia_cobro, ...}`` or 402 ``{"error": "tarjeta_rechazada"}``; ``POST /reembolsos``
  ``{pedido_id | referencia_cobro}`` -> 201 ``{referencia_reembolso, referencia_cobro}``, 404 when
  there is nothing to refund, 409 when another key already refunded it.
  Both honour ``Idempotency-Key`` like the real gateway: the same key returns the stored
  answer (header ``Idempotent-Replayed: true``) and never charges twice.
- every other provider (:class:`ProveedorSimulado`): the routes of its sandbox simulator's family
  (:data:`simulador.proveedores.RUTAS`).

Which providers there are is the template's answer, never a list kept here: :class:`Proveedores`
starts one stand-in per provider the template's functions call (a ``<DEPENDENCY>_URL`` variable,
:func:`template_model.messaging.providers_called`), named by its breaker's dependency
(``p["erp"]``, ``p["correo-principal"]``); a new consumer's provider gets its stand-in with no edit.

Every provider counts what it *did*, not only what it was asked: ``llamadas`` (requests
per route, faulted or not), ``llamadas_por_clave`` (requests per ``Idempotency-Key``, faulted
or not: the attempts a caller really made for one operation), ``efectos_por_clave`` (effects
per ``Idempotency-Key``) and ``efectos`` (the bodies it acted on). The gateway adds ``cobros_de(pedido_id)`` and
``reembolsos_de(pedido_id)``: "charges per order" is the number the tests assert.

Faults come from a :class:`~mercadofresco_local.fallos.ControlFallos`, thread-safe and
shareable between providers (the demo drives them all from one). A ``Fallo`` applies to
a provider and a route prefix, inside a time window (seconds since ``reiniciar_reloj()``,
or since the provider's first request after ``anclar(proveedor)``), to a proportion of the
requests, optionally only ``veces`` times:

- ``Fallo.latencia(s)``: answer normally after ``s`` seconds. If the client gave up
  meanwhile, the effect still happened: the lesson's "charged, but the answer was lost".
- ``Fallo.estado(503)``: answer that status, no effect.
- ``Fallo.limite(retry_after_s)``: 429 with ``Retry-After``, no effect.
- ``Fallo.tiempo_agotado(s)``: hold the request ``s`` seconds (past the client's read
  timeout), then close without answering and without effect.
- ``Fallo.conexion_cortada(tras_procesar=False)``: reset the TCP connection (RST); with
  ``tras_procesar=True`` the effect happens first.

Declined cards: ``control.rechazar_tarjeta(token_or_cliente_id)`` / ``control.rechazar_importe(centimos)``.

A stand-in that plays a sandbox provider's ``AWS_IAM`` function URL (``verificador`` set: the
local run does it where the template says so) refuses, as Lambda does, a request whose SigV4
signature is missing or wrong: 403 ``{"Message": "Forbidden"}``, before any fault, count or
effect (:mod:`mercadofresco_local.firma`); ``rechazadas`` counts them.

:meth:`Proveedores.entorno` gives the functions' ``*_URL`` variables pointing at the servers.

Example (the ``viernes`` scenario: the gateway returns 503 from t=10 s to t=40 s)::

    with Proveedores() as p:
        p.fallos.programar(Fallo.estado(503, proveedor="pasarela", desde_s=10, hasta_s=40))
        ...  # point PASARELA_URL at p.pasarela.url
        assert p.pasarela.cobros_de("PED-2026-084417") == 1
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

from sam_emulator.background import LocalServer, stop_all
from simulador.proveedores import RUTAS, Simulador, guardable, repetida
from template_model import messaging as m

from mercadofresco_local import plantilla
from mercadofresco_local.fallos import ControlFallos, Fallo, TipoFallo
from mercadofresco_local.firma import VerificadorSigV4

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from template_model import Template

__all__ = [
    "PASARELA",
    "ControlFallos",
    "Fallo",
    "Pasarela",
    "ProveedorHttp",
    "ProveedorSimulado",
    "Proveedores",
    "TipoFallo",
    "VerificadorSigV4",
]

PASARELA = "pasarela"  # the payment gateway's dependency: its stand-in keeps the charges and refunds it made

Respuesta = tuple[int, dict[str, Any]]


class ProveedorHttp(LocalServer):
    """A loopback HTTP server with routes, faults, an Idempotency-Key memory and counters."""

    nombre = "proveedor"

    def __init__(
        self, fallos: ControlFallos | None = None, *, nombre: str | None = None, clave_api: str | None = None
    ) -> None:
        self.nombre = nombre or self.nombre
        self.thread_name = f"mf-{self.nombre}"
        self.fallos = fallos or ControlFallos()
        self.clave_api = clave_api  # when set, requests must send ``Authorization: Bearer <clave_api>``
        self.verificador: VerificadorSigV4 | None = None  # when set, requests must be SigV4-signed (AWS_IAM)
        self.rechazadas: Counter[str] = Counter()  # why requests were refused as unsigned (Lambda's 403)
        self.llamadas: Counter[str] = Counter()
        self.llamadas_por_clave: Counter[str] = Counter()
        self.efectos_por_clave: Counter[str] = Counter()
        self.efectos: list[dict[str, Any]] = []
        self._respuestas: dict[str, Respuesta] = {}  # Idempotency-Key -> stored answer
        self._lock = threading.RLock()
        self._parado = threading.Event()

    # -- routes: the shared sandbox logic's routes for this provider; effects are counted here ---
    simulador: Simulador

    def rutas(self) -> dict[str, Callable[[dict[str, Any], str | None], Respuesta]]:
        return {ruta: self._atender(ruta) for ruta in RUTAS[self.simulador.familia]}

    def _atender(self, ruta: str) -> Callable[[dict[str, Any], str | None], Respuesta]:
        def accion(cuerpo: dict[str, Any], clave: str | None) -> Respuesta:
            respuesta, efecto = self.simulador.atender(ruta, cuerpo, clave)
            if efecto:
                self.registrar(ruta, cuerpo, clave)
            return respuesta

        return accion

    def create_server(self) -> _Servidor:
        return _Servidor(("127.0.0.1", 0), _manejador(self))

    def stop(self) -> None:
        self._parado.set()  # wakes requests sleeping in a latency/timeout fault
        super().stop()

    def dormir(self, segundos: float) -> None:
        self._parado.wait(segundos)

    def procesar(self, ruta: str, cuerpo: dict[str, Any], clave: str | None) -> Respuesta:
        """Run a route once per Idempotency-Key; a repeated key gets the stored answer."""
        accion = self.rutas().get(ruta)
        if accion is None:
            return 404, {"error": "ruta_desconocida", "ruta": ruta}
        with self._lock:  # serialises same-key races: the second caller sees the first's answer
            if clave is not None and clave in self._respuestas:
                return repetida(self._respuestas[clave])
            estado, respuesta = accion(cuerpo, clave)
            if clave is not None and guardable(estado):
                self._respuestas[clave] = (estado, respuesta)
            return estado, respuesta

    def registrar(self, ruta: str, cuerpo: dict[str, Any], clave: str | None) -> None:
        """Record an effect that really happened (caller holds the lock)."""
        self.efectos.append({"ruta": ruta, "clave": clave, "cuerpo": cuerpo})
        if clave is not None:
            self.efectos_por_clave[clave] += 1


class Pasarela(ProveedorHttp):
    """The payment gateway: charges and refunds, idempotent by ``Idempotency-Key``."""

    nombre = PASARELA

    def __init__(self, fallos: ControlFallos | None = None, **kw: Any) -> None:
        super().__init__(fallos, **kw)
        self.cobros: dict[str, dict[str, Any]] = {}  # referencia_cobro -> charge
        self.reembolsos: dict[str, dict[str, Any]] = {}  # referencia_reembolso -> refund
        self.simulador = Simulador(PASARELA, self, lambda medio, importe: self.fallos.rechaza(medio, importe))

    def cobros_de(self, pedido_id: str) -> int:
        with self._lock:
            return sum(1 for c in self.cobros.values() if c["pedido_id"] == pedido_id)

    def reembolsos_de(self, pedido_id: str) -> int:
        with self._lock:
            return sum(1 for r in self.reembolsos.values() if r["pedido_id"] == pedido_id)

    # -- simulador.Almacen, in memory (called under the provider's lock) -----------
    def nueva_referencia(self, prefijo: str) -> str:
        hechos = self.cobros if prefijo == "ch" else self.reembolsos
        return f"{prefijo}_{len(hechos) + 1:06d}"

    def cobro(self, referencia_cobro: str | None, pedido_id: str | None) -> dict[str, Any] | None:
        if referencia_cobro:
            return self.cobros.get(referencia_cobro)
        return next((c for c in self.cobros.values() if c["pedido_id"] == pedido_id), None)

    def guardar_cobro(self, cobro: dict[str, Any]) -> None:
        self.cobros[cobro["referencia_cobro"]] = cobro

    def guardar_reembolso(self, reembolso: dict[str, Any]) -> bool:
        if any(r["referencia_cobro"] == reembolso["referencia_cobro"] for r in self.reembolsos.values()):
            return False
        self.reembolsos[reembolso["referencia_reembolso"]] = reembolso
        return True


class ProveedorSimulado(ProveedorHttp):
    """A provider that keeps no state of its own (the ERP, an e-mail provider...): its simulator's routes, 2xx."""

    def __init__(self, nombre: str, fallos: ControlFallos | None = None, **kw: Any) -> None:
        super().__init__(fallos, nombre=nombre, **kw)
        self.simulador = Simulador(nombre)


@dataclass
class Proveedores:
    """One stand-in per provider the template's functions call, sharing one fault control.

    ``with Proveedores() as p: p.pasarela.url, p["erp"].efectos``: by dependency (its breaker's name).
    """

    fallos: ControlFallos = field(default_factory=ControlFallos)
    clave_api_pasarela: str | None = None
    plantilla: Template = field(default_factory=plantilla)

    def __post_init__(self) -> None:
        self._proveedores = m.providers_called(self.plantilla)
        self.por_dependencia: dict[str, ProveedorHttp] = {
            p.dependency: self._stand_in(p.dependency) for p in self._proveedores
        }
        if PASARELA not in self.por_dependencia:
            raise ValueError(f"no function of {self.plantilla.path} calls a {PASARELA} (a {PASARELA.upper()}_URL)")

    def _stand_in(self, dependencia: str) -> ProveedorHttp:
        if dependencia == PASARELA:
            return Pasarela(self.fallos, clave_api=self.clave_api_pasarela)
        return ProveedorSimulado(dependencia, self.fallos)

    @property
    def pasarela(self) -> Pasarela:
        pasarela = self.por_dependencia[PASARELA]
        assert isinstance(pasarela, Pasarela)
        return pasarela

    def __getitem__(self, dependencia: str) -> ProveedorHttp:
        return self.por_dependencia[dependencia]

    def __iter__(self) -> Iterator[ProveedorHttp]:
        return iter(self.por_dependencia.values())

    @property
    def todos(self) -> tuple[ProveedorHttp, ...]:
        return tuple(self.por_dependencia.values())

    def de(self, dependencias: tuple[str, ...]) -> list[dict[str, Any]]:
        """The effects of these providers' stand-ins (a consumer's, :attr:`template_model.Consumer.breakers`)."""
        return [efecto for d in dependencias if d in self.por_dependencia for efecto in self[d].efectos]

    def por_variable(self) -> dict[str, ProveedorHttp]:
        """Each provider URL variable of the functions (as ``template.yaml`` names it) -> its stand-in."""
        return {p.variable: self[p.dependency] for p in self._proveedores}

    def entorno(self) -> dict[str, str]:
        """The functions' environment variables (as ``template.yaml`` names them) pointing at these stand-ins."""
        return {variable: proveedor.url for variable, proveedor in self.por_variable().items()}

    def __enter__(self) -> Self:
        for proveedor in self.todos:
            proveedor.start()
        self.fallos.reiniciar_reloj()
        return self

    def __exit__(self, *exc: object) -> None:
        stop_all(proveedor.stop for proveedor in self.todos)


class _Servidor(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a request held by a timeout fault must not block stop()
    request_queue_size = 128  # the default backlog of 5 drops connects when 20 consumers arrive at once


def _manejador(proveedor: ProveedorHttp) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to one provider (http.server wants a class)."""

    class Manejador(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, so a client pool and a reset behave as in production
        disable_nagle_algorithm = True  # headers and body go in two writes: without this, 40 ms each

        def do_POST(self) -> None:
            ruta = self.path.split("?", 1)[0]
            longitud = int(self.headers.get("Content-Length") or 0)
            crudo = self.rfile.read(longitud) if longitud else b""
            if proveedor.verificador is not None:  # Lambda's AWS_IAM check: before the function runs at all
                motivo = proveedor.verificador.motivo_rechazo("POST", self.path, self.headers, crudo)
                if motivo is not None:
                    with proveedor._lock:
                        proveedor.rechazadas[motivo] += 1
                    return self._responder(403, {"Message": "Forbidden"})
            clave = self.headers.get("Idempotency-Key")
            with proveedor._lock:
                proveedor.llamadas[ruta] += 1
                if clave is not None:
                    proveedor.llamadas_por_clave[clave] += 1
            fallo = proveedor.fallos.elegir(proveedor.nombre, ruta)
            if fallo is not None and self._fallar_antes(fallo):
                return
            if proveedor.clave_api and self.headers.get("Authorization") != f"Bearer {proveedor.clave_api}":
                return self._responder(401, {"error": "no_autorizado"})
            try:
                cuerpo = json.loads(crudo or b"{}")
            except ValueError:
                return self._responder(400, {"error": "json_invalido"})
            estado, respuesta = proveedor.procesar(ruta, cuerpo, clave)
            if fallo is not None and fallo.tipo is TipoFallo.CONEXION_CORTADA:
                return self._cortar()  # tras_procesar: the effect happened, the answer is lost
            self._responder(estado, respuesta)

        def _fallar_antes(self, fallo: Fallo) -> bool:
            """Apply a fault that acts before processing; True when the request is over."""
            if fallo.tipo is TipoFallo.LATENCIA:
                proveedor.dormir(fallo.latencia_s)
                return False
            if fallo.tipo is TipoFallo.ESTADO:
                self._responder(fallo.codigo, {"error": "fallo_inyectado", "estado": fallo.codigo})
            elif fallo.tipo is TipoFallo.LIMITE:
                self._responder(429, {"error": "demasiadas_peticiones"}, {"Retry-After": str(fallo.retry_after_s)})
            elif fallo.tipo is TipoFallo.TIEMPO_AGOTADO:
                proveedor.dormir(fallo.latencia_s)
                self.close_connection = True
            elif fallo.tipo is TipoFallo.CONEXION_CORTADA:
                if fallo.tras_procesar:
                    return False
                self._cortar()
            return True

        def _responder(self, estado: int, cuerpo: dict[str, Any], cabeceras: dict[str, str] | None = None) -> None:
            datos = json.dumps(cuerpo).encode()
            try:
                self.send_response(estado)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(datos)))
                if cuerpo.get("repetida"):
                    self.send_header("Idempotent-Replayed", "true")
                for nombre, valor in (cabeceras or {}).items():
                    self.send_header(nombre, valor)
                self.end_headers()
                self.wfile.write(datos)
            except OSError:  # the client already gave up (its read timeout): nothing to tell it
                self.close_connection = True

        def _cortar(self) -> None:
            # SO_LINGER 0 turns close() into a TCP RST: the client sees "connection reset by peer".
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
            """Silence the per-request stderr line; the counters are the record."""

    return Manejador
