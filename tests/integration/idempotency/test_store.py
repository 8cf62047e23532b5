"""The store's contract on moto's DynamoDB: states written, outcomes replayed, calls made."""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco import aws
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible
from mercadofresco.errors import OperacionEnCurso
from mercadofresco.idempotency import idempotent
from mercadofresco.idempotency.exceptions import (
    IdempotencyKeyError,
    IdempotencyPayloadMismatchError,
    IdempotencyResultError,
    OperationFailedError,
)

from tests.integration.idempotency.apoyo_idempotencia import T0_S, Operacion

if TYPE_CHECKING:
    from collections.abc import Callable

    from mercadofresco.idempotency import IdempotencyStore

pytestmark = pytest.mark.integration

PEDIDO = {"pedido_id": "PED-2026-084417", "importe": "48.20", "cliente": "CLI-7"}
CLAVE = claves.cobro(PEDIDO["pedido_id"])
RESULTADO = {"referencia_cobro": "ch_0001", "importe": "48.20"}
LEASE_S = 90  # the layer's default lease (its FUNCTION_TIMEOUT_S 30 s + 60 s margin), not a template bound


def hash_de(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_run_first_time_stores_completado_item_exactly(store: IdempotencyStore, leer_item, llamadas) -> None:
    # GIVEN a key never seen
    operacion = Operacion(RESULTADO)
    # WHEN the operation runs through the store with its payload
    resultado = store.run(CLAVE, operacion, payload={"pedido_id": "PED-2026-084417", "importe": "48.20"})
    # THEN it ran once, returned its result, and the record holds exactly this
    assert operacion.ejecuciones == 1
    assert resultado == RESULTADO
    guardado = leer_item(CLAVE)
    propietario = guardado.pop("propietario")["S"]
    assert re.fullmatch(r"[0-9a-f]{32}", propietario)
    assert guardado == {
        "clave": {"S": "cobro:PED-2026-084417"},
        "estado": {"S": "COMPLETADO"},
        "expira_en": {"N": str(int(T0_S) + 86_400)},
        "hash_payload": {"S": hash_de({"importe": "48.20", "pedido_id": "PED-2026-084417"})},
        "resultado": {"S": json.dumps(RESULTADO)},
    }
    assert dict(llamadas) == {"PutItem": 1, "UpdateItem": 1}


def test_run_duplicate_of_completado_returns_stored_result_without_running(store, llamadas) -> None:
    # GIVEN a completed charge
    store.run(CLAVE, Operacion(RESULTADO))
    llamadas.clear()
    segunda = Operacion({"referencia_cobro": "ch_DUPLICADO"})
    # WHEN the same key comes again
    resultado = store.run(CLAVE, segunda)
    # THEN the first result comes back, the operation did not run, one refused PutItem was the only call
    assert resultado == RESULTADO
    assert segunda.ejecuciones == 0
    assert dict(llamadas) == {"PutItem": 1}


def test_run_duplicate_while_en_curso_raises_operacion_en_curso(store, leer_item) -> None:
    # GIVEN a consumer in the middle of the operation (the duplicate arrives from inside it)
    duplicado = Operacion("no debe correr")
    capturado: list[BaseException] = []

    def primera() -> dict[str, str]:
        with pytest.raises(OperacionEnCurso) as info:
            store.run(CLAVE, duplicado)
        capturado.append(info.value)
        assert leer_item(CLAVE)["estado"] == {"S": "EN_CURSO"}
        return RESULTADO

    # WHEN the first run finishes
    resultado = store.run(CLAVE, primera)
    # THEN the duplicate got the in-progress error (the class the workflow retries on) and never ran
    assert resultado == RESULTADO
    assert type(capturado[0]) is OperacionEnCurso
    assert "cobro:PED-2026-084417" in str(capturado[0])
    assert duplicado.ejecuciones == 0


def test_run_record_past_expira_en_not_yet_deleted_runs_again(store, reloj, leer_item) -> None:
    # GIVEN a completed record whose expira_en has passed (DynamoDB's TTL deletes it up to 48 h late)
    store.run(CLAVE, Operacion(RESULTADO))
    reloj.avanzar(86_400 + 1)
    assert leer_item(CLAVE) is not None
    nueva = Operacion({"referencia_cobro": "ch_0002"})
    # WHEN the key comes again
    resultado = store.run(CLAVE, nueva)
    # THEN the expired record counts as absent: the operation ran and its new result is stored
    assert nueva.ejecuciones == 1
    assert resultado == {"referencia_cobro": "ch_0002"}
    assert leer_item(CLAVE)["expira_en"] == {"N": str(int(reloj()) + 86_400)}


@pytest.mark.parametrize(("transcurrido_s", "corre"), [(LEASE_S, False), (LEASE_S + 1, True)])
def test_run_en_curso_runs_again_only_after_lease_expires(
    store, dynamodb, tabla_idempotencia, reloj, leer_item, transcurrido_s: int, corre: bool
) -> None:
    # GIVEN an EN_CURSO claim left by a consumer that died (written as the store writes it)
    dynamodb.put_item(
        TableName=tabla_idempotencia,
        Item={
            "clave": {"S": CLAVE},
            "estado": {"S": "EN_CURSO"},
            "expira_en": {"N": str(int(T0_S) + 86_400)},
            "caduca_bloqueo": {"N": str(int(T0_S) + LEASE_S)},
            "propietario": {"S": "muerto"},
        },
    )
    reloj.avanzar(transcurrido_s)
    operacion = Operacion(RESULTADO)
    # WHEN another consumer gets the same key
    if corre:
        resultado = store.run(CLAVE, operacion)
    else:
        with pytest.raises(OperacionEnCurso):
            store.run(CLAVE, operacion)
        resultado = None
    # THEN a live lease (up to and including caduca_bloqueo) blocks it; a lapsed one lets it run once
    assert operacion.ejecuciones == (1 if corre else 0)
    assert leer_item(CLAVE)["estado"] == {"S": "COMPLETADO" if corre else "EN_CURSO"}
    assert resultado == (RESULTADO if corre else None)


def test_run_transient_error_deletes_record_and_propagates(store, leer_item, llamadas) -> None:
    # GIVEN a gateway that is down
    caida = Operacion(error=PasarelaNoDisponible("503 from gateway"))
    # WHEN the charge runs
    with pytest.raises(PasarelaNoDisponible) as info:
        store.run(CLAVE, caida)
    # THEN the same error propagates, the key is released, and a retry runs the operation
    assert info.value is caida.error
    assert leer_item(CLAVE) is None
    assert dict(llamadas) == {"PutItem": 1, "DeleteItem": 1}
    reintento = Operacion(RESULTADO)
    assert store.run(CLAVE, reintento) == RESULTADO
    assert reintento.ejecuciones == 1


def test_run_permanent_error_stores_fallido_and_duplicate_replays_it_without_running(
    store, leer_item, llamadas
) -> None:
    # GIVEN a card the gateway declines
    rechazo = Operacion(error=CobroRechazado("tarjeta denegada: fondos insuficientes"))
    with pytest.raises(CobroRechazado):
        store.run(CLAVE, rechazo)
    guardado = leer_item(CLAVE)
    llamadas.clear()
    duplicado = Operacion(RESULTADO)
    # WHEN the same charge comes again
    with pytest.raises(CobroRechazado) as info:
        store.run(CLAVE, duplicado)
    # THEN the record is FALLIDO with the error, and the duplicate gets the same class and message, no run
    assert guardado["estado"] == {"S": "FALLIDO"}
    assert guardado["error"] == {
        "M": {
            "tipo": {"S": "mercadofresco.dominio.errores.CobroRechazado"},
            "mensaje": {"S": "tarjeta denegada: fondos insuficientes"},
        }
    }
    assert "caduca_bloqueo" not in guardado
    assert type(info.value) is CobroRechazado
    assert str(info.value) == "tarjeta denegada: fondos insuficientes"
    assert duplicado.ejecuciones == 0
    assert dict(llamadas) == {"PutItem": 1}


def test_run_fallido_written_before_the_errors_moved_to_dominio_replays_the_same_class(
    store, leer_item, tabla_idempotencia
) -> None:
    # GIVEN a FALLIDO record naming the error's old module (mercadofresco.errors, before dominio.errores)
    with pytest.raises(CobroRechazado):
        store.run(CLAVE, Operacion(error=CobroRechazado("tarjeta denegada")))
    aws.client("dynamodb").update_item(
        TableName=tabla_idempotencia,
        Key={"clave": {"S": CLAVE}},
        UpdateExpression="SET #e.tipo = :t",
        ExpressionAttributeNames={"#e": "error"},
        ExpressionAttributeValues={":t": {"S": "mercadofresco.errors.CobroRechazado"}},
    )
    assert leer_item(CLAVE)["error"]["M"]["tipo"] == {"S": "mercadofresco.errors.CobroRechazado"}
    duplicado = Operacion(RESULTADO)
    # WHEN the same charge comes again
    with pytest.raises(CobroRechazado) as info:
        store.run(CLAVE, duplicado)
    # THEN it gets the same class (the workflow's Catch still matches it by name), without running
    assert type(info.value) is CobroRechazado
    assert duplicado.ejecuciones == 0


class LimiteExcedido(Exception):
    """A caller-declared permanent error that is not a domain error."""


def test_run_permanent_error_outside_domain_replays_as_operacion_fallida(crear_store) -> None:
    # GIVEN a store where the caller declares its own exception permanent
    store = crear_store(permanent_errors=(LimiteExcedido,))
    with pytest.raises(LimiteExcedido):
        store.run(CLAVE, Operacion(error=LimiteExcedido("límite diario")))
    # WHEN the duplicate comes
    with pytest.raises(OperationFailedError) as info:
        store.run(CLAVE, Operacion(RESULTADO))
    # THEN it gets a clear error carrying the stored type and message
    assert info.value.error_type == f"{__name__}.LimiteExcedido"
    assert info.value.message == "límite diario"


def test_run_same_key_different_payload_raises_mismatch(store, llamadas) -> None:
    # GIVEN a charge of 48.20 completed
    store.run(CLAVE, Operacion(RESULTADO), payload={"pedido_id": "PED-2026-084417", "importe": "48.20"})
    otra = Operacion({"referencia_cobro": "ch_OTRO"})
    # WHEN the same key arrives with a tampered amount
    with pytest.raises(IdempotencyPayloadMismatchError) as info:
        store.run(CLAVE, otra, payload={"pedido_id": "PED-2026-084417", "importe": "4820.00"})
    # THEN it is refused with both hashes, never given the other charge's result, never run
    assert otra.ejecuciones == 0
    assert info.value.stored_hash == hash_de({"pedido_id": "PED-2026-084417", "importe": "48.20"})
    assert info.value.received_hash == hash_de({"pedido_id": "PED-2026-084417", "importe": "4820.00"})


def test_decorator_mutating_input_inside_operation_keeps_key_and_payload(store, leer_item) -> None:
    # GIVEN a decorated charge that mutates its input
    ejecuciones = []

    @idempotent(store, key=lambda pedido: claves.cobro(pedido["pedido_id"]), payload_fields=("pedido_id", "importe"))
    def cobrar(pedido: dict[str, Any]) -> dict[str, str]:
        ejecuciones.append(dict(pedido))
        pedido["pedido_id"] = "PED-MUTADO"
        pedido["importe"] = "0.00"
        return RESULTADO

    # WHEN it runs, and the same order (fresh copy) is redelivered
    primera = cobrar(dict(PEDIDO))
    segunda = cobrar(dict(PEDIDO))
    # THEN the record is under the original key with the original payload, and the duplicate matched it
    assert primera == segunda == RESULTADO
    assert len(ejecuciones) == 1
    assert leer_item("cobro:PED-MUTADO") is None
    assert leer_item(CLAVE)["hash_payload"] == {"S": hash_de({"pedido_id": "PED-2026-084417", "importe": "48.20"})}


def test_decorator_missing_payload_field_raises_clear_error_without_calls(store, llamadas) -> None:
    # GIVEN a decorated charge validating a field the input lacks
    @idempotent(store, key=lambda pedido: claves.cobro(pedido["pedido_id"]), payload_fields=("importe",))
    def cobrar(pedido: dict[str, Any]) -> str:
        return "ok"

    # WHEN it is called
    with pytest.raises(IdempotencyKeyError) as info:
        cobrar({"pedido_id": "PED-1"})
    # THEN the error names the field and nothing was written
    assert "importe" in str(info.value)
    assert llamadas.total == 0


def test_run_plain_str_key_is_rejected_before_any_call(store, llamadas) -> None:
    # GIVEN a key written by hand (as a MessageId would be)
    # WHEN it is used
    with pytest.raises(IdempotencyKeyError) as info:
        store.run("cobro:PED-2026-084417", Operacion(RESULTADO))
    # THEN the error says how to build one, and no call was made
    assert "claves" in str(info.value)
    assert llamadas.total == 0


def test_call_counts_first_two_duplicate_one_cached_zero(crear_store, llamadas) -> None:
    # GIVEN two warm consumers: one without the local cache, one with it
    sin_cache = crear_store()
    con_cache = crear_store(local_cache=True)
    cuentas: list[dict[str, int]] = []

    def medir(accion: Callable[[], Any]) -> None:
        llamadas.clear()
        accion()
        cuentas.append(dict(llamadas))

    # WHEN a first success, a duplicate, then duplicates on the caching consumer run
    medir(lambda: sin_cache.run(CLAVE, Operacion(RESULTADO)))
    medir(lambda: sin_cache.run(CLAVE, Operacion(RESULTADO)))
    medir(lambda: con_cache.run(CLAVE, Operacion(RESULTADO)))  # fills its cache from the refused claim
    medir(lambda: con_cache.run(CLAVE, Operacion(RESULTADO)))
    # THEN 2, 1, 1 and then 0 DynamoDB calls
    assert cuentas == [{"PutItem": 1, "UpdateItem": 1}, {"PutItem": 1}, {"PutItem": 1}, {}]


def test_cache_never_holds_en_curso_and_evicts_expired(crear_store, reloj, llamadas) -> None:
    # GIVEN a caching consumer that sees a key while another holds it EN_CURSO
    store = crear_store(local_cache=True)
    con_cache_vista: list[bool] = []

    def primera() -> dict[str, str]:
        for _ in range(2):
            with pytest.raises(OperacionEnCurso):
                store.run(CLAVE, Operacion("no"))
        con_cache_vista.append(CLAVE in store.cache)
        return RESULTADO

    otro = crear_store()
    # WHEN the owner finishes, and later the record expires
    otro.run(CLAVE, primera)
    store.run(CLAVE, Operacion(RESULTADO))
    en_cache = CLAVE in store.cache
    reloj.avanzar(86_400 + 1)
    llamadas.clear()
    nueva = Operacion({"referencia_cobro": "ch_0002"})
    resultado = store.run(CLAVE, nueva)
    # THEN EN_CURSO was never cached (each look asked DynamoDB), COMPLETADO was, and the expired entry was evicted
    assert con_cache_vista == [False]
    assert en_cache
    assert nueva.ejecuciones == 1
    assert resultado == {"referencia_cobro": "ch_0002"}
    assert dict(llamadas) == {"PutItem": 1, "UpdateItem": 1}


def test_run_result_not_json_records_fallido_so_side_effect_is_not_repeated(store, leer_item) -> None:
    # GIVEN an operation whose side effect happens but whose result JSON cannot express
    operacion = Operacion({"referencia_cobro": object()})
    with pytest.raises(IdempotencyResultError):
        store.run(CLAVE, operacion)
    # WHEN the duplicate comes
    with pytest.raises(OperationFailedError) as info:
        store.run(CLAVE, Operacion(RESULTADO))
    # THEN the record is FALLIDO (the side effect is not run twice) and the duplicate learns why
    assert operacion.ejecuciones == 1
    assert leer_item(CLAVE)["estado"] == {"S": "FALLIDO"}
    assert info.value.error_type == "mercadofresco.idempotency.exceptions.IdempotencyResultError"
