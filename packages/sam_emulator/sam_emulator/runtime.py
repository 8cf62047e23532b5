"""The whole template running locally: moto + the handlers (in process, or in workers) + what moto does not run.

``RuntimeLocal`` is the one object a scenario holds::

    with RuntimeLocal(entorno_local={"PROVIDER_URL": stand_in.url}, compresion=30) as rt:
        rt.start_consuming()          # mappings, pipes, schedules, TTL sweeper
        ...                            # put orders in, wait for rt.en_reposo()
        rt.stop_consuming()

Order of start-up: moto's server (:mod:`servidor`), every resource of ``template.yaml``
(:mod:`aprovisionar`), moto's Lambda invoke hooked to the functions (engineer 5a's
:mod:`moto_lambda`, so the state machine's Lambda tasks run the real code), the functions'
cold starts (in this process, or one worker each with ``SAM_EMULATOR_WORKERS=1``:
:mod:`sam_emulator.workers`), then the
event source mappings (:mod:`mapeos`), the Pipes (:mod:`pipes`), the schedules
(:mod:`programador`) and DynamoDB's TTL (:mod:`ttl`).

``compresion`` is the run's single time-compression factor: queue visibility timeouts,
batching windows, schedule periods and the state machine's Retry waits last
``1/compresion`` of what the template says. Nothing else is shortened: provider latencies
are set by the scenario in real seconds. A consumer's visibility never drops below its
function's (uncompressed) ``Timeout``, as AWS requires of an SQS trigger (:mod:`mapeos`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator import deaths
from sam_emulator.aws import client
from sam_emulator.background import stop_all
from sam_emulator.event_sources import Mapeo, mapeos_de_plantilla
from sam_emulator.functions import entorno_comun, restaurar_entorno
from sam_emulator.moto_server import ServidorMoto
from sam_emulator.pipes import PipeStream, pipes_de_plantilla
from sam_emulator.provisioning import Aprovisionador
from sam_emulator.scheduler import Programa, programas_de_plantilla
from sam_emulator.template import Plantilla
from sam_emulator.ttl import BarredorTtl

if TYPE_CHECKING:
    from collections.abc import Callable

    from sam_emulator.functions import Funcion, Funciones


_PROFUNDIDAD = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


def mensajes_en_cola(url: str) -> int:
    """Messages visible + in flight + delayed in an SQS queue."""
    atributos = client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=list(_PROFUNDIDAD))["Attributes"]
    return sum(int(atributos.get(n, 0)) for n in _PROFUNDIDAD)


@dataclass
class RuntimeLocal:
    """``template.yaml`` provisioned in a loopback moto, with its event plumbing runnable."""

    entorno_local: dict[str, str] = field(default_factory=dict)
    compresion: float = 30.0
    plantilla: Plantilla = field(default_factory=Plantilla)
    tope_concurrencia: int | None = None  # cap each mapping's pollers (a laptop is not Lambda)
    servidor: ServidorMoto | None = None
    aprovisionador: Aprovisionador | None = None
    mapeos: list[Mapeo] = field(default_factory=list)
    pipes: list[Mapeo | PipeStream] = field(default_factory=list)
    programas: list[Programa] = field(default_factory=list)
    barredor: BarredorTtl | None = None
    # Compress the bounds a compressed Wait must keep its ratio to (the chaos scenario): the
    # workflow's Wait states here, and whatever the application derives from them (leases, HTTP
    # timeouts) by ``comprimir_funcion``, called on each function before its cold start.
    plazos_comprimidos: bool = False
    comprimir_funcion: Callable[[Funcion, float], None] | None = None
    # Called at start and at stop, as new execution environments would begin: the application
    # forgets its per-environment caches (clients, pools) bound to the previous run's endpoints.
    entornos_nuevos: Callable[[], None] = lambda: None
    registro_lambda: Any = None  # moto_lambda's Registro: Lambda-task invocations and errors
    # True: each function in worker processes of its own (sam_emulator.workers), as Lambda runs it.
    # False (the default for now; SAM_EMULATOR_WORKERS=1 turns workers on): every handler imported
    # into this process. Workers cost a cold start and ~70 MB each, and a run pools as many per
    # function as it has concurrent invocations (about 40 in the e2e normal scenario): on two
    # shared cores that run took longer (see the workers' module docstring).
    isolated_functions: bool = field(default_factory=lambda: os.environ.get("SAM_EMULATOR_WORKERS") == "1")
    _deshacer: list[Callable[[], None]] = field(default_factory=list)

    @property
    def funciones(self) -> Funciones:
        assert self.aprovisionador is not None, "call start() first"
        return self.aprovisionador.funciones

    def start(self) -> RuntimeLocal:
        self.entornos_nuevos()
        self._deshacer.append(self.entornos_nuevos)
        # Last to undo: the functions' variables (REDIS_URL of a private Redis...) leave with the run,
        # so a second run in the same process (the e2e suite) starts from the process's own environment.
        self._deshacer.append(restaurar_entorno)
        # Platform faults: boundary hooks before any handler builds a client; a clean plan per run.
        deaths.CONTROL.reiniciar()
        deaths.instalar()
        self._deshacer.append(deaths.CONTROL.reiniciar)
        self.servidor = ServidorMoto(
            region=self.plantilla.region, compresion=self.compresion, comprimir_esperas=self.plazos_comprimidos
        ).start()
        self._deshacer.append(self.servidor.stop)
        self.aprovisionador = Aprovisionador(self.plantilla, entorno_local=dict(self.entorno_local)).aprovisionar()
        if self.plazos_comprimidos and self.comprimir_funcion is not None:
            for funcion in self.funciones.por_id.values():
                self.comprimir_funcion(funcion, self.compresion)
        self._enganchar_lambda()
        if self.isolated_functions:
            self._arrancar_workers()
        else:
            # Cold starts, one at a time, before any poller runs: importing handlers from several
            # threads at once trips over circular imports inside Powertools.
            for funcion in self.funciones.por_id.values():
                funcion.cargar()
            entorno_comun(list(self.funciones.por_id.values()))
        self.mapeos = mapeos_de_plantilla(self.plantilla, self.funciones, self.compresion)
        if self.tope_concurrencia is not None:
            for mapeo in self.mapeos:
                mapeo.concurrencia = min(mapeo.concurrencia, self.tope_concurrencia)
        self.barredor = BarredorTtl.de_tablas_con_stream()
        self.pipes = pipes_de_plantilla(self.plantilla, self.funciones, self.barredor, self.compresion)
        self.programas = programas_de_plantilla(self.plantilla, self.funciones, self.compresion)
        return self

    def _arrancar_workers(self) -> None:
        """One execution environment per function, cold-started in parallel before any poller runs."""
        funciones = list(self.funciones.por_id.values())
        self._deshacer.append(lambda: stop_all(f.stop_workers for f in funciones))
        for funcion in funciones:
            funcion.isolated = True
            funcion.start_workers()
        for funcion in funciones:
            funcion.wait_workers()

    def worker_pids(self) -> list[int]:
        """The process ids of every function's workers now (their sockets are theirs, not this process's)."""
        return [pid for funcion in self.funciones.por_id.values() for pid in funcion.worker_pids()]

    def _enganchar_lambda(self) -> None:
        """Route moto's Lambda invoke (Step Functions tasks) to the in-process handlers."""
        from sam_emulator.moto_lambda import en_proceso

        activo = en_proceso(self.funciones.handlers())
        self.registro_lambda = activo.__enter__()
        self._deshacer.append(lambda: activo.__exit__(None, None, None))

    def start_consuming(self) -> None:
        """Start every poller, pipe, schedule and the TTL sweeper."""
        for parte in self._partes():
            parte.start()

    def stop_consuming(self) -> None:
        stop_all(parte.stop for parte in reversed(self._partes()))

    def comprobar_consumo(self) -> None:
        """Raise if a poller, pipe, schedule or the TTL sweeper has died (its loop's error is the cause)."""
        for parte in self._partes():
            parte.comprobar()

    def _partes(self) -> list[Any]:
        barredor = [self.barredor] if self.barredor and self.barredor.tablas else []
        return [*self.mapeos, *self.pipes, *self.programas, *barredor]

    def stop(self) -> None:
        deshacer, self._deshacer = self._deshacer, []
        stop_all([self.stop_consuming, *reversed(deshacer)])

    def __enter__(self) -> RuntimeLocal:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ observation
    def url_cola(self, logical_id: str) -> str:
        return self.plantilla.ref(logical_id)

    def profundidad(self, logical_id: str) -> int:
        """Messages visible + in flight + delayed in one of the template's queues."""
        return mensajes_en_cola(self.url_cola(logical_id))

    def colas(self) -> dict[str, str]:
        """Logical id -> queue name, for every queue of the template."""
        return {lid: self.plantilla.get_att(lid, "QueueName") for lid in self.plantilla.de_tipo("AWS::SQS::Queue")}

    def es_dlq(self, logical_id: str) -> bool:
        """A queue some other queue's RedrivePolicy points at."""
        arn = self.plantilla.get_att(logical_id, "Arn")
        return any(
            self.plantilla.propiedades(lid).get("RedrivePolicy", {}).get("deadLetterTargetArn") == arn
            for lid in self.plantilla.de_tipo("AWS::SQS::Queue")
        )

    def ejecuciones_en_curso(self) -> int:
        sfn = client("stepfunctions")
        assert self.aprovisionador is not None
        return sum(
            len(sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING")["executions"])
            for arn in self.aprovisionador.maquinas.values()
        )

    def esperar_reposo(
        self, timeout_s: float, estable_s: float = 1.0, al_avanzar: Callable[[], None] | None = None
    ) -> float:
        """Wait until no queue holds a message and no execution runs (for ``estable_s``); return seconds waited."""
        inicio = time.monotonic()
        quieto_desde: float | None = None
        while time.monotonic() - inicio < timeout_s:
            self.comprobar_consumo()  # a dead pipe would otherwise show up as a drain that never ends
            if al_avanzar is not None:
                al_avanzar()
            ocupado = self.ejecuciones_en_curso() + sum(
                self.profundidad(lid) for lid in self.colas() if not self.es_dlq(lid)
            )
            if ocupado == 0:
                quieto_desde = quieto_desde or time.monotonic()
                if time.monotonic() - quieto_desde >= estable_s:
                    return time.monotonic() - inicio
            else:
                quieto_desde = None
            time.sleep(1.0)
        ocupadas = {lid: n for lid in self.colas() if not self.es_dlq(lid) and (n := self.profundidad(lid))}
        raise TimeoutError(
            f"the system did not drain in {timeout_s:.0f} s: "
            f"{self.ejecuciones_en_curso()} executions running, messages in {ocupadas or 'no queue'}"
        )
