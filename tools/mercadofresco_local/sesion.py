"""Everything one scenario runs against, started and stopped in the right order.

:class:`Sesion` = stdout captured (:mod:`salida`) + one stand-in per provider the template
calls (:mod:`proveedores`) + a PostgreSQL schema of its own (:mod:`tienda`) + a Redis of its
own + the template running in moto (:mod:`runtime`) + the observer.

Redis: the breaker and the retry budget write fixed keys (``mf:circuito:<dependencia>``), so two
runs sharing a Redis database decide each other's breakers, and each one's clean-up deletes the
other's state mid-run. So every run has a ``redis-server`` of its own (:class:`PrivateRedis`, on a
free loopback port, gone at the end), like the chaos scenario, which also freezes it. Only where
no ``redis-server`` can be started, or when ``MF_DEMO_REDIS_DB`` names one, does the run use a
logical database of the shared server (``REDIS_URL``'s, database ``MF_DEMO_REDIS_DB``, default 9),
deleting only its ``mf:*`` keys there, before and after: a breaker left open by the previous run
would otherwise decide the next one.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from sam_emulator import private_postgres
from sam_emulator.background import BackgroundThread
from sam_emulator.log_capture import OutputCapture
from sam_emulator.moto_server import LOCAL_CREDENTIALS
from sam_emulator.private_postgres import PrivatePostgres
from sam_emulator.private_redis import PrivateRedis
from sam_emulator.runtime import LocalRuntime
from sam_emulator.template import Template

from mercadofresco_local import PARAMETRO_MOTOR, RAIZ, plazos
from mercadofresco_local.firma import VerificadorSigV4, urls_firmadas
from mercadofresco_local.observador import Observador
from mercadofresco_local.proveedores import Proveedores
from mercadofresco_local.tienda import BaseDemo, Tienda

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from pathlib import Path

DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:5432/postgres"
REDIS_URL = "redis://127.0.0.1:6379/0"
BD_REDIS_DEMO = 9


def redis_propio(caos: bool) -> bool:
    """Whether a run starts a ``redis-server`` of its own (see the module's docstring): the chaos scenario always
    (it freezes it); any other unless ``MF_DEMO_REDIS_DB`` names a shared database or there is no binary."""
    return caos or ("MF_DEMO_REDIS_DB" not in os.environ and shutil.which("redis-server") is not None)


def url_redis_demo(base: str) -> str:
    """``REDIS_URL`` pointed at the demo's own logical database."""
    partes = urlsplit(base)
    bd = os.environ.get("MF_DEMO_REDIS_DB", str(BD_REDIS_DEMO))
    return urlunsplit((partes.scheme, partes.netloc, f"/{bd}", partes.query, partes.fragment))


def puertos_locales_hacia(puerto_remoto: int, pids: list[int] | None = None) -> set[int]:
    """Local ports of these processes' TCP connections to ``puerto_remoto`` (Linux ``/proc``; default: this one)."""
    inodos = set()
    for pid in pids or [os.getpid()]:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # a worker that has just exited
            continue
        for fd in fds:
            try:
                destino = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if destino.startswith("socket:["):
                inodos.add(destino[8:-1])
    puertos = set()
    for tabla in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(tabla) as f:
                lineas = f.readlines()[1:]
        except OSError:
            continue
        for linea in lineas:
            campos = linea.split()
            if campos[9] in inodos and int(campos[2].rsplit(":", 1)[1], 16) == puerto_remoto:
                puertos.add(int(campos[1].rsplit(":", 1)[1], 16))
    return puertos


def limpiar_redis(url: str) -> None:
    import redis

    cliente = redis.Redis.from_url(url)
    claves = list(cliente.scan_iter(match="mf:*", count=1000))
    if claves:
        cliente.delete(*claves)
    cliente.close()


# moto runs in this process, beside every handler, poller and stand-in: on a loaded machine one of
# its answers can wait for the GIL past the layer's 5 s SDK read timeout, which then fails the run
# (ReadTimeoutError, exit 2) for a delay no AWS endpoint would show. The run lengthens it for
# everything in this process (the layer reads SDK_READ_TIMEOUT_S; the template never sets it).
SDK_READ_TIMEOUT_LOCAL_S = 30


def alargar_lectura_sdk() -> Callable[[], None]:
    """Set the local run's SDK read timeout in ``os.environ``; return what undoes it."""
    from mercadofresco.aws import ENV_SDK_READ_TIMEOUT_S

    previo = os.environ.get(ENV_SDK_READ_TIMEOUT_S)
    os.environ[ENV_SDK_READ_TIMEOUT_S] = str(SDK_READ_TIMEOUT_LOCAL_S)

    def deshacer() -> None:
        if previo is None:
            os.environ.pop(ENV_SDK_READ_TIMEOUT_S, None)
        else:
            os.environ[ENV_SDK_READ_TIMEOUT_S] = previo

    return deshacer


@dataclass
class Sesion:
    """One scenario's world. ``with Sesion(...) as s:`` then ``s.runtime``, ``s.tienda``, ``s.proveedores``."""

    escenario: str
    compresion: float = 30.0
    motor: str | None = None  # the template's WorkflowEngine (None: its default, the state machine)
    tope_concurrencia: int | None = None
    registro: Path = field(default_factory=lambda: RAIZ / "build" / "mf-demo")  # build/ is git-ignored
    entorno_extra: dict[str, str] = field(default_factory=dict)
    proveedores: Proveedores = field(default_factory=Proveedores)
    captura: OutputCapture | None = None
    base: BaseDemo | None = None
    runtime: LocalRuntime | None = None
    tienda: Tienda | None = None
    observador: Observador | None = None
    inicio: float = 0.0
    notas: list[str] = field(default_factory=list)  # what the run had to do differently, for the report
    # The chaos scenario: a PRIVATE redis-server (frozen on purpose) and PostgreSQL server
    # (restarted on purpose), compressed platform bounds, tap queues copying every PedidoCreado
    # the bus routes and every PedidoConfirmado the topic fans out, the seeds to run, and (in a
    # child process of a parallel campaign) the file each seed's result is appended to.
    caos: bool = False
    semillas: list[int] = field(default_factory=list)
    resultados: Path | None = None
    redis_privado: PrivateRedis | None = None
    postgres_privado: PrivatePostgres | None = None
    grifo_url: str | None = None
    grifo_avisos_url: str | None = None
    _pilas: list[Any] = field(default_factory=list)

    @property
    def servidor_url(self) -> str | None:
        """moto's endpoint, for tools run as separate processes (``--endpoint-url``)."""
        return self.runtime.server.url if self.runtime and self.runtime.server else None

    @property
    def redis_url(self) -> str:
        if self.redis_privado is not None:
            return self.redis_privado.url
        return url_redis_demo(os.environ.get("REDIS_URL", REDIS_URL))

    def __enter__(self) -> Sesion:
        try:
            self._arrancar()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _arrancar(self) -> None:
        self.captura = OutputCapture(self.registro / f"mf-demo-{self.escenario}.log").install()
        # Powertools warns on stderr when an invocation has no metric: in Lambda that goes to the log.
        warnings.filterwarnings("ignore", category=UserWarning, module="aws_lambda_powertools")
        self._pilas.append(self.captura.uninstall)
        self._pilas.append(alargar_lectura_sdk())  # before any client: provisioning is the longest wait
        url_postgres = os.environ.get("DATABASE_URL", DATABASE_URL)
        if redis_propio(self.caos):
            self.redis_privado = PrivateRedis().start()
            self._pilas.append(self.redis_privado.stop)
        if self.caos:
            if private_postgres.available():
                self.postgres_privado = PrivatePostgres().start()
                self._pilas.append(self.postgres_privado.stop)
                url_postgres = self.postgres_privado.url
            else:
                self.notas.append(
                    "no hay binarios de PostgreSQL (initdb, postgres): «reiniciar PostgreSQL» solo corta las "
                    "conexiones de las funciones (pg_terminate_backend), sin rechazar conexiones"
                )
        self.proveedores.__enter__()
        self._pilas.append(lambda: self.proveedores.__exit__(None, None, None))
        self.base = (BaseReintentada if self.postgres_privado else BaseDemo)(url_postgres).crear()
        if not os.environ.get("MF_DEMO_CONSERVAR"):
            self._pilas.append(self.base.borrar)
        limpiar_redis(self.redis_url)
        self._pilas.append(lambda: limpiar_redis(self.redis_url))
        self.runtime = LocalRuntime(
            local_environment=self._entorno(),
            compression=self.compresion,
            template=Template(path=RAIZ / "template.yaml", parameters=self._parametros()),
            concurrency_cap=self.tope_concurrencia,
            compressed_deadlines=self.caos,
            compress_function=plazos.comprimir_plazos,
            new_environments=plazos.entornos_nuevos,
        ).start()
        self._pilas.append(self.runtime.stop)
        self._exigir_firma()
        if self.caos:
            self.grifo_url = self._grifo()
            self.grifo_avisos_url = self._grifo_avisos()
        self.tienda = Tienda(self.base, bus=self._bus()).abrir()
        self._pilas.append(self.tienda.cerrar)
        if not self.runtime.schedules:
            relay = RelayDeRespaldo(self.base.url, self._bus())
            relay.arrancar()
            self._pilas.append(relay.parar)
            self.notas.append("la plantilla no programa el relay del outbox: se ejecuta OutboxRelay directamente")
        self.runtime.start_consuming()
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

    def _exigir_firma(self) -> None:
        """Each stand-in plays the sandbox function URL the template gives its callers, as Lambda would.

        The provider URL parameters are left at their defaults, so the template plays every provider
        itself (a default deploy): its callers get ``<URL variable>_AUTH=AWS_IAM`` and sign, and their
        URL variables point at the stand-ins (:meth:`_entorno`). Where a caller is told to sign, the
        stand-in behind that variable verifies SigV4 with the credentials the emulated functions sign
        with, and is recorded as that function URL (``UrlsLocales``) for the least-privilege check.
        """
        assert self.runtime is not None
        plantilla = self.runtime.template
        verificador = VerificadorSigV4.de(LOCAL_CREDENTIALS, plantilla.region)
        stand_ins = self.proveedores.por_variable()
        for variable, url in urls_firmadas(plantilla).items():
            stand_ins[variable].verificador = verificador
            unidad, recurso = plantilla.locate(url)  # in the sandbox unit, as the emulator created it
            locales = unidad.physical_ids[recurso].setdefault("UrlsLocales", [])
            if stand_ins[variable].url not in locales:
                locales.append(stand_ins[variable].url)

    def _parametros(self) -> dict[str, str]:
        """The parameters the run gives, as a deploy's overrides: the engine chosen for the order workflow (the
        emulator's own, ``LOCAL_PARAMETERS``, are its defaults)."""
        return {PARAMETRO_MOTOR: self.motor} if self.motor else {}

    def _entorno(self) -> dict[str, str]:
        assert self.base is not None
        entorno = {
            "DATABASE_URL": self.base.url,
            "REDIS_URL": self.redis_url,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_DEV": "false",
            # the relay drains for most of its scheduled minute: compressed like the schedule
            "OUTBOX_DRAIN_S": f"{max(0.5, 50 / self.compresion):.2f}",
        }
        # The same URLs for handlers that read them straight from the environment.
        entorno.update(self.proveedores.entorno())
        return {**entorno, **self.entorno_extra}

    def _bus(self) -> str:
        """The template's event bus (the store and the relay publish there)."""
        assert self.runtime is not None
        buses = self.runtime.template.of_type("AWS::Events::EventBus")
        return self.runtime.template.ref(next(iter(buses))) if buses else "default"

    # ------------------------------------------------------------ chaos helpers
    def _grifo(self) -> str:
        """A queue of the run only, receiving a copy of every PedidoCreado (a second target's rule)."""
        from mercadofresco.aws import client

        assert self.runtime is not None
        sqs, events = client("sqs"), client("events")
        url = sqs.create_queue(QueueName="mf-demo-grifo-pedidos")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        regla = self.runtime.template.properties("ReglaPedidoCreado")
        events.put_rule(Name="mf-demo-grifo", EventBusName=self._bus(), EventPattern=json.dumps(regla["EventPattern"]))
        events.put_targets(Rule="mf-demo-grifo", EventBusName=self._bus(), Targets=[{"Id": "grifo", "Arn": arn}])
        return str(url)

    def _grifo_avisos(self) -> str:
        """A queue of the run only, subscribed to the confirmation topic like the fan-out's queues."""
        from mercadofresco.aws import client

        assert self.runtime is not None
        sqs = client("sqs")
        url = sqs.create_queue(QueueName="mf-demo-grifo-avisos")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        client("sns").subscribe(
            TopicArn=self.runtime.template.ref("TopicPedidoConfirmado"),
            Protocol="sqs",
            Endpoint=arn,
            Attributes={"RawMessageDelivery": "true"},  # as the template's subscriptions deliver
        )
        return str(url)

    def preparar_semilla(self, semilla: int) -> None:
        """A clean start for one seed in a shared session: breaker/budget state, fault rng, store rng."""
        import random

        import redis

        if self.redis_privado is not None:
            cliente = redis.Redis.from_url(self.redis_privado.url)
            cliente.flushall()  # the run's own server: nobody else's keys
            cliente.close()
        self.proveedores.fallos.limpiar()
        self.proveedores.fallos.rng = random.Random(semilla)
        if self.tienda is not None:
            self.tienda.semilla = semilla
            self.tienda.__post_init__()

    def reiniciar_postgres(self, caido_s: float) -> None:
        """Restart the run's private PostgreSQL server; without one, drop the handlers' connections."""
        if self.postgres_privado is not None:
            self.postgres_privado.reset(caido_s)
        else:
            self.cortar_postgres()

    def cortar_postgres(self) -> int:
        """Drop the handlers' PostgreSQL connections, as a server restart does; return how many.

        Only connections of this process and the functions' workers (their client ports, read from ``/proc``) whose
        ``application_name`` is one of the template's functions: the shared server's other
        clients, and this run's own store and checks, are never touched.
        """
        import psycopg

        assert self.base is not None and self.runtime is not None
        # the layer names its connections after AWS_LAMBDA_FUNCTION_NAME, "mercadofresco" without it
        nombres = ["mercadofresco", *(f.name for f in self.runtime.functions.by_id.values())]
        # the functions' connections are their workers' (sam_emulator.workers), or this process's when in-process
        pids = [os.getpid(), *self.runtime.worker_pids()]
        puertos = sorted(puertos_locales_hacia(urlsplit(self.base.url_base).port or 5432, pids))
        if not puertos:
            return 0
        with psycopg.connect(self.base.url_base, autocommit=True) as conn:
            filas = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE client_port = ANY(%s) AND application_name = ANY(%s) AND pid <> pg_backend_pid()",
                (puertos, nombres),
            ).fetchall()
        return len(filas)

    def vaciar_dlqs(self) -> None:
        """Empty every DLQ (after a seed has been checked), so the next seed's balance starts at zero."""
        from mercadofresco.aws import client

        assert self.runtime is not None
        sqs = client("sqs")
        for lid in self.runtime.queues():
            if not self.runtime.is_dlq(lid):
                continue
            url = self.runtime.queue_url_of(lid)  # not PurgeQueue: SQS allows one a minute per queue
            while mensajes := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
                entradas = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(mensajes)]
                sqs.delete_message_batch(QueueUrl=url, Entries=entradas)

    def segundos(self) -> float:
        return time.monotonic() - self.inicio


class BaseReintentada(BaseDemo):
    """The demo schema on a server the run restarts: the run's own reads wait the restart out.

    Only the harness's reads (the drain loop, the checks) retry; the system under test sees the
    refused connections as they are.
    """

    def consultar(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        import psycopg

        limite = time.monotonic() + private_postgres.START_LIMIT_S
        while True:
            try:
                return super().consultar(sql, *args)
            except psycopg.OperationalError:
                if time.monotonic() > limite:
                    raise
                time.sleep(0.2)


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
        self._relay = OutboxRelay(self._pool, client("events"), OutboxConfig(bus_name=bus, poll_s=0.2))
        self._hilo = BackgroundThread("relay-respaldo", self._bucle)

    def arrancar(self) -> None:
        self._hilo.start()

    def parar(self) -> None:
        try:
            self._hilo.stop()
        finally:
            self._pool.close()

    def _bucle(self, parar: threading.Event) -> None:
        while not parar.is_set():
            self._relay.drain(time.monotonic() + 1.0)
