"""Per-order stage latencies of a local run, from timestamps the run recorded (issue 14).

Stages of one order, each from a recorded instant, never from what the scenario intended:

=================  ==========================================================================
``creado``         the outbox row's ``creado_en`` (PostgreSQL ``now()`` of the store's transaction)
``publicado``      its ``publicado_en`` (``now()`` of the relay's transaction, which claims the row
                   *before* its ``PutEvents``: up to one relay batch early)
``iniciada``       the workflow execution's ``ExecutionStarted`` event (moto's history)
``cobrado``        the last exit of a charge state (``Cobrar``, ``ReintentarCobro``, ``Reconsultar``) before
                   any ``Reembolsar`` (after it, ``Reconsultar`` asks about the refund)
``confirmado``     the exit of ``Confirmar`` (``PedidoConfirmado`` published)
``avisado``        the end of the last of the fan-out consumers' invocations that handled the order's
                   ``PedidoConfirmado`` (each consumer of a queue the confirmation topic delivers to
                   that calls a provider: :func:`mercadofresco_local.flujo.reparto`)
=================  ==========================================================================

Time an execution spends in ``Wait`` states (``EsperarCapacidad`` after the charge was throttled,
``EsperarFinBloqueo`` before asking the gateway again) lies inside those stages; it is also
reported on its own line, since only the chaos scenario compresses it (with the leases it must
outlast): elsewhere a throttled order's 60 s ``EsperarCapacidad`` is 60 real seconds in its stage.

The invocation timestamps come from :class:`RegistroInvocaciones`, which times every handler
invocation of the local runtime (and counts what :mod:`mercadofresco_informes.costes` needs).
All clocks are this machine's. The run compresses the template's times (visibilities,
schedules, ``Retry`` waits) by its factor; CPU and loopback network are not compressed, so
figures are printed with the factor next to them, never multiplied back.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco_local.flujo import reparto
from template_model import messaging as m

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion

ESTADOS_COBRO = frozenset({"Cobrar", "ReintentarCobro", "Reconsultar"})
ESTADO_CONFIRMAR = "Confirmar"
ESTADO_REEMBOLSO = "Reembolsar"
# (label, from, to): consecutive stages, then end to end.
ETAPAS = (
    ("commit → en el bus", "creado", "publicado"),
    ("en el bus → ejecución iniciada", "publicado", "iniciada"),
    ("iniciada → cobrado", "iniciada", "cobrado"),
    ("cobrado → confirmado", "cobrado", "confirmado"),
    ("confirmado → reparto hecho (cada consumidor del aviso)", "confirmado", "avisado"),
    ("extremo a extremo (commit → reparto hecho)", "creado", "avisado"),
)


# ------------------------------------------------------------------ invocations
@dataclass(frozen=True)
class Invocacion:
    """One handler invocation of the local run: when, how long, for which orders."""

    funcion: str  # the template's logical id
    inicio: float  # time.time()
    duracion_s: float  # perf_counter difference (wall: what Lambda bills; here inflated by the GIL, see costes)
    error: bool
    memoria_mb: int
    registros_sqs: int  # records of an SQS batch (0 when not invoked by a queue)
    pedidos: tuple[tuple[str, str], ...]  # (pedido_id, event type) per record
    cpu_s: float = 0.0  # the invoking thread's CPU time (time.thread_time): no waits, no other thread's work

    @property
    def fin(self) -> float:
        return self.inicio + self.duracion_s


@dataclass
class RegistroInvocaciones:
    """Times every ``Function.invoke`` of the local runtime and counts the AWS calls each makes.

    A context manager: it wraps the class method while the run lasts and restores it after.
    AWS calls are counted with botocore's ``before-call`` event on the default boto3 session,
    attributed to the invocation running in the calling thread; clients created before the
    context (the runtime's own) are not counted, as they are not the functions'.
    """

    invocaciones: list[Invocacion] = field(default_factory=list)
    llamadas_aws: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (funcion, servicio, operación)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _actual: threading.local = field(default_factory=threading.local)

    def __enter__(self) -> RegistroInvocaciones:
        import boto3
        from sam_emulator.functions import Function, worker_cpu_s
        from sam_emulator.principal import add_call_listener

        self._original = original = Function.invoke
        registro = self

        def invocar(funcion: Function, evento: Any, contexto: Any = None) -> Any:
            anterior = getattr(registro._actual, "funcion", None)
            registro._actual.funcion = funcion.logical_id
            inicio, t0, cpu0, error = time.time(), time.perf_counter(), time.thread_time(), True
            try:
                resultado = original(funcion, evento, contexto)
                error = False
                return resultado
            finally:
                duracion = time.perf_counter() - t0
                # this thread's CPU, plus the worker process's when the function ran in one
                cpu = time.thread_time() - cpu0 + worker_cpu_s()
                registro._anotar(funcion, evento, inicio, duracion, error, cpu)
                registro._actual.funcion = anterior

        Function.invoke = invocar  # type: ignore[method-assign]
        self._sesion_boto = boto3._get_default_session()  # the session boto3.client() uses
        self._sesion_boto.events.register("before-call", self._contar_llamada)
        add_call_listener(self._contar_de_worker)  # calls made in a function's worker process
        return self

    def __exit__(self, *exc: object) -> None:
        from sam_emulator.functions import Function
        from sam_emulator.principal import remove_call_listener

        Function.invoke = self._original  # type: ignore[method-assign]
        self._sesion_boto.events.unregister("before-call", self._contar_llamada)
        remove_call_listener(self._contar_de_worker)

    def _contar_de_worker(self, llamada: Any) -> None:
        if llamada.principal is not None:
            with self._lock:
                self.llamadas_aws[(llamada.principal, llamada.service, llamada.operation)] += 1

    def _contar_llamada(self, model: Any, **_: Any) -> None:
        funcion = getattr(self._actual, "funcion", None)
        if funcion is not None:
            with self._lock:
                self.llamadas_aws[(funcion, model.service_model.service_name, model.name)] += 1

    def _anotar(self, funcion: Any, evento: Any, inicio: float, duracion_s: float, error: bool, cpu_s: float) -> None:
        registros = evento.get("Records") if isinstance(evento, dict) else None
        sqs = [r for r in registros or [] if isinstance(r, dict) and r.get("eventSource") == "aws:sqs"]
        inv = Invocacion(
            funcion.logical_id,
            inicio,
            duracion_s,
            error,
            funcion.memory_mb,
            len(sqs),
            tuple(pedidos_de(evento)),
            cpu_s,
        )
        with self._lock:
            self.invocaciones.append(inv)


def pedidos_de(evento: Any) -> Iterator[tuple[str, str]]:
    """``(pedido_id, type)`` of each order an invocation's event carries (SQS batch or direct payload)."""
    from mercadofresco.consumer.reading import InvalidMessageError, unwrap

    registros = evento.get("Records") if isinstance(evento, dict) else evento if isinstance(evento, list) else None
    if registros is None:
        datos = evento.get("pedido", evento) if isinstance(evento, dict) else {}
        if isinstance(datos, dict) and isinstance(datos.get("pedido_id"), str):
            yield datos["pedido_id"], str(evento.get("operacion", "directo"))
        return
    for registro in registros:
        try:
            datos, tipo_sobre, _ = unwrap(registro.get("body", ""))
        except (InvalidMessageError, AttributeError):
            continue
        if isinstance(datos.get("pedido_id"), str):
            yield datos["pedido_id"], str(tipo_sobre or datos.get("tipo") or "")


# ------------------------------------------------------------------ the marks
@dataclass
class Marcas:
    """The recorded instants (epoch seconds) of one order; None when the order never got there."""

    pedido_id: str
    creado: float | None = None
    publicado: float | None = None
    iniciada: float | None = None
    cobrado: float | None = None
    confirmado: float | None = None
    # Fan-out consumer (logical id) -> the end of its invocation that handled the order's PedidoConfirmado.
    reparto: dict[str, float | None] = field(default_factory=dict)
    # Seconds the order's executions spent in each Wait state (inside the stages above, not a stage).
    esperas: Counter[str] = field(default_factory=Counter)

    @property
    def avisado(self) -> float | None:
        """Once every consumer of the fan-out handled it (None while one has not, or with no fan-out)."""
        fines = list(self.reparto.values())
        return None if not fines or None in fines else max(f for f in fines if f is not None)


def marcas_de_historia(eventos: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """``iniciada``/``cobrado``/``confirmado`` from one execution's history events (boto3 shape)."""
    marcas: dict[str, float] = {}
    for evento in eventos:
        instante = _epoch(evento["timestamp"])
        tipo = evento["type"]
        if tipo == "ExecutionStarted":
            marcas["iniciada"] = instante
        elif tipo.endswith("StateEntered") and evento["stateEnteredEventDetails"]["name"] == ESTADO_REEMBOLSO:
            break  # from the refund on nothing charges or confirms, and Reconsultar asks about the refund
        elif tipo.endswith("StateExited"):
            nombre = evento.get("stateExitedEventDetails", {}).get("name")
            if nombre in ESTADOS_COBRO:
                marcas["cobrado"] = instante  # the last charge state to exit is the one that charged
            elif nombre == ESTADO_CONFIRMAR:
                marcas["confirmado"] = instante
    return marcas


def esperas_de_historia(eventos: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """Seconds spent in each ``Wait`` state of one execution's history (entered -> exited, summed)."""
    esperas: Counter[str] = Counter()
    entrada: dict[str, float] = {}
    for evento in eventos:
        if evento["type"] == "WaitStateEntered":
            entrada[evento["stateEnteredEventDetails"]["name"]] = _epoch(evento["timestamp"])
        elif evento["type"] == "WaitStateExited":
            nombre = evento["stateExitedEventDetails"]["name"]
            if nombre in entrada:
                esperas[nombre] += _epoch(evento["timestamp"]) - entrada.pop(nombre)
    return esperas


def marcas_de_consumidores(
    invocaciones: Iterable[Invocacion], consumidores: Iterable[str]
) -> dict[str, dict[str, float]]:
    """pedido_id -> {consumer: end} of each consumer's first successful invocation handling its PedidoConfirmado.

    ``consumidores``: the fan-out's consumer functions (logical ids, :func:`mercadofresco_local.flujo.reparto`).
    """
    del_reparto = set(consumidores)
    marcas: dict[str, dict[str, float]] = defaultdict(dict)
    for inv in sorted(invocaciones, key=lambda i: i.fin):
        if inv.funcion not in del_reparto or inv.error:
            continue
        for pedido_id, tipo in inv.pedidos:
            if tipo == "PedidoConfirmado":
                marcas[pedido_id].setdefault(inv.funcion, inv.fin)
    return marcas


# ------------------------------------------------------------------ the figures
@dataclass(frozen=True)
class FilaEtapa:
    etapa: str
    n: int
    p50_s: float
    p99_s: float
    max_s: float
    comprimida: bool = True  # its seconds are under the run's time compression


def percentil(valores: list[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100) of a non-empty list."""
    ordenados = sorted(valores)
    return ordenados[max(0, math.ceil(p / 100 * len(ordenados)) - 1)]


def resumir(marcas: Iterable[Marcas], *, esperas_comprimidas: bool = True) -> list[FilaEtapa]:
    """p50/p99/max of every stage over the orders that recorded both of its ends.

    Then, over the orders that waited in a ``Wait`` state, how long they waited there: a part of
    their stages that the run compresses only when it compresses the leases too (the chaos
    scenario, :class:`sam_emulator.moto_server.MotoServer`); elsewhere those are real seconds.
    """
    lista = list(marcas)
    filas = []
    for etapa, desde, hasta in ETAPAS:
        valores = [
            fin - ini
            for m in lista
            if (ini := getattr(m, desde)) is not None and (fin := getattr(m, hasta)) is not None
        ]
        if valores:
            filas.append(_fila(etapa, valores))
    if esperas := [m.esperas for m in lista if m.esperas]:
        estados = ", ".join(sorted({nombre for e in esperas for nombre in e}))
        como = "comprimidos" if esperas_comprimidas else "en segundos reales, sin comprimir"
        valores = [sum(e.values()) for e in esperas]
        etapa = f"de ello, en estados Wait ({estados}), {como}"
        filas.append(_fila(etapa, valores, comprimida=esperas_comprimidas))
    return filas


def _fila(etapa: str, valores: list[float], *, comprimida: bool = True) -> FilaEtapa:
    return FilaEtapa(etapa, len(valores), percentil(valores, 50), percentil(valores, 99), max(valores), comprimida)


# ------------------------------------------------------------------ reading the run
@dataclass(frozen=True)
class EjecucionLeida:
    """One execution of the order workflow: the orders its input carries and its whole history."""

    pedidos: tuple[str, ...]
    eventos: tuple[Mapping[str, Any], ...]


def leer_ejecuciones(sesion: Sesion) -> list[EjecucionLeida]:
    """Every execution of the order state machine with its history (one read each; costes reuses it)."""
    from mercadofresco.aws import client

    sfn = client("stepfunctions")
    leidas = []
    for arn in _maquinas_de_pedidos(sesion):
        for pagina in sfn.get_paginator("list_executions").paginate(stateMachineArn=arn):
            for e in pagina["executions"]:
                descripcion = sfn.describe_execution(executionArn=e["executionArn"])
                pedidos = tuple(p for p, _ in pedidos_de(_json(descripcion.get("input"))))
                # moto 5.2.5 ignores reverseOrder and maxResults is a page: read it all.
                paginas = sfn.get_paginator("get_execution_history").paginate(executionArn=e["executionArn"])
                leidas.append(EjecucionLeida(pedidos, tuple(ev for p in paginas for ev in p["events"])))
    return leidas


def recoger(sesion: Sesion, registro: RegistroInvocaciones, ejecuciones: list[EjecucionLeida]) -> list[Marcas]:
    """Every order's marks: outbox rows, execution histories and the consumers' invocations."""
    assert sesion.base is not None
    por_pedido: dict[str, Marcas] = {}
    filas = sesion.base.consultar(
        "SELECT agregado_id, creado_en, publicado_en FROM outbox WHERE tipo_evento = 'PedidoCreado'"
    )
    for pedido_id, creado_en, publicado_en in filas:
        por_pedido[pedido_id] = Marcas(pedido_id, _epoch(creado_en), _epoch(publicado_en) if publicado_en else None)
    for ejecucion in ejecuciones:
        if len(ejecucion.pedidos) != 1 or ejecucion.pedidos[0] not in por_pedido:
            continue
        m = por_pedido[ejecucion.pedidos[0]]
        for nombre, valor in marcas_de_historia(ejecucion.eventos).items():
            # A duplicate execution (the claim refused it) never charges: keep the first start.
            if nombre != "iniciada" or m.iniciada is None or valor < m.iniciada:
                setattr(m, nombre, valor)
        m.esperas += esperas_de_historia(ejecucion.eventos)
    assert sesion.runtime is not None
    consumidores = [c.function for c in reparto(sesion.runtime.template).values()]
    for pedido_id, valores in marcas_de_consumidores(registro.invocaciones, consumidores).items():
        if pedido_id in por_pedido:
            por_pedido[pedido_id].reparto = {c: valores.get(c) for c in consumidores}
    return list(por_pedido.values())


def anotar(sesion: Sesion, registro: RegistroInvocaciones, informe: Informe) -> list[EjecucionLeida]:
    """Add the section «latencia por pedido» to the report; return the executions read (costes reuses them)."""
    ejecuciones = leer_ejecuciones(sesion)
    marcas = recoger(sesion, registro, ejecuciones)
    seccion = f"latencia por pedido (tiempos de la plantilla comprimidos ×{sesion.compresion:g})"
    assert sesion.runtime is not None
    filas = resumir(marcas, esperas_comprimidas=sesion.runtime.compressed_deadlines)
    if not filas:
        informe.anotar(seccion, "sin pedidos con marcas registradas", "-")
    for f in filas:
        informe.anotar(
            seccion,
            f"{f.etapa} (n={f.n})",
            f"p50 {f.p50_s * 1000:,.0f} ms · p99 {f.p99_s * 1000:,.0f} ms · máx {f.max_s * 1000:,.0f} ms"
            + (f" (×{sesion.compresion:g})" if f.comprimida else ""),
        )
    return ejecuciones


def _maquinas_de_pedidos(sesion: Sesion) -> list[str]:
    """The state machines a pipe starts (the order workflow), by the template's wiring."""
    assert sesion.runtime is not None and sesion.runtime.provisioner is not None
    maquinas = sesion.runtime.provisioner.state_machines  # logical id -> ARN
    flujos = m.workflow_queues(sesion.runtime.template)
    return [maquinas[lid] for lid in sorted(set(flujos.values())) if lid in maquinas]


def _json(texto: str | None) -> Any:
    try:
        return json.loads(texto or "null")
    except ValueError:
        return None


def _epoch(instante: Any) -> float:
    if isinstance(instante, int | float):
        return float(instante)
    return instante.timestamp()
