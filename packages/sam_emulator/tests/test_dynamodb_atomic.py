"""The local run's moto server lets exactly one of many concurrent conditional writes win, as DynamoDB does.

moto checks a write's ``ConditionExpression`` and then writes, with nothing in between: the
local run's threads (pollers, workflow tasks) all reach one in-process DynamoDB through moto's
threaded server. ``MotoServer`` makes each write atomic
(:func:`sam_emulator.moto_patches.atomic_dynamodb_writes`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
from sam_emulator.testing import HANG_GUARD_S  # only stops a hung run; the tests meet on events, counts and gates

if TYPE_CHECKING:
    from sam_emulator.moto_server import MotoServer

pytestmark = pytest.mark.integration

THREADS = 8


def test_conditional_put_from_many_threads_on_one_key_has_exactly_one_winner(
    moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from botocore.config import Config
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models import table as moto_table

    # GIVEN a table in the local run's moto server
    dynamodb = boto3.client("dynamodb", endpoint_url=moto_server.url)
    dynamodb.create_table(
        TableName="mf-atomico",
        KeySchema=[{"AttributeName": "clave", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "clave", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    # AND the race window held open: the first write to check its condition waits there until
    # every thread's write has reached moto's backend. Without the lock they would all be in the
    # window too, all read "no item", and all win; with it, they wait for the first to finish.
    arrivals = threading.Condition()
    arrived = 0
    first = threading.Lock()
    write_line = DynamoDBBackend.put_item
    condition = moto_table.get_filter_expression

    def put_item(*args: Any, **kwargs: Any) -> Any:
        nonlocal arrived
        with arrivals:
            arrived += 1
            arrivals.notify_all()
        return write_line(*args, **kwargs)

    def get_filter_expression(*args: Any, **kwargs: Any) -> Any:
        if first.acquire(blocking=False):
            with arrivals:
                assert arrivals.wait_for(lambda: arrived >= THREADS, HANG_GUARD_S), "the writes never arrived"
        return condition(*args, **kwargs)

    monkeypatch.setattr(DynamoDBBackend, "put_item", put_item)
    monkeypatch.setattr(moto_table, "get_filter_expression", get_filter_expression)

    # WHEN many threads, each with its own client, put the same key only if it does not exist
    winners: list[int] = []
    rejected: list[int] = []
    errors: list[BaseException] = []

    def attempt(number: int) -> None:
        sdk_client = boto3.client("dynamodb", endpoint_url=moto_server.url, config=Config(retries={"max_attempts": 1}))
        try:
            sdk_client.put_item(
                TableName="mf-atomico",
                Item={"clave": {"S": "pedido-1"}, "hilo": {"N": str(number)}},
                ConditionExpression="attribute_not_exists(clave)",
            )
            winners.append(number)
        except sdk_client.exceptions.ConditionalCheckFailedException:
            rejected.append(number)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=attempt, args=(n,), name=f"escritor-{n}") for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD_S)

    # THEN exactly one write won, every other one was refused, and the item is the winner's
    assert not any(h.is_alive() for h in threads), "a writer hung"
    assert errors == []
    assert len(winners) == 1, winners
    assert sorted(winners + rejected) == list(range(THREADS))
    saved = dynamodb.get_item(TableName="mf-atomico", Key={"clave": {"S": "pedido-1"}})["Item"]
    assert saved["hilo"] == {"N": str(winners[0])}
