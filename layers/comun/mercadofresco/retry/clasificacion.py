"""Which failures deserve a retry: the one table the whole project uses (lesson, section 6).

=============================================  ===============================================
outcome                                        :class:`Classification`
=============================================  ===============================================
HTTP 2xx/3xx                                   ``EXITO``
HTTP 429                                       ``TRANSITORIO_ESPERA_LARGA`` (honour Retry-After)
HTTP 503                                       ``TRANSITORIO`` (honour Retry-After when sent)
HTTP other 5xx                                 ``TRANSITORIO``
HTTP other 4xx                                 ``PERMANENTE`` (a business answer: 402, 404, 409…)
connection refused / reset / connect timeout   ``TRANSITORIO`` (the request never ran, or the link broke)
read timeout, idempotent operation             ``TRANSITORIO``
read timeout, non-idempotent operation         ``RESULTADO_DESCONOCIDO`` (it may have run: never retry blindly)
DynamoDB ConditionalCheckFailedException       ``NO_ES_ERROR`` (the condition's answer, e.g. "already claimed")
botocore throttling codes                      ``TRANSITORIO_ESPERA_LARGA``
botocore connect errors / 5xx                  ``TRANSITORIO``
botocore read timeout                          as an HTTP read timeout
anything else                                  ``PERMANENTE`` (a bug is not fixed by retrying)
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

    EXITO = "exito"
    NO_ES_ERROR = "no_es_error"
    PERMANENTE = "permanente"
    TRANSITORIO = "transitorio"
    TRANSITORIO_ESPERA_LARGA = "transitorio_espera_larga"
    RESULTADO_DESCONOCIDO = "resultado_desconocido"

    @property
    def reintentable(self) -> bool:
        """Whether the retry loop may try again (budget and attempts permitting)."""
        return self in (Classification.TRANSITORIO, Classification.TRANSITORIO_ESPERA_LARGA)


def classify(resultado: int | BaseException, *, idempotent: bool = False) -> Classification:
    """Classify an HTTP status or an exception raised by urllib3, botocore or the socket layer.

    Parameters
    ----------
    resultado:
        An HTTP status code, or the exception the call raised.
    idempotent:
        Whether repeating the operation is harmless (it carries an ``Idempotency-Key`` the
        provider honours, or it only reads). Decides what a read timeout means.

    Examples
    --------
    >>> classify(402)
    <Classification.PERMANENTE: 'permanente'>
    """
    if isinstance(resultado, int):
        return _por_status(resultado)
    if type(resultado).__module__.startswith("botocore"):
        return _botocore(resultado, idempotent=idempotent)
    return _red(resultado, idempotent=idempotent)


def _por_status(status: int) -> Classification:
    if status == 429:
        return Classification.TRANSITORIO_ESPERA_LARGA
    if status >= 500:
        return Classification.TRANSITORIO
    if status >= 400:
        return Classification.PERMANENTE
    return Classification.EXITO


def _lectura_agotada(idempotent: bool) -> Classification:
    return Classification.TRANSITORIO if idempotent else Classification.RESULTADO_DESCONOCIDO


def _red(exc: BaseException, *, idempotent: bool) -> Classification:
    # Order matters: urllib3's NewConnectionError subclasses ConnectTimeoutError, and both are
    # TimeoutError subclasses like ReadTimeoutError; the connect side is checked first.
    if isinstance(exc, u3.ConnectTimeoutError | u3.NewConnectionError | ConnectionRefusedError):
        return Classification.TRANSITORIO
    if isinstance(exc, u3.ReadTimeoutError | socket.timeout | TimeoutError):
        return _lectura_agotada(idempotent)
    if isinstance(exc, u3.ProtocolError | u3.SSLError | u3.ProxyError | ConnectionError):
        return Classification.TRANSITORIO  # reset/aborted: the lesson and DESIGN treat a broken link as transient
    return Classification.PERMANENTE


def _botocore(exc: BaseException, *, idempotent: bool) -> Classification:
    from botocore import exceptions as bc  # botocore only when the error came from it

    if isinstance(exc, bc.ClientError):
        error = exc.response.get("Error", {})
        codigo = error.get("Code", "")
        if codigo == "ConditionalCheckFailedException":
            return Classification.NO_ES_ERROR
        if codigo in THROTTLING_CODES:
            return Classification.TRANSITORIO_ESPERA_LARGA
        return _por_status(int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400)))
    if isinstance(exc, bc.ReadTimeoutError):
        return _lectura_agotada(idempotent)
    if isinstance(exc, bc.ConnectTimeoutError | bc.EndpointConnectionError | bc.ConnectionClosedError):
        return Classification.TRANSITORIO
    return Classification.PERMANENTE
