"""Every consumer's rule: a failure the record's own values caused is a dead letter with its reason, never a retry.

The route below stores an event's field in the real PostgreSQL as a consumer would; the values are the
ones a hostile or careless producer sends (an object, a NUL, a lone surrogate, text for a number). A
database that is down, by contrast, is transient: the record goes back to the queue.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from mercadofresco import dlq
from mercadofresco.consumer import Route

from tests.integration.consumidores.conftest import consumir

pytestmark = pytest.mark.integration


def _ruta(dsn: str) -> dict[str, Route]:
    def guardar(evento: Any) -> None:
        with psycopg.connect(dsn) as conn:
            conn.execute("INSERT INTO notas (texto, unidades) VALUES (%s, %s)", (evento["texto"], evento["unidades"]))

    return {"Nota": Route(guardar)}


@pytest.fixture
def dsn(pg_dsn: str) -> str:
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("CREATE TABLE notas (texto text, unidades integer)")
    return pg_dsn


@pytest.mark.parametrize(
    ("texto", "unidades", "error"),
    [
        ({"a": 1}, 1, "ProgrammingError"),  # psycopg cannot send an object as text
        ("a\x00b", 1, "DataError"),  # PostgreSQL text cannot hold a NUL
        ("a\ud800", 1, "UnicodeEncodeError"),  # a lone surrogate cannot be encoded
        ("a", "muchas", "InvalidTextRepresentation"),  # text where an integer belongs
        ("a", 10**12, "NumericValueOutOfRange"),
    ],
)
def test_consumer_value_the_database_refuses_is_dead_lettered_with_reason(colas, dsn, texto, unidades, error) -> None:
    # GIVEN an event whose values the database cannot store
    sqs, origen, dlq_url = colas
    cuerpo = json.dumps({"tipo": "Nota", "version": 1, "texto": texto, "unidades": unidades})
    # WHEN a consumer handles it
    respuesta = consumir(sqs, origen, cuerpo, {}, _ruta(dsn))
    # THEN it is not handed back for a retry, but dead-lettered once with its reason and the error's class
    assert respuesta == {"batchItemFailures": []}
    (muerto,) = sqs.receive_message(QueueUrl=dlq_url, MessageAttributeNames=["All"], MaxNumberOfMessages=10)["Messages"]
    atributos = {k: v["StringValue"] for k, v in muerto["MessageAttributes"].items()}
    assert atributos[dlq.REASON_ATTRIBUTE] == "dato-invalido"
    assert error in atributos[dlq.DETAIL_ATTRIBUTE]
    # AND the detail never repeats the value
    assert "muchas" not in atributos[dlq.DETAIL_ATTRIBUTE]
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM notas").fetchone() == (0,)


def test_consumer_database_down_is_transient_and_the_record_is_retried(colas) -> None:
    # GIVEN a consumer whose database refuses connections
    sqs, origen, dlq_url = colas
    cuerpo = json.dumps({"tipo": "Nota", "version": 1, "texto": "a", "unidades": 1})
    # WHEN it handles a good event
    respuesta = consumir(sqs, origen, cuerpo, {}, _ruta("postgresql://postgres@127.0.0.1:1/postgres?connect_timeout=1"))
    # THEN the record is reported failed (SQS redelivers it) and nothing is dead-lettered
    assert len(respuesta["batchItemFailures"]) == 1
    assert sqs.receive_message(QueueUrl=dlq_url).get("Messages", []) == []
