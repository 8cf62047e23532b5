"""MiniStack, the emulated AWS account: started on the Docker bridge, stopped with every container it made.

``ministack`` (pinned in ``requirements/ministack.txt``) lives in ``.venv-ministack``: it pins
botocore exactly, older than the project's. It listens on ``PUENTE:<free port>`` only, so the host
and the containers reach it at the same address (custom resources' ``ResponseURL`` and the functions'
``AWS_ENDPOINT_URL`` included), and runs every function in Docker from the locally built
``public.ecr.aws/lambda/python:3.13`` (``tools/levels/sam_local/build-image.sh``), Aurora and
ElastiCache Serverless in the locally built ``postgres:17-alpine``/``valkey/valkey:8.1-alpine``
(``build-images.sh``), never pulling.

The functions, the databases and the caches share a Docker network of this instance
(``DOCKER_NETWORK``): Aurora's cluster endpoint is then the name CreateDBCluster answers
(``aurora-mf.cluster-….rds.amazonaws.com``, a network alias of its container, on port 5432) and its
certificate names it, as Aurora's does. The functions trust MiniStack's two CAs, its RDS CA as Aurora's
``verify-full`` root and both through ``SSL_CERT_FILE`` (``gaps.py``). Every AWS request the functions
and the state machine make is recorded in :attr:`MiniStack.registro_iam` (the least-privilege check).
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import urllib3
from sam_emulator.moto_server import free_port

from emulated_account import gaps

RAIZ = Path(__file__).resolve().parents[3]
MINISTACK = Path(os.environ.get("MINISTACK_BIN", RAIZ / ".venv-ministack" / "bin" / "ministack"))
LANZADOR = Path(__file__).with_name("ministack_del_nivel.py")  # MiniStack's main, plus what the account adds
PUENTE = os.environ.get("MF_DEPLOY_BRIDGE", "172.17.0.1")  # docker0's address: the host seen from a container
REGION = "eu-south-2"  # samconfig.toml's
START_LIMIT_S = 120  # a hang guard: it is ready in ~5 s on a quiet machine
CA_EN_CONTENEDOR = "/var/mf-ca"
NOMBRE_INSTANCIA = "mf-cuenta"  # MiniStack labels its containers with it and the port: we remove exactly those


@dataclass
class MiniStack:
    """``with MiniStack(carpeta) as ms: ms.endpoint`` — a fresh, empty account."""

    carpeta: Path
    puerto: int = field(default_factory=free_port)
    _proceso: subprocess.Popen[bytes] | None = None

    @property
    def gateway(self) -> str:
        return f"{PUENTE}:{self.puerto}"

    @property
    def endpoint(self) -> str:
        return f"http://{self.gateway}"

    @property
    def red(self) -> str:
        """The Docker network of this account's functions, databases and caches."""
        return f"{NOMBRE_INSTANCIA}-{self.puerto}"

    @property
    def instancia(self) -> str:
        """The value of the ``ministack.instance`` label on every container this account starts."""
        return f"{NOMBRE_INSTANCIA}:{self.puerto}"

    @property
    def numero(self) -> str:
        """The account's id (12 digits, from its port)."""
        return f"{100_000_000_000 + self.puerto}"

    @property
    def parametros_publicos(self) -> Path:
        """AWS's public SSM parameters in this account, as JSON (name -> value; ``ministack_del_nivel.py``)."""
        return self.carpeta / "parametros-publicos.json"

    @property
    def tema_ausente(self) -> Path:
        """Strings whose confirmation is published to no topic (``ministack_del_nivel.py``): a JSON list."""
        return self.carpeta / "tema-ausente.json"

    @property
    def registro_iam(self) -> Path:
        """Where the functions' and the state machine's requests are written (one JSON line each)."""
        return self.carpeta / "registro-iam"

    @property
    def cas(self) -> Path:
        return self.carpeta / "ca"

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
            # An account id of its own: MiniStack names an Aurora cluster's volume by account and region, so
            # two accounts on one machine (a user's and the deploy level's) never share a database.
            "MINISTACK_ACCOUNT_ID": self.numero,
            "LAMBDA_EXECUTOR": "docker",  # Lambda's container, not an in-process worker
            "DOCKER_NETWORK": self.red,
            "LAMBDA_DOCKER_FLAGS": (
                f"-e SSL_CERT_FILE={CA_EN_CONTENEDOR}/ca.pem -e AURORA_SSLROOTCERT={CA_EN_CONTENEDOR}/rds.pem"
                f" -v {self.cas}:{CA_EN_CONTENEDOR}:ro {gaps.recorder_docker_flags(self.registro_iam)}"
            ),
            "TMPDIR": str(self.carpeta),
            "MF_PARAMETROS_PUBLICOS": str(self.parametros_publicos),
            "MF_TEMA_AUSENTE": str(self.tema_ausente),
            "MF_IAM_REGISTRO": str(self.registro_iam),
        }

    def start(self) -> MiniStack:
        if not MINISTACK.exists():
            raise OSError(f"{MINISTACK} is missing: make deploy-emulated installs it (requirements/ministack.txt)")
        self.carpeta.mkdir(parents=True, exist_ok=True)
        self.cas.mkdir(exist_ok=True)
        self.registro_iam.mkdir(exist_ok=True)
        self.registro_iam.chmod(0o777)  # written from inside the containers, whatever their user
        self._docker("network", "create", "--label", f"ministack.instance={self.instancia}", self.red)
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
                self.stop()
                raise OSError(f"ministack exited {self._proceso.returncode}: see {self.log}")
            try:
                if http.request("GET", f"{self.endpoint}/_ministack/health").status == 200:
                    self._escribir_cas(http)
                    return self
            except urllib3.exceptions.HTTPError:
                pass
            time.sleep(0.5)  # polling a process that announces nothing
        self.stop()
        raise OSError(f"ministack did not answer within {START_LIMIT_S} s: see {self.log}")

    def _escribir_cas(self, http: urllib3.PoolManager) -> None:
        """MiniStack's RDS and ElastiCache CAs (minted on first request), before any function runs."""
        pems = {}
        for servicio in ("rds", "elasticache"):
            respuesta = http.request("GET", f"{self.endpoint}/_ministack/{servicio}/ca.pem")
            if respuesta.status != 200:
                raise OSError(f"ministack did not give its {servicio} CA ({respuesta.status})")
            pems[servicio] = respuesta.data.decode()
        (self.cas / "rds.pem").write_text(pems["rds"])
        (self.cas / "ca.pem").write_text(pems["rds"] + pems["elasticache"])

    def stop(self) -> None:
        """Stop it, then remove the containers, volumes and network it made (labelled with this instance).

        What to remove is listed first: MiniStack removes some containers itself on its way out, and a
        container gone no longer names the volume it mounted.
        """
        hecho = self.docker()
        if self._proceso is not None:
            proceso, self._proceso = self._proceso, None
            proceso.terminate()
            try:
                proceso.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proceso.kill()
                proceso.wait()
        if contenedores := sorted(set(hecho["contenedores"]) | set(self.docker()["contenedores"])):
            self._docker("rm", "-f", *contenedores)
        if hecho["volumenes"]:
            self._docker("volume", "rm", *hecho["volumenes"])
        self._docker("network", "rm", self.red)

    def docker(self) -> dict[str, list[str]]:
        """What this account has in Docker: its containers (by label), the volumes they mount, its network."""
        contenedores = self._docker("ps", "-aq", "--filter", f"label=ministack.instance={self.instancia}").split()
        volumenes: set[str] = set()
        for contenedor in contenedores:
            formato = '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}'
            volumenes.update(self._docker("inspect", "-f", formato, contenedor).split())
        redes = self._docker("network", "ls", "-q", "--filter", f"name=^{self.red}$").split()
        return {"contenedores": contenedores, "volumenes": sorted(volumenes), "redes": redes}

    @staticmethod
    def _docker(*argumentos: str) -> str:
        return subprocess.run(["docker", *argumentos], capture_output=True, text=True, check=False).stdout

    def __enter__(self) -> MiniStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
