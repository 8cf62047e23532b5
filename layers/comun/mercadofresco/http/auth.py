"""How a provider request is authenticated: a strategy of the one HTTP client, chosen from configuration.

A real provider takes its own credential (the gateway's API key as ``Authorization: Bearer``:
:class:`BearerAuth`), or none. A sandbox provider (the stack's ``simulador-*`` function URL,
``AuthType: AWS_IAM``) takes a SigV4 signature made with the function's own credentials:
:class:`FunctionUrlSigV4`, which the template selects by setting ``<URL variable>_AUTH=AWS_IAM``
only where it plays that provider. Lambda refuses an unsigned or unauthorised request before
invoking the function, so a stranger costs the account neither concurrency nor an invocation.

Each attempt is authenticated anew (:meth:`RequestAuth.headers` is called per attempt): a retry
gets a fresh ``X-Amz-Date``, as AWS wants a signature no older than five minutes.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["AUTH_IAM", "FUNCTION_URL_OPERATION", "BearerAuth", "FunctionUrlSigV4", "RequestAuth"]

AUTH_IAM = "AWS_IAM"  # the value of <URL variable>_AUTH that selects FunctionUrlSigV4
# The IAM action a signed function URL request is authorised as; botocore's signer announces it
# (event ``before-sign.lambda.InvokeFunctionUrl``), which is how a request recorder hears the call.
FUNCTION_URL_OPERATION = "InvokeFunctionUrl"


class RequestAuth(Protocol):
    """The headers one attempt is sent with, given what it sends."""

    def headers(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> dict[str, str]: ...


class BearerAuth:
    """``Authorization: Bearer <key>`` (the payment gateway's API key)."""

    def __init__(self, key: str) -> None:
        self._header = f"Bearer {key}"

    def headers(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> dict[str, str]:
        return {**headers, "Authorization": self._header}


class FunctionUrlSigV4:
    """SigV4 for a Lambda function URL: service ``lambda``, the caller's credentials and region, body hashed.

    Signed by botocore's own signer (``RequestSigner`` -> ``SigV4Auth``) on boto3's default session,
    the one every AWS client of the layer uses: the same credentials (the function's role in Lambda),
    and the same event hooks. ``X-Amz-Content-SHA256`` carries the body's hash as a signed header,
    so the body cannot be swapped under the signature.
    """

    def __init__(self, region: str | None = None, session: Any = None) -> None:
        self._region = region
        self._session = session
        self._signer: Any = None

    def _request_signer(self) -> Any:
        if self._signer is None:
            import boto3
            from botocore.model import ServiceId
            from botocore.signers import RequestSigner

            from mercadofresco.aws import region

            if self._session is None:
                if boto3.DEFAULT_SESSION is None:
                    boto3.setup_default_session()
                self._session = boto3.DEFAULT_SESSION
            credentials = self._session.get_credentials()
            if credentials is None:
                raise ValueError("a sandbox provider is behind AWS_IAM but there are no AWS credentials to sign with")
            self._signer = RequestSigner(
                ServiceId("lambda"), self._region or region(), "lambda", "v4", credentials, self._session.events
            )
        return self._signer

    def headers(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> dict[str, str]:
        from botocore.awsrequest import AWSRequest

        payload = body or b""
        request = AWSRequest(
            method=method,
            url=url,
            data=payload,
            headers={**headers, "X-Amz-Content-SHA256": hashlib.sha256(payload).hexdigest()},
        )
        self._request_signer().sign(FUNCTION_URL_OPERATION, request)
        return dict(request.headers.items())
