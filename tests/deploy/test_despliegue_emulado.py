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


def _confirmado(pedido: dict[str, Any]) -> None:
    assert pedido["estado"] == "CONFIRMADO", pedido
    assert pedido["cobro"] == "COMPLETADO" and pedido["cobro_en_pasarela"] is not None, pedido
    assert pedido["aviso-erp"] == "COMPLETADO" and pedido["correo-confirmacion"] == "COMPLETADO", pedido


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
        _confirmado(pedido)


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


def test_sam_delete_keeps_the_retained_resources_outside_any_stack(nivel: dict[str, Any]) -> None:
    assert nivel.get("delete") == 0, "sam delete failed (build/deploy-level/sam-delete.log)"
    assert nivel["pila_tras_delete"].startswith("ninguna"), nivel["pila_tras_delete"]
    # The key, both tables and the six DLQs: what an account then refuses to create again by name.
    assert len(nivel["retenidos"]) == 9, nivel["retenidos"]
    assert nivel["retenidos_tras_delete"] == {lid: {"existe": True, "pila": None} for lid in nivel["retenidos"]}


def test_mf_retenidos_adopts_them_and_the_second_deploy_updates_a_stack_that_owns_them_with_their_data(
    nivel: dict[str, Any],
) -> None:
    assert nivel.get("adoptar") == 0, "mf-retenidos adoptar failed (build/deploy-level/mf-retenidos.log)"
    assert nivel.get("redeploy") == 0, "the second sam deploy failed (build/deploy-level/sam-deploy-2.log)"
    # An update of the stack the import created, not a create (which an account refuses: names exist).
    assert nivel["pila_tras_redeploy"] == "UPDATE_COMPLETE"
    # The same resources (the key's id included, which no name pins), now the new stack's...
    assert nivel["retenidos_tras_redeploy"] == nivel["retenidos"]
    # ...which that update changes in place at most (MiniStack: their Metadata), never replaces: the import
    # held them as the template writes them (resolved definitions planned "Replacement: True" for all eight).
    assert set(nivel["reemplazos_retenidos"].values()) <= {"False"}, nivel["reemplazos_retenidos"]
    # ...with what they held: the dead letter left before the delete, the first orders' charge records.
    assert nivel["carta_retenida"]["recogida"] == nivel["carta_retenida"]["dejada"]
    for pedido_id, registros in nivel["registros_retenidos"].items():
        assert registros["cobro"] == "COMPLETADO" and registros["correo-confirmacion"] == "COMPLETADO", (
            pedido_id,
            registros,
        )


def test_chaos_enabled_deploys_with_the_extension_attached_and_an_order_still_confirms(nivel: dict[str, Any]) -> None:
    # The second deploy is the Chaos=enabled one (the FIS extension's stand-in: emulated_account.gaps).
    assert nivel.get("redeploy") == 0, "the Chaos=enabled sam deploy failed (build/deploy-level/sam-deploy-2.log)"
    # The configuration location is the stack's own chaos bucket, whatever its name.
    assert nivel["bucket_caos"], "no ChaosConfigBucket in the Chaos=enabled stack"
    for nombre, funcion in nivel["caos_en_funciones"].items():
        assert nivel["capa_fis"] in funcion["capas"], (nombre, funcion)
        assert funcion["wrapper"] == "/opt/aws-fis/bootstrap", (nombre, funcion)
        assert funcion["configuracion_fis"].startswith(f"arn:aws:s3:::{nivel['bucket_caos']}/"), (nombre, funcion)
    con_caos = nivel["con_caos"]
    assert con_caos["smoke"]["confirmados"]["codigo"] == 0, con_caos["smoke"]
    registros = con_caos["registros"]["pedidos"]
    (pedido,) = [registros[p["pedido_id"]] for p in con_caos["smoke"]["confirmados"]["pedidos"]]
    _confirmado(pedido)
    assert con_caos["registros"]["dlqs"] == dict.fromkeys(con_caos["registros"]["dlqs"], 0)


def test_every_request_made_in_the_account_is_allowed_by_its_role(nivel: dict[str, Any]) -> None:
    """Least privilege by execution at the deploy level: each function's and the state machine's recorded
    requests against the roles of the transformed template.yaml (both deploys, each with its parameters)."""
    comprobaciones = nivel["minimo_privilegio"]
    assert set(comprobaciones) == {"despliegue-1", "despliegue-2-caos"}
    for fase, informe in comprobaciones.items():
        print(f"--- {fase}\n{informe['texto']}")  # the unused grants, shown with -s or when a test fails
        assert "error" not in informe, informe["error"]
        assert informe["solicitudes"] > 0, fase
        assert not informe["sin_rol"], informe["texto"]
        assert not informe["denegadas"], informe["texto"]
    # The recorders saw the order path: the store, the state machine's tasks and every consumer that ran.
    vistos = set(comprobaciones["despliegue-1"]["principales"])
    esperados = {
        "TiendaFunction",
        "ProcesarPedido",
        "CobroFunction",
        "ErpFunction",
        "CorreoFunction",
        "ProyeccionFunction",
    }
    assert esperados <= vistos, vistos
