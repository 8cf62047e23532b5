"""Create ``template.yaml``'s resources in moto, by type, from their own resolved properties.

Generic over what the template holds: resources are visited in passes; one whose
intrinsics refer to something not created yet waits for the next pass. A type with no
local behaviour (IAM roles, log groups, permissions) gets a placeholder physical id so
references to it resolve; :attr:`Provisioner.no_effect` lists them for the report.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from template_model.template import UNIT_TYPES, is_local_unit

from sam_emulator.aws import client
from sam_emulator.durable import DEFAULT_EXECUTION_TIMEOUT_S
from sam_emulator.functions import Function, Functions, code_path
from sam_emulator.template import Template, TemplateError, create_table_from

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

LOCAL_ROLE = "sam-emulator"

# Properties of AWS::SQS::Queue that are queue attributes, as the API spells them.
_QUEUE_ATTRIBUTES = (
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
_SUBSCRIPTION_ATTRIBUTES = ("RawMessageDelivery", "FilterPolicy", "FilterPolicyScope", "RedrivePolicy")


@dataclass
class Provisioner:
    """Creates every resource of a :class:`Template` in the moto this process points at."""

    template: Template
    local_environment: dict[str, str] = field(default_factory=dict)
    functions: Functions = field(default_factory=Functions)
    created: dict[str, str] = field(default_factory=dict)  # logical id -> type
    no_effect: dict[str, str] = field(default_factory=dict)  # logical id -> type
    state_machines: dict[str, str] = field(default_factory=dict)  # logical id -> state machine ARN
    units: dict[str, Provisioner] = field(default_factory=dict)  # a nested unit's logical id -> what created it
    # Where the template is (``Simuladores/`` for a unit, as Template.walk() names it): a unit's function is
    # known, acts and is judged as ``<unit>/<logical id>``, the name SAM and the least-privilege check give it.
    unit_path: str = ""

    def provision(self) -> Provisioner:
        """Create everything; raise :class:`TemplateError` naming what could not be resolved."""
        if not self.template.resources:
            raise TemplateError(f"{self.template.path} has no Resources: nothing to run")
        pending = {lid: r for lid, r in self.template.resources.items() if self.template.condition(r.get("Condition"))}
        while pending:
            errors: dict[str, str] = {}
            before = len(pending)
            for lid, resource in list(pending.items()):
                try:
                    self._create(lid, resource["Type"])
                except TemplateError as exc:
                    errors[lid] = str(exc)
                    continue
                del pending[lid]
            if len(pending) == before:  # a whole pass without progress: a reference that never resolves
                raise TemplateError(f"cannot resolve locally: {errors}")
        return self

    def _create(self, lid: str, type_name: str) -> None:
        creator = _CREATORS.get(type_name)
        if creator is None:
            self.template.physical_ids[lid] = {"Ref": lid, "Arn": self._generic_arn(type_name, lid)}
            self.no_effect[lid] = type_name
            return
        creator(self, lid, self.template.properties(lid))
        self.created[lid] = type_name

    def _generic_arn(self, type_name: str, lid: str) -> str:
        service = type_name.split("::")[1].lower()
        return f"arn:aws:{service}:{self.template.region}:{self.template.account}:{lid}"

    def _role(self) -> str:
        iam = client("iam")
        try:
            return iam.get_role(RoleName=LOCAL_ROLE)["Role"]["Arn"]
        except iam.exceptions.NoSuchEntityException:
            trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]}
            return iam.create_role(RoleName=LOCAL_ROLE, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    # ------------------------------------------------------------------ one per type
    def _kms_key(self, lid: str, props: dict[str, Any]) -> None:
        key = client("kms").create_key(Description=props.get("Description", lid))["KeyMetadata"]
        self.template.physical_ids[lid] = {"Ref": key["KeyId"], "Arn": key["Arn"], "KeyId": key["KeyId"]}

    def _kms_alias(self, lid: str, props: dict[str, Any]) -> None:
        client("kms").create_alias(AliasName=props["AliasName"], TargetKeyId=props["TargetKeyId"])
        self.template.physical_ids[lid] = props["AliasName"]

    def _secret(self, lid: str, props: dict[str, Any]) -> None:
        value = props.get("SecretString") or _generate_secret(props.get("GenerateSecretString", {}))
        name = props.get("Name", f"sam-emulator/{lid}")
        arn = client("secretsmanager").create_secret(Name=name, SecretString=value)["ARN"]
        self.template.physical_ids[lid] = {"Ref": arn, "Id": arn}

    def _table(self, lid: str, props: dict[str, Any]) -> None:
        create_table_from(client("dynamodb"), self.template, lid)

    def _queue(self, lid: str, props: dict[str, Any]) -> None:
        attributes = {k: _text(props[k]) for k in _QUEUE_ATTRIBUTES if k in props}
        for policy in ("RedrivePolicy", "RedriveAllowPolicy"):
            if policy in props:
                attributes[policy] = json.dumps(props[policy])
        sqs = client("sqs")
        url = sqs.create_queue(QueueName=props.get("QueueName", lid), Attributes=attributes)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.template.physical_ids[lid] = {"Ref": url, "Arn": arn, "QueueName": arn.rsplit(":", 1)[1], "QueueUrl": url}

    def _topic(self, lid: str, props: dict[str, Any]) -> None:
        attributes = {k: _text(props[k]) for k in ("FifoTopic", "ContentBasedDeduplication") if k in props}
        arn = client("sns").create_topic(Name=props.get("TopicName", lid), Attributes=attributes)["TopicArn"]
        self.template.physical_ids[lid] = {"Ref": arn, "TopicArn": arn, "TopicName": arn.rsplit(":", 1)[1]}

    def _subscription(self, lid: str, props: dict[str, Any]) -> None:
        attributes = {
            k: json.dumps(props[k]) if isinstance(props[k], dict) else _text(props[k])
            for k in _SUBSCRIPTION_ATTRIBUTES
            if k in props
        }
        arn = client("sns").subscribe(
            TopicArn=props["TopicArn"], Protocol=props["Protocol"], Endpoint=props["Endpoint"], Attributes=attributes
        )["SubscriptionArn"]
        self.template.physical_ids[lid] = arn

    def _bus(self, lid: str, props: dict[str, Any]) -> None:
        arn = client("events").create_event_bus(Name=props["Name"])["EventBusArn"]
        self.template.physical_ids[lid] = {"Ref": props["Name"], "Arn": arn, "Name": props["Name"]}

    def _rule(self, lid: str, props: dict[str, Any]) -> None:
        events = client("events")
        name = props.get("Name", lid)
        args = {"Name": name, "EventBusName": props.get("EventBusName", "default"), "State": props.get("State")}
        if "EventPattern" in props:
            args["EventPattern"] = json.dumps(props["EventPattern"])
        if "ScheduleExpression" in props:
            args["ScheduleExpression"] = props["ScheduleExpression"]
        arn = events.put_rule(**{k: v for k, v in args.items() if v is not None})["RuleArn"]
        if props.get("Targets"):
            events.put_targets(Rule=name, EventBusName=args["EventBusName"], Targets=props["Targets"])
        self.template.physical_ids[lid] = {"Ref": name, "Arn": arn}

    def _file(self, lid: str, props: dict[str, Any]) -> None:
        args = {k: props[k] for k in ("ArchiveName", "SourceArn", "Description", "RetentionDays") if k in props}
        args["EventSourceArn"] = args.pop("SourceArn")
        args.setdefault("ArchiveName", lid)
        if "EventPattern" in props:
            args["EventPattern"] = json.dumps(props["EventPattern"])
        arn = client("events").create_archive(**args)["ArchiveArn"]
        self.template.physical_ids[lid] = {"Ref": args["ArchiveName"], "Arn": arn}

    def _alarm(self, lid: str, props: dict[str, Any]) -> None:
        keys = (
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
        args = {k: props[k] for k in keys if k in props}
        args.setdefault("AlarmName", lid)
        client("cloudwatch").put_metric_alarm(**args)
        self.template.physical_ids[lid] = {"Ref": args["AlarmName"], "Arn": self._generic_arn("AWS::CloudWatch", lid)}

    def _run_locally(self, lid: str, props: dict[str, Any]) -> None:
        """Pipes and schedules: moto does not run them, :mod:`sam_emulator.pipes` and `.scheduler` do."""
        name = props.get("Name", lid)
        self.template.physical_ids[lid] = {
            "Ref": name,
            "Arn": self._generic_arn(self.template.resources[lid]["Type"], name),
        }

    def _state_machine(self, lid: str, props: dict[str, Any]) -> None:
        text = asl_definition(props, self.template.folder)
        name = props.get("Name") or props.get("StateMachineName") or lid
        arn = client("stepfunctions").create_state_machine(
            name=name, definition=text, roleArn=self._role(), type=props.get("Type", "STANDARD")
        )["stateMachineArn"]
        self.template.physical_ids[lid] = {"Ref": arn, "Arn": arn, "Name": name}
        self.template.physical_ids.setdefault(f"{lid}Role", {"Ref": LOCAL_ROLE, "Arn": self._role()})
        self.state_machines[lid] = arn

    def _function(self, lid: str, props: dict[str, Any]) -> None:
        config = self.template.function_properties(lid)  # Globals under the function's own properties
        name = props.get("FunctionName", f"sam-emulator-{lid}")
        declared = config.get("Environment", {}).get("Variables", {})
        # "" in the template means unset (AWS_ENDPOINT_URL, DATABASE_URL, REDIS_URL are declared
        # empty for `sam local invoke --env-vars`): it must not hide moto's endpoint set in this process.
        environment = {**{k: v for k, v in declared.items() if v != ""}, **self.local_environment}
        environment["AWS_LAMBDA_FUNCTION_NAME"] = name  # a reserved variable Lambda sets in every environment
        function = Function(
            logical_id=f"{self.unit_path}{lid}",
            name=name,
            code=code_path(config["CodeUri"], self.template.folder),
            handler=config.get("Handler", "app.lambda_handler"),
            environment={k: str(v) for k, v in environment.items()},
            timeout_s=float(config.get("Timeout", 3)),
            memory_mb=int(config.get("MemorySize", 128)),
            reserved_concurrency=_int_or_none(config.get("ReservedConcurrentExecutions")),
        )
        if "DurableConfig" in config:
            function.durable_timeout_s = int(
                config["DurableConfig"].get("ExecutionTimeout", DEFAULT_EXECUTION_TIMEOUT_S)
            )
        self.functions.add(function)
        arn = client("lambda").create_function(
            FunctionName=name,
            Runtime=config.get("Runtime", "python3.13"),
            Role=self._role(),
            Handler=function.handler,
            Code={"ZipFile": _EMPTY_ZIP},
            Timeout=int(function.timeout_s),
        )["FunctionArn"]
        self.template.physical_ids[lid] = {"Ref": name, "Arn": arn}
        if alias := config.get("AutoPublishAlias"):
            # SAM's alias (``!Ref <Function>.Alias``, logical id ``<Function>Alias<name>``): its ARN is the
            # function's qualified by the alias, which is what an invoke through it names.
            qualified = {"Ref": f"{arn}:{alias}", "Arn": f"{arn}:{alias}"}
            self.template.physical_ids[f"{lid}.Alias"] = qualified
            self.template.physical_ids[f"{lid}Alias{alias}"] = qualified
        # SAM's implicit execution role, which other resources may reference.
        self.template.physical_ids.setdefault(f"{lid}Role", {"Ref": LOCAL_ROLE, "Arn": self._role()})

    def _unit(self, lid: str, props: dict[str, Any]) -> None:
        """A nested unit (decision 0130): its resources created by a provisioner of its own, into the same
        functions, once every parameter the parent passes resolves; its ``Outputs`` become the unit's
        ``GetAtt Unit.Outputs.X``, and the parent hands the unit out as created (``Template.units()``)."""
        location = props.get(UNIT_TYPES[self.template.resources[lid]["Type"]])
        if not is_local_unit(location):
            raise TemplateError(f"{lid}: a unit at {location!r} is not a file beside the template")
        unit = self.template.unit(lid, location, props.get("Parameters") or {})
        created = Provisioner(
            unit,
            local_environment=self.local_environment,
            functions=self.functions,
            unit_path=f"{self.unit_path}{lid}/",
        ).provision()
        self.state_machines |= created.state_machines
        outputs = {
            f"Outputs.{name}": unit.resolve(output["Value"])
            for name, output in (unit.doc.get("Outputs") or {}).items()
            if unit.condition(output.get("Condition"))
        }
        arn = f"arn:aws:cloudformation:{unit.region}:{unit.account}:stack/{unit.stack_name}/local"
        self.template.physical_ids[lid] = {"Ref": arn, **outputs}
        self.template.created_units[lid] = unit
        self.units[lid] = created

    def _function_url(self, lid: str, props: dict[str, Any]) -> None:
        # A sandbox provider's function URL (issue 16): moto gives it a URL nobody serves locally;
        # the local run points the provider variables at its loopback stand-ins instead.
        url = client("lambda").create_function_url_config(
            FunctionName=props["TargetFunctionArn"], AuthType=props.get("AuthType", "NONE")
        )["FunctionUrl"]
        self.template.physical_ids[lid] = {"Ref": url, "FunctionUrl": url, "FunctionArn": props["TargetFunctionArn"]}


def asl_definition(props: dict[str, Any], folder: Path) -> str:
    """The ASL text exactly as the template gives it, with DefinitionSubstitutions applied.

    ``folder``: the template's folder, which a ``DefinitionUri`` is relative to.
    """
    if "Definition" in props:
        text = json.dumps(props["Definition"])
    elif "DefinitionString" in props:
        text = props["DefinitionString"]
    else:
        text = (folder / props["DefinitionUri"]).read_text()
    for key, value in props.get("DefinitionSubstitutions", {}).items():
        text = text.replace(f"${{{key}}}", str(value))
    return text


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _generate_secret(spec: dict[str, Any]) -> str:
    value = json.loads(spec.get("SecretStringTemplate", "{}"))
    value[spec.get("GenerateStringKey", "password")] = secrets.token_urlsafe(24)
    return json.dumps(value)


def _empty_zip() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("app.py", "# the local run calls functions/<name>/app.py in process\n")
    return buffer.getvalue()


_EMPTY_ZIP = _empty_zip()

_CREATORS: dict[str, Callable[[Provisioner, str, dict[str, Any]], None]] = {
    "AWS::KMS::Key": Provisioner._kms_key,
    "AWS::KMS::Alias": Provisioner._kms_alias,
    "AWS::SecretsManager::Secret": Provisioner._secret,
    "AWS::DynamoDB::Table": Provisioner._table,
    "AWS::SQS::Queue": Provisioner._queue,
    "AWS::SNS::Topic": Provisioner._topic,
    "AWS::SNS::Subscription": Provisioner._subscription,
    "AWS::Events::EventBus": Provisioner._bus,
    "AWS::Events::Rule": Provisioner._rule,
    "AWS::Events::Archive": Provisioner._file,
    "AWS::CloudWatch::Alarm": Provisioner._alarm,
    "AWS::Serverless::StateMachine": Provisioner._state_machine,
    "AWS::StepFunctions::StateMachine": Provisioner._state_machine,
    "AWS::Serverless::Function": Provisioner._function,
    "AWS::Lambda::Url": Provisioner._function_url,
    "AWS::Pipes::Pipe": Provisioner._run_locally,
    "AWS::Scheduler::Schedule": Provisioner._run_locally,
    **dict.fromkeys(UNIT_TYPES, Provisioner._unit),
}
