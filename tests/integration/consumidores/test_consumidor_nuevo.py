"""A consumer added as docs/adding-a-consumer.md says runs in the local run with no edit to any tool (issue 40).

The copy of the template with one more consumer (:mod:`tests.consumidor_nuevo`) is provisioned whole in moto by
the local run's own provisioner, with the local run's stand-ins for every provider the copy calls; the new
handler (a few lines on the layer) is loaded as the local run loads every function and fed its queue as
Lambda's SQS mapping feeds it.
"""

from __future__ import annotations

import json

import boto3
import pytest
from mercadofresco_local import RAIZ
from mercadofresco_local.fallos import ControlFallos
from mercadofresco_local.proveedores import Proveedores
from sam_emulator.provisioning import Provisioner
from sam_emulator.template import Template
from simulador.proveedores import RUTAS

from tests.conftest import load_event
from tests.consumidor_nuevo import plantilla_con_consumidor_nuevo
from tests.integration.consumidores.conftest import Cola, Sondeo, mensajes

pytestmark = pytest.mark.integration

PEDIDO = json.loads(load_event("erp-pedido-confirmado.json")["Records"][0]["body"])


def test_a_new_consumer_is_provisioned_subscribed_and_acts_once_per_confirmed_order(
    aws: None, redis_url: str, reloj, lambda_context, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs, sns = boto3.client("sqs"), boto3.client("sns")
    # The guide's one edit to the sandbox provider layer: the new provider's routes.
    monkeypatch.setitem(RUTAS, "factura", ("/facturas",))
    with (
        plantilla_con_consumidor_nuevo(RAIZ) as ruta,
        Proveedores(plantilla=Template(path=ruta), fallos=ControlFallos(reloj=reloj)) as proveedores,
    ):
        # GIVEN the copy provisioned as the local run provisions template.yaml, its stand-ins serving
        plantilla = Template(path=ruta)
        entorno = {**proveedores.entorno(), "REDIS_URL": redis_url}
        funciones = Provisioner(plantilla, local_environment=entorno).provision().functions
        factura = funciones.by_id["Consumidores/FacturaFunction"]
        assert factura.environment["FACTURA_URL"] == proveedores["factura"].url
        # WHEN one order confirmation is published twice (SNS delivers at least once)
        tema = plantilla.physical_ids["TopicPedidoConfirmado"]["Ref"]
        for _ in range(2):
            sns.publish(TopicArn=tema, Message=json.dumps(PEDIDO))
        cola = Cola.de(plantilla, "Consumidores/ColaFactura")
        tratados = Sondeo(sqs, cola, factura.load().lambda_handler, lambda_context).drenar()
        # THEN the new consumer got both deliveries from its own queue and acted once, under its own key
        assert tratados == 2
        assert proveedores["factura"].efectos_por_clave == {f"factura:{PEDIDO['pedido_id']}": 1}
        # AND nothing is left in its queue or its DLQ
        dlq = Cola.de(plantilla, "ColaFacturaFallidos")
        assert mensajes(sqs, cola) == mensajes(sqs, dlq) == []
