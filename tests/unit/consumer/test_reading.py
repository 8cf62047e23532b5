"""Reading bodies into events: envelopes, tolerant reader, and each bad input's DlqReason."""

from __future__ import annotations

import json

import pytest
from mercadofresco.consumer import InvalidMessageError, Route, read
from mercadofresco.dlq import DlqReason
from mercadofresco.dominio.valores import CAMPOS

from tests.conftest import load_event

RUTAS = {
    "PedidoConfirmado": Route(lambda e: None, fields=("pedido_id",)),
    "CarritoAbandonado": Route(lambda e: None, fields=("carrito_id",)),
    "ReservaStock": Route(lambda e: None, fields=("pedido_id", "sku", "cantidad")),
}


def _cuerpo(evento: str, n: int = 0) -> str:
    return load_event(evento)["Records"][n]["body"]


def _motivo(cuerpo: str, **kwargs: str) -> DlqReason:
    with pytest.raises(InvalidMessageError) as info:
        read(cuerpo, RUTAS, field_checks=CAMPOS, **kwargs)
    return info.value.reason


def test_read_raw_json_returns_type_version_and_fields() -> None:
    # GIVEN a raw-delivery body  WHEN it is read
    evento = read(_cuerpo("erp-pedido-confirmado.json"), RUTAS, field_checks=CAMPOS)
    # THEN
    assert (evento.type, evento.version, evento.envelope) == ("PedidoConfirmado", 1, "sqs")
    assert evento["pedido_id"] == "PED-2026-084417"


def test_read_sns_envelope_unwraps_message() -> None:
    evento = read(_cuerpo("correo-confirmacion-sobre-sns.json"), RUTAS, field_checks=CAMPOS)
    assert (evento.type, evento.envelope, evento["pedido_id"]) == ("PedidoConfirmado", "sns", "PED-2026-084417")


def test_read_eventbridge_envelope_uses_detail_type_and_detail_version() -> None:
    # GIVEN an EventBridge envelope whose own "version" is "0"
    cuerpo = _cuerpo("correo-carrito-abandonado.json")
    assert json.loads(cuerpo)["version"] == "0"
    # WHEN it is read
    evento = read(cuerpo, RUTAS, field_checks=CAMPOS)
    # THEN the event's version is the detail's, not EventBridge's
    assert (evento.type, evento.version, evento.envelope) == ("CarritoAbandonado", 1, "eventbridge")
    assert evento["carrito_id"] == "CAR-7781"


def test_read_unknown_fields_are_ignored() -> None:
    evento = read(_cuerpo("erp-pedido-confirmado-campos-extra.json"), RUTAS, field_checks=CAMPOS)
    assert evento["pedido_id"] == "PED-2026-084419"


def test_read_default_type_applies_only_without_tipo() -> None:
    cuerpo = json.dumps({"version": 1, "pedido_id": "PED-1", "sku": "S1", "cantidad": 1})
    assert read(cuerpo, RUTAS, field_checks=CAMPOS, default_type="ReservaStock").type == "ReservaStock"
    assert _motivo(cuerpo) is DlqReason.CAMPO_AUSENTE


@pytest.mark.parametrize(
    ("cuerpo", "motivo"),
    [
        (_cuerpo("erp-malformado.json"), DlqReason.JSON_INVALIDO),
        ("[1, 2]", DlqReason.JSON_INVALIDO),
        ("", DlqReason.JSON_INVALIDO),
        (json.dumps({"Type": "Notification", "TopicArn": "arn:t", "Message": "{roto"}), DlqReason.JSON_INVALIDO),
        (json.dumps({"detail-type": "CarritoAbandonado", "source": "s", "detail": "x"}), DlqReason.JSON_INVALIDO),
        (_cuerpo("erp-campo-ausente.json"), DlqReason.CAMPO_AUSENTE),
        (json.dumps({"tipo": "PedidoConfirmado", "pedido_id": "PED-1"}), DlqReason.CAMPO_AUSENTE),
        (json.dumps({"tipo": "PedidoConfirmado", "version": 1, "pedido_id": ""}), DlqReason.CAMPO_AUSENTE),
        (_cuerpo("erp-version-2.json"), DlqReason.VERSION_DESCONOCIDA),
        (json.dumps({"tipo": "PedidoConfirmado", "version": "1", "pedido_id": "PED-1"}), DlqReason.DATO_INVALIDO),
        (json.dumps({"tipo": "PedidoConfirmado", "version": True, "pedido_id": "PED-1"}), DlqReason.DATO_INVALIDO),
        (json.dumps({"tipo": "PedidoEnviado", "version": 1, "pedido_id": "PED-1"}), DlqReason.DATO_INVALIDO),
        (
            json.dumps({"tipo": "PedidoConfirmado", "version": 1, "pedido_id": "PED-\U0001f600"}),
            DlqReason.DATO_INVALIDO,
        ),
        (
            json.dumps({"tipo": "ReservaStock", "version": 1, "pedido_id": "PED-1", "sku": "FRU:MAN", "cantidad": 1}),
            DlqReason.DATO_INVALIDO,
        ),
        (
            json.dumps({"tipo": "PedidoConfirmado", "version": 1, "pedido_id": "PED-1", "motivo": {}}),
            DlqReason.DATO_INVALIDO,
        ),
    ],
    ids=[
        "truncated-json",
        "json-array",
        "empty",
        "sns-message-not-json",
        "eventbridge-detail-not-object",
        "missing-pedido-id",
        "missing-version",
        "empty-pedido-id",
        "version-2",
        "version-string",
        "version-bool",
        "unknown-type",
        "pedido-id-not-in-the-store-format",
        "sku-not-in-the-store-format",
        "motivo-object",
    ],
)
def test_read_bad_input_raises_classified_reason(cuerpo: str, motivo: DlqReason) -> None:
    # WHEN / THEN: every bad input gets its DlqReason and a detail a person can read
    with pytest.raises(InvalidMessageError) as info:
        read(cuerpo, RUTAS, field_checks=CAMPOS)
    assert info.value.reason is motivo
    assert info.value.detail


def test_read_missing_fields_detail_names_every_missing_field() -> None:
    with pytest.raises(InvalidMessageError) as info:
        read(json.dumps({"tipo": "ReservaStock", "version": 1, "pedido_id": "PED-1"}), RUTAS, field_checks=CAMPOS)
    assert "sku" in info.value.detail and "cantidad" in info.value.detail


def test_read_version_accepted_when_route_declares_it() -> None:
    rutas = {"PedidoConfirmado": Route(lambda e: None, fields=("pedido_id",), versions=frozenset({1, 2}))}
    assert read(_cuerpo("erp-version-2.json"), rutas, field_checks=CAMPOS).version == 2
