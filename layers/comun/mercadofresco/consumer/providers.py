"""What a provider's answer means to a consumer (the client itself: :func:`mercadofresco.http.client_from_env`).

One rule for the answer: 2xx is done, a 4xx is the provider refusing *this* message
(permanent: to the DLQ with ``dato-invalido``, never retried), and 409 means the provider
already has it (done, the duplicate it told us about).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mercadofresco.consumer.reading import InvalidMessageError
from mercadofresco.dlq import DlqReason
from mercadofresco.validation import provider_error_code

if TYPE_CHECKING:
    from mercadofresco.http import ProviderResponse

DUPLICATE_STATUS = 409  # the provider saw this Idempotency-Key's operation already


def accepted(response: ProviderResponse, dependency: str) -> dict[str, Any]:
    """The body of a successful answer; a refusal raises :class:`InvalidMessageError` (``dato-invalido``)."""
    status, body = response
    if 200 <= status < 300 or status == DUPLICATE_STATUS:
        return body
    # Only the status and a short machine code: a provider's error body may echo the customer's
    # e-mail or our request, and this detail goes to logs and to the DLQ's mf-detail.
    code = provider_error_code(body)
    raise InvalidMessageError(
        DlqReason.DATO_INVALIDO, f"{dependency} refused the message: HTTP {status} {code}".rstrip()
    )
