"""``make deploy-emulated``: the real template built and deployed into the emulated account, as a user deploys it.

:func:`subir` starts the account if it is not running (:mod:`emulated_account.cuenta`), runs
``sam build`` for this machine's CPU (the account's containers run it), applies the emulator's gaps to
the build output (:mod:`emulated_account.gaps`, the one place the account departs from AWS), runs
``sam deploy`` with samconfig.toml's stack name and parameters plus any given, creates what MiniStack
left out (the HTTP API's routes), warms the sandbox providers, and prints the store's URL and the next
commands. Running it again deploys again (an update). :func:`bajar` stops the account and everything
it made. The deploy level (``tests/deploy``) runs exactly this, through ``make deploy-emulated``.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import time
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from template_model import profile_parameters

from emulated_account import cuenta, gaps

if TYPE_CHECKING:
    from collections.abc import Callable

    from botocore.client import BaseClient

RAIZ = Path(__file__).resolve().parents[3]
VENV_BIN = RAIZ / ".venv" / "bin"
SAMCONFIG = RAIZ / "samconfig.toml"
PILA = tomllib.loads(SAMCONFIG.read_text())["default"]["global"]["parameters"]["stack_name"]  # what sam deploy creates
# The account runs the functions on this machine's CPU (its Lambda image is built for it).
ARQUITECTURA = "arm64" if platform.machine() in ("aarch64", "arm64") else "x86_64"
# Its own build folder, because the gaps rewrite the built template in place (gaps.adapt_file): the user's
# .aws-sam/build stays what a real account gets. SAM's cache is shared: it keeps one build per architecture.
BUILD_DIR = RAIZ / ".aws-sam" / f"emulated-{ARQUITECTURA}"


class DespliegueError(RuntimeError):
    """A step of the deploy failed; the message names its log."""


def _paso(texto: str) -> None:
    print(f"[emulated account {time.strftime('%H:%M:%S')}] {texto}", flush=True)


def parametros(extra: dict[str, str] | None = None) -> dict[str, str]:
    """samconfig.toml's ``parameter_overrides`` (README: ``sam deploy``), the CPU, then ``extra``."""
    return {**profile_parameters("default", SAMCONFIG), "Architecture": ARQUITECTURA, **(extra or {})}


def cliente(estado: cuenta.Estado) -> Callable[[str], BaseClient]:
    """``cliente("sqs")``: a boto3 client of the account."""
    import boto3

    entorno = estado.entorno()

    def crear(servicio: str) -> BaseClient:
        return boto3.client(
            servicio,
            endpoint_url=estado.endpoint,
            region_name=estado.region,
            aws_access_key_id=entorno["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=entorno["AWS_SECRET_ACCESS_KEY"],
        )

    return crear


def sam(estado: cuenta.Estado, *argumentos: str, log: str) -> None:
    comando = [str(VENV_BIN / "sam"), *argumentos]
    _paso("$ " + shlex.join(comando))
    ruta = Path(estado.carpeta) / log
    entorno = {
        **{k: v for k, v in os.environ.items() if k != "AWS_PROFILE"},
        **estado.entorno(),
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # a real python3.13 for sam build
        "SAM_CLI_TELEMETRY": "0",
    }
    with ruta.open("ab") as salida:
        hecho = subprocess.run(comando, cwd=RAIZ, env=entorno, stdout=salida, stderr=salida, check=False)
    if hecho.returncode != 0:
        print(ruta.read_text(errors="replace")[-4000:], flush=True)
        raise DespliegueError(f"sam {argumentos[0]} failed ({hecho.returncode}): see {ruta}")


def construir(estado: cuenta.Estado) -> None:
    arquitectura = f"Architecture={ARQUITECTURA}"
    sam(estado, "build", "--build-dir", str(BUILD_DIR), "--cached", "--parameter-overrides", arquitectura,
        log="sam-build.log")  # fmt: skip
    gaps.adapt_file(BUILD_DIR / "template.yaml", estado.gateway, log=_paso)


def desplegar(estado: cuenta.Estado, valores: dict[str, str]) -> None:
    empaquetada = BUILD_DIR / "packaged.yaml"
    sam(
        estado, "package", "--template-file", str(BUILD_DIR / "template.yaml"), "--output-template-file",
        str(empaquetada), "--region", estado.region, "--resolve-s3", log="sam-package.log",
    )  # fmt: skip
    gaps.units_in_aws_form(empaquetada, estado.gateway, estado.region)
    sam(
        estado, "deploy", "--template-file", str(empaquetada), "--stack-name", PILA,
        "--region", estado.region, "--resolve-s3", "--no-confirm-changeset", "--no-fail-on-empty-changeset",
        "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
        "--parameter-overrides", *(f"{k}={v}" for k, v in valores.items()),
        log="sam-deploy.log",
    )  # fmt: skip


def preparar(estado: cuenta.Estado) -> dict[str, list[str]]:
    """What MiniStack leaves out of a deploy, done through the account's APIs in every stack (each a gap)."""
    hecho: dict[str, list[str]] = {"rutas_creadas": [], "calentadas": []}
    cfn = cliente(estado)("cloudformation")
    for pila, plantilla in gaps.stacks(BUILD_DIR / "template.yaml", PILA, cfn):
        hecho["rutas_creadas"] += gaps.add_http_api_routes(plantilla, pila, cliente(estado))
        hecho["calentadas"] += gaps.warm_providers(plantilla, pila, cliente(estado))
    return hecho


def url_tienda(estado: cuenta.Estado) -> str:
    """The stack's ``TiendaApiUrl``, in the form the account serves it (``gaps.api_url_in_gateway``)."""
    salidas = cliente(estado)("cloudformation").describe_stacks(StackName=PILA)["Stacks"][0]["Outputs"]
    url = next(o["OutputValue"] for o in salidas if o["OutputKey"] == "TiendaApiUrl")
    return gaps.api_url_in_gateway(url, estado.gateway)


def url_valkey(estado: cuenta.Estado) -> str:
    """``rediss://`` to the stack's Valkey as its functions reach it (endpoint, AUTH token, the account's CA)."""
    import json

    lam = cliente(estado)("lambda")
    for pagina in lam.get_paginator("list_functions").paginate():
        for funcion in pagina["Functions"]:
            variables = (funcion.get("Environment") or {}).get("Variables") or {}
            if variables.get("VALKEY_ENDPOINT") and variables.get("VALKEY_SECRET_ARN"):
                secreto = cliente(estado)("secretsmanager").get_secret_value(SecretId=variables["VALKEY_SECRET_ARN"])
                token = json.loads(secreto["SecretString"])["token"]
                return f"rediss://:{token}@{variables['VALKEY_ENDPOINT']}/0?ssl_ca_certs={estado.carpeta}/ca/ca.pem"
    return ""


def entorno_de_usuario(estado: cuenta.Estado, url: str) -> Path:
    """``build/emulated-account/env``: what a shell sources to talk to the account (and the store's URL)."""
    ruta = Path(estado.carpeta) / "env"
    valores = {**estado.entorno(), "MF_TIENDA_URL": url, "MF_VALKEY_URL": url_valkey(estado)}
    lineas = [f"export {k}={shlex.quote(v)}" for k, v in valores.items()]
    cabecera = "# source this file: the emulated account's endpoint and fake credentials, the store's URL"
    ruta.write_text("\n".join([cabecera, *lineas]) + "\n")
    return ruta


def resumen(estado: cuenta.Estado, url: str, env: Path) -> str:
    relativo = env.relative_to(RAIZ) if env.is_relative_to(RAIZ) else env
    pedido = json.dumps({
        "cliente_id": "CLI-0001", "email": "ana@example.com",
        "lineas": [{"sku": "FRU-MAN-001", "cantidad": 2, "precio_centimos": 249}],
    })  # fmt: skip
    return f"""
Stack {PILA} deployed in the emulated account {estado.endpoint} (region {estado.region}).
Store API (TiendaApiUrl, as the account serves it): {url}

Next:
  source {relativo}                      # the account's endpoint, credentials, $MF_TIENDA_URL, $MF_VALKEY_URL
  mf-smoke --url "$MF_TIENDA_URL" --firmar si -n 3      # orders placed and followed to CONFIRMADO
  mf-smoke --url "$MF_TIENDA_URL" --firmar si -n 1 --cliente CLI-TARJETA-RECHAZADA   # a declined card
  curl --aws-sigv4 "aws:amz:{estado.region}:execute-api" --user test:test \\
       -H "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)" -H "Content-Type: application/json" \\
       -d '{pedido}' "$MF_TIENDA_URL/pedidos"
  curl --aws-sigv4 "aws:amz:{estado.region}:execute-api" --user test:test "$MF_TIENDA_URL/pedidos/<pedido_id>"
  mf-circuito --redis-url "$MF_VALKEY_URL" estado pasarela erp correo-principal   # the shared breakers
  make deploy-emulated PARAMETROS="SimuladorProporcionFallos=1"   # deploy again: the sandbox gateway down
  make deploy-emulated PARAMETROS="SimuladorProporcionFallos=0"   # and up (a parameter keeps its last value)
  make deploy-emulated-down                              # stop the account and remove everything it made
What the account cannot do, and what covers it: docs/emulated-account.md
"""


def subir(extra: dict[str, str] | None = None) -> int:
    inicio = time.monotonic()
    estado = cuenta.arrancar()
    _paso(f"account at {estado.endpoint} (logs in {estado.carpeta})")
    construir(estado)
    desplegar(estado, parametros(extra))
    preparar(estado)
    url = url_tienda(estado)
    print(resumen(estado, url, entorno_de_usuario(estado, url)), flush=True)
    _paso(f"deployed in {time.monotonic() - inicio:.0f} s")
    return 0


def bajar() -> int:
    if cuenta.parar():
        _paso("the emulated account is stopped; its containers, volumes and network are removed")
    else:
        _paso("no emulated account was running")
    return 0
