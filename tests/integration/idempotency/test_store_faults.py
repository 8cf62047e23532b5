"""Faults injected for real: DynamoDB failing under the store, and records vanishing mid-flight."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
from mercadofresco import aws
from mercadofresco.dominio import claves
from mercadofresco.dominio.errores import CobroRechazado, PasarelaNoDisponible
from mercadofresco.errors import OperacionEnCurso, TransientError
from mercadofresco.idempotency import IdempotencyConfig, IdempotencyPersistenceError, IdempotencyStore
from mercadofresco.idempotency.exceptions import IdempotencyInconsistentStateError

from tests.conftest import HANG_GUARD_S
from tests.integration.idempotency.apoyo_idempotencia import Operacion

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

CLAVE = claves.cobro("PED-2026-084417")
RESULTADO = {"referencia_cobro": "ch_0001"}


def borrar_tabla_y(dynamodb: Any, tabla: str, despues: Callable[[], Any]) -> Callable[[], Any]:
    """An operation during which the table disappears (a real ResourceNotFoundException follows)."""

    def operacion() -> Any:
        dynamodb.delete_table(TableName=tabla)
        return despues()

    return operacion


def test_persistence_failure_on_claim_surfaces_as_persistence_error(store, dynamodb, tabla_idempotencia) -> None:
    # GIVEN the table is gone
    dynamodb.delete_table(TableName=tabla_idempotencia)
    operacion = Operacion(RESULTADO)
    # WHEN a claim is attempted
    with pytest.raises(IdempotencyPersistenceError) as info:
        store.run(CLAVE, operacion)
    # THEN the one persistence error (retryable) says which call failed, and the operation never ran
    assert "put_item" in str(info.value) and "ResourceNotFoundException" in str(info.value)
    assert isinstance(info.value, TransientError)
    assert operacion.ejecuciones == 0


def test_persistence_failure_on_unreachable_dynamodb_surfaces_as_persistence_error(tabla_idempotencia) -> None:
    # GIVEN a client whose endpoint refuses connections (a closed loopback port)
    cliente = aws.client("dynamodb", endpoint_url="http://127.0.0.1:9")
    store = IdempotencyStore(tabla_idempotencia, cliente, IdempotencyConfig())
    operacion = Operacion(RESULTADO)
    # WHEN a claim is attempted
    with pytest.raises(IdempotencyPersistenceError) as info:
        store.run(CLAVE, operacion)
    # THEN the connection failure is wrapped in the same error type, nothing ran
    assert "Could not connect" in str(info.value)
    assert operacion.ejecuciones == 0


@pytest.mark.parametrize(
    ("resultado_o_error", "llamada"),
    [
        (RESULTADO, "update_item"),  # COMPLETADO cannot be written
        (CobroRechazado("tarjeta denegada"), "update_item"),  # FALLIDO cannot be written
        (PasarelaNoDisponible("503"), "delete_item"),  # the release cannot be written
    ],
)
def test_persistence_failure_after_operation_surfaces_as_persistence_error(
    store, dynamodb, tabla_idempotencia, resultado_o_error: Any, llamada: str
) -> None:
    # GIVEN an operation during which DynamoDB loses the table
    error = resultado_o_error if isinstance(resultado_o_error, Exception) else None
    interna = Operacion(None if error else resultado_o_error, error)
    # WHEN its outcome is recorded
    with pytest.raises(IdempotencyPersistenceError) as info:
        store.run(CLAVE, borrar_tabla_y(dynamodb, tabla_idempotencia, interna))
    # THEN the one persistence error names the call, and notes the operation's own error when there was one
    assert interna.ejecuciones == 1
    assert llamada in str(info.value)
    if error is not None:
        assert any(type(error).__name__ in nota for nota in info.value.__notes__)


def test_duplicate_waiting_sees_record_vanish_then_claims_and_runs_once(
    crear_store, reloj, llamadas, leer_item
) -> None:
    # GIVEN consumer A holding the claim, about to fail transiently (and so release the key)
    duenio = crear_store()
    reclamado, fallar = threading.Event(), threading.Event()
    errores_a: list[BaseException] = []

    def operacion_a() -> Any:
        reclamado.set()
        assert fallar.wait(HANG_GUARD_S)
        raise PasarelaNoDisponible("reset by peer")

    def consumidor_a() -> None:
        try:
            duenio.run(CLAVE, operacion_a)
        except PasarelaNoDisponible as exc:
            errores_a.append(exc)

    hilo_a = threading.Thread(target=consumidor_a)
    hilo_a.start()
    assert reclamado.wait(HANG_GUARD_S)

    def esperar_mientras_a_libera(s: float) -> None:  # B's sleep: the record vanishes during it
        fallar.set()
        hilo_a.join(HANG_GUARD_S)
        reloj.avanzar(s)

    espera = IdempotencyConfig(wait_for_completion_s=5, poll_interval_s=0.5)
    duplicado = IdempotencyStore(
        duenio.table_name, duenio.records.client, espera, now_s=reloj, sleep=esperar_mientras_a_libera
    )
    operacion_b = Operacion(RESULTADO)
    llamadas.clear()
    # WHEN duplicate B, refused, reads the record after A released it
    try:
        resultado = duplicado.run(CLAVE, operacion_b)
    finally:  # A must never outlive moto's mock (it would reach for a real endpoint)
        fallar.set()
        hilo_a.join(HANG_GUARD_S)
    # THEN B claims again and runs the operation exactly once; A's error propagated
    assert len(errores_a) == 1
    assert operacion_b.ejecuciones == 1
    assert resultado == RESULTADO
    assert leer_item(CLAVE)["estado"] == {"S": "COMPLETADO"}
    assert llamadas["GetItem"] == 1 and llamadas["PutItem"] >= 2


def test_duplicate_waiting_gets_owner_result_or_gives_up_after_bound(crear_store, reloj, llamadas) -> None:
    # GIVEN a consumer in the middle of the operation, and two duplicates that may wait 2 s
    espera = crear_store(wait_for_completion_s=2, poll_interval_s=0.5)
    vistos: list[Any] = []

    def operacion() -> Any:
        llamadas.clear()
        with pytest.raises(OperacionEnCurso):
            espera.run(CLAVE, Operacion("no"))
        vistos.append(dict(llamadas))
        return RESULTADO

    # WHEN the duplicate inside waits the full bound, and another comes after completion
    crear_store().run(CLAVE, operacion)
    despues = espera.run(CLAVE, Operacion("no"))
    # THEN the first gave up with OperacionEnCurso after 1 claim + 4 polls of 0.5 s; the second got the result
    assert vistos == [{"PutItem": 1, "GetItem": 4}]
    assert despues == RESULTADO


def test_record_deleted_during_operation_is_recreated_completado(store, dynamodb, tabla_idempotencia) -> None:
    # GIVEN an operation during which someone deletes the record by hand
    def operacion() -> Any:
        dynamodb.delete_item(TableName=tabla_idempotencia, Key={"clave": {"S": CLAVE}})
        return RESULTADO

    # WHEN it completes and a duplicate comes
    primero = store.run(CLAVE, operacion)
    duplicado = Operacion({"referencia_cobro": "ch_OTRO"})
    segundo = store.run(CLAVE, duplicado)
    # THEN completion re-created the record, so the duplicate got the result without running
    assert primero == segundo == RESULTADO
    assert duplicado.ejecuciones == 0


@pytest.mark.parametrize(("rechazos_sin_item", "termina"), [(1, "resultado"), (3, "inconsistente")])
def test_refusal_without_item_is_claimed_again_then_gives_up(
    store, dynamodb, rechazos_sin_item: int, termina: str
) -> None:
    # GIVEN a completed record, and DynamoDB answering the next refusals without the ALL_OLD item
    store.run(CLAVE, Operacion(RESULTADO))
    pendientes = [rechazos_sin_item]

    def quitar_item(parsed: dict[str, Any], **_: Any) -> None:
        if pendientes[0] > 0 and "Error" in parsed:
            pendientes[0] -= 1
            parsed.pop("Item", None)

    dynamodb.meta.events.register("after-call.dynamodb.PutItem", quitar_item)
    duplicado = Operacion("no")
    # WHEN the duplicate comes
    if termina == "resultado":
        assert store.run(CLAVE, duplicado) == RESULTADO
    else:
        with pytest.raises(IdempotencyInconsistentStateError):
            store.run(CLAVE, duplicado)
    # THEN it claimed again (never ran the operation): the stored result, or a retryable error after 3 tries
    assert duplicado.ejecuciones == 0
    assert pendientes == [0]
