"""The request recorder inside a deployed function's container (the deploy level mounts it; never deployed).

Python imports ``sitecustomize`` at start-up from the path: the deploy level puts this folder on the
Lambda containers' ``PYTHONPATH`` and mounts a writable folder at ``MF_IAM_REGISTRO``. When (and only
when) the function imports ``botocore.client`` — from whichever copy its path finds first, the layer's
or the runtime's — every API call is written as one JSON line (function, signing name, operation,
parameters) before it is made, the same data :class:`mercadofresco_iam.registro.Llamada` keeps in a
local run. Nothing else is changed: the call then goes ahead untouched. Stdlib only: it runs before
the function's own packages are on the path.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import threading

_CARPETA = os.environ.get("MF_IAM_REGISTRO", "")
_MODULO = "botocore.client"


def _grabar(modulo: object) -> None:
    cliente = modulo.BaseClient  # type: ignore[attr-defined]
    original = cliente._make_api_call
    funcion = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
    ruta = os.path.join(_CARPETA, f"{funcion}.{os.getpid()}.jsonl")
    cerrojo = threading.Lock()

    def _make_api_call(self: object, operation_name: str, api_params: dict) -> object:
        linea = json.dumps(
            {
                "funcion": funcion,
                "servicio": self.meta.service_model.signing_name,  # type: ignore[attr-defined]
                "operacion": operation_name,
                "parametros": api_params,
            },
            default=str,  # bytes payloads: only names, keys and entries matter to IAM
        )
        # A failed write raises: an unrecorded call would make the check pass on less than the run did.
        with cerrojo, open(ruta, "a", encoding="utf-8") as registro:
            registro.write(linea + "\n")
        return original(self, operation_name, api_params)

    cliente._make_api_call = _make_api_call


class _AlImportar(importlib.abc.MetaPathFinder):
    """Finds ``botocore.client`` as the path would, and records once the module has run."""

    def find_spec(self, nombre: str, ruta: object = None, objetivo: object = None) -> object:
        if nombre != _MODULO:
            return None
        sys.meta_path.remove(self)  # once: the real finders do the finding
        spec = importlib.util.find_spec(nombre)
        if spec is not None and spec.loader is not None:
            ejecutar = spec.loader.exec_module

            def exec_module(modulo: object) -> None:
                ejecutar(modulo)
                _grabar(modulo)

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _CARPETA and os.path.isdir(_CARPETA):
    sys.meta_path.insert(0, _AlImportar())
