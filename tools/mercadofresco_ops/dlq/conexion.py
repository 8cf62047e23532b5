"""Clients and queues for ``mf-dlq``: ``--region``/``--profile``/``--endpoint-url``, names or URLs.

Every failure an operator can cause (unknown queue, no permission, no credentials, wrong
endpoint) becomes :class:`~mercadofresco_ops.errores.ErrorOperador`: one line, exit code 2, no traceback.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, ProfileNotFound
from mercadofresco.aws import SDK_CONFIG, client

from mercadofresco_ops.errores import ErrorOperador, errores_de_aws

if TYPE_CHECKING:
    from botocore.client import BaseClient


@dataclass(frozen=True)
class Opciones:
    """Where to talk to AWS."""

    region: str | None = None
    perfil: str | None = None
    endpoint_url: str | None = None

    def cliente(self, servicio: str) -> BaseClient:
        """A client with the project's SDK policy (``mercadofresco.aws``), honouring the options."""
        extra: dict[str, Any] = {}
        if self.region:
            extra["region_name"] = self.region
        if self.endpoint_url:
            extra["endpoint_url"] = self.endpoint_url
        if self.perfil:
            try:
                return boto3.Session(profile_name=self.perfil).client(servicio, config=SDK_CONFIG, **extra)
            except ProfileNotFound as exc:
                raise ErrorOperador(f"perfil desconocido: {self.perfil}") from exc
        return client(servicio, **extra)


def nombre_de(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Cola:
    """A resolved queue."""

    url: str
    arn: str

    @property
    def nombre(self) -> str:
        return nombre_de(self.url)

    @property
    def fifo(self) -> bool:
        return self.nombre.endswith(".fifo")


def resolver_cola(sqs: BaseClient, cola: str) -> Cola:
    """``cola`` by name or URL; checks it exists (and that we may read it)."""
    with errores_de_aws(f"cola {cola}"):
        url = cola if cola.startswith(("https://", "http://")) else sqs.get_queue_url(QueueName=cola)["QueueUrl"]
        atributos = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    return Cola(url, atributos["QueueArn"])


def contar(sqs: BaseClient, cola: Cola) -> dict[str, int]:
    """Visible, in-flight and delayed messages (SQS's approximate counts)."""
    nombres = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
    ]
    with errores_de_aws(f"cola {cola.nombre}"):
        atributos = sqs.get_queue_attributes(QueueUrl=cola.url, AttributeNames=nombres)["Attributes"]
    return {
        "visibles": int(atributos.get("ApproximateNumberOfMessages", 0)),
        "en_vuelo": int(atributos.get("ApproximateNumberOfMessagesNotVisible", 0)),
        "retrasados": int(atributos.get("ApproximateNumberOfMessagesDelayed", 0)),
    }


def recibir(sqs: BaseClient, cola: Cola, maximo: int, visibilidad_s: int, espera_s: int = 0) -> list[dict[str, Any]]:
    """One ReceiveMessage with every attribute the runbook reads (never deletes)."""
    with errores_de_aws(f"cola {cola.nombre}"):
        respuesta = sqs.receive_message(
            QueueUrl=cola.url,
            MaxNumberOfMessages=max(1, min(10, maximo)),
            VisibilityTimeout=visibilidad_s,
            WaitTimeSeconds=espera_s,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
    return respuesta.get("Messages", [])


def muestrear(sqs: BaseClient, cola: Cola, maximo: int, visibilidad_s: int) -> list[dict[str, Any]]:
    """Up to ``maximo`` distinct messages, never deleted, and visible again when this returns.

    Each is hidden ``visibilidad_s`` while sampling (so the next receive brings others), then
    released at once: the runbook runs ``inspeccionar`` and then ``clasificar``, and the second
    must see what the first saw. Stops at the first receive with nothing new; a message seen
    twice counts once. If the tool dies mid-sample the messages come back on their own.
    """
    vistos: dict[str, dict[str, Any]] = {}
    try:
        while len(vistos) < maximo:
            lote = recibir(sqs, cola, maximo - len(vistos), visibilidad_s, espera_s=1)
            nuevos = [m for m in lote if m.get("MessageId") not in vistos]
            if not nuevos:
                break
            vistos.update((m.get("MessageId"), m) for m in nuevos)
    finally:
        liberar(sqs, cola, [m.get("ReceiptHandle") for m in vistos.values()])
    return list(vistos.values())


def liberar(sqs: BaseClient, cola: Cola, recibos: list[str | None]) -> None:
    """Make received messages visible again now (visibility 0), ten per call; best effort.

    A receipt that expired or a call that fails only means the message comes back when its
    own visibility ends, which is the guarantee the runbook relies on anyway.
    """
    recibos = [r for r in recibos if r]
    for inicio in range(0, len(recibos), 10):
        entradas = [
            {"Id": str(i), "ReceiptHandle": r, "VisibilityTimeout": 0}
            for i, r in enumerate(recibos[inicio : inicio + 10])
        ]
        with suppress(ClientError, BotoCoreError):
            sqs.change_message_visibility_batch(QueueUrl=cola.url, Entries=entradas)
