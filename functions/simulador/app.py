"""Lambda function URL (simulador-pasarela, -erp, -correo) -> the sandbox provider's answer, once per Idempotency-Key.

Deployed only when the matching provider URL parameter is empty. ``SIMULADOR_PROVEEDOR`` says
which provider this copy plays; the answers are the local stand-ins' (``simulador``).
"""

from __future__ import annotations

import base64
import json
import os
from functools import cache
from typing import Any

from aws_lambda_powertools import Logger
from mercadofresco.aws import cached_client
from simulador import Simulador
from simulador.dynamodb import AlmacenDynamoDB, Fallos, Sandbox, ruta_y_proveedor

logger = Logger()


@cache
def sandbox(proveedor: str) -> Sandbox:
    """One per provider name (the e-mail copy plays both correo-principal and correo-secundario)."""
    fallos = Fallos.from_env()
    almacen = AlmacenDynamoDB(os.environ["SIMULADOR_TABLA"], cached_client("dynamodb"))
    return Sandbox(Simulador(proveedor, almacen, fallos.rechaza), almacen, fallos)


def _http(estado: int, cuerpo: dict[str, Any], cabeceras: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "statusCode": estado,
        "headers": {"Content-Type": "application/json", **(cabeceras or {})},
        "body": json.dumps(cuerpo),
    }


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    http = event.get("requestContext", {}).get("http", {})
    destino = ruta_y_proveedor(os.environ["SIMULADOR_PROVEEDOR"], event.get("rawPath", ""))
    if destino is None:
        return _http(404, {"error": "ruta_desconocida"})
    if http.get("method") != "POST":
        return _http(405, {"error": "metodo_no_permitido"}, {"Allow": "POST"})
    crudo = event.get("body") or ""
    if event.get("isBase64Encoded"):
        crudo = base64.b64decode(crudo).decode()
    try:
        cuerpo = json.loads(crudo or "{}")
    except ValueError:
        return _http(400, {"error": "json_invalido"})
    if not isinstance(cuerpo, dict):
        return _http(400, {"error": "json_invalido"})
    ruta, proveedor = destino
    clave = {k.lower(): v for k, v in (event.get("headers") or {}).items()}.get("idempotency-key")
    (estado, respuesta), cabeceras = sandbox(proveedor).atender(ruta, cuerpo, clave)
    logger.info(
        "sandbox answered", proveedor=proveedor, ruta=ruta, estado=estado, replay="Idempotent-Replayed" in cabeceras
    )
    return _http(estado, respuesta, cabeceras)
