"""DynamoDB's TTL expiry, which moto does not do, emulated where a stream can see it.

DynamoDB deletes an expired item some time after its TTL attribute passes, and the
stream record of that deletion carries ``userIdentity`` ``{type: Service, principalId:
dynamodb.amazonaws.com}`` — which is what the carts pipe filters on to tell an abandoned
cart from one the customer emptied. moto neither expires items nor marks deletions, so
this sweeper deletes expired items of the tables that have both a TTL and a stream, and
remembers their keys so the stream reader (:mod:`sam_emulator.pipes`) can mark
those REMOVE records as the service's. Tables without a stream are left alone: nothing
could observe the difference.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sam_emulator.aws import client
from sam_emulator.background import BackgroundPart, BackgroundThread

INTERVAL_S = 1.0


@dataclass
class TtlSweeper(BackgroundPart):
    """Deletes expired items (TTL attribute < now) and remembers which deletions were TTL's."""

    tables: dict[str, str] = field(default_factory=dict)  # table name -> TTL attribute
    clock: Any = time.time
    deleted: int = 0
    errors: list[str] = field(default_factory=list)  # sweeps lost to an API error (the next one retries)
    _keys: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _thread: BackgroundThread = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._thread = BackgroundThread.every(
            "ttl", INTERVAL_S, self.sweep, on_error=lambda exc: self.errors.append(f"{type(exc).__name__}: {exc}")
        )

    @classmethod
    def of_tables_with_streams(cls) -> TtlSweeper:
        dynamodb = client("dynamodb")
        tables = {}
        for name in dynamodb.list_tables()["TableNames"]:
            table = dynamodb.describe_table(TableName=name)["Table"]
            ttl = dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            if table.get("StreamSpecification", {}).get("StreamEnabled") and ttl.get("TimeToLiveStatus") == "ENABLED":
                tables[name] = ttl["AttributeName"]
        return cls(tables=tables)

    def sweep(self) -> int:
        """One sweep: delete every expired item; return how many."""
        dynamodb = client("dynamodb")
        now = int(self.clock())
        total = 0
        for table, attribute_name in self.tables.items():
            key_schema = [k["AttributeName"] for k in dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]]
            for page in dynamodb.get_paginator("scan").paginate(
                TableName=table,
                FilterExpression="#t < :ahora",
                ExpressionAttributeNames={"#t": attribute_name},
                ExpressionAttributeValues={":ahora": {"N": str(now)}},
            ):
                for item in page["Items"]:
                    key = {k: item[k] for k in key_schema}
                    with self._lock:
                        self._keys.add(_fingerprint(key))
                    dynamodb.delete_item(TableName=table, Key=key)
                    total += 1
        self.deleted += total
        return total

    def was_ttl(self, record: dict[str, Any]) -> bool:
        """Whether a stream record is the deletion of an item this sweeper expired."""
        if record.get("eventName") != "REMOVE":
            return False
        with self._lock:
            return _fingerprint(record["dynamodb"]["Keys"]) in self._keys


def _fingerprint(key: dict[str, Any]) -> str:
    return json.dumps(key, sort_keys=True)
