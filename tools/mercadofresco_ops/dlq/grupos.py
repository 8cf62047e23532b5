"""A DLQ answered per group: split by reason and content signature, each with its verdict and its command.

A dead-letter queue often holds more than one problem at once: a provider outage's redrive
next to a producer's ``version: 2`` and a few orders with a bad amount. One verdict for the
whole sample is then wrong for most of it. So the sample is split by what decides the
treatment — the reason the consumer attached (``mf-motivo``, or none: SQS's redrive) and the
content's signature (unreadable, or the event's ``tipo`` and ``version``) — and each group gets
:func:`~mercadofresco_ops.dlq.clasificador.clasificar` on its own messages, the orders and
customers it touches, and the one-line ``mf-dlq reprocesar`` command that moves exactly it.
"""

from __future__ import annotations

import json
import shlex
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mercadofresco_ops.dlq.clasificador import DE_DATOS, ENVENENADO, TRANSITORIO, Diagnostico, clasificar
from mercadofresco_ops.dlq.mensajes import recortar
from mercadofresco_ops.dlq.reproceso import SIN_MOTIVO
from mercadofresco_ops.topologia import registros_de_dlq

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mercadofresco_ops.dlq.mensajes import MensajeDlq

MIXTO = "mixto"
ILEGIBLE = "ilegible"
LITERAL_MAX_CHARS = 120  # a tipo/version longer than this as JSON is not worth a filter: no command for it
AFECTADOS_MAX = 10  # ids listed per group (the count is always complete)
EJEMPLOS_MAX = 3  # MessageIds per group, for step 3's log search
CAMPOS_PEDIDO = ("pedido_id",)
CAMPOS_CLIENTE = ("cliente_id", "carrito_id")  # never the e-mail address: the log policy keeps it out
PRIMERO_CORREGIR = {
    DE_DATOS: "solo después de corregir el dato (paso 4): sin corrección volverían a la DLQ; ",
    ENVENENADO: "solo con el consumidor corregido o con --transformar (paso 4); ",
}


@dataclass(frozen=True)
class Grupo:
    """Messages that share a reason and a content signature, and what to do with them."""

    motivo: str | None
    contenido: str  # the signature, as the on-call reads it
    diagnostico: Diagnostico
    orden: str | None  # the one-line command for this group: its reprocess, or saving the evidence; None: neither
    nota_orden: str  # why that command, or why there is none
    pedidos: list[str]
    total_pedidos: int
    clientes: list[str]
    total_clientes: int
    ejemplos: list[str]

    def a_dict(self) -> dict[str, Any]:
        return {
            "motivo": self.motivo,
            "contenido": self.contenido,
            **self.diagnostico.a_dict(),
            "orden": self.orden,
            "nota_orden": self.nota_orden,
            "afectados": {
                "pedidos": self.pedidos,
                "total_pedidos": self.total_pedidos,
                "clientes": self.clientes,
                "total_clientes": self.total_clientes,
            },
            "ejemplos": self.ejemplos,
        }


@dataclass(frozen=True)
class Informe:
    """The whole answer: one verdict when every group agrees, ``mixto`` otherwise, and the groups."""

    tipo: str
    confianza: str
    explicacion: str
    global_: Diagnostico
    grupos: list[Grupo]

    def a_dict(self) -> dict[str, Any]:
        return {
            **self.global_.a_dict(),
            "tipo": self.tipo,
            "confianza": self.confianza,
            "explicacion": self.explicacion,
            "grupos": [g.a_dict() for g in self.grupos],
        }


def registros_del_consumidor(cola: str) -> str:
    """The log group whose errors explain ``cola``'s dead letters (``runbooks/dlq.md``, step 3).

    Read from the template's wiring (:mod:`mercadofresco_ops.topologia`), whatever the stage suffix.
    """
    return registros_de_dlq(cola) or f"los registros del consumidor de la cola de origen de {cola}"


def _normal(valor: Any) -> Any:
    """``valor`` as JMESPath compares it: ``1.0 == 1`` (Python's ``==``), so both get the same group."""
    if isinstance(valor, float) and valor.is_integer():
        return int(valor)
    if isinstance(valor, list):
        return [_normal(v) for v in valor]
    if isinstance(valor, dict):
        return {k: _normal(v) for k, v in valor.items()}
    return valor


def _literal(valor: Any) -> str | None:
    """``valor`` as a JSON literal for a JMESPath filter, or None when it cannot be one (too big, too deep)."""
    try:
        texto = json.dumps(_normal(valor), sort_keys=True, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        return None
    return texto if len(texto) <= LITERAL_MAX_CHARS else None


def _clave(mensaje: MensajeDlq) -> tuple[str | None, str, str | None, str | None]:
    """(reason, kind, tipo literal, version literal): messages with equal keys are treated alike."""
    if mensaje.evento is None:
        return mensaje.motivo, ILEGIBLE, None, None
    return mensaje.motivo, "evento", _literal(mensaje.evento.get("tipo")), _literal(mensaje.evento.get("version"))


def _descripcion(clave: tuple[str | None, str, str | None, str | None]) -> str:
    _, clase, tipo, version = clave
    if clase == ILEGIBLE:
        return "cuerpo ilegible (no es un objeto JSON)"
    grande = "(demasiado grande)"
    return f"tipo {tipo if tipo is not None else grande}, version {version if version is not None else grande}"


def _filtro(tipo: str, version: str) -> str:
    """JMESPath that selects events with exactly this tipo and version (a missing field is ``null``)."""

    def literal(texto: str) -> str:
        return "`" + texto.replace("`", "\\`") + "`"

    return f"tipo == {literal(tipo)} && version == {literal(version)}"


def orden_reprocesar(cola: str, clave: tuple[str | None, str, str | None, str | None]) -> tuple[str | None, str]:
    """The exact ``mf-dlq reprocesar`` line for a group (shell-quoted, one line), and a note on when to run it."""
    motivo, clase, tipo, version = clave
    if clase == ILEGIBLE:
        evidencia = shlex.join(["mf-dlq", "inspeccionar", "--cola", cola, "-n", "100", "--json"])
        return evidencia + " > ilegibles.json", (
            "no se reprocesan: tal cual volverían a la DLQ; guarda la evidencia y corrige el productor"
        )
    if tipo is None or version is None:
        return None, "tipo o version demasiado grandes para un filtro: revísalos con inspeccionar"
    partes = [
        "mf-dlq",
        "reprocesar",
        "--cola",
        cola,
        "--motivo",
        motivo or SIN_MOTIVO,
        "--filtro",
        _filtro(tipo, version),
    ]
    return shlex.join(partes), "añade --simulacro para ver antes qué movería"


def _ids(mensajes: Sequence[MensajeDlq], campos: tuple[str, ...]) -> list[str]:
    vistos: dict[str, None] = {}
    for m in mensajes:
        for campo in campos:
            valor = m.evento.get(campo) if m.evento is not None else None
            if isinstance(valor, str | int) and not isinstance(valor, bool) and str(valor).strip():
                vistos.setdefault(recortar(str(valor), 60))
    return list(vistos)


def _explicacion_global(grupos: list[Grupo]) -> tuple[str, str, str]:
    tipos = {g.diagnostico.tipo for g in grupos}
    if len(grupos) == 1:
        d = grupos[0].diagnostico
        return d.tipo, d.confianza, d.explicacion
    resumen = "; ".join(f"{g.diagnostico.tipo}: {g.diagnostico.muestra}" for g in grupos)
    if len(tipos) == 1:
        (tipo,) = tipos
        confianzas = [g.diagnostico.confianza for g in grupos]
        confianza = min(confianzas, key=["baja", "media", "alta"].index)
        return (
            tipo,
            confianza,
            (
                f"{len(grupos)} grupos, todos {tipo}, con motivos o contenidos distintos ({resumen}): "
                "cada uno con su orden, abajo."
            ),
        )
    return (
        MIXTO,
        "alta",
        (
            f"La DLQ mezcla {len(grupos)} problemas distintos ({resumen}). Un veredicto único sería "
            "falso para parte de ella: trata cada grupo por separado, con su propia orden."
        ),
    )


def clasificar_grupos(mensajes: Sequence[MensajeDlq], version_esperada: Any = 1, cola: str = "DLQ") -> Informe:
    """Split a non-empty sample into groups (largest first), classify each, and sum up."""
    if not mensajes:
        raise ValueError("una muestra vacía no se puede clasificar")
    por_clave: dict[tuple[str | None, str, str | None, str | None], list[MensajeDlq]] = defaultdict(list)
    for m in mensajes:
        por_clave[_clave(m)].append(m)
    registros = registros_del_consumidor(cola)
    grupos = []
    for clave, miembros in sorted(por_clave.items(), key=lambda kv: -len(kv[1])):
        diagnostico = clasificar(miembros, version_esperada)
        if diagnostico.tipo == TRANSITORIO and diagnostico.confianza == "baja":
            diagnostico.evidencias.append(f"errores del consumidor: {registros} (paso 3, «Errores por tipo»)")
        orden, nota = orden_reprocesar(cola, clave)
        if clave[1] != ILEGIBLE and orden and diagnostico.tipo in (DE_DATOS, ENVENENADO):
            nota = PRIMERO_CORREGIR[diagnostico.tipo] + nota
        pedidos, clientes = _ids(miembros, CAMPOS_PEDIDO), _ids(miembros, CAMPOS_CLIENTE)
        grupos.append(
            Grupo(
                motivo=clave[0],
                contenido=_descripcion(clave),
                diagnostico=diagnostico,
                orden=orden,
                nota_orden=nota,
                pedidos=pedidos[:AFECTADOS_MAX],
                total_pedidos=len(pedidos),
                clientes=clientes[:AFECTADOS_MAX],
                total_clientes=len(clientes),
                ejemplos=[m.message_id for m in miembros[:EJEMPLOS_MAX]],
            )
        )
    tipo, confianza, explicacion = _explicacion_global(grupos)
    return Informe(tipo, confianza, explicacion, clasificar(mensajes, version_esperada), grupos)
