"""The invariants every scenario must keep, computed from the components' own records.

Inputs are plain data read from the database (committed orders), the workflow executions
(each order's outcomes), the gateway stand-in (charges and refunds it really made) and SQS
(what sits in each DLQ and queue). Nothing is taken from what the scenario meant to do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

#: Final states of ``mercadofresco-procesar-pedido`` where the order was dealt with (one way or another).
PROCESADO = frozenset(
    {
        "Confirmado",
        "Rechazado",
        "PasarelaCaida",
        "PlataformaOcupada",
        "CobroNoCompletado",
        "Cancelado",
        "ReembolsoNoCompletado",
    }
)
#: Final states that did nothing on purpose: a duplicate start, an unreadable event sent to the DLQ.
SIN_EFECTO = frozenset({"Duplicado", "EventoInvalido", "EnviarAFallidos", "LoteNoAdmitido"})


@dataclass(frozen=True)
class Invariante:
    nombre: str
    cumple: bool
    detalle: str


def _ejemplos(ids: Iterable[str], n: int = 3) -> str:
    lista = sorted(ids)
    return ", ".join(lista[:n]) + (f" (+{len(lista) - n})" if len(lista) > n else "")


def un_evento_procesado_por_pedido(comprometidos: Iterable[str], resultados: Mapping[str, Counter[str]]) -> Invariante:
    """Every committed order was processed by exactly one workflow execution (duplicates ended at the claim)."""
    comprometidos = list(comprometidos)
    procesados = {
        p: sum(n for final, n in resultados.get(p, Counter()).items() if final in PROCESADO) for p in comprometidos
    }
    ninguno = [p for p, n in procesados.items() if n == 0]
    varios = [p for p, n in procesados.items() if n > 1]
    detalle = f"{len(comprometidos) - len(ninguno) - len(varios)}/{len(comprometidos)} con exactamente uno"
    if ninguno:
        # How each one ended, when it did (TIMED_OUT en Cobrar, Duplicado...): what to look at first.
        finales = {p: ", ".join(sorted(resultados[p])) for p in ninguno if resultados.get(p)}
        detalle += f"; sin procesar: {_ejemplos(p + (f' ({finales[p]})' if p in finales else '') for p in ninguno)}"
    if varios:
        detalle += f"; procesados más de una vez: {_ejemplos(varios)}"
    return Invariante(
        "cada pedido confirmado en BD: exactamente un evento procesado", not ninguno and not varios, detalle
    )


def un_cobro_como_maximo(cobros: Iterable[Mapping[str, Any]]) -> Invariante:
    """The gateway made at most one charge per order (counted at the gateway, not by us)."""
    por_pedido = Counter(c["pedido_id"] for c in cobros)
    dobles = [p for p, n in por_pedido.items() if n > 1]
    detalle = f"{sum(por_pedido.values())} cobros en {len(por_pedido)} pedidos"
    if dobles:
        detalle += f"; cobrados dos veces: {_ejemplos(dobles)}"
    return Invariante("como mucho un cobro por pedido", not dobles, detalle)


def reembolsos_con_cobro(cobros: Iterable[Mapping[str, Any]], reembolsos: Iterable[Mapping[str, Any]]) -> Invariante:
    """Every refund refers to a real charge, and no charge is refunded twice."""
    referencias = {c["referencia_cobro"] for c in cobros}
    reembolsos = list(reembolsos)
    huerfanos = [r["referencia_reembolso"] for r in reembolsos if r["referencia_cobro"] not in referencias]
    repetidos = [ref for ref, n in Counter(r["referencia_cobro"] for r in reembolsos).items() if n > 1]
    detalle = f"{len(reembolsos)} reembolsos"
    if huerfanos:
        detalle += f"; sin cobro: {_ejemplos(huerfanos)}"
    if repetidos:
        detalle += f"; cobro reembolsado dos veces: {_ejemplos(repetidos)}"
    return Invariante("cada reembolso corresponde a un cobro", not huerfanos and not repetidos, detalle)


def cobros_con_pedido(
    cobros: Iterable[Mapping[str, Any]], reembolsos: Iterable[Mapping[str, Any]], resultados: Mapping[str, Counter[str]]
) -> Invariante:
    """No money kept without an order: every charge's order was confirmed, or the charge was refunded."""
    reembolsados = {r["referencia_cobro"] for r in reembolsos}
    huerfanos = [
        c["pedido_id"]
        for c in cobros
        if c["referencia_cobro"] not in reembolsados and not resultados.get(c["pedido_id"], Counter())["Confirmado"]
    ]
    detalle = "todos confirmados o reembolsados" if not huerfanos else f"cobrados sin confirmar: {_ejemplos(huerfanos)}"
    return Invariante("ningún cobro sin pedido confirmado o reembolsado", not huerfanos, detalle)


@dataclass(frozen=True)
class Balance:
    """One flow's message accounting: accepted = processed + dead-lettered + still queued.

    ``en_dlq`` counts the accepted messages that were *not* processed and sit in the flow's
    DLQ (one per order). A DLQ message of an order the flow processed anyway is a copy (the
    message was received again and the copy dead-lettered): ``copias_en_dlq``, reported but
    not a loss. ``cortadas``: orders whose execution the platform stopped (``TIMED_OUT``,
    ``ABORTED``): delivered, alarmed and replayable from the bus archive, not lost, though the
    order was not processed (the per-order invariants say so). ``perdidos`` is what none of
    these accounts for: really lost.
    """

    flujo: str
    aceptados: int
    procesados: int
    en_dlq: int
    en_cola: int
    copias_en_dlq: int = 0
    cortadas: int = 0

    @property
    def perdidos(self) -> int:
        # Below 0 only when the queue count (messages, not orders) holds copies: nothing is missing.
        return max(0, self.aceptados - self.procesados - self.en_dlq - self.en_cola - self.cortadas)

    def detalle(self) -> str:
        texto = f"{self.flujo}: {self.aceptados} = {self.procesados} + {self.en_dlq} DLQ + {self.en_cola} en cola"
        if self.cortadas:
            texto += f" + {self.cortadas} ejecuciones cortadas (TIMED_OUT/ABORTED)"
        if self.copias_en_dlq:
            texto += f" (+{self.copias_en_dlq} copias en DLQ de mensajes ya contados, no perdidos)"
        return texto + (f" ✗ {self.perdidos} perdidos" if self.perdidos else "")


def ningun_mensaje_perdido(balances: Iterable[Balance]) -> Invariante:
    balances = list(balances)
    return Invariante(
        "ningún mensaje perdido (aceptados = procesados + DLQ + en cola)",
        not any(b.perdidos for b in balances),
        "; ".join(b.detalle() for b in balances),
    )


def ningun_registro_en_curso(en_curso: Iterable[str]) -> Invariante:
    """Once quiescent, no idempotency record of the run is ``EN_CURSO`` at all, live lease or not.

    Every path of the workflow closes what it opened (``pedido:``, ``cobro:``, ``reembolso:``) and every
    consumer completes or releases its claim: an ``EN_CURSO`` record at rest is a claim nobody will ever
    close, and after its lease lapses a redelivery would run its operation again.
    """
    claves = sorted(en_curso)
    detalle = "ninguno" if not claves else f"{len(claves)} abiertos: {_ejemplos(claves)}"
    return Invariante("ningún registro EN_CURSO en reposo", not claves, detalle)
