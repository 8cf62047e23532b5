"""What the transformed template says about resources, resolved with a run's ids: their own policies, their keys.

- :func:`politicas_de_recurso`: the resource-based policies AWS evaluates beside a caller's role — queue
  policies (``AWS::SQS::QueuePolicy``), topic policies, bucket policies, the KMS key policy, and each
  function's permissions (``AWS::Lambda::Permission``, as the statement Lambda adds for each);
- :func:`claves_de_cifrado`: the KMS key each encrypted queue, topic, secret, table and log group uses:
  a call on one of them makes the service call KMS for its caller (:mod:`least_privilege.acciones`);
- :func:`grupos_de_log` and :func:`funciones_trazadas`: where Lambda writes each function's logs, and
  which functions it traces, both with the function's role; :func:`maquinas_trazadas`: the state
  machines whose executions Step Functions traces with the state machine's role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

if TYPE_CHECKING:
    from least_privilege.roles import Resuelta

__all__ = [
    "claves_de_cifrado",
    "colas_de_la_pila",
    "funciones_trazadas",
    "grupos_de_log",
    "maquinas_trazadas",
    "politica_de",
    "politicas_de_recurso",
]

_VERSION = "2012-10-17"


def _activos(resuelta: Resuelta, tipo: str) -> dict[str, dict[str, Any]]:
    return {
        lid: r
        for lid, r in resuelta.doc["Resources"].items()
        if r["Type"] == tipo and resuelta.condition(r.get("Condition"))
    }


def _lid(referencia: Any) -> str | None:
    """The logical id a ``Ref`` or ``Fn::GetAtt`` points at."""
    if isinstance(referencia, dict) and "Ref" in referencia:
        return referencia["Ref"]
    if isinstance(referencia, dict) and "Fn::GetAtt" in referencia:
        objetivo = referencia["Fn::GetAtt"]
        return (objetivo.split(".", 1) if isinstance(objetivo, str) else objetivo)[0]
    return None


def _arn_de_cola(resuelta: Resuelta, referencia: Any) -> str:
    if (lid := _lid(referencia)) is not None and lid in resuelta.doc["Resources"]:
        return resuelta.get_att(lid, "Arn")
    url = resuelta.resolve(referencia)
    if not url.startswith("https://"):
        return url  # a queue the run did not create (Resuelta.ref): its policy matches no request
    _, cuenta, nombre = urlparse(url).path.split("/")
    return f"arn:aws:sqs:{resuelta.region}:{cuenta}:{nombre}"


def _permisos_lambda(resuelta: Resuelta) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each function's ``AWS::Lambda::Permission`` resources as the policy Lambda keeps for it (one statement each)."""
    por_funcion: dict[str, list[dict[str, Any]]] = {}
    etiquetas: dict[str, str] = {}
    for lid, recurso in _activos(resuelta, "AWS::Lambda::Permission").items():
        p = recurso["Properties"]
        funcion = _lid(p["FunctionName"])
        arn = resuelta.get_att(funcion, "Arn") if funcion else resuelta.resolve(p["FunctionName"])
        etiquetas[arn] = f"permisos de {funcion or arn.rsplit(':', 1)[-1]}"
        principal = resuelta.resolve(p["Principal"])
        condicion: dict[str, dict[str, Any]] = {}
        if "SourceArn" in p:
            condicion.setdefault("ArnLike", {})["AWS:SourceArn"] = resuelta.resolve(p["SourceArn"])
        if "SourceAccount" in p:
            condicion.setdefault("StringEquals", {})["AWS:SourceAccount"] = resuelta.resolve(p["SourceAccount"])
        if "FunctionUrlAuthType" in p:
            condicion.setdefault("StringEquals", {})["lambda:FunctionUrlAuthType"] = p["FunctionUrlAuthType"]
        sentencia = {
            "Sid": lid,
            "Effect": "Allow",
            "Principal": {"Service": principal} if principal.endswith(".amazonaws.com") else {"AWS": principal},
            "Action": resuelta.resolve(p["Action"]),
            "Resource": arn,
            **({"Condition": condicion} if condicion else {}),
        }
        por_funcion.setdefault(arn, []).append(sentencia)
    return {arn: (etiquetas[arn], {"Version": _VERSION, "Statement": s}) for arn, s in por_funcion.items()}


def politicas_de_recurso(resuelta: Resuelta) -> dict[str, tuple[str, dict[str, Any]]]:
    """Resource ARN -> ``(label, policy document)``: what AWS evaluates as that resource's own policy."""
    politicas: dict[str, tuple[str, dict[str, Any]]] = {}
    for lid, recurso in _activos(resuelta, "AWS::SQS::QueuePolicy").items():
        documento = resuelta.resolve(recurso["Properties"]["PolicyDocument"])
        for cola in recurso["Properties"]["Queues"]:
            politicas[_arn_de_cola(resuelta, cola)] = (lid, documento)
    for lid, recurso in _activos(resuelta, "AWS::SNS::TopicPolicy").items():
        documento = resuelta.resolve(recurso["Properties"]["PolicyDocument"])
        for tema in resuelta.resolve(recurso["Properties"]["Topics"]):
            politicas[tema] = (lid, documento)
    for lid, recurso in _activos(resuelta, "AWS::S3::BucketPolicy").items():
        cubo = resuelta.resolve(recurso["Properties"]["Bucket"])
        politicas[f"arn:aws:s3:::{cubo}"] = (lid, resuelta.resolve(recurso["Properties"]["PolicyDocument"]))
    for lid, recurso in _activos(resuelta, "AWS::KMS::Key").items():
        politicas[resuelta.get_att(lid, "Arn")] = (lid, resuelta.resolve(recurso["Properties"]["KeyPolicy"]))
    politicas.update(_permisos_lambda(resuelta))
    return politicas


def politica_de(politicas: dict[str, tuple[str, dict[str, Any]]], recurso: str) -> tuple[str, dict[str, Any]] | None:
    """The policy of the resource ``recurso`` names (an S3 object's is its bucket's)."""
    if recurso in politicas:
        return politicas[recurso]
    if recurso.startswith("arn:aws:s3:::") and "/" in recurso:
        return politicas.get(recurso.split("/", 1)[0])
    return None


def _arns_de_claves(resuelta: Resuelta) -> dict[str, str]:
    """Every way the template names a key (id, ARN, alias, alias ARN) -> the key's ARN."""
    nombres: dict[str, str] = {}
    for lid in _activos(resuelta, "AWS::KMS::Key"):
        arn = resuelta.get_att(lid, "Arn")
        nombres[resuelta.ref(lid)] = nombres[arn] = arn
    for recurso in _activos(resuelta, "AWS::KMS::Alias").values():
        p = resuelta.resolve(recurso["Properties"])
        destino = nombres.get(p["TargetKeyId"], p["TargetKeyId"])
        nombres[p["AliasName"]] = nombres[f"arn:aws:kms:{resuelta.region}:{resuelta.account}:{p['AliasName']}"] = (
            destino
        )
    return nombres


def _arn_de_clave(nombres: dict[str, str], resuelta: Resuelta, clave: str) -> str:
    if clave in nombres:
        return nombres[clave]
    if clave.startswith("arn:"):
        return clave
    recurso = clave if clave.startswith("alias/") else f"key/{clave}"
    return f"arn:aws:kms:{resuelta.region}:{resuelta.account}:{recurso}"


def claves_de_cifrado(resuelta: Resuelta) -> dict[str, str]:
    """Resource ARN (queue, topic, secret, table, table stream, log group without ``:*``) -> its KMS key's ARN.

    Only resources encrypted with a key of the account (a customer managed key): with an AWS owned or
    AWS managed key no policy of the stack is involved.
    """
    nombres = _arns_de_claves(resuelta)
    cifrados: dict[str, str] = {}

    def anotar(recurso: str, clave: Any) -> None:
        if clave:
            cifrados[recurso] = _arn_de_clave(nombres, resuelta, resuelta.resolve(clave))

    for lid, r in _activos(resuelta, "AWS::SQS::Queue").items():
        anotar(resuelta.get_att(lid, "Arn"), r.get("Properties", {}).get("KmsMasterKeyId"))
    for lid, r in _activos(resuelta, "AWS::SNS::Topic").items():
        anotar(resuelta.ref(lid), r.get("Properties", {}).get("KmsMasterKeyId"))
    for lid, r in _activos(resuelta, "AWS::SecretsManager::Secret").items():
        anotar(resuelta.ref(lid), r.get("Properties", {}).get("KmsKeyId"))
    for lid, r in _activos(resuelta, "AWS::Logs::LogGroup").items():
        anotar(resuelta.get_att(lid, "Arn").removesuffix(":*"), r.get("Properties", {}).get("KmsKeyId"))
    for lid, r in _activos(resuelta, "AWS::DynamoDB::Table").items():
        sse = r.get("Properties", {}).get("SSESpecification", {})
        if resuelta.resolve(sse.get("SSEType")) == "KMS" and sse.get("KMSMasterKeyId"):
            anotar(resuelta.get_att(lid, "Arn"), sse["KMSMasterKeyId"])
    return cifrados


def grupos_de_log(resuelta: Resuelta) -> dict[str, str]:
    """Function logical id -> the log group Lambda writes to (``LoggingConfig``, else ``/aws/lambda/<name>``)."""
    grupos = {}
    for lid, r in _activos(resuelta, "AWS::Lambda::Function").items():
        p = r.get("Properties", {})
        grupo = p.get("LoggingConfig", {}).get("LogGroup")
        grupos[lid] = (
            resuelta.resolve(grupo) if grupo else f"/aws/lambda/{resuelta.resolve(p.get('FunctionName', lid))}"
        )
    return grupos


def funciones_trazadas(resuelta: Resuelta) -> frozenset[str]:
    """The functions with active tracing: Lambda sends their segments to X-Ray with the function's role."""
    return frozenset(
        lid
        for lid, r in _activos(resuelta, "AWS::Lambda::Function").items()
        if resuelta.resolve(r.get("Properties", {}).get("TracingConfig", {}).get("Mode")) == "Active"
    )


def maquinas_trazadas(resuelta: Resuelta) -> dict[str, str]:
    """State machine ARN -> logical id, for those with tracing enabled (each execution sends its trace)."""
    return {
        resuelta.ref(lid): lid
        for lid, r in _activos(resuelta, "AWS::StepFunctions::StateMachine").items()
        if resuelta.resolve(r.get("Properties", {}).get("TracingConfiguration", {}).get("Enabled")) in (True, "true")
    }


def colas_de_la_pila(resuelta: Resuelta) -> frozenset[str]:
    """The ARNs of the stack's queues (a delivery to any other is a harness's tap, not the account's)."""
    return frozenset(resuelta.get_att(lid, "Arn") for lid in _activos(resuelta, "AWS::SQS::Queue"))
