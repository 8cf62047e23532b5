"""Deferring a message while its dependency's circuit is open, without burning its receive count.

The lesson's ``ChangeMessageVisibility(300)`` waits, but the redelivery still counts as a
receive: four of them and a 30-minute ERP outage has sent every notice to the DLQ. So a
standard queue's message is *re-sent* to the same queue with ``DelaySeconds`` and an
incremented ``mf-aplazamientos`` attribute, and the original is acknowledged: the copy
starts again at receive count 0. After ``max_deferrals`` deferrals the message goes
to the DLQ with ``DlqReason.APLAZAMIENTOS_AGOTADOS`` — an outage that long needs a person.

A FIFO queue takes no per-message ``DelaySeconds``, and a re-send with the same dedup id
inside 5 minutes would be silently dropped. There the message is *held*: its visibility
is extended by the deferral delay and it is reported failed, which also stops its group
(order kept). Only when one receive is left before ``maxReceiveCount`` is it recycled:
re-sent with a fresh dedup id in the same group, counter + 1, original acknowledged. The
copy joins the *end* of its group, so it may pass reservations queued behind it; they
are stock movements of one sku for different orders, which commute (the total reserved
is the same in any order), and while the circuit is open they are held the same way.

Timeline (standard queue, ERP down, defaults)::

    t=0     receive #1, breaker open -> re-send delay 30..60 s,   mf-aplazamientos=1, ack
    t~1m    receive #1 of the copy   -> re-send delay ~60..120 s, mf-aplazamientos=2, ack
    ...     delays double up to 900 s (SQS's maximum), each one at least half its step
    >=67 m  after 12 deferrals: DLQ, reason aplazamientos-agotados
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from mercadofresco import dlq
from mercadofresco.consumer.queues import (
    PREVIOUS_RECEIVES_ATTRIBUTE,
    deferrals,
    previous_receives,
    receives,
    send_to_dlq,
    with_attributes,
)
from mercadofresco.errors import TransientError
from mercadofresco.retry.backoff import EqualJitterBackoff

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from mercadofresco.consumer.queues import Queue

logger = Logger(child=True)

SQS_MAX_DELAY_S = 900  # SendMessage's DelaySeconds (and our hold) maximum
HANDOVER_MAX_S = 10  # a record handed over for lack of invocation time is due again within this (jittered)


class HeldMessage(TransientError):
    """A FIFO message held by visibility while its circuit is open: reported failed on purpose."""


@dataclass(frozen=True, slots=True)
class DeferralPolicy:
    """How long and how often to defer.

    Delay for deferral ``n`` (0-based): :class:`~mercadofresco.retry.EqualJitterBackoff`,
    ``step/2 + uniform(0, step/2)`` with ``step = min(max_delay_s, base_delay_s * 2**n)``.
    Jitter so that a recovered dependency does not get every deferred message in the same
    second; *equal* rather than full jitter so that the total wait has a floor
    (:meth:`min_total_delay_s`) that a bound on outage length can be proved against.
    """

    base_delay_s: int = 60
    max_delay_s: int = SQS_MAX_DELAY_S
    max_deferrals: int = 12
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def __post_init__(self) -> None:
        if not 0 < self.base_delay_s <= self.max_delay_s <= SQS_MAX_DELAY_S:
            raise ValueError(f"need 0 < base_delay_s <= max_delay_s <= {SQS_MAX_DELAY_S}")
        if self.max_deferrals < 1:
            raise ValueError("max_deferrals must be >= 1")

    @property
    def backoff(self) -> EqualJitterBackoff:
        return EqualJitterBackoff(base_s=self.base_delay_s, cap_s=self.max_delay_s)

    def delay_s(self, n: int) -> int:
        return min(self.max_delay_s, round(self.backoff.compute(n, self.rng)))

    def min_total_delay_s(self) -> int:
        """The shortest outage that can exhaust the deferrals: any shorter one loses nothing."""
        return sum(math.floor(self.backoff.compute(n, _NO_JITTER)) for n in range(self.max_deferrals))


class _NoJitter(random.Random):
    """An rng whose ``uniform`` returns its lower bound: the backoff's floor."""

    def uniform(self, a: float, b: float) -> float:
        return a


_NO_JITTER = _NoJitter()


def receives_exhausted(queue: Queue, record: dict[str, Any]) -> str | None:
    """Why a deferred copy must not be tried again, or ``None``.

    SQS counts receives per copy; a copy starts at 0. So a standard queue's copy carries
    what its predecessors spent, and together they may not pass ``maxReceiveCount``: the
    queue's safety net stays one net (and the calls per message stay 2 x 4 = 8, not 8 per copy).
    FIFO copies carry nothing: their holds are receives that made no call.
    """
    previous = previous_receives(record)
    total = previous + receives(record)
    if not previous or queue.max_receives is None or total <= queue.max_receives:
        return None
    return f"{total} receives across {deferrals(record)} deferrals (maxReceiveCount {queue.max_receives})"


def defer(
    sqs: BaseClient,
    queue: Queue,
    record: dict[str, Any],
    policy: DeferralPolicy,
    function: str,
    cause: str,
    *,
    min_s: float = 0,
    counts: bool = True,
) -> None:
    """Defer ``record``; return to acknowledge it, or raise :class:`HeldMessage` to keep it (FIFO).

    ``min_s``: wait at least this long (capped at 900 s), e.g. the time the breaker says it
    stays open: a copy that comes back before the circuit can close only costs an invocation.
    ``counts=False``: a deferral that is nobody's outage (the invocation ran out of time before
    starting the record): it does not count toward ``max_deferrals`` and the copy is due
    again within :data:`HANDOVER_MAX_S`, so a slow provider cannot push messages to the DLQ.
    """
    n = deferrals(record)
    if counts and n >= policy.max_deferrals:
        detail = f"{n} deferrals while {cause}"
        send_to_dlq(sqs, queue, record, dlq.DlqReason.APLAZAMIENTOS_AGOTADOS, detail, function)
        return
    if counts:
        wait_s = max(policy.delay_s(n), min(policy.max_delay_s, math.ceil(min_s)))
    else:
        wait_s = round(policy.rng.uniform(0, HANDOVER_MAX_S))
    next_count = n + 1 if counts else n  # the copy's mf-aplazamientos
    if queue.fifo and receives(record) < (queue.max_receives or 2) - 1:
        sqs.change_message_visibility(
            QueueUrl=queue.url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=wait_s
        )
        logger.info("message held (FIFO)", espera_s=wait_s, causa=cause, message_id=record.get("messageId"))
        raise HeldMessage(f"held {wait_s} s while {cause}")
    own = {dlq.DEFERRALS_ATTRIBUTE: str(next_count)}
    message: dict[str, Any] = {"QueueUrl": queue.url, "MessageBody": record["body"]}
    if queue.fifo:
        message["MessageGroupId"] = record["attributes"]["MessageGroupId"]
        message["MessageDeduplicationId"] = f"aplazado:{record['messageId']}"
    else:
        # This receive made no call (the circuit was open); the ones before it may have.
        own[PREVIOUS_RECEIVES_ATTRIBUTE] = str(previous_receives(record) + receives(record) - 1)
        message["DelaySeconds"] = wait_s
    message["MessageAttributes"] = with_attributes(record, own)
    sqs.send_message(**message)
    logger.info(
        "message deferred", aplazamientos=next_count, espera_s=wait_s, causa=cause, message_id=record["messageId"]
    )
