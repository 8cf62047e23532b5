"""Run ``sam local invoke`` as the README shows it, and read the function's answer.

``sam local invoke`` exits 0 even when the handler raises: the answer is the last line of
its standard output, Lambda's error document (``errorType``, ``errorMessage``) when it did.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RAIZ = Path(__file__).resolve().parents[3]
SAM = str(Path(sys.prefix) / "bin" / "sam")
# CPU of the base image built by build-image.sh: the functions and the layer are built for it.
ARCHITECTURE = "arm64" if platform.machine().lower() in ("arm64", "aarch64") else "x86_64"
BUILD_DIR = Path(os.environ.get("SAM_LOCAL_BUILD_DIR", RAIZ / ".aws-sam" / f"local-{ARCHITECTURE}"))
CACHE_DIR = Path(os.environ.get("SAM_LOCAL_CACHE_DIR", RAIZ / ".aws-sam" / f"local-{ARCHITECTURE}-cache"))
ENV_VARS = "events/env-vars.json"
# Lambda inits (imports, clients) before the invocation, outside its Timeout, within 10 s; a busy
# laptop or CI machine inits several times slower than Lambda, so the local allowance is generous.
INIT_PHASE_S = 60
# samconfig.toml is looked for next to the template given with -t (the build dir): say the region.
REGION = os.environ.get("AWS_DEFAULT_REGION", "eu-south-2")
# Credentials for moto's server only; SAM hands the container the ones in its own environment.
LOCAL_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}


class SamLocalError(RuntimeError):
    """``sam local invoke`` itself failed (no container, no answer): not the function's error."""


@dataclass(frozen=True)
class Answer:
    """What the function returned, or the error it raised (``error_type`` set)."""

    payload: Any
    logs: str

    @property
    def error_type(self) -> str | None:
        return self.payload.get("errorType") if isinstance(self.payload, dict) else None


def _sam_env() -> dict[str, str]:
    # The venv's python3.13 first on PATH (sam build without a container needs it), fake credentials, and
    # AWS::LanguageExtensions expanded: a template with Fn::ForEach crashes every sam command without it
    # (decision 0130), and the built template's folder has no samconfig.toml to say so; a template without
    # loops builds and invokes the same with it.
    return {
        **os.environ,
        "PATH": f"{Path(SAM).parent}:{os.environ.get('PATH', '')}",
        "SAM_CLI_ENABLE_LANGUAGE_EXTENSIONS": "1",
        **LOCAL_CREDENTIALS,
    }


def build_command(build_dir: Path = BUILD_DIR, cache_dir: Path = CACHE_DIR) -> list[str]:
    return [
        SAM, "build", "--build-dir", str(build_dir), "--cache-dir", str(cache_dir), "--cached",
        "--parameter-overrides", f"Architecture={ARCHITECTURE}",
    ]  # fmt: skip


def invoke_command(function: str, event: str, build_dir: Path = BUILD_DIR, env_vars: str = ENV_VARS) -> list[str]:
    return [
        SAM, "local", "invoke", function, "-e", event, "--env-vars", env_vars,
        "-t", str(build_dir / "template.yaml"), "--parameter-overrides", f"Architecture={ARCHITECTURE}",
        "--region", REGION, "--skip-pull-image",
    ]  # fmt: skip


def build(build_dir: Path = BUILD_DIR, cache_dir: Path = CACHE_DIR) -> None:
    """``sam build`` for this machine's CPU into a directory of its own (``.aws-sam/build`` stays arm64)."""
    comando = build_command(build_dir, cache_dir)
    print("$", shlex.join(comando), flush=True)
    # The layer's makefile build is not told the architecture by SAM: it reads ARCHITECTURE.
    entorno = {**_sam_env(), "ARCHITECTURE": ARCHITECTURE}
    hecho = subprocess.run(comando, cwd=RAIZ, env=entorno, capture_output=True, text=True, check=False)
    if hecho.returncode != 0:  # its progress is noise; its failure is not
        raise SamLocalError(f"sam build exited {hecho.returncode}:\n{hecho.stderr[-5000:]}")
    _separate_init_phase(build_dir / "template.yaml")
    # SAM derives an image per layer content (base image + /opt): a new build leaves the previous one
    # dangling. They carry the base image's label; only dangling ones go.
    subprocess.run(
        ["docker", "image", "prune", "-f", "--filter", "label=mercadofresco.receta"],
        check=False,
        capture_output=True,
    )


def _separate_init_phase(template: Path) -> None:
    """Each function's ``Timeout`` + an init allowance, in the built template only.

    Lambda runs the init phase (imports, module-level clients) before the invocation, outside its
    ``Timeout``; the emulator in ``sam local invoke`` starts the runtime inside the first (and only)
    invocation, so init time would be taken from the function's ``Timeout``. The consumers start
    a record only with 26 of their 30 s left: without this, a cold start slower than 4 s (12 s
    measured on a busy 2-core machine) defers records locally that Lambda would process.
    """
    texto = re.sub(r"(?m)^(\s+Timeout: )(\d+)\s*$", lambda m: f"{m[1]}{int(m[2]) + INIT_PHASE_S}", template.read_text())
    template.write_text(texto)


def invoke(
    function: str, event: str, build_dir: Path = BUILD_DIR, *, env_vars: str = ENV_VARS, echo: bool = False
) -> Answer:
    """Run one event through ``sam local invoke`` (``event`` relative to the repository root)."""
    comando = invoke_command(function, event, build_dir, env_vars)
    if echo:
        print("$", shlex.join(comando), flush=True)
    hecho = subprocess.run(comando, cwd=RAIZ, env=_sam_env(), capture_output=True, text=True, check=False)
    lineas = [linea for linea in hecho.stdout.splitlines() if linea.strip()]
    if hecho.returncode != 0 or not lineas:
        raise SamLocalError(
            f"sam local invoke {function} -e {event} exited {hecho.returncode} without an answer:\n"
            + hecho.stderr[-3000:]
        )
    try:
        payload = json.loads(lineas[-1])
    except ValueError:  # not Lambda's JSON: the emulator's own words ("Task timed out after 40.00 seconds")
        tipo = "Sandbox.Timedout" if "timed out" in lineas[-1] else "Runtime.Unknown"
        payload = {"errorType": tipo, "errorMessage": lineas[-1]}
    return Answer(payload=payload, logs=_without_shutdown_noise(hecho.stderr + "\n".join(lineas[:-1])))


def _without_shutdown_noise(logs: str) -> str:
    """The logs without the runtime's complaint when SAM stops the emulator after the answer."""
    inicio = logs.find("LAMBDA_RUNTIME Failed to get next invocation")
    if inicio < 0:
        return logs
    fin = logs.find("RuntimeError: Failed to get next", inicio)
    return logs[: logs.rfind("\n", 0, inicio) + 1] + (
        logs[fin + len("RuntimeError: Failed to get next") :] if fin >= 0 else ""
    )
