"""Every sample event in ``events/`` run by ``sam local invoke`` in Lambda's container, its outcome asserted.

The functions run as built by ``sam build`` (layer included) in the locally built Python 3.13
image; moto's server, the provider stand-ins, PostgreSQL and Redis are reached through the
Docker bridge with the addresses of ``events/env-vars.json``, exactly as ``make invoke`` does.
Each event starts from an empty world (``LocalEnvironment.reset``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco.aws import client

from sam_local.cases import CASES, STAND_IN, prepare
from sam_local.invoke import invoke

if TYPE_CHECKING:
    from sam_local.cases import Case
    from sam_local.environment import LocalEnvironment

pytestmark = [pytest.mark.sam_local, pytest.mark.slow]

EVENTOS = Path(__file__).resolve().parents[2] / "events"


def _sample_events() -> list[str]:
    """The functions' events: every file in events/ but the env-vars files (events/flujo/ is the workflow's)."""
    return sorted(p.name for p in EVENTOS.glob("*.json") if not p.name.startswith("env-vars"))


def _dead_letters(evento: dict[str, Any]) -> list[str]:
    """The ``mf-motivo`` of each message in the DLQ of the queue the event's records came from."""
    registros = evento.get("Records") if isinstance(evento, dict) else None
    if not registros or "eventSourceARN" not in registros[0]:
        return []
    sqs = client("sqs")
    cola = sqs.get_queue_url(QueueName=registros[0]["eventSourceARN"].rsplit(":", 1)[1])["QueueUrl"]
    redrive = sqs.get_queue_attributes(QueueUrl=cola, AttributeNames=["RedrivePolicy"])["Attributes"]
    dlq = sqs.get_queue_url(QueueName=json.loads(redrive["RedrivePolicy"])["deadLetterTargetArn"].rsplit(":", 1)[1])
    motivos: list[str] = []
    while mensajes := sqs.receive_message(
        QueueUrl=dlq["QueueUrl"], MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", []):
        motivos += [m.get("MessageAttributes", {}).get("mf-motivo", {}).get("StringValue") for m in mensajes]
    return sorted(motivos)


def test_every_sample_event_has_a_declared_outcome() -> None:
    # GIVEN the functions' sample events  # WHEN compared with the table of outcomes
    # THEN each has one (a new event needs its expected outcome in tools/sam_local/cases.py)
    assert sorted(CASES) == _sample_events()


@pytest.mark.parametrize("caso", [CASES[e] for e in _sample_events() if e in CASES], ids=lambda c: c.event)
def test_sample_event_in_container_ends_as_declared(entorno: LocalEnvironment, caso: Case) -> None:
    # GIVEN an empty world, plus what the event refers to (a charge to refund, a declined card)
    entorno.reset()
    prepare(entorno, caso)
    # WHEN sam local invoke runs the function with the event, as the README shows
    respuesta = invoke(caso.function, f"events/{caso.event}")
    # THEN it answers or raises the named error it must, the provider saw each operation once,
    # and what it could not read is in its queue's DLQ with its reason
    assert respuesta.error_type == caso.error, respuesta.logs[-3000:]
    for campo, valor in caso.answer.items():
        assert respuesta.payload[campo] == valor, respuesta.payload
    if caso.effects is not None:
        assert entorno.proveedores is not None
        proveedor = getattr(entorno.proveedores, STAND_IN[caso.function])
        assert dict(proveedor.efectos_por_clave) == caso.effects
    evento = json.loads((EVENTOS / caso.event).read_text())
    assert tuple(_dead_letters(evento)) == caso.dead_letters
