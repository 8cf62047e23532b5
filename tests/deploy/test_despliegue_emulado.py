"""The real template deployed into an emulated empty account: orders end where they must, from the stack's records.

Each outcome is read from what the deployed stack recorded (PostgreSQL's ``pedidos.estado``, the
``mercadofresco-idempotencia`` records, the sandbox gateway's charges, the DLQs' depths, the stack's
status), not from what the level meant to do.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.deploy, pytest.mark.slow, pytest.mark.timeout(3600)]


def _pedidos(nivel: dict[str, Any], escenario: str) -> list[dict[str, Any]]:
    registros = nivel.get("registros", {}).get("pedidos", {})
    return [registros[p["pedido_id"]] for p in nivel["smoke"][escenario]["pedidos"]]


def test_the_real_template_deploys_into_an_empty_account(nivel: dict[str, Any]) -> None:
    assert nivel.get("build") == 0, "sam build failed (build/deploy-level/sam-build.log)"
    assert nivel.get("deploy") == 0, "sam deploy failed (build/deploy-level/sam-deploy-1.log)"
    assert nivel.get("pila") == "CREATE_COMPLETE"


def test_orders_are_confirmed_end_to_end(nivel: dict[str, Any]) -> None:
    smoke = nivel["smoke"]["confirmados"]
    assert smoke["codigo"] == 0 and not smoke["errores"]
    pedidos = _pedidos(nivel, "confirmados")
    assert pedidos, "mf-smoke placed no order"
    for pedido in pedidos:
        assert pedido["estado"] == "CONFIRMADO", pedido
        assert pedido["cobro"] == "COMPLETADO" and pedido["cobro_en_pasarela"] is not None, pedido
        assert pedido["aviso-erp"] == "COMPLETADO" and pedido["correo-confirmacion"] == "COMPLETADO", pedido


def test_a_declined_card_is_rejected_and_the_customer_told(nivel: dict[str, Any]) -> None:
    (pedido,) = _pedidos(nivel, "rechazado")
    assert pedido["estado"] == "RECHAZADO", pedido
    assert pedido["cobro_en_pasarela"] is None, "a declined card was charged"
    assert pedido["correo-no-confirmado"] == "COMPLETADO", "the customer was not told"
    assert pedido["correo-confirmacion"] is None and pedido["aviso-erp"] is None, pedido


def test_a_gateway_outage_ends_not_confirmed_and_the_customer_told(nivel: dict[str, Any]) -> None:
    (pedido,) = _pedidos(nivel, "pasarela_caida")
    assert pedido["estado"] == "NO_CONFIRMADO", pedido
    assert pedido["cobro_en_pasarela"] is None, "charged during the outage"
    assert pedido["correo-no-confirmado"] == "COMPLETADO", "the customer was not told"


def test_every_dlq_is_empty(nivel: dict[str, Any]) -> None:
    dlqs = nivel["registros"]["dlqs"]
    assert len(dlqs) == 6
    assert dlqs == dict.fromkeys(dlqs, 0)


def test_sam_delete_then_a_second_deploy_succeeds(nivel: dict[str, Any]) -> None:
    assert nivel.get("delete") == 0, "sam delete failed (build/deploy-level/sam-delete.log)"
    assert nivel["pila_tras_delete"].startswith("ninguna"), nivel["pila_tras_delete"]
    assert nivel.get("redeploy") == 0, "the second sam deploy failed (build/deploy-level/sam-deploy-2.log)"
    assert nivel["pila_tras_redeploy"] == "CREATE_COMPLETE"
