"""Reading dead letters: envelopes, malformed bodies and the consumers' reason attributes."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from dlq_generadores import crudo, pedido
from mercadofresco_ops.dlq.adaptadores import v2_a_v1
from mercadofresco_ops.dlq.mensajes import envolver, leer, unwrap

from tests.conftest import load_event

T = datetime(2026, 11, 22, 22, 4, tzinfo=UTC)


@pytest.mark.parametrize("cuerpo", ["{no es json", "[1, 2]", '"texto"', ""])
def test_desenvolver_body_that_is_not_a_json_object_is_kept_as_evidence(cuerpo: str) -> None:
    # GIVEN / WHEN an unreadable body is read
    mensaje = leer(crudo(cuerpo, T))

    # THEN it is marked, not raised
    assert mensaje.cuerpo_invalido
    assert mensaje.version is None


def test_leer_reads_consumer_and_system_attributes() -> None:
    # GIVEN a message a consumer sent to the DLQ with its reason
    m = leer(crudo(pedido(1, version=3), T, recepciones=2, motivo="version-desconocida", detalle="version 3"))

    # THEN every field the runbook reads is there
    assert (m.motivo, m.detalle, m.version, m.recepciones) == ("version-desconocida", "version 3", 3, 2)
    assert m.enviado == T
    assert m.a_dict()["motivo"] == "version-desconocida"


@pytest.mark.parametrize(
    "sobre",
    [
        lambda e: e,
        lambda e: {"Type": "Notification", "TopicArn": "arn:t", "Message": json.dumps(e)},
        lambda e: {"version": "0", "detail-type": "PedidoCreado", "source": "mf", "detail": e},
    ],
    ids=["crudo", "sns", "eventbridge"],
)
def test_envolver_returns_the_transformed_event_in_the_same_envelope(sobre) -> None:
    # GIVEN a version-2 order (amount nested as importe{centimos, moneda}) in some envelope
    evento = {"version": 2, "pedido_id": "ped-0001", "importe": {"centimos": 4820, "moneda": "EUR"}, "x": 1}
    interior, forma = unwrap(json.dumps(sobre(evento)))

    # WHEN transformed and wrapped again
    cuerpo = envolver(v2_a_v1(interior), forma)

    # THEN unwrapping the new body gives the version-1 event, in the same envelope, extra fields kept
    nuevo, forma_nueva = unwrap(cuerpo)
    assert forma_nueva.tipo == forma.tipo
    assert nuevo == {"version": 1, "pedido_id": "ped-0001", "importe_centimos": 4820, "moneda": "EUR", "x": 1}


def test_v2_a_v1_turns_the_project_sample_into_a_version_1_pedido() -> None:
    # GIVEN the project's sample version-2 PedidoCreado and its version-1 sibling
    v2 = unwrap(load_event("flujo/pedido-version-2.json")[0]["body"])[0]
    v1 = unwrap(load_event("flujo/pedido-creado.json")[0]["body"])[0]

    # WHEN adapted
    adaptado = v2_a_v1(v2)

    # THEN it has exactly the version-1 fields (same amount, same currency)
    assert adaptado["version"] == 1
    assert set(adaptado) == set(v1)
    assert (adaptado["importe_centimos"], adaptado["moneda"]) == (4820, "EUR")


def test_v2_a_v1_refuses_an_event_that_is_not_version_2() -> None:
    # GIVEN / WHEN / THEN a version-1 event is not silently "adapted"
    with pytest.raises(ValueError, match="version 2") as error:
        v2_a_v1(pedido(1, version=1))
    assert error.type is ValueError
