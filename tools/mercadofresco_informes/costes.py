"""Cost per order, from the local run's own counts times one price file (issue 14).

Counted in the run, per order (``PedidoCreado`` rows of the outbox):

- Step Functions Standard: state transitions = ``*StateEntered`` events of every execution's
  history (Map iterations included; a duplicate execution the claim stopped counts too);
- Lambda: every invocation (:class:`~mercadofresco_informes.latencias.RegistroInvocaciones`),
  its measured duration (rounded up to 1 ms, as billed) x the function's memory;
- the functions' own AWS calls (botocore ``before-call``): DynamoDB writes/reads, SQS, SNS,
  Secrets Manager. EventBridge is charged per *event*, so the relay's share is the outbox
  rows it published, not its ``PutEvents`` calls;
- the workflow's service integrations (``TaskScheduled`` events: ``sqs:sendMessage``,
  ``sns:publish``, ``events:putEvents``, ``dynamodb:*``);
- queue traffic the platform makes: each record a consumer received that SNS or EventBridge
  delivered (1 SQS request; the workflow's own sends are already counted from the history);
  per batch, the poller's receive and delete (2 requests; empty polls are not counted, they
  do not grow with orders); per execution, the pipe's request and its source queue's send,
  receive and delete.

Prices: ``precios-<region>.json`` next to this module, with the date they were read. Lambda
durations are measured twice, because neither is what Lambda would bill: the wall time of the
invocation (each function runs in worker processes of its own, but moto and the stand-ins share
one process, and all of them the machine's cores, so it is an upper bound that grows with the
machine's load) and the invoking thread's CPU time (no network
waits: a lower bound).

The scheduled functions (the relay every minute, the clean-up daily) are not per order: they
are priced per month from their schedule, at their mean duration x the compression (their
duration is the drain window, a template time the run compresses).

Express instead of Standard for the order path: one request per execution plus its duration
in 100 ms steps at the 64 MB minimum, at the measured durations and at Express's 5-minute
maximum (the most it could bill).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from mercadofresco_local.informe import Informe
    from mercadofresco_local.sesion import Sesion

    from mercadofresco_informes.latencias import EjecucionLeida, Invocacion, RegistroInvocaciones

PRECIOS = Path(__file__).with_name("precios-eu-south-2.json")
ESCRITURAS_DYNAMODB = frozenset(
    {
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
        "putItem",
        "updateItem",
        "deleteItem",
    }
)
ENVIOS_DEL_FLUJO = frozenset({"ReservaStock", "LiberacionStock"})  # the workflow's own sqs:sendMessage
DECISION = "docs/decisions/0100-standard-vs-express.md"
# Functions a schedule invokes (unidades/outbox.yaml: rate(1 minute), cron daily), by their stack path: their cost
# is per month, whatever the orders; their run durations are the compressed drain window, so they are priced at
# duration x compression.
PROGRAMADAS_POR_MES = {"Outbox/OutboxFunction": 43_800, "Outbox/OutboxLimpiezaFunction": 30}
EXPRESS_MAX_S = 300  # an Express execution's limit: the most one can bill


@dataclass
class Cuentas:
    """What the run did, in totals (per order: divide by ``pedidos``)."""

    pedidos: int
    compresion: float = 1.0
    transiciones: int = 0
    ejecuciones: int = 0
    # per path, by the execution's last state (Confirmado, Rechazado, CobroNoCompletado, Cancelado...)
    transiciones_por_final: Counter[str] = field(default_factory=Counter)
    ejecuciones_por_final: Counter[str] = field(default_factory=Counter)
    duraciones_ejecucion_s: list[float] = field(default_factory=list)
    invocaciones: Counter[str] = field(default_factory=Counter)
    gb_s: Counter[str] = field(default_factory=Counter)
    gb_s_cpu: Counter[str] = field(default_factory=Counter)  # at the invoking thread's CPU time: a lower bound
    sqs: int = 0
    sns: int = 0
    eventbridge: int = 0
    pipes: int = 0
    dynamodb_escrituras: int = 0
    dynamodb_lecturas: int = 0
    secretsmanager: int = 0


def contar_historias(cuentas: Cuentas, ejecuciones: Iterable[EjecucionLeida]) -> None:
    """Transitions, integration requests and durations from the executions' histories."""
    for ejecucion in ejecuciones:
        cuentas.ejecuciones += 1
        inicio = fin = None
        transiciones, final = 0, ""
        for evento in ejecucion.eventos:
            tipo = evento["type"]
            if tipo.endswith("StateEntered"):
                transiciones += 1
                final = evento.get("stateEnteredEventDetails", {}).get("name", "")
            elif tipo == "TaskScheduled":
                detalle = evento.get("taskScheduledEventDetails", {})
                _contar_llamada(cuentas, detalle.get("resourceType", ""), detalle.get("resource", ""), 1)
            elif tipo == "ExecutionStarted":
                inicio = evento["timestamp"]
            elif tipo.startswith("Execution"):
                fin = evento["timestamp"]
        cuentas.transiciones += transiciones
        cuentas.transiciones_por_final[final] += transiciones
        cuentas.ejecuciones_por_final[final] += 1
        if inicio is not None and fin is not None:
            cuentas.duraciones_ejecucion_s.append((fin - inicio).total_seconds())
        # The pipe that started it: one pipe request; its source queue's send, receive and delete.
        cuentas.pipes += 1
        cuentas.sqs += 3


def _contar_llamada(cuentas: Cuentas, servicio: str, operacion: str, n: int) -> None:
    if servicio == "sqs":
        cuentas.sqs += n
    elif servicio == "sns":
        cuentas.sns += n
    elif servicio == "events":
        cuentas.eventbridge += n
    elif servicio == "dynamodb":
        if operacion in ESCRITURAS_DYNAMODB:
            cuentas.dynamodb_escrituras += n
        else:
            cuentas.dynamodb_lecturas += n
    elif servicio == "secretsmanager":
        cuentas.secretsmanager += n


def contar_invocaciones(
    cuentas: Cuentas, invocaciones: Iterable[Invocacion], llamadas: Mapping[tuple[str, str, str], int]
) -> None:
    """Lambda requests and GB-s, the platform's queue traffic, and the functions' own AWS calls."""
    for inv in invocaciones:
        cuentas.invocaciones[inv.funcion] += 1
        cuentas.gb_s[inv.funcion] += math.ceil(inv.duracion_s * 1000) / 1000 * inv.memoria_mb / 1024
        cuentas.gb_s_cpu[inv.funcion] += math.ceil(inv.cpu_s * 1000) / 1000 * inv.memoria_mb / 1024
        if inv.registros_sqs:
            propios = sum(1 for _, tipo in inv.pedidos if tipo in ENVIOS_DEL_FLUJO)
            # delivered by SNS/EventBridge (1 each) + this batch's ReceiveMessage and DeleteMessageBatch
            cuentas.sqs += max(inv.registros_sqs - propios, 0) + 2
    for (_funcion, servicio, operacion), n in llamadas.items():
        if servicio != "events":  # EventBridge: per event (outbox rows published), not per PutEvents call
            _contar_llamada(cuentas, servicio, operacion, n)


# ------------------------------------------------------------------ prices
def cargar_precios(ruta: Path = PRECIOS) -> dict[str, Any]:
    """The price file; a missing key is a clear error, not a KeyError in the middle of the report."""
    datos = json.loads(ruta.read_text())
    for clave in ("region", "leidos_el", "precios_usd", "leccion_usd_mes", "pedidos_por_mes_leccion"):
        if clave not in datos:
            raise ValueError(f"{ruta.name}: missing {clave!r}")
    return datos


@dataclass(frozen=True)
class Partida:
    servicio: str
    cantidad_por_pedido: float
    unidad: str
    usd_por_1000: float
    usd_mes: float
    leccion_usd_mes: float | None


def partidas(cuentas: Cuentas, precios: Mapping[str, Any], arquitectura: str = "arm64") -> list[Partida]:
    """USD per 1,000 orders and per month at the lesson's volume, per service, with the Standard workflow."""
    p, n = precios["precios_usd"], max(cuentas.pedidos, 1)
    mes, leccion = precios["pedidos_por_mes_leccion"], precios["leccion_usd_mes"]
    por_pedido = [f for f in cuentas.invocaciones if f not in PROGRAMADAS_POR_MES]
    invocaciones = sum(cuentas.invocaciones[f] for f in por_pedido)
    gb_s = sum(cuentas.gb_s[f] for f in por_pedido)
    gb_s_cpu = sum(cuentas.gb_s_cpu[f] for f in por_pedido)
    escrituras, lecturas = cuentas.dynamodb_escrituras, cuentas.dynamodb_lecturas
    filas = [
        (
            "step_functions",
            cuentas.transiciones,
            "transiciones",
            cuentas.transiciones * p["step_functions_standard_por_transicion"],
        ),
        (
            "lambda",
            invocaciones,
            f"invocaciones ({gb_s / n:.4f} GB-s de reloj)",
            invocaciones * p["lambda_por_peticion"] + gb_s * p[f"lambda_{arquitectura}_por_gb_s"],
        ),
        (
            "lambda a tiempo de CPU (cota inferior)",
            invocaciones,
            f"invocaciones ({gb_s_cpu / n:.4f} GB-s de CPU)",
            invocaciones * p["lambda_por_peticion"] + gb_s_cpu * p[f"lambda_{arquitectura}_por_gb_s"],
        ),
        ("sqs", cuentas.sqs, "peticiones", cuentas.sqs * p["sqs_por_peticion"]),
        ("sns", cuentas.sns, "publicaciones", cuentas.sns * p["sns_por_publicacion"]),
        ("eventbridge", cuentas.eventbridge, "eventos", cuentas.eventbridge * p["eventbridge_por_evento"]),
        ("pipes", cuentas.pipes, "peticiones", cuentas.pipes * p["pipes_por_peticion"]),
        (
            "dynamodb",
            escrituras + lecturas,
            f"peticiones ({escrituras / n:.1f} escrituras)",
            escrituras * p["dynamodb_por_escritura"] + lecturas * p["dynamodb_por_lectura"],
        ),
        (
            "secretsmanager",
            cuentas.secretsmanager,
            "llamadas",
            cuentas.secretsmanager * p["secretsmanager_por_llamada"],
        ),
    ]
    resultado = [
        Partida(servicio, cantidad / n, unidad, usd / n * 1000, usd / n * mes, leccion.get(servicio))
        for servicio, cantidad, unidad, usd in filas
    ]
    return [*resultado, _programadas(cuentas, p, arquitectura)]


def _programadas(cuentas: Cuentas, p: Mapping[str, Any], arquitectura: str) -> Partida:
    """The scheduled functions: a fixed monthly cost (their invocations x the uncompressed mean duration)."""
    usd_mes = 0.0
    for funcion, al_mes in PROGRAMADAS_POR_MES.items():
        if cuentas.invocaciones[funcion]:
            gb_s_cada = cuentas.gb_s[funcion] / cuentas.invocaciones[funcion] * cuentas.compresion
            usd_mes += al_mes * (p["lambda_por_peticion"] + gb_s_cada * p[f"lambda_{arquitectura}_por_gb_s"])
    return Partida("lambda programadas (relay cada minuto, limpieza diaria)", 0.0, "fijo al mes", 0.0, usd_mes, None)


def express_por_pedido(cuentas: Cuentas, precios: Mapping[str, Any], duracion_fija_s: float | None = None) -> float:
    """USD per order if the order workflow were Express: requests + duration (100 ms steps, 64 MB minimum).

    ``duracion_fija_s`` prices every execution at that duration instead of the measured one
    (:data:`EXPRESS_MAX_S`: the most an Express execution can bill).
    """
    p, n = precios["precios_usd"], max(cuentas.pedidos, 1)
    paso_s = p["step_functions_express_redondeo_ms"] / 1000
    gb = p["step_functions_express_memoria_min_mb"] / 1024
    duraciones = cuentas.duraciones_ejecucion_s
    if duracion_fija_s is not None:
        duraciones = [duracion_fija_s] * cuentas.ejecuciones
    duracion_s = sum(math.ceil(d / paso_s) * paso_s for d in duraciones)
    peticiones = cuentas.ejecuciones * p["step_functions_express_por_peticion"]
    return (peticiones + duracion_s * gb * p["step_functions_express_por_gb_s"]) / n


# ------------------------------------------------------------------ the report
def contar(sesion: Sesion, registro: RegistroInvocaciones, ejecuciones: list[EjecucionLeida]) -> Cuentas:
    """Everything the run counted, for its orders."""
    assert sesion.base is not None
    ((pedidos, publicadas),) = sesion.base.consultar(
        "SELECT count(*) FILTER (WHERE tipo_evento = 'PedidoCreado'), count(*) FILTER (WHERE publicado) FROM outbox"
    )
    cuentas = Cuentas(pedidos=pedidos, compresion=sesion.compresion, eventbridge=publicadas)
    contar_historias(cuentas, ejecuciones)
    contar_invocaciones(cuentas, registro.invocaciones, registro.llamadas_aws)
    return cuentas


def anotar(sesion: Sesion, registro: RegistroInvocaciones, ejecuciones: list[EjecucionLeida], informe: Informe) -> None:
    """Add the section «coste por pedido» to the report."""
    precios = cargar_precios()
    cuentas = contar(sesion, registro, ejecuciones)
    mes = precios["pedidos_por_mes_leccion"]
    seccion = (
        f"coste por pedido (precios {precios['region']} según se conocían el {precios['leidos_el']}, verificar;"
        f" {mes:,} pedidos/mes como la lección)"
    )
    if cuentas.pedidos == 0:
        informe.anotar(seccion, "sin pedidos", "-")
        return
    filas = partidas(cuentas, precios)
    for f in filas:
        leccion = f" · lección {f.leccion_usd_mes:.2f}" if f.leccion_usd_mes is not None else ""
        informe.anotar(
            seccion,
            f"{f.servicio}: {f.cantidad_por_pedido:.2f} {f.unidad} por pedido",
            f"{f.usd_por_1000:.4f} USD/1.000 · {f.usd_mes:.2f} USD/mes{leccion}",
        )
    sumadas = [f for f in filas if not f.servicio.startswith("lambda a tiempo de CPU")]  # an alternative, not a sum
    total_1000, total_mes = sum(f.usd_por_1000 for f in sumadas), sum(f.usd_mes for f in sumadas)
    sin_lambda = total_mes - sum(f.usd_mes for f in sumadas if f.servicio.startswith("lambda"))
    informe.anotar(
        seccion,
        "total con el flujo Standard",
        f"{total_1000:.4f} USD/1.000 · {total_mes:.2f} USD/mes (sin Lambda {sin_lambda:.2f};"
        f" la lección, sin Lambda, ≈ {precios['leccion_usd_mes']['total']:.0f})",
    )
    for final, n in sorted(cuentas.ejecuciones_por_final.items()):
        informe.anotar(
            seccion,
            f"transiciones por ejecución que acaba en {final}",
            f"{cuentas.transiciones_por_final[final] / n:.2f} ({n} ejecuciones)",
        )
    standard = next(f.usd_mes for f in filas if f.servicio == "step_functions")
    for etiqueta, fija in (
        (f"duración medida, tiempos comprimidos ×{sesion.compresion:g}", None),
        (f"{EXPRESS_MAX_S} s cada una, el máximo de Express", EXPRESS_MAX_S),
    ):
        express = express_por_pedido(cuentas, precios, fija)
        informe.anotar(
            seccion,
            f"flujo Express en su lugar ({etiqueta})",
            f"{express * 1000:.4f} USD/1.000 · {express * mes:.2f} USD/mes (Standard {standard:.2f})",
        )
    espera = (
        "cada función corre en sus procesos, pero moto y los proveedores comparten uno; su duración de reloj"
        " incluye esperar a ese proceso"
        if sesion.runtime is not None and sesion.runtime.isolated_functions
        else "las funciones corren en el mismo proceso que moto y los proveedores; su duración de reloj incluye"
        " esperar el GIL"
    )
    informe.notas.append(
        f"coste: {espera} (cota superior, y crece con la carga de la máquina) y su CPU excluye las esperas de red"
        f" (cota inferior): Lambda factura algo entre ambas. Por qué Standard y no Express: {DECISION}"
    )
