"""What the emulated account (MiniStack) lacks, each gap with its reason and what covers it instead.

This is the ONE place the deploy level departs from what a user deploys: :func:`adapt` rewrites the
``sam build`` output (``.aws-sam/deploy-<arch>/template.yaml``, never ``template.yaml``) before
``sam deploy`` reads it, and :data:`GAPS` is the list the README's Tests section repeats. A gap that
the emulator closes in a later version is removed here, and the level then deploys that resource.
"""

from __future__ import annotations

import contextlib
import json
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@dataclass(frozen=True, slots=True)
class Gap:
    what: str
    reason: str
    covered_by: str


GAPS = (
    Gap(
        "AWS::Events::Archive (ArchivoBusMercadoFresco) is dropped",
        "MiniStack 1.5.33 rejects the change set: 'Unrecognized resource types: [AWS::Events::Archive]'",
        "cfn-lint and checkov validate it; the local run (moto) archives and replays the bus's events",
    ),
    Gap(
        "AWS::FIS::ExperimentTemplate (the ExperimentoCaos* resources, Chaos=enabled only) is dropped",
        "MiniStack 1.5.33 has no FIS: a change set naming the type is rejected even while its condition is false",
        "cfn-lint (both rule sets) and checkov on the template with Chaos=enabled; the generator's output pinned "
        "by tests/unit/caos/test_fis.py; the same fault kinds injected by the local chaos campaign (mf-caos --local)",
    ),
    Gap(
        "CloudWatch alarms with metric math (Metrics:) are dropped",
        "MiniStack creates AWS::CloudWatch::Alarm only from a single MetricName",
        "cfn-lint validates them; the single-metric alarms (every DLQ > 0, 5 min) are deployed",
    ),
    Gap(
        "a Lambda function URL handed to the stack's own functions becomes MiniStack's path form "
        "http://<gateway>/_aws/lambda-url/<id>/",
        "MiniStack answers GetAtt FunctionUrl with AWS's name https://<id>.lambda-url.<region>.on.aws/, which "
        "resolves to the real AWS from the containers (no such function there, or no internet): every call to "
        "the sandbox providers failed, so no order was ever charged",
        "the same simulador-* functions and paths; only the scheme and host differ (no TLS on that hop)",
    ),
    Gap(
        "a function URL with AuthType AWS_IAM admits any SigV4-looking request (nothing is changed)",
        "MiniStack 1.5.33 refuses an unsigned request (403) but checks neither the signature nor the caller's "
        "lambda:InvokeFunctionUrl grant (services/lambda_svc.py, _function_url_is_signed)",
        "the local run's stand-ins recompute each signature with botocore and refuse a wrong one "
        "(mercadofresco_local.proveedores.VerificadorSigV4); each signed call is recorded as "
        "lambda:InvokeFunctionUrl on its simulator and evaluated against the caller's role (mercadofresco_iam), "
        "here as in the local run and the chaos campaign",
    ),
    Gap(
        "a generated secret's ExcludePunctuation becomes the equivalent ExcludeCharacters",
        "MiniStack's CloudFormation honours only ExcludeCharacters: a generated value came out with '?', '#' "
        "or '/' (a URL token once cut its URL, and every provider call was answered 404)",
        "the same generated secret, with the same characters excluded",
    ),
    Gap(
        "the sandbox providers are invoked once before the orders (a GET, answered 405, no effect)",
        "a cold start in MiniStack is a container start plus the imports on 2 shared cores, 5-15 s, above the "
        "providers' 8 s read timeout (Lambda's is about 1 s); a charge would start as 'answer lost'",
        "nothing is skipped: the first order still meets cold consumers, and the timeout path is the local "
        "run's and the chaos campaign's (warm_providers)",
    ),
    Gap(
        "a Pipe whose source is an SQS queue (pipe-mf-pedidos) is run by the local run's Pipe emulation",
        "MiniStack's Pipes poll DynamoDB streams only: orders reached cola-mercadofresco-pedidos and no "
        "execution ever started",
        "mercadofresco_local.pipes (the local run's: BatchSize, FilterCriteria, InputTemplate, FIRE_AND_FORGET "
        "start, the queue's own redrive) against the deployed queue and state machine (sqs_pipes_running)",
    ),
    Gap(
        "pipe-mf-carritos (DynamoDB stream -> event bus) is deployed but not exercised",
        "MiniStack's Pipes deliver to Step Functions and SNS only",
        "the local run (make demo ESCENARIO=normal: expired carts get one reminder) and its tests",
    ),
    Gap(
        "the HTTP API's routes are created after the deploy, through the API Gateway v2 API",
        "MiniStack creates AWS::ApiGatewayV2::Api without importing the OpenAPI Body SAM translates the "
        "functions' HttpApi events into: the API had no route and answered every request 404",
        "the same routes (method and path from each HttpApi event), AWS_IAM auth, a payload 2.0 Lambda proxy "
        "integration to the same function (add_http_api_routes)",
    ),
    Gap(
        "mf-smoke calls the store API at MiniStack's path form http://<gateway>/_aws/execute-api/<id>/$default",
        "the stack's TiendaApiUrl output is AWS's name https://<id>.execute-api.<region>.amazonaws.com, "
        "which resolves to the real AWS",
        "the same API id, routes and SigV4-signed requests (api_url_in_gateway; the template is not changed)",
    ),
    Gap(
        "the functions trust the level's CA (SSL_CERT_FILE and AURORA_SSLROOTCERT in every Lambda container)",
        "the level's PostgreSQL and Valkey speak TLS like Aurora and ElastiCache, with a certificate of its own "
        "CA; ElastiCache's chains to a public CA the runtime already trusts",
        "TLS and passwords are still required and verified (emulated_account.infraestructura)",
    ),
    Gap(
        "Chaos=enabled: the FIS Lambda extension is a stand-in layer published in the emulated account, and "
        "the public SSM parameter /aws/service/fis/lambda-extension/AWS-FIS-extension-<arch>/1.x.x names it",
        "MiniStack has neither AWS's public parameters nor AWS's layers; the stand-in's /opt/aws-fis/bootstrap "
        "only execs the runtime (no fault; the level's image's bootstrap does not run AWS_LAMBDA_EXEC_WRAPPER "
        "anyway), so a Chaos=enabled stack runs exactly as a disabled one until an experiment starts",
        "the stack's own Chaos=enabled resources deploy (layer reference, wrapper variables, configuration "
        "bucket and policy, FIS role) and an order still confirms; the faults themselves are the local chaos "
        "campaign's (mf-caos --local); the experiment templates as in the FIS gap above (fis_extension_stand_in)",
    ),
    Gap(
        "every function container and the state machine's tasks carry the request recorder (an observation)",
        "MiniStack evaluates no role unless AUTH=true, and then with its own partial evaluator: the "
        "least-privilege check is mercadofresco_iam's, over the transformed template's roles, as for the "
        "local run and the chaos campaign",
        "nothing is changed: each call is written as one JSON line, then made as it was "
        "(recorder_docker_flags, ministack_del_nivel.py, mercadofresco_iam.desplegado)",
    ),
    Gap(
        "the least-privilege check reads a secret's Ref as its ARN, and a secret asked for by name as its ARN",
        "MiniStack's Ref of AWS::SecretsManager::Secret is the secret's name (AWS's is its ARN): the functions "
        "get the name, and a role's statement on the name would match no request",
        "IAM authorises a secret by its ARN however it is named: the ARN is the account's (DescribeSecret)",
    ),
    Gap(
        "MiniStack lets a new stack create a retained table, queue or key whose name already exists: the "
        "level checks the retained resources itself instead of relying on the create to fail",
        "AWS fails that create (the name exists: AlreadyExists / ResourceInUseException) and rolls back; "
        "MiniStack 1.5.33 replaces the table and the queue with new empty ones and makes a second key, so the "
        "dead letters and idempotency records are lost silently. Measured: a stack with a Retain KMS key, table "
        "and queue holding an item and a message, deleted, created again: CREATE_COMPLETE, both empty, two keys",
        "after sam delete the level asserts the retained resources are there and in no stack; mf-retenidos "
        "adoptar imports them (MiniStack runs IMPORT change sets as CloudFormation does); the second deploy's "
        "change set must plan no replacement of them, and after it the stack must own the same physical ids "
        "(the key's included) and still hold the dead letter and the first orders' records left before the "
        "delete (tests/deploy; nivel.fuera_de_pila, nivel.reemplazos_del_despliegue)",
    ),
    Gap(
        "Tracing: Active has no effect",
        "MiniStack's Docker executor runs AWS's Runtime Interface Emulator, which has no X-Ray",
        "nothing here; the functions' X-Ray SDK use is exercised by the unit tests",
    ),
)

# The built template's shapes these gaps match.
_DROPPED_TYPES = frozenset({"AWS::Events::Archive", "AWS::FIS::ExperimentTemplate"})
_FUNCTION_URL = re.compile(r"\$\{([A-Za-z0-9]+)\.FunctionUrl\}")


def _dropped(recurso: dict[str, Any]) -> bool:
    tipo = recurso.get("Type")
    if tipo in _DROPPED_TYPES:
        return True
    return tipo == "AWS::CloudWatch::Alarm" and "Metrics" in recurso.get("Properties", {})


def _without_punctuation(recurso: dict[str, Any]) -> dict[str, Any]:
    generado = recurso.get("Properties", {}).get("GenerateSecretString")
    if recurso.get("Type") != "AWS::SecretsManager::Secret" or not (generado or {}).get("ExcludePunctuation"):
        return recurso
    excluidos = "".join(dict.fromkeys(generado.get("ExcludeCharacters", "") + string.punctuation))
    return {
        **recurso,
        "Properties": {**recurso["Properties"], "GenerateSecretString": {**generado, "ExcludeCharacters": excluidos}},
    }


def _url_in_gateway(gateway: str, recurso_url: str) -> dict[str, Any]:
    """``http://<gateway>/_aws/lambda-url/<id>/``, the id cut from the URL MiniStack returns."""
    host = {"Fn::Select": [2, {"Fn::Split": ["/", {"Fn::GetAtt": [recurso_url, "FunctionUrl"]}]}]}
    url_id = {"Fn::Select": [0, {"Fn::Split": [".", host]}]}
    return {"Fn::Join": ["", [f"http://{gateway}/_aws/lambda-url/", url_id, "/"]]}


def _rewrite_subs(nodo: Any, gateway: str) -> Any:
    """Every ``Fn::Sub`` naming ``${X.FunctionUrl}`` gets that variable bound to the gateway's form."""
    if isinstance(nodo, list):
        return [_rewrite_subs(n, gateway) for n in nodo]
    if not isinstance(nodo, dict):
        return nodo
    if set(nodo) == {"Fn::Sub"}:
        cuerpo = nodo["Fn::Sub"]
        texto, variables = (cuerpo, {}) if isinstance(cuerpo, str) else (cuerpo[0], dict(cuerpo[1]))
        urls = _FUNCTION_URL.findall(texto)
        if urls:
            for recurso_url in urls:
                variables[f"{recurso_url}EnEmulador"] = _url_in_gateway(gateway, recurso_url)
            texto = _FUNCTION_URL.sub(lambda m: "${" + m[1] + "EnEmulador}", texto)
            return {"Fn::Sub": [texto, {k: _rewrite_subs(v, gateway) for k, v in variables.items()}]}
    return {k: _rewrite_subs(v, gateway) for k, v in nodo.items()}


def _references(nodo: Any, nombres: frozenset[str]) -> set[str]:
    """Which of ``nombres`` ``nodo`` still mentions (Ref, GetAtt, Sub, DependsOn)."""
    if isinstance(nodo, list):
        return set().union(*(_references(n, nombres) for n in nodo)) if nodo else set()
    if isinstance(nodo, dict):
        return set().union(*(_references(v, nombres) for v in nodo.values())) if nodo else set()
    if isinstance(nodo, str):
        return {n for n in nombres if n == nodo or nodo.startswith(n + ".") or "${" + n in nodo}
    return set()


def adapt(plantilla: dict[str, Any], gateway: str) -> dict[str, Any]:
    """The built template as the emulator can deploy it; ``ValueError`` if a dropped resource is still used."""
    recursos = plantilla["Resources"]
    quitados = frozenset(n for n, r in recursos.items() if _dropped(r))
    restantes = {n: r for n, r in recursos.items() if n not in quitados}
    usados = _references({**plantilla, "Resources": restantes}, quitados)
    if usados:
        raise ValueError(f"resources dropped for the emulator are still referenced: {sorted(usados)}")
    restantes = {n: _without_punctuation(r) for n, r in restantes.items()}
    return _rewrite_subs({**plantilla, "Resources": restantes}, gateway)


def adapt_file(ruta: Path, gateway: str, log: Callable[[str], None] = print) -> None:
    """:func:`adapt` on a built template, in place (``sam deploy`` then reads it)."""
    from samcli.yamlhelper import yaml_dump, yaml_parse

    plantilla = yaml_parse(ruta.read_text())
    adaptada = adapt(plantilla, gateway)
    quitados = sorted(set(plantilla["Resources"]) - set(adaptada["Resources"]))
    ruta.write_text(yaml_dump(adaptada))
    log(f"emulator gaps: dropped {', '.join(quitados)}; function URLs via http://{gateway}/_aws/lambda-url/")


def api_url_in_gateway(url_aws: str, gateway: str) -> str:
    """``https://<id>.execute-api.<region>.amazonaws.com[/...]`` -> MiniStack's path form of the same API."""
    from urllib.parse import urlsplit

    partes = urlsplit(url_aws)
    api_id = (partes.hostname or "").split(".", 1)[0]
    return f"http://{gateway}/_aws/execute-api/{api_id}/$default{partes.path.rstrip('/')}"


def http_api_routes(plantilla: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(api, function, "METHOD /path")`` for every function event of type ``HttpApi``, as the template says."""
    rutas = []
    for nombre, recurso in plantilla["Resources"].items():
        if recurso.get("Type") != "AWS::Serverless::Function":
            continue
        for evento in recurso.get("Properties", {}).get("Events", {}).values():
            if evento.get("Type") == "HttpApi":
                propiedades = evento["Properties"]
                rutas.append((propiedades["ApiId"]["Ref"], nombre, f"{propiedades['Method']} {propiedades['Path']}"))
    return rutas


def add_http_api_routes(plantilla: dict[str, Any], pila: str, cliente: Callable[[str], Any]) -> list[str]:
    """Create in the deployed HTTP APIs the routes MiniStack left out; the route keys created."""
    apigw, lam = cliente("apigatewayv2"), cliente("lambda")
    fisicos = _fisicos(cliente("cloudformation"), pila)
    integraciones: dict[tuple[str, str], str] = {}
    creadas = []
    for api, funcion, ruta in http_api_routes(plantilla):
        api_id = fisicos[api]
        if (api_id, funcion) not in integraciones:
            arn = lam.get_function(FunctionName=fisicos[funcion])["Configuration"]["FunctionArn"]
            integraciones[api_id, funcion] = apigw.create_integration(
                ApiId=api_id, IntegrationType="AWS_PROXY", IntegrationUri=arn, PayloadFormatVersion="2.0"
            )["IntegrationId"]
        auth = plantilla["Resources"][api].get("Properties", {}).get("Auth", {}).get("DefaultAuthorizer")
        apigw.create_route(
            ApiId=api_id,
            RouteKey=ruta,
            AuthorizationType="AWS_IAM" if auth == "AWS_IAM" else "NONE",
            Target=f"integrations/{integraciones[api_id, funcion]}",
        )
        creadas.append(ruta)
    return creadas


def _fisicos(cfn: Any, pila: str) -> dict[str, str]:
    return {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cfn.describe_stack_resources(StackName=pila)["StackResources"]
    }


@contextlib.contextmanager
def sqs_pipes_running(plantilla: dict[str, Any], pila: str, cliente: Callable[[str], Any]) -> Iterator[list[str]]:
    """While the block lasts, every deployed Pipe with an SQS source runs in this process.

    Source and target ARNs are the deployed pipe's (``DescribePipe``); batch size, filters and input
    template the template's (MiniStack's ``DescribePipe`` leaves them out). The clients of
    :mod:`mercadofresco_local.pipes` follow ``AWS_ENDPOINT_URL``: the caller points it at the emulator.
    """
    from sam_emulator.pipes import Target, sqs_pipe

    fisicos, pipes = _fisicos(cliente("cloudformation"), pila), cliente("pipes")
    mapeos = []
    for nombre, recurso in plantilla["Resources"].items():
        if recurso.get("Type") != "AWS::Pipes::Pipe":
            continue
        desplegado = pipes.describe_pipe(Name=fisicos[nombre])
        if not desplegado["Source"].startswith("arn:aws:sqs:"):
            continue
        propiedades = recurso["Properties"]
        fuente, destino = propiedades.get("SourceParameters", {}), propiedades.get("TargetParameters", {})
        filtros = [json.loads(f["Pattern"]) for f in fuente.get("FilterCriteria", {}).get("Filters", [])]
        objetivo = Target(
            pipe_name=desplegado["Name"],
            arn=desplegado["Target"],
            parameters=destino,
            input_template=destino.get("InputTemplate"),
            functions=None,  # type: ignore[arg-type]  # a Lambda target is MiniStack's to call, not ours
        )
        mapeos.append(sqs_pipe(desplegado["Name"], desplegado["Source"], objetivo, fuente, filtros, 1.0))
    for mapeo in mapeos:
        mapeo.start()
    try:
        yield [m.name for m in mapeos]
    finally:
        for mapeo in mapeos:
            mapeo.stop()


def warm_providers(plantilla: dict[str, Any], pila: str, cliente: Callable[[str], Any]) -> list[str]:
    """Invoke once every function behind a function URL (the sandbox providers) with a GET: 405, no effect."""
    lam, fisicos = cliente("lambda"), _fisicos(cliente("cloudformation"), pila)
    calentadas = []
    for recurso in plantilla["Resources"].values():
        if recurso.get("Type") != "AWS::Lambda::Url":
            continue
        funcion = fisicos[recurso["Properties"]["TargetFunctionArn"]["Fn::GetAtt"][0]]
        evento = {"version": "2.0", "rawPath": "/", "requestContext": {"http": {"method": "GET"}}, "headers": {}}
        lam.invoke(FunctionName=funcion, Payload=json.dumps(evento).encode())
        calentadas.append(funcion)
    return calentadas


# The recorder's source (a sitecustomize, stdlib only) and where the containers write, inside them.
RECORDER_SOURCE = Path(__file__).resolve().parents[1] / "mercadofresco_iam" / "en_contenedor"
_RECORDER_IN_CONTAINER = "/var/mf-iam-codigo"
_RECORDS_IN_CONTAINER = "/var/mf-iam-registro"


def recorder_docker_flags(registro: Path) -> str:
    """``docker run`` flags (MiniStack's LAMBDA_DOCKER_FLAGS) that record each function's AWS requests.

    The recorder is on ``PYTHONPATH`` (the runtime's bootstrap appends it after the code and the layers,
    still before the standard library, where ``sitecustomize`` is looked up) and writes to ``registro``.
    """
    return (
        f"-v {RECORDER_SOURCE}:{_RECORDER_IN_CONTAINER}:ro -v {registro}:{_RECORDS_IN_CONTAINER} "
        f"-e PYTHONPATH={_RECORDER_IN_CONTAINER} -e MF_IAM_REGISTRO={_RECORDS_IN_CONTAINER}"
    )


FIS_EXTENSION_PARAMETER = "/aws/service/fis/lambda-extension/AWS-FIS-extension-{arquitectura}/1.x.x"
# AWS runs the wrapper with the runtime's command line as its arguments: exec'ing them is "no fault".
FIS_STAND_IN_BOOTSTRAP = """#!/bin/sh
# Stand-in for the FIS Lambda extension in the emulated account (tools/emulated_account/gaps.py): no fault.
exec "$@"
"""


def _stand_in_zip() -> bytes:
    import io
    import zipfile

    contenido = io.BytesIO()
    with zipfile.ZipFile(contenido, "w") as zf:
        entrada = zipfile.ZipInfo("aws-fis/bootstrap")
        entrada.external_attr = 0o100755 << 16  # executable, as AWS's is
        zf.writestr(entrada, FIS_STAND_IN_BOOTSTRAP)
    return contenido.getvalue()


def fis_extension_stand_in(cliente: Callable[[str], Any], arquitectura: str, parametros_publicos: Path) -> str:
    """Publish the stand-in extension layer and the public SSM parameter ``Chaos=enabled`` resolves; its ARN.

    An account cannot write under ``/aws/`` (MiniStack refuses it as AWS does): the parameter goes to
    the emulator's public parameters, ``parametros_publicos`` (``MiniStack.parametros_publicos``).
    """
    capa = cliente("lambda").publish_layer_version(
        LayerName=f"stand-in-aws-fis-extension-{arquitectura}",
        Description="emulated account only: execs the runtime, injects no fault (tools/emulated_account/gaps.py)",
        Content={"ZipFile": _stand_in_zip()},
        CompatibleArchitectures=[arquitectura],
    )["LayerVersionArn"]
    publicos = json.loads(parametros_publicos.read_text()) if parametros_publicos.exists() else {}
    publicos[FIS_EXTENSION_PARAMETER.format(arquitectura=arquitectura)] = capa
    parametros_publicos.write_text(json.dumps(publicos, indent=1))
    return capa
