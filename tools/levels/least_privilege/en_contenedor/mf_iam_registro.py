"""The request recorder inside a deployed function's container (the deploy level mounts it; never deployed).

Python runs the ``import`` lines of every ``.pth`` file in its site directories at start-up:
the deploy level puts this folder on the Lambda containers' ``PYTHONPATH``, mounts
``mf_iam_registro.pth`` (``import mf_iam_registro``) into the image's site directory and a writable
folder at ``MF_IAM_REGISTRO``. A ``.pth`` file, unlike a module named ``sitecustomize``, neither
shadows the interpreter's own ``sitecustomize`` (Debian's Python ships one) nor is shadowed by it:
whatever else customises the interpreter still runs, and so does this. When (and only
when) the function imports ``botocore.client`` — from whichever copy its path finds first, the layer's
or the runtime's — every API call is written as one JSON line (function, signing name, operation,
parameters) before it is made, the same data :class:`least_privilege.registro.Llamada` keeps in a
local run; so is every SigV4 signature botocore's signer makes for a function URL (operation
``InvokeFunctionUrl``: the layer's :class:`mercadofresco.http.auth.FunctionUrlSigV4`), as
``lambda InvokeFunctionUrl {"FunctionUrl": url}``. Nothing else is changed: the call then goes ahead
untouched. Stdlib only: it runs before the function's own packages are on the path.
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
    firmante = sys.modules["botocore.signers"].RequestSigner  # botocore.client imports it first
    original, firmar = cliente._make_api_call, firmante.sign
    funcion = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
    ruta = os.path.join(_CARPETA, f"{funcion}.{os.getpid()}.jsonl")
    cerrojo = threading.Lock()

    def _anotar(servicio: str, operacion: str, parametros: dict) -> None:
        linea = json.dumps(
            {"funcion": funcion, "servicio": servicio, "operacion": operacion, "parametros": parametros},
            default=str,  # bytes payloads: only names, keys and entries matter to IAM
        )
        # A failed write raises: an unrecorded call would make the check pass on less than the run did.
        with cerrojo, open(ruta, "a", encoding="utf-8") as registro:
            registro.write(linea + "\n")

    def _make_api_call(self: object, operation_name: str, api_params: dict) -> object:
        _anotar(self.meta.service_model.signing_name, operation_name, api_params)  # type: ignore[attr-defined]
        return original(self, operation_name, api_params)

    def sign(self: object, operation_name: str, request: object, *args: object, **kwargs: object) -> object:
        if operation_name == "InvokeFunctionUrl":  # a client's own calls are recorded above, unsigned yet
            _anotar("lambda", operation_name, {"FunctionUrl": request.url})  # type: ignore[attr-defined]
        return firmar(self, operation_name, request, *args, **kwargs)

    cliente._make_api_call = _make_api_call
    firmante.sign = sign


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
