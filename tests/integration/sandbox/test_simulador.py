"""The deployed sandbox providers (functions/simulador) on moto's DynamoDB, fed function-URL events.

What matters: one effect per Idempotency-Key (a retry gets the stored answer), one refund per
charge, the same answers as the local stand-ins, and the injected faults acting as documented.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import pytest
import urllib3
from mercadofresco_local.proveedores import Proveedores
from sam_emulator.template import create_table_from
from simulador import Simulador
from simulador.dynamodb import AlmacenDynamoDB, Fallos, Sandbox

from tests.conftest import load_event

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration


@pytest.fixture
def tabla(plantilla: Any) -> str:
    """mercadofresco-simulador created in moto from the template's own definition (in its sandbox unit)."""
    return create_table_from(boto3.client("dynamodb"), *plantilla.locate("Simuladores/TablaSimulador"))


@pytest.fixture
def simulador(tabla: str, app_module: Callable[..., Any]) -> Callable[..., Any]:
    def _cargar(proveedor: str, **env: str) -> Any:
        base = {
            "SIMULADOR_PROVEEDOR": proveedor,
            "SIMULADOR_TABLA": tabla,
            "SIMULADOR_PROPORCION_FALLOS": "0",
            "SIMULADOR_LATENCIA_MS": "0",
            "SIMULADOR_TARJETAS_RECHAZADAS": "tok_rechazada",
        }
        return app_module("simulador", **{**base, **env})

    return _cargar


def _invocar(app: Any, evento: dict[str, Any], contexto: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    respuesta = app.lambda_handler(evento, contexto)
    return respuesta["statusCode"], json.loads(respuesta["body"]), respuesta["headers"]


def _items(tabla: str, prefijo: str) -> list[dict[str, Any]]:
    items = boto3.client("dynamodb").scan(TableName=tabla)["Items"]
    return [i for i in items if i["clave"]["S"].startswith(prefijo)]


def test_simulador_pasarela_same_key_twice_one_charge_same_reference(
    simulador: Callable[..., Any], tabla: str, lambda_context: Any
) -> None:
    # GIVEN the sandbox gateway
    pasarela = simulador("pasarela")
    # WHEN the same charge arrives twice with its key (the first answer was lost)
    primero = _invocar(pasarela, load_event("simulador-pasarela-cobro.json"), lambda_context)
    segundo = _invocar(pasarela, load_event("simulador-pasarela-cobro.json"), lambda_context)
    # THEN both say 201 with the same charge, the second marked as a replay
    assert primero[0] == segundo[0] == 201
    assert primero[1]["referencia_cobro"] == segundo[1]["referencia_cobro"]
    assert segundo[2]["Idempotent-Replayed"] == "true"
    # AND the gateway holds exactly one charge for the order
    assert len(_items(tabla, "cobro:")) == 1


def test_simulador_pasarela_refund_once_per_charge(simulador: Callable[..., Any], lambda_context: Any) -> None:
    # GIVEN a charged order
    pasarela = simulador("pasarela")
    _, cobro, _ = _invocar(pasarela, load_event("simulador-pasarela-cobro.json"), lambda_context)
    # WHEN it is refunded, and then refunded again under another key
    estado, reembolso, _ = _invocar(pasarela, load_event("simulador-pasarela-reembolso.json"), lambda_context)
    otro = load_event("simulador-pasarela-reembolso.json")
    otro["headers"]["idempotency-key"] = "reembolso:otra-clave"
    segundo = _invocar(pasarela, otro, lambda_context)
    # THEN one refund of that charge; the second key hears it was already refunded
    assert (estado, reembolso["referencia_cobro"]) == (201, cobro["referencia_cobro"])
    assert (segundo[0], segundo[1]["error"]) == (409, "ya_reembolsado")


def test_simulador_declined_card_answers_402_and_replays_it(simulador: Callable[..., Any], lambda_context: Any) -> None:
    pasarela = simulador("pasarela", SIMULADOR_TARJETAS_RECHAZADAS="CLI-0193")
    evento = load_event("simulador-pasarela-cobro.json")
    assert _invocar(pasarela, evento, lambda_context)[:2][0] == 402
    estado, cuerpo, cabeceras = _invocar(pasarela, evento, lambda_context)
    assert (estado, cuerpo["error"], cabeceras["Idempotent-Replayed"]) == (402, "tarjeta_rechazada", "true")


def test_simulador_unknown_route_answers_404_without_effect(
    simulador: Callable[..., Any], tabla: str, lambda_context: Any
) -> None:
    estado, cuerpo, _ = _invocar(simulador("pasarela"), load_event("simulador-ruta-desconocida.json"), lambda_context)
    assert (estado, cuerpo["error"]) == (404, "ruta_desconocida")
    assert _items(tabla, "") == []


def test_simulador_erp_and_correo_answer_like_the_real_ones(simulador: Callable[..., Any], lambda_context: Any) -> None:
    erp = _invocar(simulador("erp"), load_event("simulador-erp-aviso.json"), lambda_context)
    correo = _invocar(simulador("correo"), load_event("simulador-correo-confirmacion.json"), lambda_context)
    assert erp[:2] == (200, {"aceptado": True, "ruta": "/avisos"})
    assert correo[:2] == (202, {"aceptado": True, "proveedor": "correo-principal"})


def test_simulador_failure_rate_one_answers_503_without_effect_and_key_stays_free(
    simulador: Callable[..., Any], tabla: str, lambda_context: Any
) -> None:
    # GIVEN a gateway told to fail every request
    caida = simulador("pasarela", SIMULADOR_PROPORCION_FALLOS="1")
    # WHEN a charge arrives
    estado, cuerpo, cabeceras = _invocar(caida, load_event("simulador-pasarela-cobro.json"), lambda_context)
    # THEN 503 with Retry-After, nothing charged, and the key is free for the retry
    assert (estado, cuerpo["error"], cabeceras["Retry-After"]) == (503, "fallo_inyectado", "1")
    assert _items(tabla, "") == []
    assert _invocar(simulador("pasarela"), load_event("simulador-pasarela-cobro.json"), lambda_context)[0] == 201


def test_simulador_key_in_progress_answers_503_never_acts_twice(tabla: str) -> None:
    # GIVEN a live claim on the key (another invocation is serving it)
    ddb = boto3.client("dynamodb")
    almacen = AlmacenDynamoDB(tabla, ddb, ahora_s=lambda: 1_000_000)
    ddb.put_item(
        TableName=tabla,
        Item={
            "clave": {"S": "respuesta:pasarela:cobro:PED-1"},
            "estado": {"S": "EN_CURSO"},
            "caduca_bloqueo": {"N": "1000010"},
        },
    )
    sandbox = Sandbox(Simulador("pasarela", almacen), almacen)
    # WHEN the same key arrives
    (estado, cuerpo), cabeceras = sandbox.atender(
        "/cobros", {"pedido_id": "PED-1", "importe_centimos": 5, "cliente_id": "C"}, "cobro:PED-1"
    )
    # THEN "retry shortly", and no charge
    assert (estado, cuerpo["error"], cabeceras["Retry-After"]) == (503, "peticion_en_curso", "1")
    assert _items(tabla, "cobro") == []


def test_simulador_latency_waits_then_acts_so_a_lost_answer_still_charged(tabla: str) -> None:
    # GIVEN a gateway with 9 s latency (above the caller's 8 s read timeout)
    almacen = AlmacenDynamoDB(tabla, boto3.client("dynamodb"))
    esperas: list[float] = []
    sandbox = Sandbox(Simulador("pasarela", almacen), almacen, Fallos(latencia_ms=9000), dormir=esperas.append)
    # WHEN a charge arrives
    (estado, _), _ = sandbox.atender("/cobros", {"pedido_id": "PED-1", "importe_centimos": 5, "cliente_id": "C"}, "k1")
    # THEN it waited, then charged: the lesson's "charged, but the answer was lost"
    assert esperas == [9.0]
    assert estado == 201
    assert len(_items(tabla, "cobro:")) == 1


def test_simulador_and_local_stand_in_give_the_same_answers(simulador: Callable[..., Any], lambda_context: Any) -> None:
    # GIVEN the same requests for the deployed sandbox and the local run's loopback gateway
    pasarela = simulador("pasarela")
    pasos = [
        ("/cobros", {"pedido_id": "PED-9", "importe_centimos": 100, "cliente_id": "CLI-1"}, "cobro:PED-9"),
        ("/cobros", {"pedido_id": "PED-9", "importe_centimos": 100, "cliente_id": "CLI-1"}, "cobro:PED-9"),
        ("/cobros", {"pedido_id": "PED-8", "importe_centimos": 100, "cliente_id": "tok_rechazada"}, "cobro:PED-8"),
        ("/cobros", {"pedido_id": "PED-7"}, "cobro:PED-7"),
        ("/reembolsos", {"pedido_id": "PED-9"}, "reembolso:PED-9"),
        ("/reembolsos", {"pedido_id": "PED-9"}, "reembolso:PED-9-bis"),
        ("/reembolsos", {"pedido_id": "PED-0"}, "reembolso:PED-0"),
        ("/cobros", {"pedido_id": "PED-6", "importe_centimos": 100, "cliente_id": "CLI-1"}, None),
    ]
    http = urllib3.PoolManager()
    with Proveedores() as locales:
        locales.fallos.rechazar_tarjeta("tok_rechazada")
        for ruta, cuerpo, clave in pasos:
            evento = load_event("simulador-pasarela-cobro.json")
            evento["rawPath"] = ruta
            evento["body"] = json.dumps(cuerpo)
            evento["headers"].pop("idempotency-key")
            cabeceras = {"Content-Type": "application/json"}
            if clave:
                evento["headers"]["idempotency-key"] = clave
                cabeceras["Idempotency-Key"] = clave
            # WHEN each is sent to both
            desplegado = _invocar(pasarela, evento, lambda_context)
            local = http.request("POST", locales.pasarela.url + ruta, body=json.dumps(cuerpo), headers=cabeceras)
            # THEN the same status, the same fields, the same replay marker (references differ by design)
            assert desplegado[0] == local.status, (ruta, cuerpo, desplegado, local.json())
            assert set(desplegado[1]) == set(local.json()), (ruta, cuerpo)
            assert desplegado[2].get("Idempotent-Replayed") == local.headers.get("Idempotent-Replayed")
