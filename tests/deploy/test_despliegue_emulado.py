"""The real template deployed into an emulated empty account by ``make deploy-emulated``: what the stack recorded.

Each outcome is read from what the deployed stack recorded (the store API's ``estado``, Step Functions'
histories, the ``mercadofresco-idempotencia`` records, what the sandbox providers did by
``Idempotency-Key``, the DLQs' depths, the breaker in Valkey, the stack's resources), not from what the
level meant to do (``tools/levels/emulated_account/nivel.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.deploy, pytest.mark.slow, pytest.mark.timeout(3600)]


def _registro(nivel: dict[str, Any], pedido_id: str) -> dict[str, Any]:
    r = nivel["registros"]
    return {
        "estado": r["estados"][pedido_id],
        "ejecuciones": r["ejecuciones"][pedido_id],
        "claves": r["idempotencia"][pedido_id],
        **r["proveedores"][pedido_id],
    }


def _smoke(nivel: dict[str, Any], escenario: str) -> list[str]:
    return [p["pedido_id"] for p in nivel["smoke"][escenario]["pedidos"]]


def _confirmado(p: dict[str, Any], pedido_id: str, skus: tuple[str, ...] | None = None) -> None:
    """Confirmed once: one charge, no refund, one ERP notice, one e-mail, each line reserved (when known)."""
    assert p["estado"] == "CONFIRMADO", p
    assert (p["cobros"], p["reembolsos"]) == (1, 0), p
    peticiones = p["peticiones"]
    assert peticiones.count(f"erp:aviso-erp:{pedido_id}") == 1, peticiones
    assert len([x for x in peticiones if x.endswith(f":correo-confirmacion:{pedido_id}")]) == 1, peticiones
    assert not [x for x in peticiones if "liberacion:" in x or "correo-no-confirmado" in x], peticiones
    if skus is not None:
        assert sorted(x for x in peticiones if x.startswith("erp:reserva:")) == sorted(
            f"erp:reserva:{pedido_id}:{sku}" for sku in skus
        )
    assert p["claves"][f"cobro:{pedido_id}"] == "COMPLETADO", p["claves"]


def _no_cobrado_y_avisado(p: dict[str, Any], pedido_id: str) -> None:
    assert p["cobros"] == 0, p
    assert p["claves"][f"correo-no-confirmado:{pedido_id}"] == "COMPLETADO", "the customer was not told"
    assert not [x for x in p["peticiones"] if "aviso-erp" in x or "correo-confirmacion" in x], p


def test_make_deploy_emulated_deploys_the_default_profile_into_an_empty_account(nivel: dict[str, Any]) -> None:
    assert nivel.get("deploy") == 0, "make deploy-emulated failed (build/deploy-level/make-deploy-emulated.log)"
    assert nivel.get("pila") == "CREATE_COMPLETE"
    # The defaults a user gets: a VPC with its NAT gateway and endpoints, Aurora, ElastiCache Serverless.
    recursos = nivel["recursos"]
    for tipo in (
        "AWS::EC2::VPC", "AWS::EC2::NatGateway", "AWS::EC2::VPCEndpoint", "AWS::RDS::DBCluster",
        "AWS::RDS::DBInstance", "AWS::ElastiCache::ServerlessCache", "Custom::MigracionesAurora",
    ):  # fmt: skip
        assert recursos.get(tipo), (tipo, sorted(recursos))
    # ...and the functions reach them by what the stack created: the cluster's endpoint name, the cache's.
    perfil = nivel["perfil"]
    (cluster,) = perfil["clusters"]
    assert cluster["motor"] == "aurora-postgresql" and cluster["version"].split(".")[0] == "17"
    assert perfil["aurora_endpoints"] == [cluster["endpoint"]] and cluster["endpoint"].endswith(".rds.amazonaws.com")
    (cache,) = perfil["caches"]
    assert (cache["estado"], cache["motor"]) == ("available", "valkey") and cache["grupo"]
    assert perfil["valkey_endpoints"] == [cache["endpoint"]]


def test_every_phase_of_the_level_ran_to_its_end(nivel: dict[str, Any]) -> None:
    errores = nivel.get("errores", {})
    assert not errores, "\n".join(f"--- {fase}\n{texto}" for fase, texto in errores.items())


def test_the_order_pipe_runs_from_the_deployed_configuration(nivel: dict[str, Any]) -> None:
    (pipe,) = [p for p in nivel["pipes"].values() if p["Source"].startswith("arn:aws:sqs:")]
    # DescribePipe answers the pipe as deployed, and the bridge runs it from there: one order an execution.
    assert pipe["SourceParameters"]["SqsQueueParameters"]["BatchSize"] == 1
    assert pipe["TargetParameters"]["StepFunctionStateMachineParameters"]["InvocationType"] == "FIRE_AND_FORGET"
    ejecuciones = [e for es in nivel["registros"]["ejecuciones"].values() for e in es]
    assert ejecuciones and {e["registros"] for e in ejecuciones} == {1}


def test_orders_placed_with_mf_smoke_are_confirmed_end_to_end(nivel: dict[str, Any]) -> None:
    smoke = nivel["smoke"]["confirmados"]
    assert smoke["codigo"] == 0 and not smoke["errores"]
    pedidos = _smoke(nivel, "confirmados")
    assert pedidos, "mf-smoke placed no order"
    for pedido_id in pedidos:
        _confirmado(_registro(nivel, pedido_id), pedido_id)


def test_a_declined_card_is_rejected_never_charged_and_the_customer_told(nivel: dict[str, Any]) -> None:
    (pedido_id,) = _smoke(nivel, "rechazado")
    p = _registro(nivel, pedido_id)
    assert p["estado"] == "RECHAZADO", p
    _no_cobrado_y_avisado(p, pedido_id)


def test_a_gateway_outage_opens_the_breaker_on_its_own_and_an_order_then_fails_fast_and_is_told(
    nivel: dict[str, Any],
) -> None:
    caida = nivel["caida"]
    # The breaker opened from the gateway's own 503s: automatically, not forced by an operator.
    assert caida["abierto"]["estado"] == "abierto" and caida["abierto"]["aperturas"] >= 1, caida
    pedido_id = caida["con_el_circuito_abierto"]
    p = _registro(nivel, pedido_id)
    assert p["estado"] == "NO_CONFIRMADO", p
    _no_cobrado_y_avisado(p, pedido_id)
    (ejecucion,) = p["ejecuciones"]
    # It failed fast: the charge met the open circuit and was never asked again.
    assert "PasarelaNoDisponible" in ejecucion["estados"] and "ReintentarCobro" not in ejecucion["estados"]
    assert not [x for x in p["peticiones"] if x.startswith("pasarela:")], "the gateway was called while open"


def test_orders_caught_by_the_outage_end_charged_at_most_once_and_told(nivel: dict[str, Any]) -> None:
    durante = nivel["caida"]["durante"]
    assert len(durante) >= 2
    for pedido_id in durante:
        p = _registro(nivel, pedido_id)
        # Their first answers were 503s: each waited and asked again with the same key once the gateway was back.
        assert any("EsperarFinBloqueo" in e["estados"] for e in p["ejecuciones"]), p
        if p["estado"] == "CONFIRMADO":
            _confirmado(p, pedido_id)
        else:
            assert p["cobros"] == p["reembolsos"], p  # never charged, or refunded
            assert p["claves"][f"correo-no-confirmado:{pedido_id}"] == "COMPLETADO", p


def test_after_the_gateway_recovers_the_breaker_closes_and_orders_confirm(nivel: dict[str, Any]) -> None:
    caida = nivel["caida"]
    _confirmado(_registro(nivel, caida["tras_recuperarse"]), caida["tras_recuperarse"])
    assert caida["cerrado"] == "cerrado", caida


def test_a_duplicate_pedido_creado_and_a_redelivered_pedido_confirmado_make_one_charge_notice_and_email(
    nivel: dict[str, Any],
) -> None:
    pedido_id = nivel["duplicados"]["pedido"]
    p = _registro(nivel, pedido_id)
    _confirmado(p, pedido_id, ("FRU-MAN-001", "VER-TOM-014", "LAC-LEC-003"))
    # Two executions: the first confirmed it, the duplicate ended at its claim without reaching the charge.
    primera, duplicada = sorted(p["ejecuciones"], key=lambda e: "Duplicado" in e["estados"])
    assert "Confirmar" in primera["estados"] and primera["estado"] == "SUCCEEDED"
    assert "Duplicado" in duplicada["estados"] and "Cobrar" not in duplicada["estados"], duplicada
    # Every request the providers served for it has one key per operation: nothing was sent twice under another.
    assert len(p["peticiones"]) == len(set(p["peticiones"])) == 1 + 1 + 1 + 3, p["peticiones"]


def test_a_failure_after_the_charge_refunds_exactly_once_and_releases_each_reserved_line(
    nivel: dict[str, Any],
) -> None:
    pedido_id = nivel["reembolso"]
    p = _registro(nivel, pedido_id)
    assert p["estado"] == "REEMBOLSADO", p
    assert (p["cobros"], p["reembolsos"]) == (1, 1), p
    (ejecucion,) = p["ejecuciones"]
    assert {"Confirmar", "Reembolsar", "LiberarStock"} <= set(ejecucion["estados"]), ejecucion
    skus = ("FRU-MAN-001", "VER-TOM-014")
    for sku in skus:  # each line's reservation, then its release (FIFO per sku), each once
        assert p["peticiones"].count(f"erp:reserva:{pedido_id}:{sku}") == 1, p["peticiones"]
        assert p["peticiones"].count(f"erp:liberacion:{pedido_id}:{sku}") == 1, p["peticiones"]
    assert p["claves"][f"correo-no-confirmado:{pedido_id}"] == "COMPLETADO", "the customer was not told"
    assert f"erp:aviso-erp:{pedido_id}" not in p["peticiones"]


def test_a_burst_at_the_apis_limit_loses_no_order(nivel: dict[str, Any]) -> None:
    rafaga = nivel["rafaga"]
    assert len(rafaga) == 8  # TiendaBurstLimit as the level deploys it: every order accepted
    for pedido_id in rafaga:
        p = _registro(nivel, pedido_id)
        assert p["estado"] in {"CONFIRMADO", "RECHAZADO", "REEMBOLSADO", "NO_CONFIRMADO"}, p
        assert len(p["ejecuciones"]) == 1, p  # reached the workflow exactly once
        assert p["cobros"] <= 1 and p["cobros"] - p["reembolsos"] == (p["estado"] == "CONFIRMADO"), p


def test_every_dlq_is_empty(nivel: dict[str, Any]) -> None:
    dlqs = nivel["registros"]["dlqs"]
    assert len(dlqs) == 6
    assert dlqs == dict.fromkeys(dlqs, 0)


def test_sam_delete_keeps_the_retained_resources_outside_any_stack(nivel: dict[str, Any]) -> None:
    assert nivel.get("delete") == 0, "sam delete failed (build/deploy-level/cuenta/sam-delete.log)"
    assert nivel["pila_tras_delete"].startswith("ninguna"), nivel["pila_tras_delete"]
    # The key, both tables and the six DLQs: what an account then refuses to create again by name.
    assert len(nivel["retenidos"]) == 9, nivel["retenidos"]
    assert nivel["retenidos_tras_delete"] == {lid: {"existe": True, "pila": None} for lid in nivel["retenidos"]}


def test_mf_retenidos_adopts_them_and_the_second_deploy_updates_a_stack_that_owns_them_with_their_data(
    nivel: dict[str, Any],
) -> None:
    assert nivel.get("adoptar") == 0, "mf-retenidos adoptar failed (build/deploy-level/mf-retenidos.log)"
    assert nivel.get("redeploy") == 0, "the second make deploy-emulated failed (build/deploy-level/)"
    # An update of the stack the import created, not a create (which an account refuses: names exist).
    assert nivel["pila_tras_redeploy"] == "UPDATE_COMPLETE"
    # The same resources (the key's id included, which no name pins), now the new stack's...
    assert nivel["retenidos_tras_redeploy"] == nivel["retenidos"]
    # ...which that update changes in place at most, never replaces.
    assert set(nivel["reemplazos_retenidos"].values()) <= {"False"}, nivel["reemplazos_retenidos"]
    # ...with what they held: the dead letter left before the delete, the first orders' charge records.
    assert nivel["carta_retenida"]["recogida"] == nivel["carta_retenida"]["dejada"]
    for pedido_id, claves in nivel["registros_retenidos"].items():
        assert claves[f"cobro:{pedido_id}"] == "COMPLETADO", (pedido_id, claves)
        assert claves[f"correo-confirmacion:{pedido_id}"] == "COMPLETADO", (pedido_id, claves)


def test_chaos_enabled_deploys_with_the_extension_attached_and_an_order_still_confirms(nivel: dict[str, Any]) -> None:
    assert nivel.get("redeploy") == 0, "the Chaos=enabled make deploy-emulated failed (build/deploy-level/)"
    assert nivel["bucket_caos"], "no ChaosConfigBucket in the Chaos=enabled stack"
    for nombre, funcion in nivel["caos_en_funciones"].items():
        assert nivel["capa_fis"] in funcion["capas"], (nombre, funcion)
        assert funcion["wrapper"] == "/opt/aws-fis/bootstrap", (nombre, funcion)
        assert funcion["configuracion_fis"].startswith(f"arn:aws:s3:::{nivel['bucket_caos']}/"), (nombre, funcion)
    con_caos = nivel["con_caos"]
    assert con_caos["smoke"]["codigo"] == 0, con_caos["smoke"]
    (pedido_id,) = [p["pedido_id"] for p in con_caos["smoke"]["pedidos"]]
    _confirmado(_registro(con_caos, pedido_id), pedido_id)
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
        "Tienda/TiendaFunction",
        "ProcesarPedido",
        "CobroFunction",
        "Consumidores/ErpFunction",
        "Consumidores/CorreoFunction",
        "Tienda/ProyeccionFunction",
        "MigracionesFunction",
    }
    assert esperados <= vistos, vistos


def test_make_deploy_emulated_down_removes_everything_it_started(nivel: dict[str, Any]) -> None:
    assert nivel.get("down") == 0
    # No container, volume or network of the account is left, and its server is gone.
    assert nivel["restos"] == {"contenedores": [], "volumenes": [], "redes": [], "servidor": False}
