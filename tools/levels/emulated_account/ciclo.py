"""The deployed stack's lifecycle in the emulated account: its retained resources across ``sam delete``.

After a delete, the retained key, tables and DLQs must still be in the account and in no stack; after
``mf-retenidos adoptar`` and the next deploy, the same ones (their physical ids) must be the stack's again,
never replaced, with what they held. MiniStack would let a new stack recreate them empty (``gaps.py``), so
these are read here rather than trusted to a create that fails.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from typing import TYPE_CHECKING, Any

from mercadofresco_ops.recursos import recursos_de_la_pila
from template_model import messaging

from emulated_account import despliegue

if TYPE_CHECKING:
    from pathlib import Path

    from emulated_account.observaciones import Cuenta


class Pila:
    """``mercadofresco-dev`` in the running account."""

    def __init__(self, c: Cuenta) -> None:
        self.c = c

    def retenidos_de_la_pila(self) -> dict[str, list[str]]:
        """Logical id -> [type, physical id] of the stack's resources a delete keeps (the template's Retain ones)."""
        retenidos = {lid for _r, t in self.c.plantilla.walk() for lid in messaging.retained(t)}
        recursos = self.c.cliente("cloudformation").describe_stack_resources(StackName=despliegue.PILA)
        return {
            r["LogicalResourceId"]: [r["ResourceType"], r["PhysicalResourceId"]]
            for r in recursos["StackResources"]
            if r["LogicalResourceId"] in retenidos
        }

    def fuera_de_pila(self, retenidos: dict[str, list[str]]) -> dict[str, dict[str, Any]]:
        """For each retained resource (logical -> physical id): whether the account has it, and which live stack."""
        cfn = self.c.cliente("cloudformation")
        vivas = [s["StackId"] for s in cfn.list_stacks()["StackSummaries"] if s["StackStatus"] != "DELETE_COMPLETE"]
        en_pilas = {
            r["PhysicalResourceId"]: r["StackName"]
            for pila in vivas
            for r in cfn.describe_stack_resources(StackName=pila)["StackResources"]
        }
        return {
            lid: {"existe": self._existe(tipo, fisico), "pila": en_pilas.get(fisico)}
            for lid, (tipo, fisico) in retenidos.items()
        }

    def _existe(self, tipo: str, fisico: str) -> bool:
        """Whether the account still has the queue (URL), table (name) or enabled key (id) ``fisico``."""
        try:
            if tipo == "AWS::SQS::Queue":
                self.c.cliente("sqs").get_queue_attributes(QueueUrl=fisico, AttributeNames=["QueueArn"])
            elif tipo == "AWS::DynamoDB::Table":
                self.c.cliente("dynamodb").describe_table(TableName=fisico)
            else:
                return self.c.cliente("kms").describe_key(KeyId=fisico)["KeyMetadata"]["KeyState"] == "Enabled"
        except Exception:  # the service's "no such resource", whatever its name
            return False
        return True

    def reemplazos_del_despliegue(self, retenidos: dict[str, list[str]]) -> dict[str, str]:
        """What ``sam deploy``'s change set after the import planned for each retained resource: logical id ->
        its ``Replacement`` ("False" for a change in place; absent: unchanged). An account refuses to replace a
        resource with a fixed name, so anything but "False" here fails there."""
        cfn = self.c.cliente("cloudformation")
        planes = {}
        for resumen in cfn.list_change_sets(StackName=despliegue.PILA)["Summaries"]:
            if resumen["ChangeSetName"].startswith("samcli-deploy"):
                for cambio in cfn.describe_change_set(ChangeSetName=resumen["ChangeSetId"])["Changes"]:
                    recurso = cambio["ResourceChange"]
                    if recurso["LogicalResourceId"] in retenidos:
                        planes[recurso["LogicalResourceId"]] = recurso.get("Replacement", "False")
        return planes

    def cola_pedidos_fallidos(self) -> str:
        """The DLQ of the queue the order workflow's pipe reads (``mercadofresco-pedidos-fallidos``)."""
        for _r, t in self.c.plantilla.walk():
            for cola in messaging.workflow_queues(t):
                if dlq := messaging.dead_letter_queue_of(t, cola):
                    return messaging.physical_name(t, dlq, "QueueName")
        raise LookupError("no workflow queue with a DLQ in the template")

    def dejar_carta(self) -> str:
        """A dead letter left in the order DLQ before the stack is deleted; its body."""
        cuerpo = json.dumps({"marca": f"retenido-{os.urandom(6).hex()}"})
        sqs = self.c.cliente("sqs")
        sqs.send_message(
            QueueUrl=sqs.get_queue_url(QueueName=self.cola_pedidos_fallidos())["QueueUrl"], MessageBody=cuerpo
        )
        return cuerpo

    def recoger_carta(self, cuerpo: str) -> str | None:
        """The dead letter :meth:`dejar_carta` left, received and deleted (the DLQs are empty again); None if gone."""
        sqs = self.c.cliente("sqs")
        url = sqs.get_queue_url(QueueName=self.cola_pedidos_fallidos())["QueueUrl"]
        recibidos = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=5, WaitTimeSeconds=2)
        for mensaje in recibidos.get("Messages", []):
            if mensaje["Body"] == cuerpo:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=mensaje["ReceiptHandle"])
                return mensaje["Body"]
        return None

    def retenidos_adoptar(self, parametros: dict[str, str], log: Path) -> int:
        """``mf-retenidos adoptar`` with the next deploy's stack and parameters, as docs/deploying.md tells a user."""
        comando = [
            str(despliegue.VENV_BIN / "mf-retenidos"), "--pila", despliegue.PILA, "--region", self.c.estado.region,
            "--parametros", shlex.join(f"{k}={v}" for k, v in parametros.items()), "adoptar",
        ]  # fmt: skip
        with log.open("ab") as salida:
            entorno = {**os.environ, **self.c.estado.entorno()}
            hecho = subprocess.run(comando, cwd=despliegue.RAIZ, env=entorno, stdout=salida, stderr=salida, check=False)
        return hecho.returncode

    def id_fisico(self, logico: str) -> str | None:
        """The physical id of one of the stack's resources, a nested unit's included (``None`` when none has it)."""
        return recursos_de_la_pila(self.c.cliente("cloudformation"), despliegue.PILA).get(logico)

    def estado_pila(self) -> str:
        try:
            return self.c.cliente("cloudformation").describe_stacks(StackName=despliegue.PILA)["Stacks"][0][
                "StackStatus"
            ]
        except Exception as exc:  # a deleted stack is an error here, and an answer
            return f"ninguna ({type(exc).__name__})"

    def extension_fis(self) -> dict[str, Any]:
        """Each consumer with a provider's layers and exec wrapper, as deployed (``Chaos=enabled`` attaches them)."""
        lam, vistas = self.c.cliente("lambda"), {}
        nombres = [
            messaging.physical_name(t, c.function, "FunctionName")
            for _r, t in self.c.plantilla.walk()
            for c in messaging.consumers(t)
            if c.providers
        ]
        for nombre in nombres:
            configuracion = lam.get_function_configuration(FunctionName=nombre)
            variables = configuracion.get("Environment", {}).get("Variables", {})
            vistas[nombre] = {
                "capas": [c["Arn"] for c in configuracion.get("Layers", [])],
                "wrapper": variables.get("AWS_LAMBDA_EXEC_WRAPPER"),
                "configuracion_fis": variables.get("AWS_FIS_CONFIGURATION_LOCATION"),
            }
        return vistas
