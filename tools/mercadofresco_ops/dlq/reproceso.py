"""Move dead letters back to their source: receive, send, then delete — filtered, transformed, rate-bounded.

Order of operations is the safety: a message is deleted from the DLQ only after the send
to the source succeeded, so a crash at any point leaves at most a duplicate (the consumers
are idempotent), never a loss. On FIFO queues the message keeps its ``MessageGroupId`` and
gets the deduplication id ``mf-dlq-<MessageId>``: a re-run after a crash within SQS's
5-minute window sends the same id again and SQS drops the duplicate. Deliberately not the
original deduplication id: if it was used on the source less than 5 minutes ago, SQS would
silently accept-and-drop the resend and the delete would then lose the message.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jmespath
from jmespath.exceptions import JMESPathError

from mercadofresco_ops.dlq.conexion import Cola, liberar, muestrear, recibir, resolver_cola
from mercadofresco_ops.dlq.mensajes import ATRIBUTOS_DLQ, envolver, leer
from mercadofresco_ops.errores import ErrorOperador, errores_de_aws

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient

    from mercadofresco_ops.dlq.mensajes import MensajeDlq
    from mercadofresco_ops.dlq.tasa import TokenBucket

SIN_MOTIVO = "ninguno"  # --motivo's name for "no mf-motivo": the message came by SQS's redrive


@dataclass(frozen=True)
class Plan:
    """What to move, where, and how fast."""

    dlq: Cola
    destino: Cola
    filtro: str | None = None  # JMESPath over the event (unwrapped from SNS / EventBridge's detail)
    transformar: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    maximo: int | None = None
    visibilidad_s: int = 30
    simulacro: bool = False
    motivo: str | None = None  # only messages with this mf-motivo; SIN_MOTIVO: those without one

    def tamano_lote(self, tasa_por_s: float) -> int:
        """Receive no more than can be sent in half the visibility timeout, so none reappears mid-send."""
        return max(1, min(10, int(tasa_por_s * self.visibilidad_s / 2)))


@dataclass
class Resultado:
    """What a run did; ``ejemplos`` holds the first bodies a dry run would send."""

    movidos: int = 0
    omitidos: int = 0
    fallidos: dict[str, str] = field(default_factory=dict)
    ejemplos: list[str] = field(default_factory=list)
    detenido: str | None = None  # why the run stopped early (an AWS call failed); what moved stays moved

    def a_dict(self) -> dict[str, Any]:
        return {
            "movidos": self.movidos,
            "omitidos": self.omitidos,
            "fallidos": self.fallidos,
            "ejemplos": self.ejemplos,
            "detenido": self.detenido,
        }


def cargar_transformacion(ruta: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``"paquete.modulo:funcion"`` → the callable (e.g. ``mercadofresco_ops.dlq.adaptadores:v2_a_v1``)."""
    modulo, _, nombre = ruta.partition(":")
    if not modulo or not nombre:
        raise ErrorOperador(f"--transformar espera modulo:funcion, no {ruta!r}")
    try:
        funcion = getattr(importlib.import_module(modulo), nombre)
    except (ImportError, AttributeError) as exc:
        raise ErrorOperador(f"--transformar {ruta}: no se puede cargar ({exc})") from exc
    if not callable(funcion):
        raise ErrorOperador(f"--transformar {ruta}: no es invocable")
    return funcion


def compilar_filtro(expresion: str) -> jmespath.parser.ParsedResult:
    try:
        return jmespath.compile(expresion)
    except JMESPathError as exc:
        raise ErrorOperador(f"--filtro no es JMESPath válido: {exc}") from exc


def resolver_destino(sqs: BaseClient, dlq: Cola, destino: str | None) -> Cola:
    """``--destino``; else the single queue whose RedrivePolicy targets the DLQ; else ``mf-cola-origen``."""
    if destino:
        cola = resolver_cola(sqs, destino)
    else:
        with errores_de_aws(f"cola {dlq.nombre}"):
            paginas = sqs.get_paginator("list_dead_letter_source_queues").paginate(QueueUrl=dlq.url)
            fuentes = [url for pagina in paginas for url in pagina.get("queueUrls", [])]
        if len(fuentes) > 1:
            raise ErrorOperador(f"{dlq.nombre} es la DLQ de varias colas ({', '.join(fuentes)}): elige con --destino")
        if not fuentes:
            # Visibility 0: a peek that does not hide the messages from the move that follows.
            origenes = {leer(m).cola_origen for m in muestrear(sqs, dlq, 10, visibilidad_s=0)} - {None}
            if len(origenes) != 1:
                raise ErrorOperador(
                    f"no sé a qué cola devolver los mensajes de {dlq.nombre} (ninguna RedrivePolicy "
                    f"apunta a ella; mf-cola-origen: {sorted(origenes) or 'ausente'}): usa --destino"
                )
            fuentes = list(origenes)
        cola = resolver_cola(sqs, fuentes[0])
    if cola.arn == dlq.arn:
        raise ErrorOperador("--destino es la propia DLQ")
    if cola.fifo != dlq.fifo:
        raise ErrorOperador(f"{dlq.nombre} y {cola.nombre} no son ambas FIFO o ambas estándar")
    return cola


def _atributos_a_reenviar(mensaje: MensajeDlq) -> dict[str, Any]:
    """The message's own attributes, without the reason the consumer attached for the DLQ."""
    campos = ("DataType", "StringValue", "BinaryValue")
    return {
        nombre: {k: v for k, v in valor.items() if k in campos}
        for nombre, valor in mensaje.atributos.items()
        if nombre not in ATRIBUTOS_DLQ
    }


def preparar(mensaje: MensajeDlq, plan: Plan, filtro: Any) -> str | None:
    """The body to send, or None when the filter leaves the message out; raises ValueError when it cannot be sent."""
    if plan.motivo is not None and (mensaje.motivo or SIN_MOTIVO) != plan.motivo:
        return None
    if filtro is not None and (mensaje.evento is None or not _cumple(filtro, mensaje)):
        return None
    if plan.transformar is None:
        return mensaje.cuerpo
    if mensaje.evento is None:
        raise ValueError("cuerpo ilegible: no se puede transformar")
    try:
        return envolver(plan.transformar(dict(mensaje.evento)), mensaje.sobre)
    except Exception as exc:  # the operator's callable: any failure keeps the message in the DLQ
        raise ValueError(f"la transformación falló: {type(exc).__name__}: {exc}") from exc


def _cumple(filtro: Any, mensaje: MensajeDlq) -> bool:
    """The filter over one event; a filter that fails on this event's values keeps it in the DLQ."""
    try:
        return bool(filtro.search(mensaje.evento))
    except (JMESPathError, RecursionError, TypeError, ValueError) as exc:
        raise ValueError(f"el filtro falló con este mensaje: {type(exc).__name__}") from exc


def _enviar(sqs: BaseClient, plan: Plan, mensaje: MensajeDlq, cuerpo: str) -> None:
    envio: dict[str, Any] = {"QueueUrl": plan.destino.url, "MessageBody": cuerpo}
    if atributos := _atributos_a_reenviar(mensaje):
        envio["MessageAttributes"] = atributos
    if plan.destino.fifo:
        envio["MessageGroupId"] = mensaje.grupo or "mf-dlq"
        envio["MessageDeduplicationId"] = f"mf-dlq-{mensaje.message_id}"
    with errores_de_aws(f"enviar a {plan.destino.nombre}"):
        sqs.send_message(**envio)
    with errores_de_aws(f"borrar de {plan.dlq.nombre}"):
        sqs.delete_message(QueueUrl=plan.dlq.url, ReceiptHandle=mensaje.receipt_handle)


def reprocesar(
    sqs: BaseClient, plan: Plan, cubo: TokenBucket, al_avanzar: Callable[[int], None] = lambda _n: None
) -> Resultado:
    """Move the DLQ's messages (those the filter accepts) to ``plan.destino`` at ``cubo``'s rate."""
    filtro = compilar_filtro(plan.filtro) if plan.filtro else None
    resultado, vistos, a_liberar = Resultado(), set(), []
    visibilidad = 5 if plan.simulacro else plan.visibilidad_s
    try:
        while plan.maximo is None or resultado.movidos < plan.maximo:
            lote = [
                m
                for m in recibir(sqs, plan.dlq, plan.tamano_lote(cubo.tasa_por_s), visibilidad, espera_s=1)
                if m["MessageId"] not in vistos
            ]
            if not lote:
                break
            for crudo in lote:
                mensaje = leer(crudo)
                vistos.add(mensaje.message_id)
                # A dry run moves nothing: what it counted goes back too, or the real run that the
                # runbook gives next would find those messages hidden.
                if not _mover_uno(sqs, plan, filtro, cubo, mensaje, resultado) or plan.simulacro:
                    a_liberar.append(mensaje)
                elif not plan.simulacro:
                    al_avanzar(1)
    except ErrorOperador as exc:
        # Stop, but report what was done: every message is either moved or still in the DLQ
        # (the one being sent, at worst, in both); the in-flight rest reappears on its visibility.
        resultado.detenido = str(exc)
    liberar(sqs, plan.dlq, [m.receipt_handle for m in a_liberar])
    return resultado


def _mover_uno(
    sqs: BaseClient, plan: Plan, filtro: Any, cubo: TokenBucket, mensaje: MensajeDlq, resultado: Resultado
) -> bool:
    """Move (or, in a dry run, count) one message; False when it stays in the DLQ."""
    if plan.maximo is not None and resultado.movidos >= plan.maximo:
        return False
    try:
        cuerpo = preparar(mensaje, plan, filtro)
    except ValueError as exc:
        resultado.fallidos[mensaje.message_id] = str(exc)
        return False
    if cuerpo is None:
        resultado.omitidos += 1
        return False
    if plan.simulacro:
        if len(resultado.ejemplos) < 3:
            resultado.ejemplos.append(cuerpo)
    else:
        cubo.adquirir()
        _enviar(sqs, plan, mensaje, cuerpo)
    resultado.movidos += 1
    return True
