"""Everything one scenario runs against, started and stopped in the right order.

:class:`Sesion` = stdout captured (:mod:`salida`) + the four provider stand-ins (engineer
5a's :mod:`proveedores`) + a PostgreSQL schema of its own (:mod:`tienda`) + a Redis
database of its own + the template running in moto (:mod:`runtime`) + the observer.

Redis: the breaker and the retry budget write fixed keys (``mf:circuito:<dependencia>``), so
the demo uses a logical database of its own (``MF_DEMO_REDIS_DB``, default 9) and deletes only
its ``mf:*`` keys there, before and after: a breaker left open by the previous run would
otherwise decide the next one.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from mercadofresco_local.observador import Observador
from mercadofresco_local.plantilla import RAIZ, Plantilla
from mercadofresco_local.proveedores import Proveedores
from mercadofresco_local.runtime import RuntimeLocal
from mercadofresco_local.salida import CapturaSalida
from mercadofresco_local.tienda import BaseDemo, Tienda

if TYPE_CHECKING:
    from pathlib import Path

    from mercadofresco_local.proveedores import ProveedorHttp

DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"
BD_REDIS_DEMO = 9


def url_redis_demo(base: str) -> str:
    """``REDIS_URL`` pointed at the demo's own logical database."""
    partes = urlsplit(base)
    bd = os.environ.get("MF_DEMO_REDIS_DB", str(BD_REDIS_DEMO))
    return urlunsplit((partes.scheme, partes.netloc, f"/{bd}", partes.query, partes.fragment))


def limpiar_redis(url: str) -> None:
    import redis

    cliente = redis.Redis.from_url(url)
    claves = list(cliente.scan_iter(match="mf:*", count=1000))
    if claves:
        cliente.delete(*claves)
    cliente.close()


@dataclass
class Sesion:
    """One scenario's world. ``with Sesion(...) as s:`` then ``s.runtime``, ``s.tienda``, ``s.proveedores``."""

    escenario: str
    compresion: float = 30.0
    tope_concurrencia: int | None = None
    registro: Path = field(default_factory=lambda: RAIZ / "build" / "mf-demo")  # build/ is git-ignored
    entorno_extra: dict[str, str] = field(default_factory=dict)
    proveedores: Proveedores = field(default_factory=Proveedores)
    captura: CapturaSalida | None = None
    base: BaseDemo | None = None
    runtime: RuntimeLocal | None = None
    tienda: Tienda | None = None
    observador: Observador | None = None
    inicio: float = 0.0
    notas: list[str] = field(default_factory=list)  # what the run had to do differently, for the report
    _pilas: list[Any] = field(default_factory=list)

    @property
    def servidor_url(self) -> str | None:
        """moto's endpoint, for tools run as separate processes (``--endpoint-url``)."""
        return self.runtime.servidor.url if self.runtime and self.runtime.servidor else None

    @property
    def redis_url(self) -> str:
        return url_redis_demo(os.environ.get("REDIS_URL", REDIS_URL))

    def __enter__(self) -> Sesion:
        try:
            self._arrancar()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _arrancar(self) -> None:
        self.captura = CapturaSalida(self.registro / f"mf-demo-{self.escenario}.log").instalar()
        # Powertools warns on stderr when an invocation has no metric: in Lambda that goes to the log.
        warnings.filterwarnings("ignore", category=UserWarning, module="aws_lambda_powertools")
        self._pilas.append(self.captura.desinstalar)
        self.proveedores.__enter__()
        self._pilas.append(lambda: self.proveedores.__exit__(None, None, None))
        self.base = BaseDemo(os.environ.get("DATABASE_URL", DATABASE_URL)).crear()
        if not os.environ.get("MF_DEMO_CONSERVAR"):
            self._pilas.append(self.base.borrar)
        limpiar_redis(self.redis_url)
        self._pilas.append(lambda: limpiar_redis(self.redis_url))
        self.runtime = RuntimeLocal(
            entorno_local=self._entorno(),
            compresion=self.compresion,
            plantilla=Plantilla(parametros=self._parametros()),
            tope_concurrencia=self.tope_concurrencia,
        ).arrancar()
        self._pilas.append(self.runtime.parar)
        self.tienda = Tienda(self.base, bus=self._bus()).abrir()
        self._pilas.append(self.tienda.cerrar)
        if not self.runtime.programas:
            relay = RelayDeRespaldo(self.base.url, self._bus())
            relay.arrancar()
            self._pilas.append(relay.parar)
            self.notas.append("la plantilla no programa el relay del outbox: se ejecuta OutboxRelay directamente")
        self.runtime.arrancar_consumo()
        self.observador = Observador(self.runtime, self.redis_url).arrancar()
        self._pilas.append(self.observador.parar)
        self.proveedores.fallos.reiniciar_reloj()
        self.inicio = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        while self._pilas:
            try:
                self._pilas.pop()()
            except Exception:  # tear down the rest; the first error is already on its way
                continue

    def _stand_ins(self) -> dict[str, ProveedorHttp]:
        p = self.proveedores
        return {
            "Pasarela": p.pasarela,
            "Erp": p.erp,
            "CorreoPrincipal": p.correo_principal,
            "CorreoSecundario": p.correo_secundario,
        }

    def _parametros(self) -> dict[str, str]:
        """Template parameters ``<Provider>Url`` pointed at the loopback stand-ins."""
        return {f"{nombre}Url": proveedor.url for nombre, proveedor in self._stand_ins().items()}

    def _entorno(self) -> dict[str, str]:
        assert self.base is not None
        entorno = {
            "DATABASE_URL": self.base.url,
            "REDIS_URL": self.redis_url,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_DEV": "false",
            # the relay drains for most of its scheduled minute: compressed like the schedule
            "OUTBOX_DRENAJE_S": f"{max(0.5, 50 / self.compresion):.2f}",
        }
        # The same URLs for handlers that read them straight from the environment.
        entorno.update(self.proveedores.entorno())
        return {**entorno, **self.entorno_extra}

    def _bus(self) -> str:
        """The template's event bus (the store and the relay publish there)."""
        assert self.runtime is not None
        buses = self.runtime.plantilla.de_tipo("AWS::Events::EventBus")
        return self.runtime.plantilla.ref(next(iter(buses))) if buses else "default"

    def segundos(self) -> float:
        return time.monotonic() - self.inicio


class RelayDeRespaldo:
    """The outbox relay run directly from the layer, for a template that does not schedule one yet.

    Same code path as the relay Lambda (``mercadofresco.outbox.relay.OutboxRelay``), drained in
    a thread; the report says it was used.
    """

    def __init__(self, database_url: str, bus: str) -> None:
        from mercadofresco.aws import client
        from mercadofresco.outbox.config import OutboxConfig
        from mercadofresco.outbox.relay import OutboxRelay
        from psycopg_pool import ConnectionPool

        self._pool = ConnectionPool(database_url, min_size=1, max_size=2, open=True)
        self._relay = OutboxRelay(self._pool, client("events"), OutboxConfig(bus_name=bus, sondeo_s=0.2))
        self._parar = False
        self._hilo = threading.Thread(target=self._bucle, name="relay-respaldo", daemon=True)

    def arrancar(self) -> None:
        self._hilo.start()

    def parar(self) -> None:
        self._parar = True
        self._hilo.join(timeout=10)
        self._pool.close()

    def _bucle(self) -> None:
        while not self._parar:
            self._relay.drenar(time.monotonic() + 1.0)
