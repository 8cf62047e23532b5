"""HTTP API api-mercadofresco-tienda -> POST /pedidos (order + PedidoCreado in one transaction) and GET /pedidos/{id}.

Parse, call the layer (``mercadofresco.dominio.solicitudes``), map its errors to HTTP:

=============================  ====  ===================================================
outcome                        code  what the client should do
=============================  ====  ===================================================
order created                  201   nothing (``Location`` names it)
same key, same body (a retry)  200   nothing: the same order as the first answer
no / malformed key, bad body   400   fix the request (every problem is listed)
malformed order id (GET)       400   use the id the store answered (``PED-...``)
no such order of this caller   404   read only the orders your own requests created
same key, different body       422   use a new key for a new order
database unavailable           503   retry with the SAME key (``Retry-After``)
=============================  ====  ===================================================
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from functools import cache
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from mercadofresco import validation
from mercadofresco.db import shared_pool
from mercadofresco.dominio import valores
from mercadofresco.dominio.solicitudes import (
    ClaveIdempotenciaInvalida,
    ClaveReutilizada,
    SolicitudInvalida,
    consultar_pedido,
    registrar_pedido,
)
from mercadofresco.outbox.pending import pending_signal_from_env
from mercadofresco.process_cache import per_environment
from mercadofresco.tracing import LazyTracer

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mercadofresco.outbox.pending import PendingSignal
    from psycopg import Connection

logger = Logger()
metrics = Metrics()
tracer = LazyTracer()  # X-Ray SDK imported on first use, not at import (mercadofresco.tracing)

RETRY_AFTER_S = 2
# The store takes no card data: the gateway charges the customer's card on file (cliente_id). A body that
# brings a card token is refused as any unknown field is, and told why and what reaches a declined card.
SIN_TARJETA = (
    "token_tarjeta: the store takes no card data; the payment gateway charges the customer's card on file "
    "(cliente_id). In the sandbox, a cliente_id listed in SimuladorTarjetasRechazadas is declined"
)


def _json(estado: HTTPStatus, cuerpo: dict[str, Any], **cabeceras: str) -> Response:
    from aws_lambda_powertools.event_handler import Response, content_types  # loaded by _api()

    return Response(
        status_code=estado.value,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(cuerpo, ensure_ascii=False),
        headers=cabeceras or None,
    )


def _error(estado: HTTPStatus, codigo: str, mensaje: str, **extra: Any) -> Response:
    cabeceras = {"Retry-After": str(RETRY_AFTER_S)} if estado is HTTPStatus.SERVICE_UNAVAILABLE else {}
    return _json(estado, {"error": codigo, "message": mensaje, **extra}, **cabeceras)


class BaseNoDisponible(Exception):
    """The database did not answer: a driver error, or no pooled connection in time."""


@contextmanager
def _conexion() -> Iterator[Connection]:
    """A pooled connection; the driver's "unavailable" errors leave as :class:`BaseNoDisponible` (503)."""
    # The driver is imported by the first request, not by the init phase (bench/bench_cold_start.py).
    import psycopg
    from psycopg_pool import PoolTimeout

    try:
        with shared_pool().connection() as conn:
            yield conn
    except (psycopg.OperationalError, PoolTimeout) as exc:
        raise BaseNoDisponible(str(exc)) from exc


def _senal_pendiente() -> Callable[[], None] | None:
    """The relay's pending flag, set before the order commits (``OUTBOX_PENDING_SIGNAL=valkey``; else nothing to do)."""
    senal = _senal()
    if senal is None:
        return None

    def marcar() -> None:
        from redis.exceptions import RedisError

        try:
            senal.mark()
        except RedisError as exc:  # nothing is committed: the client retries with its Idempotency-Key
            raise BaseNoDisponible(f"Valkey did not take the outbox signal: {exc}") from exc

    return marcar


@per_environment
def _senal() -> PendingSignal | None:
    return pending_signal_from_env()


def _llamante() -> str:
    """The IAM principal API Gateway authenticated (the Idempotency-Key's and GET's scope); empty without IAM auth."""
    iam = (_api().current_event.raw_event.get("requestContext", {}).get("authorizer") or {}).get("iam") or {}
    return str(iam.get("userArn") or iam.get("callerId") or "")


def crear_pedido() -> Response:
    evento = _api().current_event
    clave = evento.headers.get("Idempotency-Key")  # case-insensitive in Powertools v3
    try:  # ValueError: not base64, not UTF-8 or not JSON; RecursionError: nested past the interpreter's stack
        cuerpo = json.loads(evento.decoded_body or "")
    except (ValueError, RecursionError) as exc:
        return _error(HTTPStatus.BAD_REQUEST, "invalid_json", f"the body is not JSON: {exc}")
    try:
        with _conexion() as conn:
            registrado = registrar_pedido(
                conn, clave, cuerpo, llamante=_llamante(), antes_de_confirmar=_senal_pendiente()
            )
    except SolicitudInvalida as exc:
        if isinstance(cuerpo, dict) and "token_tarjeta" in cuerpo:
            raise SolicitudInvalida([*exc.errores, SIN_TARJETA]) from None
        raise
    pedido = registrado.pedido
    if registrado.creado:
        metrics.add_metric(name="PedidosCreados", unit=MetricUnit.Count, value=1)
        logger.info("order created", pedido_id=pedido["pedido_id"])
        return _json(HTTPStatus.CREATED, pedido, Location=f"/pedidos/{pedido['pedido_id']}")
    logger.info("order request repeated: returning the order its key created", pedido_id=pedido["pedido_id"])
    return _json(HTTPStatus.OK, pedido, Location=f"/pedidos/{pedido['pedido_id']}")


def leer_pedido(pedido_id: str) -> Response:
    # An answer repeats what the client sent only as the log policy cuts a value (validation.echo).
    try:
        valores.id_tienda(pedido_id, "pedido_id")
    except validation.InvalidValueError as exc:
        return _error(HTTPStatus.BAD_REQUEST, "invalid_pedido_id", str(exc))
    with _conexion() as conn:  # only the caller's own orders: another's is "not found" as well
        pedido = consultar_pedido(conn, pedido_id, llamante=_llamante())
    if pedido is None:
        return _error(HTTPStatus.NOT_FOUND, "not_found", f"order {validation.echo(pedido_id)} does not exist")
    return _json(HTTPStatus.OK, pedido)


def _clave_invalida(exc: ClaveIdempotenciaInvalida) -> Response:
    return _error(HTTPStatus.BAD_REQUEST, "invalid_idempotency_key", str(exc))


def _solicitud_invalida(exc: SolicitudInvalida) -> Response:
    logger.info("order refused: invalid request", errores=exc.errores)
    return _error(HTTPStatus.BAD_REQUEST, "invalid_order", str(exc), details=exc.errores)


def _clave_reutilizada(exc: ClaveReutilizada) -> Response:
    logger.warning("order refused: Idempotency-Key reused with another body", pedido_id=exc.pedido_id)
    return _error(HTTPStatus.UNPROCESSABLE_ENTITY, "idempotency_key_reused", str(exc))


def _base_no_disponible(exc: BaseNoDisponible) -> Response:
    # Nothing was committed (or the commit's answer was lost): a retry with the same key is safe either way.
    logger.exception("database unavailable")
    return _error(
        HTTPStatus.SERVICE_UNAVAILABLE,
        "unavailable",
        "the store's database is unavailable; retry with the same Idempotency-Key",
    )


@cache
def _api() -> APIGatewayHttpResolver:
    """The routes and the errors' answers, built by the first request.

    Powertools' ``event_handler`` package imports every resolver it has (AppSync's brings asyncio):
    ~50 ms the init phase does not pay; the first request does (bench/bench_cold_start.py's "first use").
    """
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

    api = APIGatewayHttpResolver()
    api.post("/pedidos")(crear_pedido)
    api.get("/pedidos/<pedido_id>")(leer_pedido)
    api.exception_handler(ClaveIdempotenciaInvalida)(_clave_invalida)
    api.exception_handler(SolicitudInvalida)(_solicitud_invalida)
    api.exception_handler(ClaveReutilizada)(_clave_reutilizada)
    api.exception_handler(BaseNoDisponible)(_base_no_disponible)
    return api


@metrics.log_metrics
@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _api().resolve(event, context)
