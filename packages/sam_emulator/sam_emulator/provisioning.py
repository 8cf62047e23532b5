"""Create ``template.yaml``'s resources in moto, by type, from their own resolved properties.

Generic over what the template holds: resources are visited in passes; one whose
intrinsics refer to something not created yet waits for the next pass. A type with no
local behaviour (IAM roles, log groups, permissions) gets a placeholder physical id so
references to it resolve; :attr:`Aprovisionador.sin_efecto` lists them for the report.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sam_emulator.aws import client
from sam_emulator.functions import Funcion, Funciones, ruta_codigo
from sam_emulator.template import Plantilla, PlantillaError, crear_tabla

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

ROL_LOCAL = "sam-emulator"

# Properties of AWS::SQS::Queue that are queue attributes, as the API spells them.
_ATRIBUTOS_COLA = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
)
_ATRIBUTOS_SUSCRIPCION = ("RawMessageDelivery", "FilterPolicy", "FilterPolicyScope", "RedrivePolicy")


@dataclass
class Aprovisionador:
    """Creates every resource of a :class:`Plantilla` in the moto this process points at."""

    plantilla: Plantilla
    entorno_local: dict[str, str] = field(default_factory=dict)
    funciones: Funciones = field(default_factory=Funciones)
    creados: dict[str, str] = field(default_factory=dict)  # logical id -> type
    sin_efecto: dict[str, str] = field(default_factory=dict)  # logical id -> type
    maquinas: dict[str, str] = field(default_factory=dict)  # logical id -> state machine ARN

    def aprovisionar(self) -> Aprovisionador:
        """Create everything; raise :class:`PlantillaError` naming what could not be resolved."""
        if not self.plantilla.recursos:
            raise PlantillaError(f"{self.plantilla.ruta} has no Resources: nothing to run")
        pendientes = {
            lid: r for lid, r in self.plantilla.recursos.items() if self.plantilla.condicion(r.get("Condition"))
        }
        while pendientes:
            errores: dict[str, str] = {}
            antes = len(pendientes)
            for lid, recurso in list(pendientes.items()):
                try:
                    self._crear(lid, recurso["Type"])
                except PlantillaError as exc:
                    errores[lid] = str(exc)
                    continue
                del pendientes[lid]
            if len(pendientes) == antes:  # a whole pass without progress: a reference that never resolves
                raise PlantillaError(f"cannot resolve locally: {errores}")
        return self

    def _crear(self, lid: str, tipo: str) -> None:
        creador = _CREADORES.get(tipo)
        if creador is None:
            self.plantilla.fisicos[lid] = {"Ref": lid, "Arn": self._arn_generico(tipo, lid)}
            self.sin_efecto[lid] = tipo
            return
        creador(self, lid, self.plantilla.propiedades(lid))
        self.creados[lid] = tipo

    def _arn_generico(self, tipo: str, lid: str) -> str:
        servicio = tipo.split("::")[1].lower()
        return f"arn:aws:{servicio}:{self.plantilla.region}:{self.plantilla.cuenta}:{lid}"

    def _rol(self) -> str:
        iam = client("iam")
        try:
            return iam.get_role(RoleName=ROL_LOCAL)["Role"]["Arn"]
        except iam.exceptions.NoSuchEntityException:
            confianza = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]}
            return iam.create_role(RoleName=ROL_LOCAL, AssumeRolePolicyDocument=json.dumps(confianza))["Role"]["Arn"]

    # ------------------------------------------------------------------ one per type
    def _kms_key(self, lid: str, props: dict[str, Any]) -> None:
        clave = client("kms").create_key(Description=props.get("Description", lid))["KeyMetadata"]
        self.plantilla.fisicos[lid] = {"Ref": clave["KeyId"], "Arn": clave["Arn"], "KeyId": clave["KeyId"]}

    def _kms_alias(self, lid: str, props: dict[str, Any]) -> None:
        client("kms").create_alias(AliasName=props["AliasName"], TargetKeyId=props["TargetKeyId"])
        self.plantilla.fisicos[lid] = props["AliasName"]

    def _secreto(self, lid: str, props: dict[str, Any]) -> None:
        valor = props.get("SecretString") or _generar_secreto(props.get("GenerateSecretString", {}))
        nombre = props.get("Name", f"sam-emulator/{lid}")
        arn = client("secretsmanager").create_secret(Name=nombre, SecretString=valor)["ARN"]
        self.plantilla.fisicos[lid] = {"Ref": arn, "Id": arn}

    def _tabla(self, lid: str, props: dict[str, Any]) -> None:
        crear_tabla(client("dynamodb"), self.plantilla, lid)

    def _cola(self, lid: str, props: dict[str, Any]) -> None:
        atributos = {k: _texto(props[k]) for k in _ATRIBUTOS_COLA if k in props}
        for politica in ("RedrivePolicy", "RedriveAllowPolicy"):
            if politica in props:
                atributos[politica] = json.dumps(props[politica])
        sqs = client("sqs")
        url = sqs.create_queue(QueueName=props.get("QueueName", lid), Attributes=atributos)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.plantilla.fisicos[lid] = {"Ref": url, "Arn": arn, "QueueName": arn.rsplit(":", 1)[1], "QueueUrl": url}

    def _tema(self, lid: str, props: dict[str, Any]) -> None:
        atributos = {k: _texto(props[k]) for k in ("FifoTopic", "ContentBasedDeduplication") if k in props}
        arn = client("sns").create_topic(Name=props.get("TopicName", lid), Attributes=atributos)["TopicArn"]
        self.plantilla.fisicos[lid] = {"Ref": arn, "TopicArn": arn, "TopicName": arn.rsplit(":", 1)[1]}

    def _suscripcion(self, lid: str, props: dict[str, Any]) -> None:
        atributos = {
            k: json.dumps(props[k]) if isinstance(props[k], dict) else _texto(props[k])
            for k in _ATRIBUTOS_SUSCRIPCION
            if k in props
        }
        arn = client("sns").subscribe(
            TopicArn=props["TopicArn"], Protocol=props["Protocol"], Endpoint=props["Endpoint"], Attributes=atributos
        )["SubscriptionArn"]
        self.plantilla.fisicos[lid] = arn

    def _bus(self, lid: str, props: dict[str, Any]) -> None:
        arn = client("events").create_event_bus(Name=props["Name"])["EventBusArn"]
        self.plantilla.fisicos[lid] = {"Ref": props["Name"], "Arn": arn, "Name": props["Name"]}

    def _regla(self, lid: str, props: dict[str, Any]) -> None:
        events = client("events")
        nombre = props.get("Name", lid)
        args = {"Name": nombre, "EventBusName": props.get("EventBusName", "default"), "State": props.get("State")}
        if "EventPattern" in props:
            args["EventPattern"] = json.dumps(props["EventPattern"])
        if "ScheduleExpression" in props:
            args["ScheduleExpression"] = props["ScheduleExpression"]
        arn = events.put_rule(**{k: v for k, v in args.items() if v is not None})["RuleArn"]
        if props.get("Targets"):
            events.put_targets(Rule=nombre, EventBusName=args["EventBusName"], Targets=props["Targets"])
        self.plantilla.fisicos[lid] = {"Ref": nombre, "Arn": arn}

    def _archivo(self, lid: str, props: dict[str, Any]) -> None:
        args = {k: props[k] for k in ("ArchiveName", "SourceArn", "Description", "RetentionDays") if k in props}
        args["EventSourceArn"] = args.pop("SourceArn")
        args.setdefault("ArchiveName", lid)
        if "EventPattern" in props:
            args["EventPattern"] = json.dumps(props["EventPattern"])
        arn = client("events").create_archive(**args)["ArchiveArn"]
        self.plantilla.fisicos[lid] = {"Ref": args["ArchiveName"], "Arn": arn}

    def _alarma(self, lid: str, props: dict[str, Any]) -> None:
        claves = (
            "AlarmName",
            "AlarmDescription",
            "ActionsEnabled",
            "AlarmActions",
            "OKActions",
            "MetricName",
            "Namespace",
            "Statistic",
            "Dimensions",
            "Period",
            "EvaluationPeriods",
            "DatapointsToAlarm",
            "Threshold",
            "ComparisonOperator",
            "TreatMissingData",
            "Metrics",
        )
        args = {k: props[k] for k in claves if k in props}
        args.setdefault("AlarmName", lid)
        client("cloudwatch").put_metric_alarm(**args)
        self.plantilla.fisicos[lid] = {"Ref": args["AlarmName"], "Arn": self._arn_generico("AWS::CloudWatch", lid)}

    def _ejecutado_localmente(self, lid: str, props: dict[str, Any]) -> None:
        """Pipes and schedules: moto does not run them; :mod:`pipes` and :mod:`programador` do."""
        nombre = props.get("Name", lid)
        self.plantilla.fisicos[lid] = {
            "Ref": nombre,
            "Arn": self._arn_generico(self.plantilla.recursos[lid]["Type"], nombre),
        }

    def _maquina(self, lid: str, props: dict[str, Any]) -> None:
        texto = definicion_asl(props, self.plantilla.carpeta)
        nombre = props.get("Name") or props.get("StateMachineName") or lid
        arn = client("stepfunctions").create_state_machine(
            name=nombre, definition=texto, roleArn=self._rol(), type=props.get("Type", "STANDARD")
        )["stateMachineArn"]
        self.plantilla.fisicos[lid] = {"Ref": arn, "Arn": arn, "Name": nombre}
        self.plantilla.fisicos.setdefault(f"{lid}Role", {"Ref": ROL_LOCAL, "Arn": self._rol()})
        self.maquinas[lid] = arn

    def _funcion(self, lid: str, props: dict[str, Any]) -> None:
        globales = self.plantilla.resolver(self.plantilla.doc.get("Globals", {}).get("Function", {}))
        config = {**globales, **props}
        nombre = props.get("FunctionName", f"sam-emulator-{lid}")
        declarado = {
            **globales.get("Environment", {}).get("Variables", {}),
            **props.get("Environment", {}).get("Variables", {}),
        }
        # "" in the template means unset (AWS_ENDPOINT_URL, DATABASE_URL, REDIS_URL are declared
        # empty for `sam local invoke --env-vars`): it must not hide moto's endpoint set in this process.
        entorno = {**{k: v for k, v in declarado.items() if v != ""}, **self.entorno_local}
        funcion = Funcion(
            logical_id=lid,
            nombre=nombre,
            codigo=ruta_codigo(config["CodeUri"], self.plantilla.carpeta),
            handler=config.get("Handler", "app.lambda_handler"),
            entorno={k: str(v) for k, v in entorno.items()},
            timeout_s=float(config.get("Timeout", 3)),
            memoria_mb=int(config.get("MemorySize", 128)),
            concurrencia_reservada=_entero_o_nada(config.get("ReservedConcurrentExecutions")),
        )
        self.funciones.agregar(funcion)
        arn = client("lambda").create_function(
            FunctionName=nombre,
            Runtime=config.get("Runtime", "python3.13"),
            Role=self._rol(),
            Handler=funcion.handler,
            Code={"ZipFile": _ZIP_VACIO},
            Timeout=int(funcion.timeout_s),
        )["FunctionArn"]
        self.plantilla.fisicos[lid] = {"Ref": nombre, "Arn": arn}
        # SAM's implicit execution role, which other resources may reference.
        self.plantilla.fisicos.setdefault(f"{lid}Role", {"Ref": ROL_LOCAL, "Arn": self._rol()})

    def _url_funcion(self, lid: str, props: dict[str, Any]) -> None:
        # A sandbox provider's function URL (issue 16): moto gives it a URL nobody serves locally;
        # the local run points the provider variables at its loopback stand-ins instead.
        url = client("lambda").create_function_url_config(
            FunctionName=props["TargetFunctionArn"], AuthType=props.get("AuthType", "NONE")
        )["FunctionUrl"]
        self.plantilla.fisicos[lid] = {"Ref": url, "FunctionUrl": url, "FunctionArn": props["TargetFunctionArn"]}


def definicion_asl(props: dict[str, Any], carpeta: Path) -> str:
    """The ASL text exactly as the template gives it, with DefinitionSubstitutions applied.

    ``carpeta``: the template's folder, which a ``DefinitionUri`` is relative to.
    """
    if "Definition" in props:
        texto = json.dumps(props["Definition"])
    elif "DefinitionString" in props:
        texto = props["DefinitionString"]
    else:
        texto = (carpeta / props["DefinitionUri"]).read_text()
    for clave, valor in props.get("DefinitionSubstitutions", {}).items():
        texto = texto.replace(f"${{{clave}}}", str(valor))
    return texto


def _entero_o_nada(valor: Any) -> int | None:
    return None if valor is None else int(valor)


def _texto(valor: Any) -> str:
    return str(valor).lower() if isinstance(valor, bool) else str(valor)


def _generar_secreto(spec: dict[str, Any]) -> str:
    valor = json.loads(spec.get("SecretStringTemplate", "{}"))
    valor[spec.get("GenerateStringKey", "password")] = secrets.token_urlsafe(24)
    return json.dumps(valor)


def _zip_vacio() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("app.py", "# the local run calls functions/<name>/app.py in process\n")
    return buffer.getvalue()


_ZIP_VACIO = _zip_vacio()

_CREADORES: dict[str, Callable[[Aprovisionador, str, dict[str, Any]], None]] = {
    "AWS::KMS::Key": Aprovisionador._kms_key,
    "AWS::KMS::Alias": Aprovisionador._kms_alias,
    "AWS::SecretsManager::Secret": Aprovisionador._secreto,
    "AWS::DynamoDB::Table": Aprovisionador._tabla,
    "AWS::SQS::Queue": Aprovisionador._cola,
    "AWS::SNS::Topic": Aprovisionador._tema,
    "AWS::SNS::Subscription": Aprovisionador._suscripcion,
    "AWS::Events::EventBus": Aprovisionador._bus,
    "AWS::Events::Rule": Aprovisionador._regla,
    "AWS::Events::Archive": Aprovisionador._archivo,
    "AWS::CloudWatch::Alarm": Aprovisionador._alarma,
    "AWS::Serverless::StateMachine": Aprovisionador._maquina,
    "AWS::StepFunctions::StateMachine": Aprovisionador._maquina,
    "AWS::Serverless::Function": Aprovisionador._funcion,
    "AWS::Lambda::Url": Aprovisionador._url_funcion,
    "AWS::Pipes::Pipe": Aprovisionador._ejecutado_localmente,
    "AWS::Scheduler::Schedule": Aprovisionador._ejecutado_localmente,
}
