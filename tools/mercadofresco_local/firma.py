"""SigV4 verification for the stand-ins that play a sandbox provider's ``AWS_IAM`` function URL.

Lambda refuses a request to an ``AWS_IAM`` function URL that is unsigned or whose signature does
not match before the function runs (403 ``{"Message": "Forbidden"}``). The local run's stand-ins do
the same where the template puts the provider behind ``AWS_IAM``: :class:`VerificadorSigV4`
recomputes the signature with botocore's ``SigV4Auth`` from the request as it arrived, the
signed headers it names and the credentials the emulated functions sign with, so a caller that
stops signing, signs for another service or region, or sends another body than it signed, fails.
Who may call (the role's ``lambda:InvokeFunctionUrl``) is the least-privilege check's
(:mod:`least_privilege`): every emulated function shares one set of credentials.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mercadofresco.http.auth import AUTH_IAM
from template_model import messaging as m
from template_model.wiring import FUNCTIONS, function_env

if TYPE_CHECKING:
    from collections.abc import Mapping

    from template_model import Template

__all__ = ["VerificadorSigV4", "urls_firmadas"]

AUTH_SUFFIX = "_AUTH"  # beside a provider's URL variable: how its caller authenticates (mercadofresco.http.auth)


def urls_firmadas(plantilla: Template) -> dict[str, str]:
    """URL variable -> the ``AWS::Lambda::Url`` it names, wherever the template tells a caller to sign.

    That is ``<variable>_AUTH`` resolving to ``AWS_IAM`` (the template sets it only where it plays the
    provider itself); the stand-in behind that variable then plays that function URL.
    """
    firmadas = {}
    for _, unidad in plantilla.walk():  # a unit's function too (the durable saga's), its URL a stack path
        for funcion in unidad.of_type(*FUNCTIONS):
            variables = function_env(unidad.doc, funcion)
            for proveedor in m.providers(unidad, funcion):
                auth = variables.get(proveedor.variable + AUTH_SUFFIX)
                if proveedor.url is not None and auth is not None and unidad.resolve(auth) == AUTH_IAM:
                    firmadas[proveedor.variable] = proveedor.url
    return firmadas


_AUTORIZACION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<clave>[^/]+)/(?P<fecha>\d{8})/(?P<region>[^/]+)/(?P<servicio>[^/]+)"
    r"/aws4_request, ?SignedHeaders=(?P<firmadas>[a-z0-9;-]+), ?Signature=(?P<firma>[0-9a-f]{64})$"
)


@dataclass(frozen=True)
class VerificadorSigV4:
    """Checks a request's ``Authorization: AWS4-HMAC-SHA256 ...`` for service ``lambda`` in ``region``."""

    clave_acceso: str
    clave_secreta: str
    token: str | None
    region: str
    servicio: str = "lambda"

    @classmethod
    def de(cls, credenciales: Mapping[str, str], region: str) -> VerificadorSigV4:
        """From ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN`` as the functions get them."""
        return cls(
            credenciales["AWS_ACCESS_KEY_ID"],
            credenciales["AWS_SECRET_ACCESS_KEY"],
            credenciales.get("AWS_SESSION_TOKEN"),
            region,
        )

    def motivo_rechazo(self, metodo: str, ruta: str, cabeceras: Mapping[str, str], cuerpo: bytes) -> str | None:
        """Why Lambda would refuse this request (``None``: correctly signed). ``cabeceras``: case-insensitive."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        partes = _AUTORIZACION.match(cabeceras.get("Authorization") or "")
        if partes is None:
            return "not signed with SigV4"
        if partes["clave"] != self.clave_acceso:
            return "signed with another access key"
        if (partes["region"], partes["servicio"]) != (self.region, self.servicio):
            return f"signed for {partes['servicio']} in {partes['region']}"
        fecha = cabeceras.get("X-Amz-Date") or ""
        if not fecha.startswith(partes["fecha"]):
            return "X-Amz-Date does not match the credential's date"
        if self.token is not None and cabeceras.get("X-Amz-Security-Token") != self.token:
            return "another session token"
        resumen = cabeceras.get("X-Amz-Content-SHA256")
        if resumen is not None and resumen != hashlib.sha256(cuerpo).hexdigest():
            return "the body is not the one signed"
        firmadas = partes["firmadas"].split(";")
        if "host" not in firmadas or any(cabeceras.get(c) is None for c in firmadas):
            return "a signed header is missing"
        peticion = AWSRequest(
            method=metodo,
            url=f"http://{cabeceras['Host']}{ruta}",
            data=cuerpo,
            headers={c: cabeceras[c] for c in firmadas},
        )
        peticion.context["timestamp"] = fecha
        firmante = SigV4Auth(Credentials(self.clave_acceso, self.clave_secreta, self.token), self.servicio, self.region)
        if firmante.signed_headers(firmante.headers_to_sign(peticion)) != partes["firmadas"]:
            return "SignedHeaders is not what SigV4 signs"
        canonica = firmante.canonical_request(peticion)
        esperada = firmante.signature(firmante.string_to_sign(peticion, canonica), peticion)
        return None if hmac.compare_digest(esperada, partes["firma"]) else "the signature does not match"
