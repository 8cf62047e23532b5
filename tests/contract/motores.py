"""The order workflow's two engines behind one interface: what the contract suite runs and what the bench counts.

- :class:`MotorStepFunctions`: ``mercadofresco-procesar-pedido`` on moto's interpreter with the real
  ``reclamo`` and ``cobro`` handlers (the ``flujo`` fixture, ``tests/fixtures/flujo.py``).
- :class:`MotorDurable`: ``functions/pedido_durable`` on the durable SDK's local testing runner
  (``DurableFunctionTestRunner``), against the same provisioned moto resources, gateway stand-in and
  private Redis, with the same clock: a ``Wait`` the runner skips moves the handlers' clock as the
  state machine's ``Wait`` does, so a lease really lapses during a wait that outlasts it.

Faults are the same *events* on both, injected where each engine meets them:

- the charge's (or refund's) invocation dies, before or after the gateway acted: on the state machine
  the ``cobro`` function raises the platform's error to its task (``Sandbox.Timedout``, ``Lambda.Unknown``);
  on the durable engine the invocation running the step dies (:class:`ProcessKilled`, which handler code
  cannot catch) and the runner invokes the function again, as the service does;
- throttling: of the ``cobro`` function (state machine) or of the durable function's invocations;
- the claim's close throttled: moto's DynamoDB answers ``ProvisionedThroughputExceededException`` to the
  ``UpdateItem`` of ``pedido:{pedido_id}`` (both engines write it: a service integration, a step);
- the gateway's read timeouts: the stand-in answers after the client's read timeout (engine-independent).

Billed units: the state machine's transitions (``*StateEntered``, Map iterations included, as
``mercadofresco_informes.costes`` counts them) and the durable execution's operations (the start, each
step, wait and retry: AWS's price page counts "a step as 1 + 1 per retry").
"""

from __future__ import annotations

import datetime
import json
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco_local.observador import finales_de_error
from sam_emulator.platform_faults import LambdaThrottled, PlatformFault, ProcessKilled

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.fixtures.flujo import Flujo, Reloj

MOTORES = ("step_functions", "durable")
# The durable function flushes Powertools' metrics on every invocation, also on one that made no gateway call
# (a replay after a wait, a refused input): Powertools warns that it had none to publish. Nothing is wrong.
SIN_METRICAS = pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")
NOMBRE_FUNCION_DURABLE = "mercadofresco-pedido-durable"
DURABLE_EXECUTION_TIMEOUT_S = 7200  # DurableConfig.ExecutionTimeout: Plazos.ProcesarPedido.TimeoutSeconds
AVISOS = {"RECHAZADO": "PedidoRechazado", "REEMBOLSADO": "PedidoCancelado", "NO_CONFIRMADO": "PedidoNoConfirmado"}


@dataclass
class Resultado:
    """One execution as the contract reads it, whichever engine ran it."""

    motor: str
    estado: str  # SUCCEEDED | FAILED (| TIMED_OUT...)
    error: str | None  # the failed end's name (the class / the Fail state's Error)
    causa: str | None
    final: str  # the state machine's final state name, or the durable end mapped to it
    unidades: int  # billed: state transitions / durable operations
    pasos: list[str]  # states entered / durable operations, in order
    esperas_s: list[int]  # Wait states' / wait operations' seconds
    latencia_s: float  # start to end, wall time in this process
    invocaciones: int  # Lambda invocations the execution cost
    lambda_s: float  # their wall time, summed
    datos_bytes: int = 0  # durable: payloads checkpointed (input, step results, errors, output)


@dataclass
class Medidas:
    """Per-invocation accounting of the durable function, by execution ARN."""

    invocaciones: Counter[str] = field(default_factory=Counter)
    segundos: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def anotar(self, ejecucion: str, segundos: float) -> None:
        with self.lock:
            self.invocaciones[ejecucion] += 1
            self.segundos[ejecucion] += segundos


class Motor(ABC):
    """One engine of the order workflow, on the provisioned moto world of ``flujo``."""

    nombre: str

    def __init__(self, flujo: Flujo) -> None:
        self.flujo = flujo
        self.resultados: list[tuple[str, Resultado]] = []  # (pedido_id, result) of every execution run
        self._bus: list[dict[str, Any]] = []
        self._erp: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ running
    @abstractmethod
    def arrancar(self, entrada: Any, nombre: str | None = None) -> str:
        """Start an execution; its handle for :meth:`esperar`."""

    @abstractmethod
    def esperar(self, ejecucion: str) -> Resultado:
        """Wait for the execution's end."""

    def ejecutar(self, entrada: Any, nombre: str | None = None) -> Resultado:
        return self.esperar(self.arrancar(entrada, nombre))

    def _anotar(self, entrada: Any, resultado: Resultado) -> Resultado:
        self.resultados.append((_pedido_de(entrada), resultado))
        return resultado

    # ------------------------------------------------------------------ faults
    @abstractmethod
    def fallar(self, operacion: str, fallo: type[PlatformFault], *, tras_el_real: bool, veces: int | None) -> None:
        """The invocation running the charge or refund (``operacion``) dies, after the gateway acted or before."""

    @abstractmethod
    def estrangular(self, veces: int | None) -> None:
        """The function that charges is throttled ``veces`` times (``None``: for good)."""

    @abstractmethod
    def envolver_operacion(self, operacion: str, envoltura: Callable[[Callable[[], Any]], Any]) -> None:
        """Run ``envoltura(seguir)`` around every charge or refund; ``seguir()`` runs the real one."""

    # ------------------------------------------------------------------ what happened
    @property
    def pasarela(self) -> Any:
        return self.flujo.pasarela

    def eventos_bus(self) -> list[dict[str, Any]]:
        """Every event the workflow put on the bus so far (kept: reading twice loses nothing)."""
        while lote := self.flujo.eventos_bus():
            self._bus.extend(lote)
        return list(self._bus)

    def confirmaciones(self) -> list[dict[str, Any]]:
        """Every PedidoConfirmado the ERP queue got so far (kept)."""
        while lote := self.flujo.mensajes("ColaErp"):
            self._erp.extend(json.loads(m["Body"]) for m in lote)
        return list(self._erp)

    def desenlace(self, pedido_id: str) -> dict[str, Any] | None:
        """The outcome the claim ``pedido:{pedido_id}`` was closed with, if it is closed."""
        reclamo = self.flujo.reclamo(pedido_id)
        if reclamo is None or reclamo["estado"]["S"] != "COMPLETADO":
            return None
        return json.loads(reclamo["resultado"]["S"])


class MotorStepFunctions(Motor):
    """The state machine on moto's interpreter, its Lambda tasks the real handlers in this process."""

    nombre = "step_functions"

    def __init__(self, flujo: Flujo, esperas_por_estado: dict[str, int]) -> None:
        super().__init__(flujo)
        self._esperas_por_estado = esperas_por_estado
        self._entradas: dict[str, tuple[Any, float]] = {}

    def arrancar(self, entrada: Any, nombre: str | None = None) -> str:
        arn = self.flujo.arrancar(entrada, nombre=nombre)
        self._entradas[arn] = (entrada, time.perf_counter())
        return arn

    def esperar(self, ejecucion: str) -> Resultado:
        descripcion = self.flujo.esperar(ejecucion)
        entrada, inicio = self._entradas.pop(ejecucion)
        latencia_s = time.perf_counter() - inicio
        eventos = self.flujo.sfn.get_execution_history(executionArn=ejecucion, maxResults=1000)["events"]
        estados = [e["stateEnteredEventDetails"]["name"] for e in eventos if "stateEnteredEventDetails" in e]
        invocaciones, lambda_s = _tareas_lambda(eventos)
        return self._anotar(
            entrada,
            Resultado(
                motor=self.nombre,
                estado=descripcion["status"],
                error=descripcion.get("error"),
                causa=descripcion.get("cause"),
                final=estados[-1] if estados else "",
                unidades=len(estados),
                pasos=estados,
                esperas_s=[self._esperas_por_estado[e] for e in estados if e in self._esperas_por_estado],
                latencia_s=latencia_s,
                invocaciones=invocaciones,
                lambda_s=lambda_s,
            ),
        )

    def fallar(self, operacion: str, fallo: type[PlatformFault], *, tras_el_real: bool, veces: int | None) -> None:
        quedan = [veces]

        def envoltura(real: Any, evento: Any, contexto: Any) -> Any:
            if not _es(evento, operacion) or quedan[0] == 0:
                return real(evento, contexto)
            if quedan[0] is not None:
                quedan[0] -= 1
            if tras_el_real:
                real(evento, contexto)  # the gateway acted (or the record answered): the answer is lost
            raise fallo(f"platform fault injected by the test: {fallo.__name__}")

        self.flujo.envolver("CobroFunction", envoltura)

    def estrangular(self, veces: int | None) -> None:
        self.fallar("cobro", LambdaThrottled, tras_el_real=False, veces=veces)

    def envolver_operacion(self, operacion: str, envoltura: Callable[[Callable[[], Any]], Any]) -> None:
        def alrededor(real: Any, evento: Any, contexto: Any) -> Any:
            if not _es(evento, operacion):
                return real(evento, contexto)
            return envoltura(lambda: real(evento, contexto))

        self.flujo.envolver("CobroFunction", alrededor)


class MotorDurable(Motor):
    """``functions/pedido_durable`` on the SDK's local runner (``runner``), its clock the tests' ``reloj``."""

    nombre = "durable"

    def __init__(self, flujo: Flujo, app: Any, runner: Any) -> None:
        super().__init__(flujo)
        self.app = app
        self.runner = runner
        self.medidas = Medidas()
        self._estrangular: list[int | None] = [0]
        self._entradas: dict[str, tuple[Any, float]] = {}
        self._n = 0

    def invocar(self, evento: Any, contexto: Any) -> Any:
        """What the durable service invokes: the function, as the platform runs it (throttled, or dying)."""
        ejecucion = getattr(evento, "durable_execution_arn", None) or evento.get("DurableExecutionArn", "?")
        if self._estrangular[0] != 0:
            if self._estrangular[0] is not None:
                self._estrangular[0] -= 1
            raise LambdaThrottled(f"Rate Exceeded: {NOMBRE_FUNCION_DURABLE} has no concurrency left")
        inicio = time.perf_counter()
        try:
            return self.app.lambda_handler(evento, contexto)
        except ProcessKilled as muerte:  # the process died: the service sees a failed invocation
            raise muerte.fault(str(muerte)) from None
        finally:
            self.medidas.anotar(ejecucion, time.perf_counter() - inicio)

    def arrancar(self, entrada: Any, nombre: str | None = None) -> str:
        self._n += 1
        arn = self.runner.run_async(
            input=json.dumps(entrada),
            execution_timeout=DURABLE_EXECUTION_TIMEOUT_S,
            function_name=NOMBRE_FUNCION_DURABLE,
            execution_name=nombre or f"e{self._n}",
        )
        self._entradas[arn] = (entrada, time.perf_counter())
        return arn

    def esperar(self, ejecucion: str) -> Resultado:
        from tests.conftest import HANG_GUARD_S

        resultado = self.runner.wait_for_result(ejecucion, timeout=int(HANG_GUARD_S))
        entrada, inicio = self._entradas.pop(ejecucion)
        latencia_s = time.perf_counter() - inicio
        operaciones = sorted(resultado.get_all_operations(), key=_orden)
        salida = json.loads(resultado.result) if resultado.result else {}
        error = (resultado.error.type or "").rsplit(".", 1)[-1] if resultado.error else None
        reintentos = sum(max(0, getattr(op, "attempt", 1) - 1) for op in operaciones)
        carga = [entrada, resultado.result, *(getattr(op, "result", None) for op in operaciones)]
        carga += [op.error.message for op in operaciones if getattr(op, "error", None) is not None]
        return self._anotar(
            entrada,
            Resultado(
                motor=self.nombre,
                estado=resultado.status.value,
                error=error,
                causa=resultado.error.message if resultado.error else None,
                final=salida.get("fin") or finales_de_error().get(error or "", error or ""),
                unidades=1 + len(operaciones) + reintentos,  # the start, each operation, each step retry
                pasos=[op.name or op.operation_type.value for op in operaciones],
                esperas_s=[_segundos_de_espera(op) for op in operaciones if op.operation_type.value == "WAIT"],
                latencia_s=latencia_s,
                invocaciones=self.medidas.invocaciones[ejecucion],
                lambda_s=self.medidas.segundos[ejecucion],
                datos_bytes=sum(len(c if isinstance(c, str) else json.dumps(c)) for c in carga if c is not None),
            ),
        )

    def _envolver(self, operacion: str, envoltura: Callable[[Callable[[Any], Any], Any], Any]) -> None:
        operaciones = self.app.pasos.operaciones
        real = getattr(operaciones, "cobro" if operacion == "cobro" else "reembolso")
        setattr(operaciones, operacion, lambda solicitud: envoltura(real, solicitud))

    def fallar(self, operacion: str, fallo: type[PlatformFault], *, tras_el_real: bool, veces: int | None) -> None:
        quedan = [veces]

        def envoltura(real: Callable[[Any], Any], solicitud: Any) -> Any:
            if quedan[0] == 0:
                return real(solicitud)
            if quedan[0] is not None:
                quedan[0] -= 1
            if tras_el_real:
                real(solicitud)  # the gateway acted (or the record answered): the process dies before the checkpoint
            raise ProcessKilled(fallo, f"{NOMBRE_FUNCION_DURABLE} died in its {operacion} step")

        self._envolver(operacion, envoltura)

    def estrangular(self, veces: int | None) -> None:
        self._estrangular[0] = veces

    def envolver_operacion(self, operacion: str, envoltura: Callable[[Callable[[], Any]], Any]) -> None:
        self._envolver(operacion, lambda real, solicitud: envoltura(lambda: real(solicitud)))


# ---------------------------------------------------------------------- the durable function's world
def entorno_durable(flujo: Flujo) -> dict[str, str]:
    """The durable function's environment on the provisioned world: what its template component will set.

    The charge function's (the gateway, its secret and timeouts, the charge's lease, Valkey, the table),
    the claim's lease (the reclamo function's), the re-ask wait (``Plazos.ProcesarPedido.EsperarFinBloqueo``),
    and the resources the state machine's ``DefinitionSubstitutions`` name.
    """
    from tests.fixtures.flujo import tiempos_plantilla

    fisicos = flujo.fisicos
    return {
        **flujo.funciones.by_id["CobroFunction"].environment,
        "RECLAMO_LEASE_S": flujo.funciones.by_id["ReclamoFunction"].environment["IDEMPOTENCY_LEASE_S"],
        "RECONSULTA_WAIT_S": str(tiempos_plantilla().workflows["ProcesarPedido"].waits_s["EsperarFinBloqueo"]),
        "COLA_STOCK_URL": flujo.fisico("ColaStock")["QueueUrl"],
        "COLA_PEDIDOS_URL": fisicos["ColaPedidos"]["QueueUrl"],
        "COLA_PEDIDOS_FALLIDOS_URL": fisicos["ColaPedidosFallidos"]["QueueUrl"],
        "TEMA_PEDIDO_CONFIRMADO_ARN": fisicos["TopicPedidoConfirmado"]["Ref"],
        "EVENT_BUS_NAME": fisicos["BusMercadoFresco"]["Arn"],
        "AWS_LAMBDA_FUNCTION_NAME": NOMBRE_FUNCION_DURABLE,
    }


# ---------------------------------------------------------------------- the runner's clock
def reloj_del_runner(reloj: Reloj) -> Any:
    """The runner's virtual clock as the tests' ``reloj``: skipping a wait moves the handlers' clock too.

    The runner (``skip_time=True``) fires a durable ``Wait`` or a step's retry at once by adding the
    skipped time to its own clock; this one adds it to ``reloj``, which every handler of both engines
    reads, exactly as the state machine's skipped ``Wait`` states do (``tests/fixtures/flujo.py``).
    """
    from aws_durable_execution_sdk_python_testing.clock import SkipClock

    class RelojQueSalta(SkipClock):
        def now(self) -> datetime.datetime:
            return datetime.datetime.fromtimestamp(reloj(), datetime.UTC)

        def arm(self, wake: datetime.datetime) -> float:
            hueco_s = (wake - self.now()).total_seconds()
            if hueco_s > 0:
                reloj.avanzar(hueco_s)
            return 0.0

    return RelojQueSalta()


# ---------------------------------------------------------------------- the claim's close throttled
@contextmanager
def estrangular_cierre(pedido_id: str, veces: int | None) -> Iterator[list[int]]:
    """moto's DynamoDB refuses the ``UpdateItem`` of ``pedido:{pedido_id}`` as throttled, ``veces`` times.

    Yields the count refused so far (a one-item list).
    """
    from unittest import mock

    from moto.dynamodb.exceptions import ERROR_TYPE_PREFIX, DynamodbException
    from moto.dynamodb.models import DynamoDBBackend

    real = DynamoDBBackend.update_item
    rechazados = [0]

    def update_item(self: Any, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if key.get("clave", {}).get("S") == f"pedido:{pedido_id}" and (veces is None or rechazados[0] < veces):
            rechazados[0] += 1
            raise DynamodbException(
                ERROR_TYPE_PREFIX + "ProvisionedThroughputExceededException", "throughput exceeded (test fault)"
            )
        return real(self, table_name, key, *args, **kwargs)

    with mock.patch.object(DynamoDBBackend, "update_item", update_item):
        yield rechazados


# ---------------------------------------------------------------------- the invariants
def violaciones(motor: Motor, pedido_id: str, *, fin_alarmado: bool = False) -> list[str]:
    """The six invariants of ``shared/DESIGN.md`` for one order, judged as the chaos campaign judges them.

    ``fin_alarmado``: the execution ended in an end that pages someone with the repair to do
    (``ReclamoSinCerrar``, ``AvisoNoPublicado``): the order's processing, its open record and its notice
    are then an operator's (the end says so), and only the money is judged (invariants 2 and 3).
    Returns the broken ones, empty when all hold.
    """
    from mercadofresco_local import invariantes

    pasarela = motor.pasarela
    cobros = [c for c in pasarela.cobros.values() if c["pedido_id"] == pedido_id]
    referencias = {c["referencia_cobro"] for c in cobros}
    reembolsos = [r for r in pasarela.reembolsos.values() if r["referencia_cobro"] in referencias]
    juicios = [invariantes.un_cobro_como_maximo(cobros), invariantes.reembolsos_con_cobro(cobros, reembolsos)]
    if not fin_alarmado:
        finales = {pedido_id: Counter(r.final for p, r in motor.resultados if p == pedido_id)}
        juicios += [
            invariantes.un_evento_procesado_por_pedido([pedido_id], finales),
            invariantes.cobros_con_pedido(cobros, reembolsos, finales),
            invariantes.ningun_registro_en_curso(_en_curso(motor.flujo, pedido_id)),
        ]
    rotos = [f"{j.nombre}: {j.detalle}" for j in juicios if not j.cumple]
    if not fin_alarmado and (falta := _aviso_que_falta(motor, pedido_id)):
        rotos.append(falta)
    return rotos


def _aviso_que_falta(motor: Motor, pedido_id: str) -> str | None:
    """Invariant 6's last part: the customer was told the order's outcome (confirmed, rejected, or not confirmed)."""
    desenlace = motor.desenlace(pedido_id)
    if desenlace is None:
        return f"el pedido {pedido_id} no tiene desenlace: su reclamo no está cerrado"
    if desenlace["estado"] == "CONFIRMADO":
        avisado = any(c["pedido_id"] == pedido_id for c in motor.confirmaciones())
        tipo = "PedidoConfirmado"
    else:
        tipo = AVISOS[desenlace["estado"]]
        avisado = any(e["detail-type"] == tipo and e["detail"]["pedido_id"] == pedido_id for e in motor.eventos_bus())
    return None if avisado else f"el cliente del pedido {pedido_id} no recibió {tipo}"


def _en_curso(flujo: Flujo, pedido_id: str) -> list[str]:
    import boto3

    tabla = flujo.fisicos["TablaIdempotencia"]["Ref"]
    items = boto3.client("dynamodb").scan(TableName=tabla)["Items"]
    return [
        i["clave"]["S"] for i in items if i["estado"]["S"] == "EN_CURSO" and i["clave"]["S"].endswith(f":{pedido_id}")
    ]


# ---------------------------------------------------------------------- helpers
def _es(evento: Any, operacion: str) -> bool:
    return isinstance(evento, dict) and evento.get("operacion") == operacion


def _pedido_de(entrada: Any) -> str:
    try:
        return json.loads(entrada[0]["body"])["detail"]["pedido_id"]
    except (KeyError, IndexError, TypeError, ValueError):
        return "?"


def _tareas_lambda(eventos: list[dict[str, Any]]) -> tuple[int, float]:
    """Lambda invocations of an execution's history and their seconds (TaskStarted to its end)."""
    invocaciones, segundos, inicio = 0, 0.0, None
    for evento in eventos:
        tipo = evento["type"]
        if tipo == "TaskStarted" and evento.get("taskStartedEventDetails", {}).get("resourceType") == "lambda":
            invocaciones, inicio = invocaciones + 1, evento["timestamp"]
        elif tipo in ("TaskSucceeded", "TaskFailed", "TaskTimedOut") and inicio is not None:
            segundos += (evento["timestamp"] - inicio).total_seconds()
            inicio = None
    return invocaciones, segundos


def _orden(operacion: Any) -> tuple[datetime.datetime, str]:
    inicio = operacion.start_timestamp or datetime.datetime.max.replace(tzinfo=datetime.UTC)
    return inicio, operacion.operation_id


def _segundos_de_espera(operacion: Any) -> int:
    return round((operacion.scheduled_end_timestamp - operacion.start_timestamp).total_seconds())
