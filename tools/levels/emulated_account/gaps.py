"""What the emulated account (MiniStack) lacks, each gap with its reason and what covers it instead.

This is the ONE place the emulated account departs from what a user deploys into AWS: :func:`adapt_file`
rewrites the ``sam build`` output (``.aws-sam/emulated-<arch>/``, never ``template.yaml``) before
``sam deploy`` reads it; :func:`add_http_api_routes` and :func:`warm_providers` act in the account after
the deploy; ``ministack_del_nivel.py`` and ``ministack_recursos.py`` change MiniStack itself, each for a
gap listed here. :data:`GAPS` is the list ``docs/emulated-account.md`` repeats (a test keeps them equal).
A gap that MiniStack closes in a later version is removed here, and the account then runs that part.
Templates are read through :mod:`template_model` (loops expanded, nested units walked).
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping


@dataclass(frozen=True, slots=True)
class Gap:
    summary: str  # one line of docs/emulated-account.md's list
    what: str
    reason: str
    covered_by: str


GAPS = (
    Gap(
        "Aurora, ElastiCache Serverless, the elastic IP and the NAT gateway are created through MiniStack's own "
        "APIs by handlers the account adds to its CloudFormation: real PostgreSQL 17 and Valkey 8.1, TLS "
        "verified.",
        "Aurora (AWS::RDS::DBCluster/DBInstance), ElastiCache Serverless, the elastic IP and the NAT gateway are "
        "created through MiniStack's RDS, ElastiCache and EC2 APIs by handlers the account adds to its "
        "CloudFormation (ministack_recursos.py)",
        "MiniStack 1.5.33's CloudFormation makes Aurora a record only (an endpoint nothing answers, no "
        "MasterUserSecret) and has no handler for AWS::ElastiCache::ServerlessCache, AWS::EC2::EIP or "
        "AWS::EC2::NatGateway (the change set is refused); its APIs run PostgreSQL and Valkey in Docker",
        "the default profile deploys whole: the cluster's PostgreSQL 17 (TLS, verify-full on the endpoint's "
        "name, the managed master secret, the migrations custom resource) and a TLS-only Valkey 8.1 serverless "
        "cache are the ones the orders go through",
    ),
    Gap(
        "The serverless cache's users and passwords are applied to its Valkey (MiniStack keeps no password): the "
        "AUTH token is required.",
        "the serverless cache's user group is applied to its Valkey (ACL SETUSER with each user's password)",
        "MiniStack keeps no ElastiCache user password: the cache answered any AUTH, or none",
        "the functions authenticate with the generated token, as on ElastiCache (a wrong one is refused)",
    ),
    Gap(
        "A nested stack's template is transformed and its dynamic references resolved, as a root stack's "
        "(MiniStack does both in a root stack only).",
        "a nested stack's template goes through MiniStack's own transforms with the parameters its parent passes, "
        "and its resources' properties through its own `{{resolve:...}}` resolution (ministack_del_nivel.py)",
        "MiniStack 1.5.33 applies transforms and resolves dynamic references in a root stack only: the sandbox "
        "unit (a SAM template) failed as 'Unsupported resource type: AWS::Serverless::LayerVersion', the Valkey "
        "unit's password and the sandbox's FIS extension reached their handlers as written",
        "the units deploy as CloudFormation deploys them (CloudFormation transforms a nested template that "
        "declares a transform, given CAPABILITY_AUTO_EXPAND on the parent)",
    ),
    Gap(
        "Conditions testing a list parameter with `Fn::Join` are evaluated as CloudFormation does (MiniStack's "
        'made "no SubnetIds" false).',
        "conditions that test a list parameter with Fn::Join are evaluated as CloudFormation evaluates them",
        "MiniStack's condition evaluator compares an Fn::Join as its text: 'no SubnetIds given' was always false, "
        "so the default profile created no network and no databases",
        "the same conditions, unchanged (ministack_del_nivel.py)",
    ),
    Gap(
        "Not deployed: RDS Proxy (`RdsProxy=enabled`) and the `prueba` profile's NAT instance: no handler in "
        "MiniStack, and its proxy carries no connection. cfn-lint and checkov check them.",
        "RdsProxy=enabled (RDS Proxy) and NatGateway=instance (the prueba profile's NAT instance) are not "
        "deployed in the account",
        "MiniStack 1.5.33's CloudFormation has no handler for AWS::RDS::DBProxy, DBProxyTargetGroup, "
        "AWS::EC2::Instance, NetworkInterface, EIPAssociation, SecurityGroupIngress/Egress, and its RDS Proxy "
        "is metadata only (no connection goes through it)",
        "cfn-lint, checkov (make lint scans the prueba profile's copy) and the template tests; the default "
        "profile (no proxy, a NAT gateway) is what the account deploys",
    ),
    Gap(
        "No network isolation: the VPC, subnets, security groups, endpoints and NAT are records; every container "
        "reaches every other.",
        "the VPC, subnets, security groups, endpoints and NAT are records: nothing is isolated",
        "MiniStack's EC2 has no data path: every container reaches every other on the account's Docker "
        "network, whatever the security groups allow",
        "cfn-lint and the rule pack check the security groups' ports and sources; the functions still reach "
        "Aurora and Valkey only by the endpoints the stack gives them",
    ),
    Gap(
        "The functions trust MiniStack's RDS and ElastiCache CAs (`SSL_CERT_FILE`, `AURORA_SSLROOTCERT`); TLS is "
        "still verified.",
        "the functions trust MiniStack's RDS and ElastiCache CAs (SSL_CERT_FILE and AURORA_SSLROOTCERT in every "
        "Lambda container)",
        "the account's PostgreSQL and Valkey certificates chain to CAs MiniStack mints per run, not to Amazon's "
        "(the layer's RDS bundle) nor to a public CA",
        "TLS is still required and verified: verify-full against the cluster endpoint's name, the cache's "
        "address in its certificate",
    ),
    Gap(
        "`AWS::Events::Archive` is dropped (unsupported); the local run archives and replays the bus.",
        "AWS::Events::Archive (ArchivoBusMercadoFresco) is dropped",
        "MiniStack 1.5.33 rejects the change set: 'Unrecognized resource types: [AWS::Events::Archive]'",
        "cfn-lint and checkov validate it; the local run (moto) archives and replays the bus's events",
    ),
    Gap(
        "FIS experiment templates (`Chaos=enabled`) are dropped (no FIS); the faults are the local chaos campaign's.",
        "AWS::FIS::ExperimentTemplate (the ExperimentoCaos* resources, Chaos=enabled only) is dropped",
        "MiniStack 1.5.33 has no FIS: a change set naming the type is rejected even while its condition is false",
        "cfn-lint (both rule sets) and checkov on the template with Chaos=enabled; the generator's output pinned "
        "by tests/unit/caos/test_fis.py; the same fault kinds injected by the local chaos campaign (mf-caos --local)",
    ),
    Gap(
        "Alarms with metric math are dropped (single-metric alarms only); the DLQ alarms are deployed.",
        "CloudWatch alarms with metric math (Metrics:) are dropped",
        "MiniStack creates AWS::CloudWatch::Alarm only from a single MetricName",
        "cfn-lint validates them; the single-metric alarms (every DLQ > 0, 5 min) are deployed",
    ),
    Gap(
        "Function URLs reach the functions in MiniStack's path form `http://<gateway>/_aws/lambda-url/<id>/` (no "
        "TLS on that hop).",
        "a Lambda function URL handed to the stack's own functions becomes MiniStack's path form "
        "http://<gateway>/_aws/lambda-url/<id>/",
        "MiniStack answers GetAtt FunctionUrl with AWS's name https://<id>.lambda-url.<region>.on.aws/, which "
        "resolves to the real AWS from the containers (no such function there, or no internet): every call to "
        "the sandbox providers failed, so no order was ever charged",
        "the same simulador-* functions and paths; only the scheme and host differ (no TLS on that hop)",
    ),
    Gap(
        "`AWS_IAM` function URLs check no signature; the local run's stand-ins verify them, the least-privilege "
        "check evaluates each call.",
        "a function URL with AuthType AWS_IAM admits any SigV4-looking request (nothing is changed)",
        "MiniStack 1.5.33 refuses an unsigned request (403) but checks neither the signature nor the caller's "
        "lambda:InvokeFunctionUrl and lambda:InvokeFunction grants (services/lambda_svc.py, _function_url_is_signed)",
        "the local run's stand-ins recompute each signature with botocore and refuse a wrong one "
        "(mercadofresco_local.proveedores.VerificadorSigV4); each signed call is recorded as "
        "lambda:InvokeFunctionUrl and lambda:InvokeFunction on its simulator and evaluated against the caller's "
        "role (least_privilege), here as in the local run and the chaos campaign",
    ),
    Gap(
        "A generated secret's `ExcludePunctuation` is also written as `ExcludeCharacters` (MiniStack honours only"
        " that).",
        "a generated secret's ExcludePunctuation becomes the equivalent ExcludeCharacters",
        "MiniStack's CloudFormation honours only ExcludeCharacters: a generated value came out with '?', '#' "
        "or '/' (a URL token once cut its URL, and every provider call was answered 404)",
        "the same generated secret, with the same characters excluded",
    ),
    Gap(
        "The sandbox providers are invoked once after a deploy (a cold start there is longer than their callers' "
        "8 s timeout).",
        "the sandbox providers are invoked once after a deploy (a GET, answered 405, no effect)",
        "a cold start in MiniStack is a container start plus the imports on 2 shared cores, 5-15 s, above the "
        "providers' 8 s read timeout (Lambda's is about 1 s); a charge would start as 'answer lost'",
        "nothing is skipped: the first order still meets cold consumers, and the timeout path is the local "
        "run's and the chaos campaign's (warm_providers)",
    ),
    Gap(
        "The order pipe (SQS source) is run by the account's own bridge from what `DescribePipe` answers: "
        "MiniStack's Pipes poll DynamoDB streams only.",
        "a pipe whose source is an SQS queue (pipe-mf-pedidos) is run by the account's own bridge, from the "
        "deployed pipe's configuration (ListPipes, DescribePipe)",
        "MiniStack's Pipes poll DynamoDB streams only (1.5.33, the newest on PyPI): orders reached "
        "cola-mercadofresco-pedidos and no execution started; its DescribePipe also left out SourceParameters "
        "and TargetParameters, which the account now keeps and answers as AWS does (ministack_del_nivel.py)",
        "sam_emulator.pipes (the local run's: BatchSize, FilterCriteria, InputTemplate, FIRE_AND_FORGET start, "
        "the queue's own redrive) on what DescribePipe answers, never the template (puente_pipes.py)",
    ),
    Gap(
        "The carts pipe (DynamoDB stream to the bus) is deployed but not exercised: MiniStack's Pipes deliver to "
        "Step Functions and SNS only; the local run covers it.",
        "pipe-mf-carritos (DynamoDB stream -> event bus) is deployed but not exercised",
        "MiniStack's Pipes deliver to Step Functions and SNS only",
        "the local run (make demo ESCENARIO=normal: expired carts get one reminder) and its tests",
    ),
    Gap(
        "The HTTP API's routes are created after each deploy (MiniStack ignores the OpenAPI body SAM generates).",
        "the HTTP API's routes are created after the deploy, through the API Gateway v2 API",
        "MiniStack creates AWS::ApiGatewayV2::Api without importing the OpenAPI Body SAM translates the "
        "functions' HttpApi events into: the API had no route and answered every request 404",
        "the same routes (method and path from each HttpApi event), AWS_IAM auth, a payload 2.0 Lambda proxy "
        "integration to the same function (add_http_api_routes)",
    ),
    Gap(
        "The store API is served at MiniStack's path form `http://<gateway>/_aws/execute-api/<id>/$default` "
        "(`TiendaApiUrl` names AWS's host).",
        "the store API is called at MiniStack's path form http://<gateway>/_aws/execute-api/<id>/$default",
        "the stack's TiendaApiUrl output is AWS's name https://<id>.execute-api.<region>.amazonaws.com, "
        "which resolves to the real AWS",
        "the same API id, routes and SigV4-signed requests (api_url_in_gateway; the template is not changed)",
    ),
    Gap(
        "The API's throttling (`TiendaRateLimit`, `TiendaBurstLimit`) is not enforced.",
        "the store API's throttling (TiendaRateLimit, TiendaBurstLimit) is not enforced",
        "MiniStack's HTTP APIs answer 429 only when the function's own concurrency is exhausted, never for a "
        "stage's route throttling",
        "a burst of TiendaBurstLimit orders at once is placed at the limit and must all end terminal; the "
        "client's 429 retry with the same Idempotency-Key is the store API's unit and integration tests'",
    ),
    Gap(
        "The deploy level's refund comes from one order's confirmation sent to a missing topic, a fault it "
        "injects in the account.",
        "a refund is caused by the account sending one order's confirmation to a topic that does not exist",
        "an injected fault (ministack_del_nivel.py, MF_TEMA_AUSENTE): nothing else in the account makes the "
        "state machine's sns:publish fail for one order while the others go on",
        "the workflow's own compensation runs on it unchanged (refund, PedidoCancelado, stock released); the "
        "local workflow test deletes the topic for the same path",
    ),
    Gap(
        "`Chaos=enabled` attaches a stand-in FIS extension layer that injects nothing (no AWS layers or public "
        "parameters in MiniStack).",
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
        "Every function container and the state machine's tasks carry a request recorder for the least-privilege "
        "check (an observation).",
        "every function container and the state machine's tasks carry the request recorder (an observation)",
        "MiniStack evaluates no role unless AUTH=true, and then with its own partial evaluator: the "
        "least-privilege check is least_privilege's, over the transformed template's roles, as for the "
        "local run and the chaos campaign",
        "nothing is changed: each call is written as one JSON line, then made as it was "
        "(recorder_docker_flags, ministack_del_nivel.py, least_privilege.desplegado)",
    ),
    Gap(
        "The least-privilege check reads a secret's `Ref` as its ARN (MiniStack's is its name).",
        "the least-privilege check reads a secret's Ref as its ARN, and a secret asked for by name as its ARN",
        "MiniStack's Ref of AWS::SecretsManager::Secret is the secret's name (AWS's is its ARN): the functions "
        "get the name, and a role's statement on the name would match no request",
        "IAM authorises a secret by its ARN however it is named: the ARN is the account's (DescribeSecret)",
    ),
    Gap(
        "MiniStack would let a new stack recreate a retained table, queue or key empty; the deploy level checks "
        "the retained resources itself.",
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
        "A nested unit's packaged template URL is written in AWS's form, so `sam delete` can read it.",
        "sam package writes a nested unit's TemplateURL as http://<gateway>/<bucket>/<key>; the level packages "
        "first and writes it as https://s3.<region>.amazonaws.com/<bucket>/<key> before sam deploy",
        "SAM CLI builds the URL from the S3 endpoint it was given (the emulator's), and sam delete parses only "
        "s3:// and https://s3... URLs: a stack holding a unit (Caos, even when its condition is false) could "
        "not be deleted. MiniStack reads a template URL's path as bucket/key whatever its host",
        "the URL is the one sam package writes against AWS; the deploy level's sam delete runs on the stack",
    ),
    Gap(
        "`Tracing: Active` has no effect (no X-Ray).",
        "Tracing: Active has no effect",
        "MiniStack's Docker executor runs AWS's Runtime Interface Emulator, which has no X-Ray",
        "nothing here; the functions' X-Ray SDK use is exercised by the unit tests",
    ),
    Gap(
        "`WorkflowEngine=DurableFunction` (the order saga as a Lambda durable function) is not deployed here.",
        "the durable engine's component (PedidoDurableFunction, pipe-mf-pedidos-durable) is not deployed",
        "MiniStack 1.5.33 implements the durable execution APIs only under a DurableConfig.Enabled field AWS does "
        "not have, and ignores the execution name",
        "cfn-lint, sam validate --lint, sam build and checkov on the WorkflowEngine=DurableFunction copy (make "
        "lint); the template tests of the component; the contract suite runs the saga on the SDK's runner",
    ),
)


def markdown() -> str:
    """The list docs/emulated-account.md carries, one line a gap."""
    return "\n".join(f"- {g.summary}" for g in GAPS)


# The built template's shapes these gaps match.
_DROPPED_TYPES = frozenset({"AWS::Events::Archive", "AWS::FIS::ExperimentTemplate"})
_FUNCTION_URL = re.compile(r"\$\{([A-Za-z0-9]+)\.FunctionUrl\}")
_SUB_NAME = re.compile(r"\$\{([^}!]+)\}")
_UNITS = {"AWS::Serverless::Application": "Location", "AWS::CloudFormation::Stack": "TemplateURL"}
# Where sam deploy looks for a local artifact: a literal path it can package, never an intrinsic.
_ARTIFACTS = ("CodeUri", "ContentUri", "DefinitionUri", "Location", "TemplateURL")


def template_of(ruta: Path) -> dict[str, Any]:
    """A built template as plain data, as CloudFormation reads it (``template_model.read``: loops expanded)."""
    from template_model import read

    return json.loads(json.dumps(read(ruta)))  # cfn-lint's node types -> dict/list/str, for YAML and copies


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


def _literal_artifacts(recurso: dict[str, Any], mappings: dict[str, Any]) -> dict[str, Any]:
    """A looped function's ``CodeUri: !FindInMap [SAMCodeUri..., Erp, CodeUri]`` as the literal path it names.

    ``sam build`` keeps a loop and maps each instance's artifact (decision 0130); once the loop is expanded
    here, ``sam deploy`` would find an intrinsic where it packages a local path.
    """
    propiedades = recurso.get("Properties")
    if not isinstance(propiedades, dict):
        return recurso
    literales = {}
    for nombre in _ARTIFACTS:
        valor = propiedades.get(nombre)
        if isinstance(valor, dict) and set(valor) == {"Fn::FindInMap"}:
            mapa, clave, segunda = valor["Fn::FindInMap"]
            if all(isinstance(x, str) for x in (mapa, clave, segunda)):
                literales[nombre] = mappings[mapa][clave][segunda]
    return {**recurso, "Properties": {**propiedades, **literales}} if literales else recurso


def _url_in_gateway(gateway: str, url: list[str]) -> dict[str, Any]:
    """``http://<gateway>/_aws/lambda-url/<id>/``, the id cut from the URL MiniStack returns (``url``: the
    ``Fn::GetAtt`` that reads it, a URL resource's ``FunctionUrl`` or a unit's output giving one)."""
    host = {"Fn::Select": [2, {"Fn::Split": ["/", {"Fn::GetAtt": url}]}]}
    url_id = {"Fn::Select": [0, {"Fn::Split": [".", host]}]}
    return {"Fn::Join": ["", [f"http://{gateway}/_aws/lambda-url/", url_id, "/"]]}


def _is_function_url(valor: Any) -> bool:
    """Whether an output's value is a function URL: ``!GetAtt X.FunctionUrl`` or ``!Sub ${X.FunctionUrl}``."""
    if isinstance(valor, dict) and "Fn::GetAtt" in valor:
        objetivo = valor["Fn::GetAtt"]
        return (objetivo.split(".", 1) if isinstance(objetivo, str) else objetivo)[1:] == ["FunctionUrl"]
    return (
        isinstance(valor, dict)
        and isinstance(valor.get("Fn::Sub"), str)
        and bool(re.fullmatch(_FUNCTION_URL.pattern, valor["Fn::Sub"]))
    )


def _function_urls_read(texto: str, unidades: Mapping[str, dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(``${}`` name, its GetAtt) of every function URL a ``Fn::Sub`` text reads: ``${X.FunctionUrl}``, or a
    unit's output that is one (``${Simuladores.Outputs.SimuladorErpUrl}``, the unit's template says)."""
    leidas = []
    for nombre in _SUB_NAME.findall(texto):
        partes = nombre.split(".")
        if len(partes) == 2 and partes[1] == "FunctionUrl":
            leidas.append((nombre, partes))
        elif len(partes) == 3 and partes[1] == "Outputs" and partes[0] in unidades:
            salida = ((unidades[partes[0]].get("Outputs") or {}).get(partes[2]) or {}).get("Value")
            if _is_function_url(salida):
                leidas.append((nombre, [partes[0], f"Outputs.{partes[2]}"]))
    return leidas


def _rewrite_subs(nodo: Any, gateway: str, unidades: Mapping[str, dict[str, Any]]) -> Any:
    """Every ``Fn::Sub`` reading a function URL (:func:`_function_urls_read`) gets it bound to the gateway's form."""
    if isinstance(nodo, list):
        return [_rewrite_subs(n, gateway, unidades) for n in nodo]
    if not isinstance(nodo, dict):
        return nodo
    if set(nodo) == {"Fn::Sub"}:
        cuerpo = nodo["Fn::Sub"]
        texto, variables = (cuerpo, {}) if isinstance(cuerpo, str) else (cuerpo[0], dict(cuerpo[1]))
        urls = _function_urls_read(texto, unidades)
        if urls:
            for nombre, url in urls:
                variable = "".join(p for p in nombre.split(".") if p not in ("FunctionUrl", "Outputs")) + "EnEmulador"
                variables[variable] = _url_in_gateway(gateway, url)
                texto = texto.replace("${" + nombre + "}", "${" + variable + "}")
            return {"Fn::Sub": [texto, {k: _rewrite_subs(v, gateway, unidades) for k, v in variables.items()}]}
    return {k: _rewrite_subs(v, gateway, unidades) for k, v in nodo.items()}


def _references(nodo: Any, nombres: frozenset[str]) -> set[str]:
    """Which of ``nombres`` ``nodo`` still mentions (Ref, GetAtt, Sub, DependsOn)."""
    if isinstance(nodo, list):
        return set().union(*(_references(n, nombres) for n in nodo)) if nodo else set()
    if isinstance(nodo, dict):
        return set().union(*(_references(v, nombres) for v in nodo.values())) if nodo else set()
    if isinstance(nodo, str):
        return {n for n in nombres if n == nodo or nodo.startswith(n + ".") or "${" + n in nodo}
    return set()


def adapt(
    plantilla: dict[str, Any], gateway: str, unidades: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The built template as the emulator can deploy it; ``ValueError`` if a dropped resource is still used.

    ``unidades``: logical id -> template of each unit it nests (:func:`unit_templates`), whose outputs say which
    of the values it reads from them are function URLs.
    """
    recursos = plantilla["Resources"]
    quitados = frozenset(n for n, r in recursos.items() if _dropped(r))
    restantes = {n: r for n, r in recursos.items() if n not in quitados}
    usados = _references({**plantilla, "Resources": restantes}, quitados)
    if usados:
        raise ValueError(f"resources dropped for the emulator are still referenced: {sorted(usados)}")
    mappings = plantilla.get("Mappings") or {}
    restantes = {n: _literal_artifacts(_without_punctuation(r), mappings) for n, r in restantes.items()}
    return _rewrite_subs({**plantilla, "Resources": restantes}, gateway, unidades or {})


def units_of(plantilla: dict[str, Any], carpeta: Path) -> dict[str, Path]:
    """Logical id -> file of each nested unit with a local template (as ``sam build`` writes them)."""
    unidades = {}
    for nombre, recurso in plantilla["Resources"].items():
        ubicacion = _unit_location(recurso)
        if ubicacion is not None and "://" not in ubicacion:
            unidades[nombre] = (carpeta / ubicacion).resolve()
    return unidades


def unit_templates(plantilla: dict[str, Any], carpeta: Path) -> dict[str, dict[str, Any]]:
    """Logical id -> template (as plain data) of each nested unit with a local template (:func:`units_of`)."""
    return {nombre: template_of(ruta) for nombre, ruta in units_of(plantilla, carpeta).items()}


def _unit_location(recurso: dict[str, Any]) -> str | None:
    """Where a nested unit's template is (``Location``/``TemplateURL``), or None for any other resource."""
    ubicacion = (recurso.get("Properties") or {}).get(_UNITS.get(recurso.get("Type", ""), ""))
    return ubicacion if isinstance(ubicacion, str) else None


def adapt_file(ruta: Path, gateway: str, log: Callable[[str], None] = print) -> None:
    """:func:`adapt` on a built template and on each nested unit's, in place (``sam deploy`` then reads them)."""
    from samcli.yamlhelper import yaml_dump

    plantilla = template_of(ruta)
    adaptada = adapt(plantilla, gateway, unit_templates(plantilla, ruta.parent))
    quitados = sorted(set(plantilla["Resources"]) - set(adaptada["Resources"]))
    ruta.write_text(yaml_dump(adaptada))
    log(f"emulator gaps in {ruta.parent.name}/{ruta.name}: dropped {', '.join(quitados) or 'nothing'}; "
        f"function URLs via http://{gateway}/_aws/lambda-url/")  # fmt: skip
    for unidad in units_of(adaptada, ruta.parent).values():
        adapt_file(unidad, gateway, log)


def units_in_aws_form(ruta: Path, gateway: str, region: str) -> list[str]:
    """Each nested unit's URL in the packaged template ``ruta`` as AWS's path-style S3 URL, in place; their ids."""
    from samcli.yamlhelper import yaml_dump

    plantilla, emulada = template_of(ruta), f"http://{gateway}/"
    reescritas = []
    for nombre, recurso in plantilla["Resources"].items():
        url = _unit_location(recurso)
        if url is not None and url.startswith(emulada):
            recurso["Properties"][_UNITS[recurso["Type"]]] = (
                f"https://s3.{region}.amazonaws.com/{url.removeprefix(emulada)}"
            )
            reescritas.append(nombre)
    ruta.write_text(yaml_dump(plantilla))
    return reescritas


def stacks(ruta: Path, pila: str, cfn: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(stack name, its built template) for the deployed root stack and each nested unit's stack below it.

    A unit under a false condition (``Caos`` without ``Chaos=enabled``) has no stack: it is not visited.
    """
    plantilla = template_of(ruta)
    yield pila, plantilla
    fisicos = _fisicos(cfn, pila)
    for nombre, unidad in units_of(plantilla, ruta.parent).items():
        if nombre in fisicos:
            yield from stacks(unidad, fisicos[nombre], cfn)


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
    """Create in the deployed HTTP APIs the routes MiniStack left out (those not there yet); the keys created."""
    apigw, lam = cliente("apigatewayv2"), cliente("lambda")
    fisicos = _fisicos(cliente("cloudformation"), pila)
    integraciones: dict[tuple[str, str], str] = {}
    creadas = []
    for api, funcion, ruta in http_api_routes(plantilla):
        api_id = fisicos[api]
        if ruta in {r["RouteKey"] for r in apigw.get_routes(ApiId=api_id)["Items"]}:
            continue  # a deploy again: the API (and its routes) are the same
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


# The recorder's source (a module and the .pth that imports it, stdlib only) and where the containers
# have it: the module on PYTHONPATH, the .pth in a site directory of the image's Python, Debian's
# python3.13 (tools/levels/sam_local/build-image.sh), where its records are written.
RECORDER_SOURCE = Path(__file__).resolve().parents[1] / "least_privilege" / "en_contenedor"
RECORDER_PTH = "mf_iam_registro.pth"
_RECORDER_IN_CONTAINER = "/var/mf-iam-codigo"
_SITE_DIR_IN_CONTAINER = "/usr/lib/python3/dist-packages"
_RECORDS_IN_CONTAINER = "/var/mf-iam-registro"


def recorder_docker_flags(registro: Path) -> str:
    """``docker run`` flags (MiniStack's LAMBDA_DOCKER_FLAGS) that record each function's AWS requests.

    The recorder's module is on ``PYTHONPATH`` (the runtime's bootstrap appends it after the code and
    the layers), its ``.pth`` in a site directory, whose ``import`` line Python runs at start-up whatever
    ``sitecustomize`` the interpreter has; it writes to ``registro``.
    """
    return (
        f"-v {RECORDER_SOURCE}:{_RECORDER_IN_CONTAINER}:ro "
        f"-v {RECORDER_SOURCE / RECORDER_PTH}:{_SITE_DIR_IN_CONTAINER}/{RECORDER_PTH}:ro "
        f"-v {registro}:{_RECORDS_IN_CONTAINER} "
        f"-e PYTHONPATH={_RECORDER_IN_CONTAINER} -e MF_IAM_REGISTRO={_RECORDS_IN_CONTAINER}"
    )


FIS_EXTENSION_PARAMETER = "/aws/service/fis/lambda-extension/AWS-FIS-extension-{arquitectura}/1.x.x"
# AWS runs the wrapper with the runtime's command line as its arguments: exec'ing them is "no fault".
FIS_STAND_IN_BOOTSTRAP = """#!/bin/sh
# Stand-in for the FIS Lambda extension in the emulated account (tools/levels/emulated_account/gaps.py): no fault.
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
        Description=(
            "emulated account only: execs the runtime, injects no fault (tools/levels/emulated_account/gaps.py)"
        ),
        Content={"ZipFile": _stand_in_zip()},
        CompatibleArchitectures=[arquitectura],
    )["LayerVersionArn"]
    publicos = json.loads(parametros_publicos.read_text()) if parametros_publicos.exists() else {}
    publicos[FIS_EXTENSION_PARAMETER.format(arquitectura=arquitectura)] = capa
    parametros_publicos.write_text(json.dumps(publicos, indent=1))
    return capa
