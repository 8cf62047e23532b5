"""Deferral while a circuit is open: delays, bounds and exact SQS requests (Stubber, no network)."""

from __future__ import annotations

import random

import pytest
from botocore.stub import ANY
from mercadofresco.consumer.deferral import DeferralPolicy, HeldMessage, defer, receives_exhausted
from mercadofresco.consumer.queues import Queue

from tests.conftest import load_event

URL = "https://sqs.eu-south-2.amazonaws.com/123456789012/"
COLA = Queue("arn:aws:sqs:eu-south-2:123456789012:mercadofresco-erp", URL + "mercadofresco-erp", URL + "erp-f", 4)
STOCK = Queue(
    "arn:aws:sqs:eu-south-2:123456789012:cola-mercadofresco-stock.fifo",
    URL + "cola-mercadofresco-stock.fifo",
    URL + "mercadofresco-stock-fallidos.fifo",
    4,
)
TREINTA_MINUTOS_S = 30 * 60


def _con_aplazamientos(record: dict, n: int) -> dict:
    return record | {"messageAttributes": {"mf-aplazamientos": {"stringValue": str(n), "dataType": "Number"}}}


def test_deferral_policy_delays_double_within_equal_jitter_and_cap() -> None:
    # GIVEN the default policy with a seeded rng
    politica = DeferralPolicy(rng=random.Random(7))
    # WHEN many delays are drawn per deferral number
    for n, escalon in enumerate([60, 120, 240, 480, 900, 900]):
        esperas = [politica.delay_s(n) for _ in range(200)]
        # THEN each lies in [step/2, step] and never above SQS's 900 s
        assert escalon / 2 <= min(esperas) and max(esperas) <= escalon <= 900


def test_deferral_policy_default_bound_covers_a_thirty_minute_outage() -> None:
    # The shortest outage that could exhaust the deferrals is longer than 30 minutes.
    assert DeferralPolicy().min_total_delay_s() >= TREINTA_MINUTOS_S
    assert DeferralPolicy(max_deferrals=3).min_total_delay_s() < TREINTA_MINUTOS_S


@pytest.mark.parametrize("kwargs", [{"base_delay_s": 0}, {"max_delay_s": 901}, {"max_deferrals": 0}])
def test_deferral_policy_invalid_settings_raise(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        DeferralPolicy(**kwargs)


def test_defer_standard_resends_with_delay_and_counter(sqs) -> None:
    # GIVEN a record already deferred twice
    cliente, stubber = sqs
    record = _con_aplazamientos(load_event("erp-pedido-confirmado.json")["Records"][0], 2)
    politica = DeferralPolicy(rng=random.Random(1))
    esperada = DeferralPolicy(rng=random.Random(1)).delay_s(2)
    stubber.add_response(
        "send_message",
        {"MessageId": "m-2"},
        {
            "QueueUrl": COLA.url,
            "MessageBody": record["body"],
            "MessageAttributes": {
                "mf-aplazamientos": {"DataType": "String", "StringValue": "3"},
                "mf-recepciones-previas": {"DataType": "String", "StringValue": "0"},
            },
            "DelaySeconds": esperada,
        },
    )
    # WHEN deferred: returns normally, so the batch acknowledges the original
    defer(cliente, COLA, record, politica, "erp", "CircuitoAbierto: erp")
    # THEN the delay is the third step's (120..240 s)
    assert 120 <= esperada <= 240


def test_defer_after_max_deferrals_sends_to_dlq_with_reason(sqs) -> None:
    cliente, stubber = sqs
    record = _con_aplazamientos(load_event("erp-pedido-confirmado.json")["Records"][0], 12)
    stubber.add_response(
        "send_message",
        {"MessageId": "m-3"},
        {
            "QueueUrl": COLA.dlq_url,
            "MessageBody": record["body"],
            "MessageAttributes": {
                "mf-aplazamientos": {"DataType": "Number", "StringValue": "12"},
                "mf-motivo": {"DataType": "String", "StringValue": "aplazamientos-agotados"},
                "mf-detalle": {"DataType": "String", "StringValue": "12 deferrals while CircuitoAbierto: erp"},
                "mf-cola-origen": {"DataType": "String", "StringValue": COLA.url},
                "mf-funcion": {"DataType": "String", "StringValue": "erp"},
            },
        },
    )
    defer(cliente, COLA, record, DeferralPolicy(), "erp", "CircuitoAbierto: erp")


def test_defer_fifo_with_receives_to_spare_holds_by_visibility(sqs) -> None:
    # GIVEN a FIFO record on its first receive (maxReceiveCount 4)
    cliente, stubber = sqs
    record = load_event("erp-reserva-stock.json")["Records"][0]
    stubber.add_response(
        "change_message_visibility",
        {},
        {"QueueUrl": STOCK.url, "ReceiptHandle": record["receiptHandle"], "VisibilityTimeout": ANY},
    )
    # WHEN deferred  THEN it is reported failed on purpose (its group stops; nothing re-sent)
    with pytest.raises(HeldMessage):
        defer(cliente, STOCK, record, DeferralPolicy(), "erp", "CircuitoAbierto: erp")


def test_defer_fifo_on_last_spare_receive_recycles_in_same_group(sqs) -> None:
    # GIVEN a FIFO record received 3 times of 4: one more failure could send it to the DLQ
    cliente, stubber = sqs
    record = load_event("erp-reserva-stock.json")["Records"][0]
    record = record | {"attributes": record["attributes"] | {"ApproximateReceiveCount": "3"}}
    stubber.add_response(
        "send_message",
        {"MessageId": "m-4"},
        {
            "QueueUrl": STOCK.url,
            "MessageBody": record["body"],
            "MessageAttributes": {"mf-aplazamientos": {"DataType": "String", "StringValue": "1"}},
            "MessageGroupId": "FRU-MAN-001",
            "MessageDeduplicationId": f"aplazado:{record['messageId']}",
        },
    )
    # WHEN / THEN: re-sent (fresh dedup id, no DelaySeconds: FIFO refuses it) and acknowledged
    defer(cliente, STOCK, record, DeferralPolicy(), "erp", "CircuitoAbierto: erp")


def test_defer_waits_at_least_what_the_breaker_says_capped_at_900(sqs) -> None:
    # GIVEN a first deferral (30..60 s by policy) while the breaker says "open for 250 s more", then "for 2000 s"
    cliente, stubber = sqs
    record = load_event("erp-pedido-confirmado.json")["Records"][0]
    for esperada in (250, 900):
        stubber.add_response(
            "send_message",
            {"MessageId": "m"},
            {"QueueUrl": COLA.url, "MessageBody": record["body"], "MessageAttributes": ANY, "DelaySeconds": esperada},
        )
    # WHEN / THEN (the Stubber checks DelaySeconds)
    defer(cliente, COLA, record, DeferralPolicy(), "erp", "CircuitoAbierto", min_s=249.2)
    defer(cliente, COLA, record, DeferralPolicy(), "erp", "CircuitoAbierto", min_s=2000)


def _copia(previas: int, recibido: int) -> dict:
    record = load_event("erp-pedido-confirmado.json")["Records"][0]
    return record | {
        "attributes": record["attributes"] | {"ApproximateReceiveCount": str(recibido)},
        "messageAttributes": {
            "mf-aplazamientos": {"stringValue": "2", "dataType": "String"},
            "mf-recepciones-previas": {"stringValue": str(previas), "dataType": "String"},
        },
    }


def test_defer_standard_carries_receives_spent_by_earlier_copies(sqs) -> None:
    # GIVEN a copy whose predecessors spent 1 receive, deferred on its own 3rd receive (2 of them with calls)
    cliente, stubber = sqs
    record = _copia(previas=1, recibido=3)
    stubber.add_response(
        "send_message",
        {"MessageId": "m"},
        {
            "QueueUrl": COLA.url,
            "MessageBody": record["body"],
            "MessageAttributes": {
                "mf-aplazamientos": {"DataType": "String", "StringValue": "3"},
                "mf-recepciones-previas": {"DataType": "String", "StringValue": "3"},
            },
            "DelaySeconds": ANY,
        },
    )
    # WHEN / THEN: the next copy knows 3 receives are already spent
    defer(cliente, COLA, record, DeferralPolicy(), "erp", "CircuitoAbierto")


@pytest.mark.parametrize(
    ("previas", "recibido", "agotadas"),
    [(0, 4, False), (0, 9, False), (3, 1, False), (3, 2, True), (1, 3, False), (1, 4, True)],
)
def test_receives_exhausted_counts_receives_across_copies(previas: int, recibido: int, agotadas: bool) -> None:
    # maxReceiveCount 4 across every copy; a first copy (previas 0) is left to SQS's own redrive
    detalle = receives_exhausted(COLA, _copia(previas, recibido))
    assert (detalle is not None) is agotadas
    if agotadas:
        assert f"{previas + recibido} receives" in detalle
