"""What each file in ``events/`` must do when ``sam local invoke`` runs it: the tests' table, and
how ``make invoke`` tells a declared error (a declined card) from an unexpected one.

The table itself is ``events/casos.yaml``, beside the events it is about (a new function's events and
their outcomes are added together there, and nothing here names a function). A case names the function
(logical id), the ``errorType`` it must raise (``None``: it answers), the effects at the provider
stand-in per ``Idempotency-Key`` (the function's first provider, from the template), the reasons of what
it puts in its queue's DLQ, and what the world must hold first (``prepare``, by name: :data:`PREPARE`).
``events/flujo/`` holds the state machine's inputs, ``events/durable/`` the durable engine's (its local invoke
needs an emulator image from a registry): not here.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from template_model import messaging as m

if TYPE_CHECKING:
    from collections.abc import Callable

    from template_model import Template

    from sam_local.environment import LocalEnvironment

EVENTOS = Path(__file__).resolve().parents[3] / "events"
CASES_FILE = EVENTOS / "casos.yaml"
FIELDS = frozenset({"funcion", "error", "efectos", "dlq", "respuesta", "preparar"})
PEDIDO = "PED-2026-084417"  # the order the sample events carry


class CasesError(ValueError):
    """The cases file does not say what an event must do (the message names the event and the field)."""


@dataclass(frozen=True)
class Case:
    event: str  # file name under events/
    function: str  # its stack path, as `sam local invoke` takes it (a unit's: Tienda/TiendaFunction)
    error: str | None = None  # the errorType it must raise; None: it answers
    effects: dict[str, int] | None = None  # stand-in effects per Idempotency-Key (None: not checked)
    dead_letters: tuple[str, ...] = ()  # mf-motivo of each message it dead-letters, sorted
    answer: dict[str, Any] = field(default_factory=dict)  # fields the answer must hold
    prepare: Callable[[LocalEnvironment], None] | None = None


def _declined_card(env: LocalEnvironment) -> None:
    assert env.proveedores is not None
    env.proveedores.fallos.rechazar_tarjeta("tok_rechazada_fondos")


def _order_charged(env: LocalEnvironment) -> None:
    """The charge ``ch_000001`` that events/cobro-reembolso.json refunds, made at the gateway stand-in."""
    assert env.proveedores is not None
    cuerpo = json.dumps({"pedido_id": PEDIDO, "importe_centimos": 4820, "moneda": "EUR", "cliente_id": "CLI-0193"})
    url = f"{env.proveedores.pasarela.url}/cobros"
    cabeceras = {"Content-Type": "application/json", "Idempotency-Key": f"cobro:{PEDIDO}"}
    if "PASARELA_URL" in env.firmadas:  # a sandbox behind AWS_IAM: signed as the charge function signs
        import boto3
        from mercadofresco.http.auth import FunctionUrlSigV4

        from sam_local.environment import REGION
        from sam_local.invoke import LOCAL_CREDENTIALS

        sesion = boto3.Session(
            aws_access_key_id=LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=LOCAL_CREDENTIALS["AWS_SESSION_TOKEN"],
        )
        cabeceras = FunctionUrlSigV4(region=REGION, session=sesion).headers("POST", url, cabeceras, cuerpo.encode())
    peticion = urllib.request.Request(url, data=cuerpo.encode(), headers=cabeceras, method="POST")
    with urllib.request.urlopen(peticion, timeout=10) as respuesta:
        assert json.load(respuesta)["referencia_cobro"] == "ch_000001"


# What a case may need the world to hold first, by the name events/casos.yaml gives it.
PREPARE: dict[str, Callable[[LocalEnvironment], None]] = {
    "tarjeta-rechazada": _declined_card,
    "pedido-cobrado": _order_charged,
}


def prepare(env: LocalEnvironment, case: Case | None) -> None:
    if case is not None and case.prepare is not None:
        case.prepare(env)


def dead_letters(event: Any) -> list[str]:
    """The ``mf-motivo`` of each message in the DLQ of the queue the event's records came from."""
    from mercadofresco.aws import client

    registros = event.get("Records") if isinstance(event, dict) else None
    if not registros or "eventSourceARN" not in registros[0]:
        return []
    sqs = client("sqs")
    cola = sqs.get_queue_url(QueueName=registros[0]["eventSourceARN"].rsplit(":", 1)[1])["QueueUrl"]
    redrive = sqs.get_queue_attributes(QueueUrl=cola, AttributeNames=["RedrivePolicy"])["Attributes"]
    destino = json.loads(redrive["RedrivePolicy"])["deadLetterTargetArn"].rsplit(":", 1)[1]
    dlq = sqs.get_queue_url(QueueName=destino)["QueueUrl"]
    motivos: list[str] = []
    while mensajes := sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, MessageAttributeNames=["All"]).get(
        "Messages", []
    ):
        motivos += [m.get("MessageAttributes", {}).get("mf-motivo", {}).get("StringValue") for m in mensajes]
        # Consumed: a message only made invisible would be back for the next event's observation.
        sqs.delete_message_batch(
            QueueUrl=dlq, Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(mensajes)]
        )
    return sorted(motivos)


def stand_in(plantilla: Template, function: str) -> str | None:
    """The provider stand-in whose effects a function's case counts: its first provider's (a second one is
    its fallback), by dependency; None for a function that calls none."""
    providers = m.providers(plantilla, function)
    return providers[0].dependency if providers else None


def observe(env: LocalEnvironment, case: Case) -> dict[str, Any]:
    """What the tests assert on, read after the invoke: the stand-in's effects and the DLQ."""
    efectos = None
    if env.proveedores is not None and (dependencia := stand_in(env.proveedores.plantilla, case.function)):
        efectos = dict(env.proveedores[dependencia].efectos_por_clave)
    evento = json.loads((EVENTOS / case.event).read_text())
    return {"effects": efectos, "dead_letters": dead_letters(evento)}


def _case(event: str, entry: Any) -> Case:
    """One entry of ``events/casos.yaml`` (its keys named there), or a clear error naming the event."""
    if not isinstance(entry, dict) or not isinstance(entry.get("funcion"), str):
        raise CasesError(f"{CASES_FILE.name}: {event} needs a mapping with funcion (a logical id)")
    if unknown := sorted(set(entry) - FIELDS):
        raise CasesError(f"{CASES_FILE.name}: {event} has {', '.join(unknown)}; the fields are {sorted(FIELDS)}")
    preparar = entry.get("preparar")
    if preparar is not None and preparar not in PREPARE:
        raise CasesError(f"{CASES_FILE.name}: {event} prepares {preparar!r}; known: {', '.join(sorted(PREPARE))}")
    return Case(
        event,
        entry["funcion"],
        error=entry.get("error"),
        effects=entry.get("efectos"),
        dead_letters=tuple(entry.get("dlq") or ()),
        answer=dict(entry.get("respuesta") or {}),
        prepare=PREPARE[preparar] if preparar is not None else None,
    )


def load(path: Path) -> dict[str, Case]:
    """The cases of a cases file (``events/casos.yaml``), by event file name."""
    try:
        entries = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise CasesError(f"{path}: {exc}") from None
    if not isinstance(entries, dict):
        raise CasesError(f"{path}: a mapping of event file names to what each must do")
    return {event: _case(event, entry) for event, entry in entries.items()}


CASES: dict[str, Case] = load(CASES_FILE)
