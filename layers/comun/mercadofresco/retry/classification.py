"""Which failures deserve a retry: the one table the whole project uses (lesson, section 6).

=============================================  ===============================================
outcome                                        :class:`Classification`
=============================================  ===============================================
HTTP 2xx/3xx                                   ``SUCCESS``
HTTP 429                                       ``TRANSIENT_LONG_WAIT`` (honour Retry-After)
HTTP 503                                       ``TRANSIENT`` (honour Retry-After when sent)
HTTP other 5xx                                 ``TRANSIENT``
HTTP other 4xx                                 ``PERMANENT`` (a business answer: 402, 404, 409…)
connection refused / reset / connect timeout   ``TRANSIENT`` (the request never ran, or the link broke)
read timeout, idempotent operation             ``TRANSIENT``
read timeout, non-idempotent operation         ``UNKNOWN_OUTCOME`` (it may have run: never retry blindly)
DynamoDB ConditionalCheckFailedException       ``NOT_AN_ERROR`` (the condition's answer, e.g. "already claimed")
botocore throttling codes                      ``TRANSIENT_LONG_WAIT``
botocore connect errors / 5xx                  ``TRANSIENT``
botocore read timeout                          as an HTTP read timeout
anything else                                  ``PERMANENT`` (a bug is not fixed by retrying)
=============================================  ===============================================
"""

from __future__ import annotations

import socket
from enum import Enum

from urllib3 import exceptions as u3

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)  # botocore's standard retry mode treats these as throttling (botocore/retries/standard.py)


class Classification(Enum):
    """What an outcome means for the caller's retry decision."""

    SUCCESS = "success"
    NOT_AN_ERROR = "not_an_error"
    PERMANENT = "permanent"
    TRANSIENT = "transient"
    TRANSIENT_LONG_WAIT = "transient_long_wait"
    UNKNOWN_OUTCOME = "unknown_outcome"

    @property
    def retryable(self) -> bool:
        """Whether the retry loop may try again (budget and attempts permitting)."""
        return self in (Classification.TRANSIENT, Classification.TRANSIENT_LONG_WAIT)


def classify(outcome: int | BaseException, *, idempotent: bool = False) -> Classification:
    """Classify an HTTP status or an exception raised by urllib3, botocore or the socket layer.

    Parameters
    ----------
    outcome:
        An HTTP status code, or the exception the call raised.
    idempotent:
        Whether repeating the operation is harmless (it carries an ``Idempotency-Key`` the
        provider honours, or it only reads). Decides what a read timeout means.

    Examples
    --------
    >>> classify(402)
    <Classification.PERMANENT: 'permanente'>
    """
    if isinstance(outcome, int):
        return _from_status(outcome)
    if type(outcome).__module__.startswith("botocore"):
        return _from_botocore(outcome, idempotent=idempotent)
    return _from_network(outcome, idempotent=idempotent)


def _from_status(status: int) -> Classification:
    if status == 429:
        return Classification.TRANSIENT_LONG_WAIT
    if status >= 500:
        return Classification.TRANSIENT
    if status >= 400:
        return Classification.PERMANENT
    return Classification.SUCCESS


def _read_timed_out(idempotent: bool) -> Classification:
    return Classification.TRANSIENT if idempotent else Classification.UNKNOWN_OUTCOME


def _from_network(exc: BaseException, *, idempotent: bool) -> Classification:
    # Order matters: urllib3's NewConnectionError subclasses ConnectTimeoutError, and both are
    # TimeoutError subclasses like ReadTimeoutError; the connect side is checked first.
    if isinstance(exc, u3.ConnectTimeoutError | u3.NewConnectionError | ConnectionRefusedError):
        return Classification.TRANSIENT
    if isinstance(exc, u3.ReadTimeoutError | socket.timeout | TimeoutError):
        return _read_timed_out(idempotent)
    if isinstance(exc, u3.ProtocolError | u3.SSLError | u3.ProxyError | ConnectionError):
        return Classification.TRANSIENT  # reset/aborted: the lesson and DESIGN treat a broken link as transient
    return Classification.PERMANENT


def _from_botocore(exc: BaseException, *, idempotent: bool) -> Classification:
    from botocore import exceptions as bc  # botocore only when the error came from it

    if isinstance(exc, bc.ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        if code == "ConditionalCheckFailedException":
            return Classification.NOT_AN_ERROR
        if code in THROTTLING_CODES:
            return Classification.TRANSIENT_LONG_WAIT
        return _from_status(int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)))
    if isinstance(exc, bc.ReadTimeoutError):
        return _read_timed_out(idempotent)
    if isinstance(exc, bc.ConnectTimeoutError | bc.EndpointConnectionError | bc.ConnectionClosedError):
        return Classification.TRANSIENT
    return Classification.PERMANENT
