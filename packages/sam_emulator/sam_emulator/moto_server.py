"""moto's server on loopback, so the runtime, the handlers and the operator CLI see one AWS.

The local run uses ``ThreadedMotoServer`` (in this process, on 127.0.0.1 and a free port)
rather than ``mock_aws``: ``mf-dlq --endpoint-url`` (a separate process) must reach the
same queues as the handlers. Everything in this process reaches it through
``AWS_ENDPOINT_URL``, which botocore honours for every client.

The local run's changes to moto are made here, in one place:

- ``stepfunctions.execute_state_machine``: moto's ASL interpreter really runs executions;
  its Lambda tasks call back into this server (``MOTO_PORT``), where the handler runs in
  process (``sam_emulator.moto_lambda``).
- the interpreter's ``time.sleep`` (Retry intervals) is divided by the run's
  time-compression factor, so a ``Retry`` written for production (``IntervalSeconds: 2``,
  ``MaxDelaySeconds: 20``) keeps its shape and ratios but lasts ``1/compresion`` of it.
  The ASL itself is never copied or rewritten.
- the execution's ``TimeoutSeconds`` is compressed by the same factor. moto's interpreter
  honours it (``Program.eval`` joins the execution's worker thread with that timeout, then
  marks the execution ``TIMED_OUT``, as Step Functions does: "States.Timeout" in the Step
  Functions developer guide, "Error handling"; the execution stops, a Lambda invocation in
  flight runs to its own end); only its wait is scaled here, so a bound written for
  production keeps its ratio to the compressed ``Retry`` waits.
- with ``comprimir_esperas`` (the chaos scenario, whose leases are compressed too) a ``Wait``
  state's ``Seconds`` is divided by the same factor: a wait written to outlast a lease
  (``EsperarFinBloqueoCobro``) still outlasts the compressed lease. Off by default: the other
  scenarios keep real leases, so their waits stay real.
- DynamoDB writes are atomic, as DynamoDB's conditional writes are (:func:`make_dynamodb_writes_atomic`;
  the tests' moto calls it too).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

CREDENCIALES_LOCALES = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_SECURITY_TOKEN": "testing",
}

# The moto module whose ``time.sleep`` is a Retry's wait (moto 5.2.5; Wait states use an
# Event and are not compressed: the workflow has none).
_MODULOS_CON_ESPERA = ("moto.stepfunctions.parser.asl.component.common.retry.retrier_decl",)


_MODULO_PROGRAMA = "moto.stepfunctions.parser.asl.component.program.program"


_DYNAMODB_WRITES = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
_DYNAMODB_WRITE_LOCK = threading.RLock()


def make_dynamodb_writes_atomic() -> None:
    """Make moto's DynamoDB writes atomic, as DynamoDB's are (for the whole process; calling it again does nothing).

    moto 5.2.5 checks a ``ConditionExpression`` and then writes, with no lock between: two
    threads of this process (the local run's pollers and the state machine's tasks, behind
    moto's threaded server; 50 consumers in a test) can both pass ``attribute_not_exists(clave)``
    and both "win" an idempotency claim, which DynamoDB never allows. One lock around each
    write closes that window; the local run and the tests' ``aws`` fixture both call this.
    """
    from moto.dynamodb.models import DynamoDBBackend

    with _DYNAMODB_WRITE_LOCK:
        for nombre in _DYNAMODB_WRITES:
            original = getattr(DynamoDBBackend, nombre)
            if getattr(original, "_mf_atomic", False):
                continue

            def atomic(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                with _DYNAMODB_WRITE_LOCK:
                    return _original(*args, **kwargs)

            atomic._mf_atomic = True  # type: ignore[attr-defined]
            setattr(DynamoDBBackend, nombre, atomic)


def hilos_comprimidos(compresion: float) -> SimpleNamespace:
    """A stand-in for the ``threading`` module whose ``Thread.join(timeout)`` waits ``1/compresion`` of it."""

    class HiloComprimido(threading.Thread):
        def join(self, timeout: float | None = None) -> None:
            super().join(None if timeout is None else max(0.0, float(timeout)) / compresion)

    hilos = SimpleNamespace(**{n: getattr(threading, n) for n in dir(threading) if not n.startswith("_")})
    hilos.Thread = HiloComprimido
    return hilos


def puerto_libre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def reloj_comprimido(compresion: float) -> SimpleNamespace:
    """A stand-in for the ``time`` module whose ``sleep`` lasts ``1/compresion`` of the asked time."""
    reloj = SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if not n.startswith("_")})
    reloj.sleep = lambda s: time.sleep(max(0.0, float(s)) / compresion)
    return reloj


@dataclass
class ServidorMoto:
    """moto's server on ``127.0.0.1:<free port>`` with the local run's settings applied."""

    region: str = "eu-south-2"
    compresion: float = 1.0
    puerto: int = field(default_factory=puerto_libre)
    _servidor: Any = None
    _env_previo: dict[str, str | None] = field(default_factory=dict)
    _relojes_previos: dict[str, Any] = field(default_factory=dict)
    comprimir_esperas: bool = False
    _hilos_previos: Any = None
    _espera_previa: Any = None
    _restaurar: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.puerto}"

    def arrancar(self) -> ServidorMoto:
        import importlib
        import logging

        from moto.core.config import default_user_config
        from moto.server import ThreadedMotoServer

        make_dynamodb_writes_atomic()
        default_user_config["stepfunctions"]["execute_state_machine"] = True
        default_user_config["lambda"]["use_docker"] = False
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
        # moto's ASL interpreter logs every failed state (a Catch included) at ERROR; the execution
        # history already records them, and the demo reads it from there.
        logging.getLogger("moto.stepfunctions.parser").setLevel(logging.CRITICAL)
        self._fijar_env(
            {
                **CREDENCIALES_LOCALES,
                "AWS_ENDPOINT_URL": self.url,
                "MOTO_PORT": str(self.puerto),
                "AWS_DEFAULT_REGION": self.region,
                "AWS_REGION": self.region,
            }
        )
        for nombre in _MODULOS_CON_ESPERA:
            modulo = importlib.import_module(nombre)
            self._relojes_previos[nombre] = modulo.time
            modulo.time = reloj_comprimido(self.compresion)
        programa = importlib.import_module(_MODULO_PROGRAMA)
        self._hilos_previos = programa.threading
        programa.threading = hilos_comprimidos(self.compresion)
        if self.comprimir_esperas:
            self._comprimir_waits()
        self._acelerar_enrutado()
        self._servidor = ThreadedMotoServer(ip_address="127.0.0.1", port=self.puerto, verbose=False)
        self._servidor.start()
        # moto's backends are process-global: a server started after another must start empty.
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST"), timeout=10)
        return self

    def _comprimir_waits(self) -> None:
        """A Wait state waits ``Seconds / compresion`` (moto 5.2.5: ``WaitFunction._wait_interval``)."""
        from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

        self._espera_previa = WaitFunction._wait_interval
        compresion = self.compresion

        def _wait_interval(_self: Any, env: Any, wait_seconds: int) -> None:
            if wait_seconds > 0:  # the execution stopping sets the event and ends the wait early
                env.program_state_event.wait(wait_seconds / compresion)

        WaitFunction._wait_interval = _wait_interval  # type: ignore[method-assign]

    def _acelerar_enrutado(self) -> None:
        """Cache moto's host -> backend routing (moto 5.2.5 lists its package directory per request).

        ``DomainDispatcherApplication.get_backend_for_host`` runs under a server-wide lock and
        calls ``os.listdir``/``isdir`` on ~250 folders for every request; with a few hundred
        requests a second that lock, not the emulation, was the local run's bottleneck. The
        answer depends only on the host string, so a cache changes nothing but the cost.
        """
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication

        original = DomainDispatcherApplication.get_backend_for_host
        cache: dict[str | None, Any] = {}

        def get_backend_for_host(app: Any, host: str | None) -> Any:
            if host not in cache:
                cache[host] = original(app, host)
            return cache[host]

        DomainDispatcherApplication.get_backend_for_host = get_backend_for_host  # type: ignore[method-assign]
        self._restaurar = lambda: setattr(DomainDispatcherApplication, "get_backend_for_host", original)

    def parar(self) -> None:
        import importlib

        if self._restaurar is not None:
            self._restaurar()
            self._restaurar = None

        if self._servidor is not None:
            self._servidor.stop()
            self._servidor = None
        for nombre, reloj in self._relojes_previos.items():
            importlib.import_module(nombre).time = reloj
        self._relojes_previos.clear()
        if self._espera_previa is not None:
            from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction

            WaitFunction._wait_interval = self._espera_previa  # type: ignore[method-assign]
            self._espera_previa = None
        if self._hilos_previos is not None:
            importlib.import_module(_MODULO_PROGRAMA).threading = self._hilos_previos
            self._hilos_previos = None
        for clave, valor in self._env_previo.items():
            if valor is None:
                os.environ.pop(clave, None)
            else:
                os.environ[clave] = valor
        self._env_previo.clear()

    def _fijar_env(self, valores: dict[str, str]) -> None:
        for clave, valor in valores.items():
            self._env_previo.setdefault(clave, os.environ.get(clave))
            os.environ[clave] = valor

    def __enter__(self) -> ServidorMoto:
        return self.arrancar()

    def __exit__(self, *exc: object) -> None:
        self.parar()
