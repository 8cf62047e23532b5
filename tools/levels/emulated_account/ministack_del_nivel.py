"""MiniStack as the emulated account runs it: run by ``.venv-ministack``'s python, never imported by the project.

What it adds before serving, each a wrapped or registered function of MiniStack's and listed in ``gaps.py``:

- the default profile's data path in CloudFormation (``ministack_recursos.py``): Aurora and ElastiCache
  Serverless created through MiniStack's RDS and ElastiCache APIs (real PostgreSQL and Valkey containers),
  the elastic IP and the NAT gateway through its EC2 API;
- a nested stack's template is processed as a root stack's: its transforms applied (the sandbox unit is a SAM
  template) and the dynamic references in its resources' properties resolved (the Valkey unit's password, the
  sandbox unit's FIS extension); MiniStack does both for a root stack only;
- a pipe keeps what it was created with: MiniStack's Pipes store source, target and role only, so
  ``DescribePipe`` answers without ``SourceParameters``, ``TargetParameters`` (batch size, filters, input
  template, invocation type); here it answers them as AWS does, from the CreatePipe/UpdatePipe request or
  the template's properties, and the account's Pipes for SQS sources (``puente_pipes.py``) run from them;
- ``MF_IAM_REGISTRO``: MiniStack runs a state machine's Task states in its own process
  (``stepfunctions._invoke_resource``), so no client in a container sees them. Each call is written as
  one JSON line (the task's resource and its resolved parameters) to ``states.<pid>.jsonl`` there, then
  made unchanged; :mod:`least_privilege.desplegado` turns a line into the API call the integration makes;
- ``MF_PARAMETROS_PUBLICOS``: a JSON file of AWS's public SSM parameters (``/aws/service/...``) the level
  publishes, as AWS does for every account (MiniStack serves a fixed few; an account cannot write there):
  :func:`emulated_account.gaps.fis_extension_stand_in` writes the FIS extension's. Read on each lookup;
- ``MF_TEMA_AUSENTE``: a JSON file of strings; a state machine's ``sns:publish`` whose message contains
  one of them is sent to a topic that does not exist (the fault the local workflow test makes by deleting
  the topic, for one order only): MiniStack's own "not found" fails the task. Read on each publish.

Stdlib and ministack only.
"""

from __future__ import annotations

import contextvars
import json
import os
import sys
import threading

PARAMETROS_DE_PIPE = (
    "SourceParameters",
    "TargetParameters",
    "Enrichment",
    "EnrichmentParameters",
    "LogConfiguration",
    "KmsKeyIdentifier",
)


def _grabar_tareas(carpeta: str) -> None:
    from ministack.services import stepfunctions

    original = stepfunctions._invoke_resource
    ruta = os.path.join(carpeta, f"states.{os.getpid()}.jsonl")
    cerrojo = threading.Lock()

    def _invoke_resource(resource: str, input_data: object) -> object:
        linea = json.dumps({"recurso": resource, "parametros": input_data}, default=str)
        with cerrojo, open(ruta, "a", encoding="utf-8") as registro:
            registro.write(linea + "\n")
        return original(resource, input_data)

    stepfunctions._invoke_resource = _invoke_resource


def _parametros_publicos(ruta: str) -> None:
    from ministack.services import ssm

    original = ssm._public_parameter

    def _public_parameter(name: str) -> dict | None:
        parametro = original(name)
        if parametro is not None or not os.path.exists(ruta):
            return parametro
        with open(ruta, encoding="utf-8") as f:
            valor = json.load(f).get(name)
        if valor is None:
            return None
        # The shape MiniStack gives its own public parameters: no account in the ARN.
        return {
            "Name": name,
            "Type": "String",
            "Value": valor,
            "Version": 1,
            "LastModifiedDate": 1728518400,
            "ARN": f"arn:aws:ssm:{ssm.get_region()}::parameter{name}",
        }

    ssm._public_parameter = _public_parameter


def _pipes_con_parametros() -> None:
    from ministack.services import pipes
    from ministack.services.cloudformation import provisioners

    def guardar(nombre: str, origen: dict) -> None:
        pipe = pipes._pipes.get(nombre)
        if pipe is not None:
            pipe.setdefault("_parametros", {}).update({k: origen[k] for k in PARAMETROS_DE_PIPE if k in origen})

    crear_api, actualizar_api, describir = pipes._create_pipe, pipes._update_pipe, pipes._describe_response

    def _create_pipe(name, body):
        respuesta = crear_api(name, body)
        if respuesta[0] < 400:
            guardar(name, body)
        return respuesta

    def _update_pipe(name, body):
        respuesta = actualizar_api(name, body)
        if respuesta[0] < 400:
            guardar(name, body)
        return respuesta

    def _describe_response(pipe):
        return {**describir(pipe), **pipe.get("_parametros", {})}

    pipes._create_pipe, pipes._update_pipe, pipes._describe_response = _create_pipe, _update_pipe, _describe_response

    manejador = provisioners._RESOURCE_HANDLERS["AWS::Pipes::Pipe"]
    crear_cfn, actualizar_cfn = manejador["create"], manejador["update"]

    def crear(logical_id, props, stack_name):
        nombre, atributos = crear_cfn(logical_id, props, stack_name)
        guardar(nombre, props)
        return nombre, atributos

    def actualizar(physical_id, old_props, new_props, stack_name, logical_id=None):
        nombre, atributos = actualizar_cfn(physical_id, old_props, new_props, stack_name, logical_id)
        pipe = pipes._pipes.get(nombre)
        if pipe is not None:
            pipe["_parametros"] = {}
        guardar(nombre, new_props)
        return nombre, atributos

    manejador["create"], manejador["update"] = crear, actualizar


def _unidades_como_raiz() -> None:
    """A nested stack's template transformed and its dynamic references resolved, as in a root stack.

    MiniStack's nested-stack handler parses the child's template and provisions its resources as written:
    ``AWS::Serverless::*`` then fails as an unsupported type and ``{{resolve:...}}`` reaches the handlers.
    While a nested stack deploys (and only then), the template it parses goes through MiniStack's own
    ``_apply_transforms`` with the parameters the parent passes, and each resource's properties through its
    own ``_resolve_dynamic_references``.
    """
    from ministack.services.cloudformation import engine, provisioners

    por_parsear: contextvars.ContextVar[list | None] = contextvars.ContextVar("mf_por_parsear", default=None)
    en_unidad = contextvars.ContextVar("mf_en_unidad", default=False)
    parsear, desplegar = engine._parse_template, provisioners._cfn_nested_stack_deploy
    crear, actualizar = provisioners._provision_resource, provisioners._update_resource

    def _parse_template(cuerpo):
        plantilla, parametros = parsear(cuerpo), por_parsear.get()
        if parametros is None:
            return plantilla
        por_parsear.set(None)  # the child's template only, not what its resources parse
        procesada = engine._apply_transforms(plantilla, parametros)
        if isinstance(procesada, engine._TransformFailed):
            raise ValueError(f"Template format error: {procesada.error}")
        return procesada

    def _cfn_nested_stack_deploy(logical_id, props, parent_stack_name, **opciones):
        dados = props.get("Parameters") or {}
        parametros = [{"Key": k, "Value": "" if v is None else str(v)} for k, v in dict(dados).items()]
        tokens = por_parsear.set(parametros), en_unidad.set(True)
        try:
            return desplegar(logical_id, props, parent_stack_name, **opciones)
        finally:
            en_unidad.reset(tokens[1])
            por_parsear.reset(tokens[0])

    def resuelto(props):
        return engine._resolve_dynamic_references(props)[0] if en_unidad.get() else props

    def _provision_resource(resource_type, logical_id, props, stack_name):
        return crear(resource_type, logical_id, resuelto(props), stack_name)

    def _update_resource(resource_type, physical_id, old_props, new_props, stack_name, *args, **kwargs):
        return actualizar(resource_type, physical_id, resuelto(old_props), resuelto(new_props), stack_name,
                          *args, **kwargs)  # fmt: skip

    provisioners._cfn_nested_stack_deploy = _cfn_nested_stack_deploy
    provisioners._provision_resource, provisioners._update_resource = _provision_resource, _update_resource
    engine._parse_template = _parse_template


def _join_en_condiciones() -> None:
    """Conditions that test a list parameter with ``Fn::Join`` evaluate as CloudFormation evaluates them.

    MiniStack's condition evaluator knows Ref, Equals, And, Or, Not and Select, and compares anything else
    as its text: ``Fn::Equals [Fn::Join ["", Ref SubnetIds], ""]`` (the template's "no subnets given") was
    always false, so the default profile created no network, no Aurora and no Valkey. Each ``Fn::Join``
    over parameters is replaced by its value before MiniStack evaluates the conditions.
    """
    from ministack.services.cloudformation import changesets, engine, handlers, stacks

    original = engine._evaluate_conditions

    def _evaluate_conditions(template: dict, params: dict) -> dict:
        def valor(nodo: object) -> object:
            if isinstance(nodo, dict) and set(nodo) == {"Ref"} and nodo["Ref"] in params:
                return params[nodo["Ref"]]["Value"]
            return nodo

        def resolver(nodo: object) -> object:
            if isinstance(nodo, list):
                return [resolver(n) for n in nodo]
            if not isinstance(nodo, dict):
                return nodo
            if set(nodo) == {"Fn::Join"}:
                separador, partes = nodo["Fn::Join"]
                partes = valor(resolver(partes))
                if isinstance(partes, str):  # a CommaDelimitedList's value, as MiniStack keeps it
                    partes = partes.split(",")
                partes = [valor(p) for p in partes] if isinstance(partes, list) else partes
                if isinstance(partes, list) and all(isinstance(p, str) for p in partes):
                    return separador.join(partes)
            return {k: resolver(v) for k, v in nodo.items()}

        condiciones = resolver(template.get("Conditions") or {})
        return original({**template, "Conditions": condiciones}, params)

    for modulo in (engine, changesets, handlers, stacks):
        if getattr(modulo, "_evaluate_conditions", None) is original:
            modulo._evaluate_conditions = _evaluate_conditions


def _tema_ausente(ruta: str) -> None:
    from ministack.services import stepfunctions

    recurso = "arn:aws:states:::sns:publish"
    original = stepfunctions._SERVICE_DISPATCH[recurso]

    def publicar(resource: str, input_data: dict) -> object:
        marcas = []
        if os.path.exists(ruta):
            with open(ruta, encoding="utf-8") as f:
                marcas = json.load(f)
        if any(m in str(input_data.get("Message", "")) for m in marcas):
            input_data = {**input_data, "TopicArn": f"{input_data.get('TopicArn', '')}-ausente"}
        return original(resource, input_data)

    stepfunctions._SERVICE_DISPATCH[recurso] = publicar


if __name__ == "__main__":
    import ministack_recursos  # beside this file: the default profile's handlers

    ministack_recursos.instalar()
    _unidades_como_raiz()
    _join_en_condiciones()
    _pipes_con_parametros()
    if carpeta := os.environ.get("MF_IAM_REGISTRO"):
        _grabar_tareas(carpeta)
    if publicos := os.environ.get("MF_PARAMETROS_PUBLICOS"):
        _parametros_publicos(publicos)
    if ausente := os.environ.get("MF_TEMA_AUSENTE"):
        _tema_ausente(ausente)
    from ministack.app import main

    sys.argv[0] = "ministack"
    sys.exit(main())
