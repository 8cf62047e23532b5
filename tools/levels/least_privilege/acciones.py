"""An AWS API call as IAM sees it: the action, the resource ARN and the condition keys it carries.

botocore gives the operation and its parameters; IAM authorises ``service:Action`` on an
ARN with a request context. The mapping is per service and covers what this project's code
and its state machine call; any other call is still recorded, on resource ``*`` (which the
evaluator refuses to decide: the gap shows up instead of passing).

:func:`peticiones` adds what AWS itself requests because of a call (Service Authorization and each
service's KMS guide), each ``(principal, request)``:

- a call on a resource encrypted with a key of the account makes the service ask KMS *for the
  caller*, with the caller's identity and the key policy (``kms:ViaService`` =
  ``<service>.<region>.amazonaws.com``, the service's encryption context): SQS ``SendMessage`` ->
  ``kms:GenerateDataKey`` + ``kms:Decrypt``, ``ReceiveMessage`` -> ``kms:Decrypt`` (context
  ``aws:sqs:arn``; SQS Developer Guide, "Key management"); SNS ``Publish`` -> ``kms:GenerateDataKey`` +
  ``kms:Decrypt`` (``aws:sns:topicArn``; SNS Developer Guide, "Key management"); Secrets Manager
  ``GetSecretValue`` -> ``kms:Decrypt`` (``SecretARN``; Secrets Manager User Guide, "Secret encryption
  and decryption"); any DynamoDB item or stream read/write -> ``kms:Decrypt`` of the table key
  (``aws:dynamodb:tableName``, ``aws:dynamodb:subscriberId``; KMS Developer Guide, "How Amazon
  DynamoDB uses AWS KMS");
- a delivery a service makes as itself (``sns.amazonaws.com`` fanning a topic out to a queue,
  ``events.amazonaws.com`` sending a rule's event to one) carries ``aws:SourceArn`` = the topic or rule
  and needs the same data key, asked as that service (EventBridge's KMS request carries no source:
  SQS Developer Guide, "Configure KMS permissions for AWS services");
- an invocation (:data:`sam_emulator.principal.PLATFORM_INVOCATION`) makes Lambda write the
  function's log stream and, with active tracing, its X-Ray segments, with the function's role, and
  CloudWatch Logs (``logs.<region>.amazonaws.com``) asks for a data key of the log group's key
  (context ``aws:logs:arn``; CloudWatch Logs User Guide, "Encrypt log data using AWS KMS");
- an execution started (``states:StartExecution``) of a traced state machine makes Step Functions send
  its trace with the state machine's role (Step Functions Developer Guide, "AWS X-Ray and Step Functions").

Condition keys filled in (Service Authorization Reference):
``dynamodb:LeadingKeys`` (the partition key value of the item or key written/read),
``events:source`` / ``events:detail-type`` (per PutEvents entry), ``cloudwatch:namespace``,
``lambda:FunctionUrlAuthType`` and ``lambda:InvokedViaFunctionUrl`` (a SigV4-signed call to a function URL:
since October 2025 a new URL authorises it as *both* ``lambda:InvokeFunctionUrl`` and
``lambda:InvokeFunction`` on the function behind that URL, :attr:`Destino.urls_funcion`; Lambda
developer guide, "Control access to Lambda function URLs").
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from sam_emulator.principal import PLATFORM_INVOCATION

from least_privilege.evaluador import Solicitud
from least_privilege.recursos import (
    claves_de_cifrado,
    colas_de_la_pila,
    funciones_trazadas,
    grupos_de_log,
    maquinas_trazadas,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from least_privilege.roles import Resuelta

__all__ = ["OPERACION_URL", "Destino", "es_servicio", "peticiones", "solicitudes_de"]

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
_VIA_URL = (("lambda:InvokedViaFunctionUrl", ("true",)),)
_TRANSACCION_DYNAMODB = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


class Destino:
    """Where a call goes: region and account, each DynamoDB table's partition key attribute, and
    which function each function URL invokes (``urls_funcion``: a URL prefix, or a path prefix for
    an emulator's path form, -> the function's ARN); the key encrypting each resource (``claves``:
    :func:`least_privilege.recursos.claves_de_cifrado`), each function's log group and which
    functions and state machines are traced (:mod:`least_privilege.recursos`)."""

    def __init__(
        self,
        region: str,
        cuenta: str,
        claves_particion: Mapping[str, str] | None = None,
        urls_funcion: Mapping[str, str] | None = None,
        claves: Mapping[str, str] | None = None,
        grupos_de_log: Mapping[str, str] | None = None,
        trazadas: Iterable[str] = (),
        maquinas_trazadas: Mapping[str, str] | None = None,
        colas: Iterable[str] | None = None,
    ) -> None:
        self.region = region
        self.cuenta = cuenta
        self.claves_particion = dict(claves_particion or {})
        self.urls_funcion = dict(urls_funcion or {})
        self.claves = dict(claves or {})
        self.grupos_de_log = dict(grupos_de_log or {})
        self.trazadas = frozenset(trazadas)
        self.maquinas_trazadas = dict(maquinas_trazadas or {})
        self.colas = None if colas is None else frozenset(colas)  # the stack's queues, when known

    @classmethod
    def de_resuelta(
        cls, resuelta: Resuelta, claves_particion: Mapping[str, str], urls_funcion: Mapping[str, str]
    ) -> Destino:
        """The run's names, with what the resolved transformed template and its units say of keys, log groups
        and tracing (a unit's principals named ``<unit>/<logical id>``, as :func:`principales` names them)."""
        claves: dict[str, str] = {}
        grupos: dict[str, str] = {}
        trazadas: set[str] = set()
        maquinas: dict[str, str] = {}
        colas: set[str] = set()
        for prefijo, anidada in resuelta.recorrer():
            claves |= claves_de_cifrado(anidada)
            grupos |= {prefijo + lid: grupo for lid, grupo in grupos_de_log(anidada).items()}
            trazadas |= {prefijo + lid for lid in funciones_trazadas(anidada)}
            maquinas |= {arn: prefijo + lid for arn, lid in maquinas_trazadas(anidada).items()}
            colas |= colas_de_la_pila(anidada)
        return cls(
            resuelta.region,
            resuelta.account,
            claves_particion,
            urls_funcion,
            claves,
            grupos,
            frozenset(trazadas),
            maquinas,
            frozenset(colas),
        )

    def clave_de(self, recurso: str) -> str | None:
        """The key encrypting ``recurso`` (a secret named by pattern matches its ARN), or ``None``."""
        if recurso in self.claves:
            return self.claves[recurso]
        return next((k for arn, k in self.claves.items() if "?" in recurso and fnmatchcase(arn, recurso)), None)

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
    flujo = p.get("StreamArn") or p.get("ShardIterator", "").split("|", 1)[0]  # an iterator begins with its stream
    if flujo.startswith("arn:"):  # DynamoDB Streams (signing name dynamodb): authorised on the stream
        return [Solicitud(f"dynamodb:{operacion}", flujo)]
    tabla = p.get("TableName", "*")
    recurso = tabla if tabla.startswith("arn:") else d.arn("dynamodb", f"table/{tabla}")
    contexto: tuple[tuple[str, tuple[str, ...]], ...] = ()
    atributo = d.claves_particion.get(tabla.rsplit("/", 1)[-1])
    item = p.get("Key") or p.get("Item")
    if atributo and item and atributo in item:
        contexto = (("dynamodb:LeadingKeys", (_escalar(item[atributo]),)),)
    return [Solicitud(f"dynamodb:{operacion}", recurso, contexto)]


def _sqs(operacion: str, p: Mapping[str, Any], d: Destino) -> list[Solicitud]:
    if "QueueArn" in p:  # a delivery a service made (sam_emulator.moto_patches): the queue by its ARN
        recurso = p["QueueArn"]
    elif "QueueUrl" in p:
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
        funcion = d.funcion_de_url(p.get("FunctionUrl", ""))
        return [
            Solicitud(f"lambda:{OPERACION_URL}", funcion, _FIRMADA_IAM),
            Solicitud("lambda:InvokeFunction", funcion, _VIA_URL),
        ]
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


# ------------------------------------------------------------------ what AWS requests because of a call
_CON_DATOS = {"sqs:SendMessage": ("kms:GenerateDataKey", "kms:Decrypt"), "sqs:ReceiveMessage": ("kms:Decrypt",)}
_SNS = {"sns:Publish": ("kms:GenerateDataKey", "kms:Decrypt")}
_SECRETOS = {"secretsmanager:GetSecretValue": ("kms:Decrypt",)}
# Services whose own KMS request names what it delivers for (aws:SourceArn); EventBridge's does not.
_FUENTE_EN_KMS = frozenset({"sns.amazonaws.com"})
_TRAZAS = ("xray:PutTraceSegments", "xray:PutTelemetryRecords")
_FLUJO = "/stream/"
# DynamoDB decrypts the table key for a caller that reads or writes items (or stream records); it caches
# it per principal, and asks KMS again with that principal's permissions (KMS guide, "Table key").
_DATOS_DYNAMODB = frozenset(
    f"dynamodb:{a}"
    for a in (
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "ConditionCheckItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "GetRecords",
    )
)


def es_servicio(principal: str) -> bool:
    """A service principal (``sns.amazonaws.com``) rather than a logical id with a role."""
    return principal.endswith(".amazonaws.com")


def _kms(
    acciones: Iterable[str], clave: str, contexto_cifrado: dict[str, str], via: str | None, d: Destino
) -> list[Solicitud]:
    contexto = tuple((f"kms:EncryptionContext:{k}", (v,)) for k, v in contexto_cifrado.items())
    contexto += (("kms:CallerAccount", (d.cuenta,)),)
    if via is not None:  # forward access: the service asks with its caller's credentials
        contexto += (("kms:ViaService", (f"{via}.{d.region}.amazonaws.com",)), ("aws:ViaAWSService", ("true",)))
    return [Solicitud(a, clave, contexto) for a in acciones]


def _cifrado(solicitud: Solicitud, d: Destino) -> tuple[tuple[str, ...], str, dict[str, str], str] | None:
    """(KMS actions, key, encryption context, service) a service needs for ``solicitud`` on an encrypted resource."""
    accion, recurso = solicitud.accion, solicitud.recurso
    if accion in _CON_DATOS and (clave := d.clave_de(recurso)):
        return _CON_DATOS[accion], clave, {"aws:sqs:arn": recurso}, "sqs"
    if accion in _SNS and (clave := d.clave_de(recurso)):
        return _SNS[accion], clave, {"aws:sns:topicArn": recurso}, "sns"
    if accion in _SECRETOS and (clave := d.clave_de(recurso)):
        return _SECRETOS[accion], clave, {"SecretARN": recurso}, "secretsmanager"
    if accion in _DATOS_DYNAMODB and (clave := d.clave_de(recurso.split(_FLUJO, 1)[0])):
        tabla = recurso.split(_FLUJO, 1)[0].rsplit("/", 1)[-1]
        contexto = {"aws:dynamodb:tableName": tabla, "aws:dynamodb:subscriberId": d.cuenta}
        return ("kms:Decrypt",), clave, contexto, "dynamodb"
    return None


def _invocacion(principal: str, d: Destino) -> list[tuple[str, Solicitud]]:
    """What Lambda does with ``principal``'s role when it is invoked, and CloudWatch Logs' request for its key."""
    grupo = d.grupos_de_log.get(principal)
    resultado: list[tuple[str, Solicitud]] = []
    if grupo is not None:
        arn_grupo = d.arn("logs", f"log-group:{grupo}")
        flujo = f"{arn_grupo}:log-stream:2026/12/04/[$LATEST]0"  # Lambda names a stream by date and environment
        resultado += [(principal, Solicitud(a, flujo)) for a in ("logs:CreateLogStream", "logs:PutLogEvents")]
        if clave := d.clave_de(arn_grupo):
            servicio = f"logs.{d.region}.amazonaws.com"
            contexto = {"aws:logs:arn": arn_grupo}
            resultado += [(servicio, s) for s in _kms(("kms:GenerateDataKey",), clave, contexto, None, d)]
    if principal in d.trazadas:
        resultado += [(principal, Solicitud(a, "*")) for a in _TRAZAS]
    return resultado


def peticiones(
    principal: str,
    nombre_firma: str,
    operacion: str,
    parametros: Mapping[str, Any],
    destino: Destino,
    origen: str | None = None,
) -> list[tuple[str, Solicitud]]:
    """``(principal, request)`` for everything one call needs authorised: its own requests, then AWS's for it.

    ``origen`` is the resource a service principal acts for (a topic, a rule): its ``aws:SourceArn``.
    """
    if nombre_firma == "lambda" and operacion == PLATFORM_INVOCATION:
        return _invocacion(principal, destino)
    servicio = es_servicio(principal)
    if (
        servicio
        and nombre_firma == "sqs"
        and destino.colas is not None
        and parametros.get("QueueArn") not in destino.colas
    ):
        return []  # a delivery to a queue the stack does not have: a harness's tap (mf-demo's grifo)
    fuente: tuple[tuple[str, tuple[str, ...]], ...] = ()
    if servicio and origen is not None:
        fuente = (("aws:SourceArn", (origen,)), ("aws:SourceAccount", (origen.split(":")[4],)))
    resultado: list[tuple[str, Solicitud]] = []
    for solicitud in solicitudes_de(nombre_firma, operacion, parametros, destino):
        resultado.append((principal, Solicitud(solicitud.accion, solicitud.recurso, solicitud.contexto + fuente)))
        if solicitud.accion == "states:StartExecution" and (
            maquina := destino.maquinas_trazadas.get(solicitud.recurso)
        ):
            resultado += [(maquina, Solicitud(a, "*")) for a in _TRAZAS]
        if (cifrado := _cifrado(solicitud, destino)) is not None:
            acciones, clave, contexto, via = cifrado
            if not servicio:
                resultado += [(principal, s) for s in _kms(acciones, clave, contexto, via, destino)]
            else:
                kms = _kms(acciones, clave, contexto, None, destino)
                propia = fuente if principal in _FUENTE_EN_KMS else ()
                resultado += [(principal, Solicitud(s.accion, s.recurso, s.contexto + propia)) for s in kms]
    return resultado
