"""The order claim (functions/reclamo) fed wrong-source events and hostile payloads, on its table in moto.

Properties: a payload that is not ``{"registros": [one SQS record whose body is a PedidoCreado with an
order id in the store's format], "ejecucion": <an execution id>}`` raises a named error the workflow
knows (``EventoInvalido``, or ``LoteNoAdmitido`` for a batch that is not one SQS record) and claims
nothing; a good one claims ``pedido:{pedido_id}`` once (a second execution gets ``PedidoDuplicado``);
neither the error (the execution's cause) nor the logs repeat more of the payload than the log policy
allows.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mercadofresco import validation
from mercadofresco.dominio.errores import NOMBRES_PARA_EL_FLUJO, LoteNoAdmitido, PedidoDuplicado
from mercadofresco.errors import EventoInvalido

from tests.unit.fuzz.estrategias import EVENTOS_AWS, texto_cualquiera, valor_json

pytestmark = pytest.mark.integration

MARCA = "MARCA" * 12
EJECUCION = "arn:aws:states:eu-south-2:123456789012:execution:mercadofresco-procesar-pedido:e-1"
cualquiera = st.one_of(
    valor_json,
    texto_cualquiera,
    texto_cualquiera.map(lambda t: t + "\x00"),
    texto_cualquiera.map(lambda t: "\ud800" + t),
    st.just(MARCA * 100),
    st.just("PED-\U0001f600"),
    st.uuids().map(str),  # the store's characters, but the shape of a MessageId: no key may be built from it
)
ID_TIENDA = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")


@pytest.fixture
def reclamo(app_module, tabla_idempotencia) -> Any:
    return app_module("reclamo", TABLA_IDEMPOTENCIA=tabla_idempotencia)


CAMPOS = ("pedido_id", "importe_centimos", "lineas", "email", "moneda")


def _registros(pedido_id: Any) -> list[dict[str, str]]:
    """The pipe's batch of one SQS record carrying a PedidoCreado for ``pedido_id``."""
    detalle = {"version": 1, "pedido_id": pedido_id, "importe_centimos": 4800, "lineas": [], "email": "e@x.es"}
    detalle["moneda"] = "EUR"
    return [{"body": json.dumps({"detail-type": "PedidoCreado", "detail": detalle})}]


def _pedido_id_valido(evento: Any) -> str | None:
    """What the claim accepts, said independently of the layer: one record whose PedidoCreado has an
    order id in the store's format that is not UUID-shaped, and a printable execution id."""
    if not isinstance(evento, dict):
        return None
    registros, ejecucion = evento.get("registros"), evento.get("ejecucion")
    if not (isinstance(registros, list) and len(registros) == 1 and isinstance(registros[0], dict)):
        return None
    try:
        detalle = json.loads(registros[0].get("body"))["detail"]
    except (TypeError, ValueError, KeyError):
        return None
    pedido_id = detalle.get("pedido_id") if isinstance(detalle, dict) else None
    valido = (
        type(detalle.get("version")) is int
        and detalle["version"] == 1
        and all(c in detalle for c in CAMPOS)
        and isinstance(pedido_id, str)
        and ID_TIENDA.fullmatch(pedido_id) is not None
        and UUID.fullmatch(pedido_id) is None
        and isinstance(ejecucion, str)
        and 0 < len(ejecucion) <= 256
        and ejecucion == ejecucion.strip()
        and all(unicodedata.category(c) not in {"Cc", "Cf", "Cs", "Co", "Cn"} for c in ejecucion)
    )
    return pedido_id if valido else None


@given(
    evento=st.one_of(
        st.sampled_from(list(EVENTOS_AWS.values())),
        valor_json,
        st.fixed_dictionaries({"registros": cualquiera, "ejecucion": st.just(EJECUCION)}),
        st.fixed_dictionaries(
            {"registros": cualquiera.map(_registros), "ejecucion": st.one_of(cualquiera, st.just(EJECUCION))}
        ),
        st.fixed_dictionaries({"registros": st.just(_registros("PED-2026-084417")), "ejecucion": cualquiera}),
    )
)
def test_fuzz_reclamo_bad_payload_raises_evento_invalido_and_claims_nothing(
    reclamo, tabla_idempotencia, lambda_context, capsys, evento
) -> None:
    # GIVEN an event of another source, any JSON, or a payload with a field of any type or text
    dynamodb = boto3.client("dynamodb")
    antes = dynamodb.scan(TableName=tabla_idempotencia)["Count"]
    capsys.readouterr()
    # WHEN the claim task is invoked with it
    if (pedido_id := _pedido_id_valido(evento)) is not None:
        # THEN a good payload claims the order for this execution, or names the execution that holds it
        try:
            reclamo.lambda_handler(evento, lambda_context)
            reclamado = True
        except PedidoDuplicado:
            reclamado = False
        registro = dynamodb.get_item(TableName=tabla_idempotencia, Key={"clave": {"S": f"pedido:{pedido_id}"}})
        assert reclamado is (registro["Item"]["propietario"]["S"] == evento["ejecucion"])
        assert dynamodb.scan(TableName=tabla_idempotencia)["Count"] in {antes, antes + 1}
        return
    with pytest.raises((EventoInvalido, LoteNoAdmitido)) as error:
        reclamo.lambda_handler(evento, lambda_context)
    # THEN the error is a named one the workflow matches, and nothing was claimed
    assert type(error.value).__name__ in NOMBRES_PARA_EL_FLUJO
    assert dynamodb.scan(TableName=tabla_idempotencia)["Count"] == antes
    # AND neither the error nor the logs repeat a long value whole
    registros = capsys.readouterr()
    for salida in (str(error.value), registros.out, registros.err):
        assert MARCA[: validation.ECHO_MAX_CHARS + 1] not in salida
