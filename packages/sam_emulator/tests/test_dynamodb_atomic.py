"""The local run's moto server lets exactly one of many concurrent conditional writes win, as DynamoDB does.

moto checks a write's ``ConditionExpression`` and then writes, with nothing in between: the
local run's threads (pollers, workflow tasks) all reach one in-process DynamoDB through moto's
threaded server. ``ServidorMoto`` makes each write atomic
(:func:`sam_emulator.moto_patches.atomic_dynamodb_writes`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
from sam_emulator.testing import HANG_GUARD_S  # only stops a hung run; the tests meet on events, counts and gates

if TYPE_CHECKING:
    from sam_emulator.moto_server import ServidorMoto

pytestmark = pytest.mark.integration

HILOS = 8


def test_conditional_put_from_many_threads_on_one_key_has_exactly_one_winner(
    servidor_moto: ServidorMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from botocore.config import Config
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models import table as moto_tabla

    # GIVEN a table in the local run's moto server
    dynamodb = boto3.client("dynamodb", endpoint_url=servidor_moto.url)
    dynamodb.create_table(
        TableName="mf-atomico",
        KeySchema=[{"AttributeName": "clave", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "clave", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    # AND the race window held open: the first write to check its condition waits there until
    # every thread's write has reached moto's backend. Without the lock they would all be in the
    # window too, all read "no item", and all win; with it, they wait for the first to finish.
    llegadas = threading.Condition()
    llegados = 0
    primero = threading.Lock()
    escribir = DynamoDBBackend.put_item
    condicion = moto_tabla.get_filter_expression

    def put_item(*args: Any, **kwargs: Any) -> Any:
        nonlocal llegados
        with llegadas:
            llegados += 1
            llegadas.notify_all()
        return escribir(*args, **kwargs)

    def get_filter_expression(*args: Any, **kwargs: Any) -> Any:
        if primero.acquire(blocking=False):
            with llegadas:
                assert llegadas.wait_for(lambda: llegados >= HILOS, HANG_GUARD_S), "the writes never arrived"
        return condicion(*args, **kwargs)

    monkeypatch.setattr(DynamoDBBackend, "put_item", put_item)
    monkeypatch.setattr(moto_tabla, "get_filter_expression", get_filter_expression)

    # WHEN many threads, each with its own client, put the same key only if it does not exist
    ganadores: list[int] = []
    rechazados: list[int] = []
    errores: list[BaseException] = []

    def intentar(numero: int) -> None:
        cliente = boto3.client("dynamodb", endpoint_url=servidor_moto.url, config=Config(retries={"max_attempts": 1}))
        try:
            cliente.put_item(
                TableName="mf-atomico",
                Item={"clave": {"S": "pedido-1"}, "hilo": {"N": str(numero)}},
                ConditionExpression="attribute_not_exists(clave)",
            )
            ganadores.append(numero)
        except cliente.exceptions.ConditionalCheckFailedException:
            rechazados.append(numero)
        except BaseException as exc:
            errores.append(exc)

    hilos = [threading.Thread(target=intentar, args=(n,), name=f"escritor-{n}") for n in range(HILOS)]
    for hilo in hilos:
        hilo.start()
    for hilo in hilos:
        hilo.join(HANG_GUARD_S)

    # THEN exactly one write won, every other one was refused, and the item is the winner's
    assert not any(h.is_alive() for h in hilos), "a writer hung"
    assert errores == []
    assert len(ganadores) == 1, ganadores
    assert sorted(ganadores + rechazados) == list(range(HILOS))
    guardado = dynamodb.get_item(TableName="mf-atomico", Key={"clave": {"S": "pedido-1"}})["Item"]
    assert guardado["hilo"] == {"N": str(ganadores[0])}
