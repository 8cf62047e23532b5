"""An AWS API call as IAM sees it: the action, the resource ARN and the condition keys it carries.

botocore gives the operation and its parameters; IAM authorises ``service:Action`` on an
ARN with a request context. The mapping is per service and covers what this project's code
and its state machine call; any other call is still recorded, on resource ``*`` (so a role
that grants it only on named resources denies it, and the gap shows up instead of passing).

Condition keys filled in (Service Authorization Reference):
``dynamodb:LeadingKeys`` (the partition key value of the item or key written/read),
``events:source`` / ``events:detail-type`` (per PutEvents entry), ``cloudwatch:namespace``,
``lambda:FunctionUrlAuthType`` (a SigV4-signed call to a function URL, which is
``lambda:InvokeFunctionUrl`` on the function behind that URL: :attr:`Destino.urls_funcion`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from mercadofresco_iam.evaluador import Solicitud

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["OPERACION_URL", "Destino", "solicitudes_de"]

# IAM's prefix where it differs from botocore's signing name.
_PREFIJO = {"monitoring": "cloudwatch"}
# API operation -> IAM action where they differ (a batch call is authorised as its single form).
_ACCION = {
    "sqs": {
        "SendMessageBatch": "SendMessage",
        "DeleteMessageBatch": "DeleteMessage",
        "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
    },
    "sns": {"PublishBatch": "Publish"},
    "lambda": {"Invoke": "InvokeFunction", "InvokeAsync": "InvokeFunction"},
}
OPERACION_URL = "InvokeFunctionUrl"  # mercadofresco.http.auth.FUNCTION_URL_OPERATION: what the signer announces
_FIRMADA_IAM = (("lambda:FunctionUrlAuthType", ("AWS_IAM",)),)
_TRANSACCION_DYNAMODB = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


class Destino:
    """Where a call goes: region and account, each DynamoDB table's partition key attribute, and
    which function each function URL invokes (``urls_funcion``: a URL prefix, or a path prefix for
    an emulator's path form, -> the function's ARN)."""

    def __init__(
        self,
        region: str,
        cuenta: str,
        claves_particion: Mapping[str, str] | None = None,
        urls_funcion: Mapping[str, str] | None = None,
    ) -> None:
        self.region = region
        self.cuenta = cuenta
        self.claves_particion = dict(claves_particion or {})
        self.urls_funcion = dict(urls_funcion or {})

    def arn(self, servicio: str, recurso: str) -> str:
        return f"arn:aws:{servicio}:{self.region}:{self.cuenta}:{recurso}"

    def funcion_de_url(self, url: str) -> str:
        """The ARN of the function ``url`` is a function URL of (the longest matching prefix), else ``*``."""
        ruta = urlparse(url).path
        candidatos = [p for p in self.urls_funcion if url.startswith(p) or (p.startswith("/") and ruta.startswith(p))]
        return self.urls_funcion[max(candidatos, key=len)] if candidatos else "*"


def _escalar(valor: Any) -> str:
    """A DynamoDB attribute value ({"S": "x"}) or a plain one, as text."""
    if isinstance(valor, dict) and len(valor) == 1:
        return str(next(iter(valor.values())))
    return str(valor)


def _dynamodb(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    if operacion == "TransactWriteItems":
        return [
            s
            for item in p.get("TransactItems", [])
            for tipo, cuerpo in item.items()
            for s in _dynamodb(_TRANSACCION_DYNAMODB[tipo], cuerpo, d)
        ]
    tabla = p.get("TableName", "*")
    recurso = tabla if tabla.startswith("arn:") else d.arn("dynamodb", f"table/{tabla}")
    contexto: tuple[tuple[str, tuple[str, ...]], ...] = ()
    atributo = d.claves_particion.get(tabla.rsplit("/", 1)[-1])
    item = p.get("Key") or p.get("Item")
    if atributo and item and atributo in item:
        contexto = (("dynamodb:LeadingKeys", (_escalar(item[atributo]),)),)
    return [Solicitud(f"dynamodb:{operacion}", recurso, contexto)]


def _sqs(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    if "QueueUrl" in p:
        _, cuenta, nombre = urlparse(p["QueueUrl"]).path.split("/")
        recurso = f"arn:aws:sqs:{d.region}:{cuenta}:{nombre}"
    else:
        recurso = d.arn("sqs", p.get("QueueName", "*"))
    return [Solicitud(f"sqs:{_ACCION['sqs'].get(operacion, operacion)}", recurso)]


def _sns(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    return [Solicitud(f"sns:{_ACCION['sns'].get(operacion, operacion)}", p.get("TopicArn") or p.get("TargetArn", "*"))]


def _events(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    if operacion != "PutEvents":
        return [Solicitud(f"events:{operacion}", "*")]
    solicitudes = []
    for entrada in p.get("Entries", []):
        bus = entrada.get("EventBusName", "default")
        recurso = bus if bus.startswith("arn:") else d.arn("events", f"event-bus/{bus}")
        contexto = (
            ("events:source", (entrada.get("Source", ""),)),
            ("events:detail-type", (entrada.get("DetailType", ""),)),
        )
        solicitudes.append(Solicitud("events:PutEvents", recurso, contexto))
    return solicitudes


def _secretsmanager(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    secreto = p.get("SecretId", "*")
    # A name stands for the ARN AWS gives it: the name plus "-" and six random characters.
    recurso = secreto if secreto.startswith("arn:") else d.arn("secretsmanager", f"secret:{secreto}-??????")
    return [Solicitud(f"secretsmanager:{operacion}", recurso)]


def _kms(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    clave = p.get("KeyId", "*")
    recurso = (
        clave if clave.startswith("arn:") or clave == "*" else d.arn("kms", clave if "/" in clave else f"key/{clave}")
    )
    return [Solicitud(f"kms:{operacion}", recurso)]


def _lambda(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    if operacion == OPERACION_URL:  # recorded as signed: an unsigned call is no IAM request at all
        return [Solicitud(f"lambda:{OPERACION_URL}", d.funcion_de_url(p.get("FunctionUrl", "")), _FIRMADA_IAM)]
    funcion = p.get("FunctionName", "*")
    recurso = funcion if funcion.startswith("arn:") else d.arn("lambda", f"function:{funcion}")
    return [Solicitud(f"lambda:{_ACCION['lambda'].get(operacion, operacion)}", recurso)]


def _states(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    return [Solicitud(f"states:{operacion}", p.get("stateMachineArn") or p.get("executionArn") or "*")]


def _cloudwatch(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    contexto = (("cloudwatch:namespace", (p["Namespace"],)),) if "Namespace" in p else ()
    return [Solicitud(f"cloudwatch:{operacion}", "*", contexto)]


_POR_SERVICIO: dict[str, Callable[[str, Mapping[str, Any], Destino], list[Solicitud]]] = {
    "dynamodb": _dynamodb,
    "sqs": _sqs,
    "sns": _sns,
    "events": _events,
    "secretsmanager": _secretsmanager,
    "kms": _kms,
    "lambda": _lambda,
    "states": _states,
    "cloudwatch": _cloudwatch,
}


def solicitudes_de(
    nombre_firma: str, operacion: str, parametros: Mapping[str, Any], destino: Destino
) -> list[Solicitud]:
    """The IAM requests one API call makes (a batch or transaction may make several)."""
    servicio = _PREFIJO.get(nombre_firma, nombre_firma)
    traducir = _POR_SERVICIO.get(servicio)
    if traducir is None:
        return [Solicitud(f"{servicio}:{operacion}", "*")]
    return traducir(operacion, parametros, destino)
