"""Each handler fed every one of its events/ files (what ``sam local invoke -e`` takes), on moto, Redis, loopback."""

from __future__ import annotations

import boto3
import pytest

from tests.conftest import load_event
from tests.integration.consumidores.conftest import Cola, mensajes, motivo

pytestmark = pytest.mark.integration

AVISO = "aviso-erp:PED-2026-084417"
RESERVAS = {"reserva:PED-2026-084417:FRU-MAN-001": 1, "reserva:PED-2026-084417:VER-TOM-014": 1}
CONFIRMACION = "correo-confirmacion:PED-2026-084417"

CASOS = [
    # (function, event file, effects at the provider per key, reasons in the DLQ)
    ("erp", "erp-pedido-confirmado.json", {AVISO: 1}, []),
    ("erp", "erp-pedido-confirmado-duplicado.json", {AVISO: 1}, []),
    ("erp", "erp-pedido-confirmado-campos-extra.json", {"aviso-erp:PED-2026-084419": 1}, []),
    ("erp", "erp-version-2.json", {}, ["version-desconocida"]),
    ("erp", "erp-malformado.json", {}, ["json-invalido"]),
    ("erp", "erp-campo-ausente.json", {}, ["campo-ausente"]),
    (
        "erp",
        "erp-reserva-stock.json",
        {"reserva:PED-2026-084417:FRU-MAN-001": 1, "reserva:PED-2026-084417:VER-TOM-014": 1},
        [],
    ),
    ("erp", "erp-reserva-stock-malformada.json", {}, ["campo-ausente"]),
    ("erp", "erp-liberacion-stock.json", {"liberacion:PED-2026-084417:FRU-MAN-001": 1}, []),
    ("correo", "correo-confirmacion.json", {CONFIRMACION: 1}, []),
    ("correo", "correo-confirmacion-duplicado.json", {CONFIRMACION: 1}, []),
    ("correo", "correo-confirmacion-sobre-sns.json", {CONFIRMACION: 1}, []),
    ("correo", "correo-confirmacion-campos-extra.json", {"correo-confirmacion:PED-2026-084419": 1}, []),
    ("correo", "correo-carrito-abandonado.json", {"recordatorio-carrito:CAR-7781": 1}, []),
    ("correo", "correo-version-2.json", {}, ["version-desconocida"]),
    ("correo", "correo-malformado.json", {}, ["json-invalido"]),
    ("correo", "correo-campo-ausente.json", {}, ["campo-ausente"]),
]
DLQ = {
    "mercadofresco-erp": "ColaErpFallidos",
    "cola-mercadofresco-stock.fifo": "ColaStockFallidos",
    "mercadofresco-correo": "ColaCorreoFallidos",
}


@pytest.mark.parametrize(("funcion", "fichero", "efectos", "motivos"), CASOS, ids=[c[1] for c in CASOS])
def test_handler_with_sample_event_acts_once_or_dead_letters_with_reason(
    funcion, fichero, efectos, motivos, recursos, cargar_consumidor, proveedores, lambda_context
) -> None:
    # GIVEN the handler and one of its sample events
    app = cargar_consumidor(funcion)
    event = load_event(fichero)
    cola = event["Records"][0]["eventSourceARN"].rsplit(":", 1)[1]
    # WHEN Lambda invokes it with the event
    respuesta = app.lambda_handler(event, lambda_context)
    # THEN no record is failed, each operation reached its provider once (duplicates never call),
    # and what cannot be read is in the queue's DLQ with its reason
    assert respuesta == {"batchItemFailures": []}
    proveedor = proveedores["erp"] if funcion == "erp" else proveedores["correo-principal"]
    assert dict(proveedor.efectos_por_clave) == efectos
    assert sum(proveedor.llamadas.values()) == len(efectos)
    assert sorted(motivo(m) for m in mensajes(boto3.client("sqs"), Cola.de(recursos, DLQ[cola]))) == motivos
