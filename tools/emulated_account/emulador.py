"""MiniStack, the emulated AWS account: started on the Docker bridge, stopped with every container it made.

``ministack`` (pinned in ``requirements/ministack.txt``) lives in ``.venv-ministack``: it pins
botocore exactly, older than the project's. It listens on ``PUENTE:<free port>`` only, so the host
and the Lambda containers reach it at the same address (custom resources' ``ResponseURL`` and the
functions' ``AWS_ENDPOINT_URL`` included), and runs every function in Docker from the locally built
``public.ecr.aws/lambda/python:3.13`` (``tools/sam_local/build-image.sh``), never pulling.

With ``registro_iam`` set, every AWS request the functions and the state machine make is recorded
there (:func:`emulated_account.gaps.recorder_docker_flags`, ``ministack_del_nivel.py``) for the
least-privilege check (:mod:`mercadofresco_iam.desplegado`). AWS's public SSM parameters the level
publishes are served from :attr:`MiniStack.parametros_publicos`.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import urllib3
from sam_emulator.moto_server import free_port

from emulated_account import gaps
from emulated_account.infraestructura import PUENTE

if TYPE_CHECKING:
    from emulated_account.infraestructura import Certificados

RAIZ = Path(__file__).resolve().parents[2]
MINISTACK = Path(os.environ.get("MINISTACK_BIN", RAIZ / ".venv-ministack" / "bin" / "ministack"))
LANZADOR = Path(__file__).with_name("ministack_del_nivel.py")  # MiniStack's main, plus what the level adds
REGION = "eu-south-2"  # samconfig.toml's
START_LIMIT_S = 120  # a hang guard: it is ready in ~5 s on a quiet machine
CA_EN_CONTENEDOR = "/var/mf-ca"
NOMBRE_INSTANCIA = "mf-deploy-level"  # MiniStack labels its containers with it: we remove exactly those


@dataclass
class MiniStack:
    """``with MiniStack(carpeta, certificados) as ms: ms.endpoint`` — a fresh, empty account."""

    carpeta: Path
    certificados: Certificados
    registro_iam: Path | None = None  # where the functions' and the state machine's requests are written
    puerto: int = field(default_factory=free_port)
    _proceso: subprocess.Popen[bytes] | None = None

    @property
    def gateway(self) -> str:
        return f"{PUENTE}:{self.puerto}"

    @property
    def endpoint(self) -> str:
        return f"http://{self.gateway}"

    @property
    def parametros_publicos(self) -> Path:
        """AWS's public SSM parameters in this account, as JSON (name -> value; ``ministack_del_nivel.py``)."""
        return self.carpeta / "parametros-publicos.json"

    @property
    def log(self) -> Path:
        return self.carpeta / "ministack.log"

    def entorno(self) -> dict[str, str]:
        return {
            **os.environ,
            "GATEWAY_PORT": str(self.puerto),
            "BIND_HOST": PUENTE,
            "MINISTACK_HOST": PUENTE,  # the host it names in the URLs it hands out (ResponseURL)
            "MINISTACK_HOSTNAME": NOMBRE_INSTANCIA,
            "MINISTACK_REGION": REGION,
            "LAMBDA_EXECUTOR": "docker",  # Lambda's container, not an in-process worker
            # The level's CA (its PostgreSQL and Valkey speak TLS), trusted inside every function: by
            # OpenSSL's default store (Valkey) and as Aurora's verify-full root (the layer's RDS bundle otherwise).
            "LAMBDA_DOCKER_FLAGS": (
                f"-e SSL_CERT_FILE={CA_EN_CONTENEDOR}/ca.pem -e AURORA_SSLROOTCERT={CA_EN_CONTENEDOR}/ca.pem"
                f" -v {self.certificados.carpeta}:{CA_EN_CONTENEDOR}:ro"
                + (f" {gaps.recorder_docker_flags(self.registro_iam)}" if self.registro_iam else "")
            ),
            "TMPDIR": str(self.carpeta),
            "MF_PARAMETROS_PUBLICOS": str(self.parametros_publicos),
            **({"MF_IAM_REGISTRO": str(self.registro_iam)} if self.registro_iam else {}),
        }

    def start(self) -> MiniStack:
        if not MINISTACK.exists():
            raise OSError(f"{MINISTACK} is missing: make test-deploy installs it (requirements/ministack.txt)")
        self.carpeta.mkdir(parents=True, exist_ok=True)
        if self.registro_iam:
            self.registro_iam.mkdir(parents=True, exist_ok=True)
            self.registro_iam.chmod(0o777)  # written from inside the containers, whatever their user
        with self.log.open("ab") as log:
            self._proceso = subprocess.Popen(
                [str(MINISTACK.with_name("python")), str(LANZADOR)],
                env=self.entorno(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        http = urllib3.PoolManager(retries=False, timeout=2)
        limite = time.monotonic() + START_LIMIT_S
        while time.monotonic() < limite:
            if self._proceso.poll() is not None:
                raise OSError(f"ministack exited {self._proceso.returncode}: see {self.log}")
            try:
                if http.request("GET", f"{self.endpoint}/_ministack/health").status == 200:
                    return self
            except urllib3.exceptions.HTTPError:
                pass
            time.sleep(0.5)  # polling a process that announces nothing
        self.stop()
        raise OSError(f"ministack did not answer within {START_LIMIT_S} s: see {self.log}")

    def stop(self) -> None:
        """Stop it, then remove the Lambda containers it started (labelled with this instance only)."""
        if self._proceso is not None:
            proceso, self._proceso = self._proceso, None
            proceso.terminate()
            try:
                proceso.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proceso.kill()
                proceso.wait()
        etiqueta = f"label=ministack.instance={NOMBRE_INSTANCIA}:{self.puerto}"
        ids = subprocess.run(
            ["docker", "ps", "-aq", "--filter", etiqueta], capture_output=True, text=True, check=False
        ).stdout.split()
        if ids:
            subprocess.run(["docker", "rm", "-f", *ids], capture_output=True, check=False)

    def __enter__(self) -> MiniStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
