"""MiniStack as the deploy level runs it: run by ``.venv-ministack``'s python, never imported by the project.

Two additions before serving, each one wrapped function of MiniStack's and nothing else:

- ``MF_IAM_REGISTRO``: MiniStack runs a state machine's Task states in its own process
  (``stepfunctions._invoke_resource``), so no client in a container sees them. Each call is written as
  one JSON line (the task's resource and its resolved parameters) to ``states.<pid>.jsonl`` there, then
  made unchanged; :mod:`mercadofresco_iam.desplegado` turns a line into the API call the integration
  makes (``arn:aws:states:::sqs:sendMessage`` is ``sqs:SendMessage`` with those parameters).
- ``MF_PARAMETROS_PUBLICOS``: a JSON file of AWS's public SSM parameters (``/aws/service/...``) the level
  publishes, as AWS does for every account (MiniStack serves a fixed few; an account cannot write
  there): :func:`emulated_account.gaps.fis_extension_stand_in` writes the FIS extension's. Read on each
  lookup, so a parameter published after start is served.

Stdlib and ministack only.
"""

from __future__ import annotations

import json
import os
import sys
import threading


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


if __name__ == "__main__":
    if carpeta := os.environ.get("MF_IAM_REGISTRO"):
        _grabar_tareas(carpeta)
    if publicos := os.environ.get("MF_PARAMETROS_PUBLICOS"):
        _parametros_publicos(publicos)
    from ministack.app import main

    sys.argv[0] = "ministack"
    sys.exit(main())
