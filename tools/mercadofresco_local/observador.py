"""What the report reads while and after a scenario runs: breakers, queues and executions.

Everything here is read from the real components, never from the scenario's own intentions:
breaker transitions from the shared state in Redis (through the layer's ``CircuitBreaker``),
queue depths from SQS, each order's outcome from its workflow execution's history.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from mercadofresco.aws import client
from sam_emulator.background import BackgroundThread
from template_model import asl
from template_model import messaging as m

from mercadofresco_local import plantilla

if TYPE_CHECKING:
    from sam_emulator.durable import DurableExecution
    from sam_emulator.runtime import LocalRuntime
    from template_model import Template

INTERVAL_S = 1.0  # each sample is a dozen calls to moto, which shares the CPU with everything else


@dataclass
class Transiciones:
    """One breaker's transitions as sampled: openings from its trip counter, closings from its state."""

    aperturas: int = 0
    cierres: int = 0
    estados: list[tuple[float, str]] = field(default_factory=list)
    _aperturas_iniciales: int | None = None
    _ultimo: str = "cerrado"

    def observar(self, instante_s: float, estado: str, aperturas: int) -> None:
        if self._aperturas_iniciales is None:
            self._aperturas_iniciales = aperturas
        self.aperturas = max(self.aperturas, aperturas - self._aperturas_iniciales)
        if estado != self._ultimo:
            self.estados.append((instante_s, estado))
            if estado == "cerrado" and self._ultimo in ("abierto", "semiabierto"):
                self.cierres += 1
            self._ultimo = estado


def interruptores(de: Template) -> tuple[str, ...]:
    """The breakers to watch: one per provider the template's functions call (its dependency's name)."""
    return tuple(p.dependency for p in m.providers_called(de))


@dataclass
class Observador:
    """Samples breakers and queue depths in a thread while a scenario runs."""

    runtime: LocalRuntime
    redis_url: str
    dependencias: tuple[str, ...] = field(default_factory=lambda: interruptores(plantilla()))
    breakers: dict[str, Transiciones] = field(default_factory=dict)
    profundidad_max: Counter[str] = field(default_factory=Counter)
    _hilo: BackgroundThread | None = None
    _inicio: float = field(default_factory=time.monotonic)

    def arrancar(self) -> Observador:
        from mercadofresco.circuit_breaker import CircuitBreaker
        from mercadofresco.valkey import valkey_client

        redis_client = valkey_client(self.redis_url, socket_timeout_ms=1000)
        self._vigilados = {d: CircuitBreaker(d, redis_client, metrics=_SinMetricas()) for d in self.dependencias}
        self.breakers = {d: Transiciones() for d in self.dependencias}
        # A sample lost to a busy server is not worth stopping the watch: the next one follows.
        self._hilo = BackgroundThread.every("observador", INTERVAL_S, self.muestrear, on_error=lambda _exc: None)
        self._hilo.start()
        return self

    def parar(self) -> None:
        if self._hilo is not None:
            self._hilo.stop()
        self.muestrear()

    def muestrear(self) -> None:
        ahora = time.monotonic() - self._inicio
        for dependencia, breaker in self._vigilados.items():
            decision = breaker.state()
            self.breakers[dependencia].observar(ahora, decision.state.value, decision.openings)
        for lid, nombre in self.runtime.queues().items():
            self.profundidad_max[nombre] = max(self.profundidad_max[nombre], self.runtime.depth(lid))


class _SinMetricas:
    """The observer only reads: it must not add to the breaker's metrics."""

    def count(self, nombre: str, dependencia: str, valor: float = 1) -> None:
        return None


@dataclass(frozen=True)
class Ejecucion:
    """One workflow execution: the order it carried and where it ended."""

    pedido_id: str | None
    estado: str  # SUCCEEDED / FAILED / RUNNING ...
    final: str  # the last state entered (Confirmado, Duplicado, Rechazado, PasarelaCaida, ...)
    version: Any


def ejecuciones(maquina_arn: str) -> list[Ejecucion]:
    """Every execution of a state machine with its order and final state (one history read each)."""
    sfn = client("stepfunctions")
    resultado = []
    for pagina in sfn.get_paginator("list_executions").paginate(stateMachineArn=maquina_arn):
        for e in pagina["executions"]:
            descripcion = sfn.describe_execution(executionArn=e["executionArn"])
            pedido_id, version = _pedido_de_entrada(descripcion.get("input", "[]"))
            resultado.append(Ejecucion(pedido_id, e["status"], _ultimo_estado(sfn, e["executionArn"]), version))
    return resultado


@cache
def finales_de_error() -> dict[str, str]:
    """The durable engine's failed ends (the class it raises) -> the state machine's final state of the same
    outcome, read from the state machine's ``Fail`` states (``Error`` -> the state's name): the report and the
    judge (``mercadofresco_local.invariantes``) read final states, whichever engine ran the order."""
    modelo = plantilla()  # the default engine's: the state machine is there
    return {
        estado.body["Error"]: estado.name
        for _lid, definicion, _origen in asl.state_machines(modelo.doc, modelo.folder)
        for estado in asl.walk(definicion or {})
        if estado.body.get("Type") == "Fail" and "Error" in estado.body
    }


def ejecucion_durable(durable: DurableExecution) -> Ejecucion:
    """A durable execution as the report reads a state machine's: its order, status and final state."""
    pedido_id, version = _pedido_de_entrada(durable.input or "[]")
    salida = json.loads(durable.result) if durable.result else {}
    # an end of the saga's own, else (cut short by the platform, or still running) the step it had reached
    final = salida.get("fin") or finales_de_error().get(durable.error_type or "", durable.error_type or "")
    final = final or durable.last_operation or ""
    return Ejecucion(pedido_id, durable.status, final, version)


def ejecuciones_del_flujo(runtime: LocalRuntime) -> list[Ejecucion]:
    """Every execution of the order workflow, on the engine the template chose (``WorkflowEngine``)."""
    assert runtime.provisioner is not None
    lista = [e for arn in runtime.provisioner.state_machines.values() for e in ejecuciones(arn)]
    for servicio in runtime.functions.durable.values():
        lista += [ejecucion_durable(d) for d in servicio.executions()]
    return lista


def _pedido_de_entrada(entrada: str) -> tuple[str | None, Any]:
    try:
        registros = json.loads(entrada)
        detalle = json.loads(registros[0]["body"])["detail"]
        return detalle.get("pedido_id"), detalle.get("version")
    except (ValueError, KeyError, IndexError, TypeError):
        return None, None


def _ultimo_estado(sfn: Any, arn: str) -> str:
    # moto 5.2.5 ignores reverseOrder: read the whole history and take the last state entered.
    eventos = [e for p in sfn.get_paginator("get_execution_history").paginate(executionArn=arn) for e in p["events"]]
    for evento in reversed(eventos):
        if evento["type"].endswith("StateEntered"):
            return evento["stateEnteredEventDetails"]["name"]
    return ""


#: Statuses of an execution the platform stopped before the workflow reached an end of its own (a durable
#: execution stopped by hand is ``STOPPED``).
CORTADAS = ("TIMED_OUT", "ABORTED", "STOPPED")


def resultados_por_pedido(lista: list[Ejecucion]) -> dict[str, Counter[str]]:
    """pedido_id -> how many executions ended in each final state.

    An execution stopped by the platform counts as ``"<status> en <last state>"`` (``TIMED_OUT en
    Cobrar``): the state it was in is not an outcome. The local run compresses ``TimeoutSeconds``
    with the ``Retry`` waits, so a CPU starved enough can time out an execution that would not
    time out on AWS; the report must say so rather than show an order nobody processed.
    """
    por_pedido: dict[str, Counter[str]] = defaultdict(Counter)
    for e in lista:
        if e.pedido_id is not None:
            por_pedido[e.pedido_id][f"{e.estado} en {e.final}" if e.estado in CORTADAS else e.final] += 1
    return por_pedido
