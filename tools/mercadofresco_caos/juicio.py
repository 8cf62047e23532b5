"""The one judge of a chaos run: DESIGN.md's six invariants over what the system itself recorded.

A local seed (:mod:`~mercadofresco_caos.local`) and a run against a deployed stack
(:mod:`~mercadofresco_caos.pila`) each read their records into :class:`Registros`;
:func:`juzgar` is the same code for both.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mercadofresco_local import invariantes as inv

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from mercadofresco_local.invariantes import Balance, Invariante
    from template_model import Consumer

REPETIDOS = "una vez cada operación del reparto por pedido y resultado"
# The outcome e-mails: one of them tells the customer how the order ended (invariant 6).
PLANTILLAS_AVISO = frozenset({"confirmacion-pedido", "pedido-no-confirmado", "pedido-rechazado", "pedido-cancelado"})
_ID_PEDIDO = re.compile(r"(CAOS-S\d+-\d{6}|PED-[A-Za-z0-9-]+)")


@dataclass
class Violacion:
    invariante: str
    pedido: str
    detalle: str


@dataclass
class Registros:
    """What the components recorded about one run's orders (nothing taken from what the run meant to do)."""

    comprometidos: list[str]  # orders the store committed
    por_pedido: dict[str, Counter[str]]  # order -> its executions' final states
    cobros: list[dict[str, Any]]  # charges the gateway made
    reembolsos: list[dict[str, Any]]  # refunds the gateway made
    avisos: dict[str, set[str]]  # order -> outcome e-mails sent for it
    repetidos: dict[str, str]  # order -> a fan-out consumer's operation on it done more than once (which)
    en_curso: list[tuple[str, float | None]]  # idempotency keys still EN_CURSO, with their lease end
    balances: list[Balance]  # per flow: accepted = processed + DLQ + queued
    en_reposo: bool  # the system drained: no execution running, nothing queued
    notas: list[str] = field(default_factory=list)


def juzgar(r: Registros, ahora_s: float) -> tuple[list[Violacion], list[Invariante]]:
    """Per-order violations, and the run's aggregate invariants (:mod:`mercadofresco_local.invariantes`)."""
    violaciones: list[Violacion] = []
    reembolsados = {x["referencia_cobro"] for x in r.reembolsos}
    for c in r.cobros:
        if c["referencia_cobro"] not in reembolsados and not r.por_pedido.get(c["pedido_id"], Counter())["Confirmado"]:
            violaciones.append(Violacion("4 ningún cobro sin pedido confirmado o reembolsado", c["pedido_id"], str(c)))
    for pedido, n in Counter(c["pedido_id"] for c in r.cobros).items():
        if n > 1:
            violaciones.append(Violacion("2 como mucho un cobro por pedido", pedido, f"{n} cobros"))
    referencias = {c["referencia_cobro"] for c in r.cobros}
    for x in r.reembolsos:
        if x["referencia_cobro"] not in referencias:
            violaciones.append(Violacion("3 cada reembolso corresponde a un cobro", x["pedido_id"], str(x)))
    for pedido in r.comprometidos:
        finales = r.por_pedido.get(pedido, Counter())
        if sum(n for final, n in finales.items() if final in inv.PROCESADO) != 1:
            violaciones.append(Violacion("1 exactamente una ejecución procesa cada pedido", pedido, f"{dict(finales)}"))
        if not r.avisos.get(pedido):
            violaciones.append(
                Violacion("6 el cliente sabe cómo acabó su pedido", pedido, f"ningún correo; {dict(finales)}")
            )
    for pedido, detalle in r.repetidos.items():
        violaciones.append(Violacion(REPETIDOS, pedido, detalle))
    # At rest every path has closed what it opened: an EN_CURSO record is a violation whatever its lease
    # (a live one is a claim nobody will close; once it lapses, a redelivery would run the operation again).
    for clave, caduca in r.en_curso:
        pedido = m.group(0) if (m := _ID_PEDIDO.search(clave)) else clave
        plazo = "sin plazo" if caduca is None else ("plazo vencido" if caduca < ahora_s else "plazo vigente")
        violaciones.append(Violacion("6 ningún registro EN_CURSO en reposo", pedido, f"{clave} EN_CURSO ({plazo})"))
    if not r.en_reposo:
        violaciones.append(Violacion("6 ninguna ejecución sigue en curso", "-", "el sistema no quedó en reposo"))
    invariantes = [
        inv.un_evento_procesado_por_pedido(r.comprometidos, r.por_pedido),
        inv.un_cobro_como_maximo(r.cobros),
        inv.reembolsos_con_cobro(r.cobros, r.reembolsos),
        inv.cobros_con_pedido(r.cobros, r.reembolsos, r.por_pedido),
        inv.ningun_mensaje_perdido(r.balances),
        inv.ningun_registro_en_curso(clave for clave, _ in r.en_curso),
    ]
    return violaciones, invariantes


def avisos_por_pedido(cuerpos: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """Bodies the providers acted on -> the outcome e-mails (``{plantilla, datos: {pedido_id}}``) sent per order."""
    avisos: dict[str, set[str]] = {}
    for cuerpo in cuerpos:
        if (plantilla := cuerpo.get("plantilla")) in PLANTILLAS_AVISO:
            avisos.setdefault(str(cuerpo.get("datos", {}).get("pedido_id")), set()).add(plantilla)
    return avisos


def repeticiones(
    claves: Iterable[str], consumidores: Iterable[Consumer], es_nuestro: Callable[[str], bool]
) -> dict[str, str]:
    """Orders one of whose fan-out operations was done more than once (DESIGN.md: one notice, one e-mail each).

    ``claves``: the ``Idempotency-Key`` of every effect the consumers' providers made, one per effect. A
    consumer's operation on an order is a key of its own naming the order (``correo-confirmacion:PED-1``);
    the same key done twice is one operation repeated (the primary e-mail provider acted, the answer was
    lost, and the fallback sent it again).
    """
    consumidores = list(consumidores)
    repetidos: dict[str, list[str]] = {}
    for clave, n in Counter(claves).items():
        pedido = next((p for c in consumidores if (p := c.identifier_in(clave)) is not None), None)
        if n > 1 and pedido is not None and es_nuestro(pedido):
            repetidos.setdefault(pedido, []).append(f"{n} veces {clave}")
    return {pedido: "; ".join(partes) for pedido, partes in repetidos.items()}
