"""The fan-out consumers on moto, real Redis and loopback providers, driven like Lambda's SQS mapping.

moto's own SQS -> Lambda mapping deletes whole batches (it ignores ``batchItemFailures``),
so :class:`Sondeo` does what Lambda does, one batch at a time and in the test's thread:
receive, invoke the handler, delete what it did not report failed. Time is a
:class:`~tests.conftest.RelojPrueba` the test moves: moto's SQS clock (visibility, ``DelaySeconds``), the
breaker's, the idempotency store's, the providers' fault windows and the HTTP client's
retry sleeps all read it, so a 30-minute outage runs in about a second.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from mercadofresco.circuit_breaker import BreakerConfig
from mercadofresco.consumer import Consumer
from mercadofresco.dominio.valores import CAMPOS
from mercadofresco.http import client_from_env
from mercadofresco.idempotency import IdempotencyStore
from mercadofresco.payload_limits import SQS_MESSAGE_MAX_BYTES
from mercadofresco_local.fallos import ControlFallos
from mercadofresco_local.proveedores import Proveedores
from sam_emulator.event_sources import sqs_record
from sam_emulator.moto_lambda import LambdaContext
from sam_emulator.provisioning import Provisioner
from sam_emulator.template import Template

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from tests.conftest import RelojPrueba

# What these tests create from template.yaml (and what those reference): the root's, and the consumers' unit's
# with what the root passes it written in (one flat section, each resource under its logical id).
RECURSOS = (
    "DatosKey",
    "TablaIdempotencia",
    "ColaErpFallidos",
    "ColaCorreoFallidos",
    "ColaStockFallidos",
    "TopicPedidoConfirmado",
    "BusMercadoFresco",
)
UNIDAD = "Consumidores"
RECURSOS_DE_LA_UNIDAD = (
    "ColaErp",
    "ColaCorreo",
    "ColaStock",
    "SuscripcionErp",
    "SuscripcionCorreo",
    "ReglaCarritoAbandonado",
)
# A breaker that trips after 3 consecutive failures (the default 20 needs more messages than a test sends).
BREAKER_PRUEBA = BreakerConfig(consecutive_failures=3, min_calls=3, open_base_s=30, open_max_s=300)
BREAKER_QUE_NO_ABRE = BreakerConfig(consecutive_failures=10_000, min_calls=10_000)


@pytest.fixture
def reloj(reloj_sqs: RelojPrueba) -> RelojPrueba:
    """This section's clock: moto's SQS, the breaker, the store, the providers' faults and the HTTP sleeps."""
    return reloj_sqs


@pytest.fixture
def lambda_context(reloj: RelojPrueba) -> LambdaContext:
    """The shared fake context, counting down on the test's clock (:class:`Sondeo` renews it per batch).

    On the wall clock a busy machine could run a 30 s invocation "out of time" while the test's
    clock says a second passed, and the consumer would hand records over instead of handling them.
    """
    return LambdaContext(
        "mercadofresco-test", "arn:aws:lambda:eu-south-2:123456789012:function:mercadofresco-test", clock=reloj
    )


def _como_en_la_raiz(unidad: Template, nodo: Any) -> Any:
    """``nodo`` of a unit with each ``!Ref`` to one of its parameters replaced by what the root writes for it."""
    if isinstance(nodo, list):
        return [_como_en_la_raiz(unidad, v) for v in nodo]
    if not isinstance(nodo, dict):
        return nodo
    if set(nodo) == {"Ref"} and (pasado := unidad.passed_by_parent(nodo["Ref"])) is not None:
        return pasado
    return {k: _como_en_la_raiz(unidad, v) for k, v in nodo.items()}


@pytest.fixture(scope="session")
def seccion_plantilla() -> dict[str, Any]:
    """template.yaml decoded once per session (0.75 s), cut down to :data:`RECURSOS` and the consumers' unit's
    :data:`RECURSOS_DE_LA_UNIDAD`."""
    raiz = Template()
    unidad = raiz.units()[UNIDAD]
    propios = {lid: raiz.doc["Resources"][lid] for lid in RECURSOS}
    de_la_unidad = {lid: _como_en_la_raiz(unidad, unidad.doc["Resources"][lid]) for lid in RECURSOS_DE_LA_UNIDAD}
    return {**raiz.doc, "Resources": {**propios, **de_la_unidad}}


@pytest.fixture
def recursos(aws: None, seccion_plantilla: dict[str, Any]) -> Template:
    """This section's queues, subscriptions and rule, created in moto from template.yaml."""
    plantilla = Template()
    plantilla.__dict__["doc"] = seccion_plantilla  # read-only: Template never writes to its doc
    Provisioner(plantilla).provision()
    return plantilla


@pytest.fixture
def proveedores(reloj: RelojPrueba) -> Iterator[Proveedores]:
    with Proveedores(fallos=ControlFallos(reloj=reloj)) as p:
        yield p


@dataclass
class Cola:
    url: str
    arn: str

    @classmethod
    def de(cls, plantilla: Any, ruta: str) -> Cola:
        """The queue at ``ruta`` as the run created it: a logical id of what holds ``physical_ids``, or a unit's
        resource by stack path (``Consumidores/ColaFactura``) of a template."""
        if ruta in plantilla.physical_ids:
            fisico = plantilla.physical_ids[ruta]
            return cls(fisico["Ref"], fisico["Arn"])
        return cls(plantilla.get_att(ruta, "Ref"), plantilla.get_att(ruta, "Arn"))


@dataclass
class Sondeo:
    """Lambda's SQS event source mapping, one batch per call, partial batch responses honoured."""

    sqs: Any
    cola: Cola
    handler: Callable[[dict[str, Any], Any], Any]
    contexto: LambdaContext
    tamano_lote: int = 10
    respuestas: list[dict[str, Any]] = field(default_factory=list)
    aplazamientos_vistos: int = 0

    def lote(self) -> int:
        """Receive and handle one batch; return how many messages it had."""
        mensajes = self.sqs.receive_message(
            QueueUrl=self.cola.url,
            MaxNumberOfMessages=self.tamano_lote,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not mensajes:
            return 0
        for m in mensajes:
            valor = m.get("MessageAttributes", {}).get("mf-aplazamientos", {}).get("StringValue", "0")
            self.aplazamientos_vistos = max(self.aplazamientos_vistos, int(valor))
        # Each batch is a new invocation with its full timeout, as Lambda gives it (on the test's clock).
        contexto = self.contexto.next_invocation()
        respuesta = self.handler({"Records": [sqs_record(m, self.cola.arn) for m in mensajes]}, contexto)
        self.respuestas.append(respuesta)
        fallidos = {f["itemIdentifier"] for f in respuesta["batchItemFailures"]}
        for m in mensajes:
            if m["MessageId"] not in fallidos:
                self.sqs.delete_message(QueueUrl=self.cola.url, ReceiptHandle=m["ReceiptHandle"])
        return len(mensajes)

    def drenar(self) -> int:
        """Handle batches until a receive comes back empty; return messages handled."""
        total = 0
        while n := self.lote():
            total += n
        return total


def mensajes(sqs: Any, cola: Cola) -> list[dict[str, Any]]:
    """Every visible message, made visible again at once (moto reads ``VisibilityTimeout=0`` as "the default")."""
    vistos: dict[str, dict[str, Any]] = {}
    while lote := sqs.receive_message(
        QueueUrl=cola.url, MaxNumberOfMessages=10, AttributeNames=["All"], MessageAttributeNames=["All"]
    ).get("Messages", []):
        vistos.update({m["MessageId"]: m for m in lote})
    for m in vistos.values():
        sqs.change_message_visibility(QueueUrl=cola.url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    return list(vistos.values())


def motivo(mensaje: dict[str, Any]) -> str | None:
    return mensaje.get("MessageAttributes", {}).get("mf-motivo", {}).get("StringValue")


@pytest.fixture
def cargar_consumidor(
    app_module: Callable[..., Any],
    recursos: Template,
    proveedores: Proveedores,
    reloj: RelojPrueba,
    redis_url: str,
    redis_prefix: str,
) -> Callable[..., Any]:
    """Load functions/<name>/app.py, then rebuild its consumer on this test's clock, Valkey prefix and breaker."""
    tabla = recursos.physical_ids["TablaIdempotencia"]["Ref"]
    urls = {
        "ERP_URL": proveedores["erp"].url,
        "CORREO_PRINCIPAL_URL": proveedores["correo-principal"].url,
        "CORREO_SECUNDARIO_URL": proveedores["correo-secundario"].url,
    }

    def _cargar(nombre: str, breaker: BreakerConfig = BREAKER_PRUEBA) -> Any:
        def cliente(dependencia: str, variable: str) -> Any:
            return client_from_env(
                dependencia, variable, config=breaker, clock=reloj, prefix=redis_prefix, sleep=reloj.avanzar
            )

        app = app_module(nombre, TABLA_IDEMPOTENCIA=tabla, REDIS_URL=redis_url, **urls)
        store = IdempotencyStore(tabla, now_s=reloj)
        if nombre == "erp":
            app.consumidor = app.crear_consumidor(cliente("erp", "ERP_URL"), store)
        else:
            app.consumidor = app.crear_consumidor(
                cliente("correo-principal", "CORREO_PRINCIPAL_URL"),
                cliente("correo-secundario", "CORREO_SECUNDARIO_URL"),
                store,
            )
        return app

    return _cargar


LIMITE_SQS_BYTES = SQS_MESSAGE_MAX_BYTES  # SQS's 1 MiB: the body plus every attribute's name, type and value


@pytest.fixture
def colas(aws: None) -> tuple[Any, dict[str, str], str]:
    """A source queue and its DLQ, both at SQS's limit as the template sets it: (client, source {url, arn}, DLQ url)."""
    sqs = boto3.client("sqs")
    limite = {"MaximumMessageSize": str(LIMITE_SQS_BYTES)}
    dlq_url = sqs.create_queue(QueueName="mercadofresco-prueba-fallidos", Attributes=limite)["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 4})
    url = sqs.create_queue(QueueName="mercadofresco-prueba", Attributes=limite | {"RedrivePolicy": redrive})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return sqs, {"url": url, "arn": arn}, dlq_url


def consumir(
    sqs: Any, origen: dict[str, str], cuerpo: str, atributos: dict[str, Any], rutas: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Send ``cuerpo`` to the source queue and hand it to a consumer of ``rutas`` as Lambda would; return its answer."""
    sqs.send_message(QueueUrl=origen["url"], MessageBody=cuerpo, MessageAttributes=atributos)
    (mensaje,) = sqs.receive_message(QueueUrl=origen["url"], AttributeNames=["All"], MessageAttributeNames=["All"])[
        "Messages"
    ]
    consumidor = Consumer("prueba", rutas or {}, sqs=sqs, field_checks=CAMPOS)
    return consumidor({"Records": [sqs_record(mensaje, origen["arn"])]})
