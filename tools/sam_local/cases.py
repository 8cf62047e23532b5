"""What each file in ``events/`` must do when ``sam local invoke`` runs it: the tests' table, and
how ``make invoke`` tells a declared error (a declined card) from an unexpected one.

A case names the function (logical id), the ``errorType`` it must raise (``None``: it answers),
the effects at the provider stand-in per ``Idempotency-Key``, the reasons of what it puts in
its queue's DLQ, and what the world must hold first (``prepare``: e.g. the charge a refund refers
to). ``events/flujo/`` holds the state machine's inputs, not functions' events: not here.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from sam_local.environment import LocalEnvironment

EVENTOS = Path(__file__).resolve().parents[2] / "events"
PEDIDO = "PED-2026-084417"
AVISO = f"aviso-erp:{PEDIDO}"
CONFIRMACION = f"correo-confirmacion:{PEDIDO}"
# The provider stand-in each function calls (attribute of mercadofresco_local.proveedores.Proveedores).
STAND_IN = {"CobroFunction": "pasarela", "ErpFunction": "erp", "CorreoFunction": "correo_principal"}


@dataclass(frozen=True)
class Case:
    event: str  # file name under events/
    function: str  # logical id in template.yaml
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


def observe(env: LocalEnvironment, case: Case) -> dict[str, Any]:
    """What the tests assert on, read after the invoke: the stand-in's effects and the DLQ."""
    efectos = None
    if case.function in STAND_IN and env.proveedores is not None:
        efectos = dict(getattr(env.proveedores, STAND_IN[case.function]).efectos_por_clave)
    evento = json.loads((EVENTOS / case.event).read_text())
    return {"effects": efectos, "dead_letters": dead_letters(evento)}


_CASES = [
    # -- payment (the workflow's task): answers, or the error name the state machine catches
    Case(
        "cobro-pedido.json", "CobroFunction", effects={f"cobro:{PEDIDO}": 1}, answer={"referencia_cobro": "ch_000001"}
    ),
    Case("cobro-duplicado.json", "CobroFunction", effects={f"cobro:{PEDIDO}": 1}),
    Case("cobro-rechazado.json", "CobroFunction", error="CobroRechazado", effects={}, prepare=_declined_card),
    Case("cobro-malformado.json", "CobroFunction", error="EventoInvalido", effects={}),
    Case("cobro-version-2.json", "CobroFunction", error="EventoInvalido", effects={}),
    Case(
        "cobro-reembolso.json",
        "CobroFunction",
        effects={f"cobro:{PEDIDO}": 1, f"reembolso:{PEDIDO}": 1},
        answer={"referencia_cobro": "ch_000001"},
        prepare=_order_charged,
    ),
    # -- ERP consumer (SQS batches): each operation once; unreadable messages in the DLQ with their reason
    Case("erp-pedido-confirmado.json", "ErpFunction", effects={AVISO: 1}, answer={"batchItemFailures": []}),
    Case("erp-pedido-confirmado-duplicado.json", "ErpFunction", effects={AVISO: 1}, answer={"batchItemFailures": []}),
    Case("erp-pedido-confirmado-campos-extra.json", "ErpFunction", effects={"aviso-erp:PED-2026-084419": 1}),
    Case("erp-version-2.json", "ErpFunction", effects={}, dead_letters=("version-desconocida",)),
    Case("erp-malformado.json", "ErpFunction", effects={}, dead_letters=("json-invalido",)),
    Case("erp-campo-ausente.json", "ErpFunction", effects={}, dead_letters=("campo-ausente",)),
    Case(
        "erp-reserva-stock.json",
        "ErpFunction",
        effects={f"reserva:{PEDIDO}:FRU-MAN-001": 1, f"reserva:{PEDIDO}:VER-TOM-014": 1},
    ),
    Case("erp-reserva-stock-malformada.json", "ErpFunction", effects={}, dead_letters=("campo-ausente",)),
    Case("erp-liberacion-stock.json", "ErpFunction", effects={f"liberacion:{PEDIDO}:FRU-MAN-001": 1}),
    Case(
        "erp-lote-mixto.json",
        "ErpFunction",
        effects={AVISO: 1, "aviso-erp:PED-2026-084420": 1},
        dead_letters=("json-invalido", "version-desconocida"),
        answer={"batchItemFailures": []},
    ),
    # -- e-mail consumer
    Case("correo-confirmacion.json", "CorreoFunction", effects={CONFIRMACION: 1}, answer={"batchItemFailures": []}),
    Case("correo-confirmacion-duplicado.json", "CorreoFunction", effects={CONFIRMACION: 1}),
    Case("correo-confirmacion-sobre-sns.json", "CorreoFunction", effects={CONFIRMACION: 1}),
    Case("correo-confirmacion-campos-extra.json", "CorreoFunction", effects={"correo-confirmacion:PED-2026-084419": 1}),
    Case("correo-carrito-abandonado.json", "CorreoFunction", effects={"recordatorio-carrito:CAR-7781": 1}),
    Case("correo-pedido-no-confirmado.json", "CorreoFunction", effects={f"correo-no-confirmado:{PEDIDO}": 1}),
    Case("correo-version-2.json", "CorreoFunction", effects={}, dead_letters=("version-desconocida",)),
    Case("correo-malformado.json", "CorreoFunction", effects={}, dead_letters=("json-invalido",)),
    Case("correo-campo-ausente.json", "CorreoFunction", effects={}, dead_letters=("campo-ausente",)),
    Case(
        "correo-lote-mixto.json",
        "CorreoFunction",
        effects={CONFIRMACION: 1, "correo-confirmacion:PED-2026-084420": 1},
        dead_letters=("json-invalido", "version-desconocida"),
        answer={"batchItemFailures": []},
    ),
    # -- outbox (scheduled): on a fresh schema, migrated at the cold start, nothing to publish or delete
    Case("outbox-relay.json", "OutboxFunction", answer={"publicadas": 0}),
    Case("outbox-limpieza.json", "OutboxLimpiezaFunction", answer={"borradas": 0}),
    # -- the workflow's order claim (a lease in the idempotency table): each event claims its order on an
    #    empty table, and answers the order read from the pipe's batch, no charge yet
    *(
        Case(evento, "ReclamoFunction", answer={"cobro": {"referencia_cobro": None}})
        for evento in ("reclamo-pedido.json", "reclamo-otra-ejecucion.json")
    ),
    # -- the store's projection of outcomes: on an empty store each order is unknown, a permanent
    #    error: dead-lettered as dato-invalido, never retried
    Case(
        "proyeccion-pedido-confirmado.json",
        "ProyeccionFunction",
        dead_letters=("dato-invalido",),
        answer={"batchItemFailures": []},
    ),
    Case(
        "proyeccion-pedido-cancelado.json",
        "ProyeccionFunction",
        dead_letters=("dato-invalido",),
        answer={"batchItemFailures": []},
    ),
    Case(
        "proyeccion-lote-desordenado.json",
        "ProyeccionFunction",
        dead_letters=("dato-invalido",) * 5,
        answer={"batchItemFailures": []},
    ),
    # -- the store's HTTP API (payload 2.0): answers with its status, never raises
    Case("tienda-crear-pedido.json", "TiendaFunction", answer={"statusCode": 201}),
    Case("tienda-crear-pedido-invalido.json", "TiendaFunction", answer={"statusCode": 400}),
    Case("tienda-crear-pedido-sin-clave.json", "TiendaFunction", answer={"statusCode": 400}),
    Case("tienda-consultar-pedido.json", "TiendaFunction", answer={"statusCode": 404}),  # no such order yet
    # -- deploy-time migrations (CloudFormation custom resource): locally the pre-signed ResponseURL
    #    (S3) is out of reach, so after its work the function raises the named ResponseError
    Case("migraciones-create.json", "MigracionesFunction", error="ResponseError"),
    Case("migraciones-update.json", "MigracionesFunction", error="ResponseError"),
    Case("migraciones-delete.json", "MigracionesFunction", error="ResponseError"),
    # -- sandbox providers behind function URLs (state in their DynamoDB table)
    Case("simulador-pasarela-cobro.json", "SimuladorPasarelaFunction", answer={"statusCode": 201}),
    # alone, the refund finds no charge in the simulator's table: the gateway's 404
    Case("simulador-pasarela-reembolso.json", "SimuladorPasarelaFunction", answer={"statusCode": 404}),
    Case("simulador-erp-aviso.json", "SimuladorErpFunction", answer={"statusCode": 200}),
    Case("simulador-correo-confirmacion.json", "SimuladorCorreoFunction", answer={"statusCode": 202}),
    # a path the provider does not have: 404, no effect (who may call is Lambda's AWS_IAM check, before this)
    Case("simulador-ruta-desconocida.json", "SimuladorPasarelaFunction", answer={"statusCode": 404}),
]
CASES: dict[str, Case] = {c.event: c for c in _CASES}
