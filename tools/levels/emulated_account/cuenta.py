"""The emulated account as a background service: MiniStack and its SQS-source Pipes, until told to stop.

``python -m emulated_account serve`` runs them in the foreground (:func:`servir`); :func:`arrancar` starts
that in the background, detached from the terminal, and returns once the account answers — or reuses the
one already running — and :func:`parar` stops it (SIGTERM: MiniStack, every container, volume and
network it made). What a client needs is in ``estado.json`` of the account's folder
(``build/emulated-account/``): the endpoint, the gateway, the region, the server's pid.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from emulated_account.emulador import REGION, MiniStack

RAIZ = Path(__file__).resolve().parents[3]
# MF_CUENTA_DIR: another account beside the default one (the deploy level runs its own there).
CARPETA = Path(os.environ.get("MF_CUENTA_DIR", RAIZ / "build" / "emulated-account"))
ARRANQUE_S = 180  # a hang guard for the account to answer (MiniStack starts in ~5 s on a quiet machine)
PARADA_S = 90  # a hang guard for it to stop and remove its containers


@dataclass(frozen=True)
class Estado:
    """``estado.json``: how to reach the running account."""

    pid: int
    endpoint: str
    gateway: str
    region: str
    carpeta: str
    registro_iam: str
    parametros_publicos: str
    tema_ausente: str

    @classmethod
    def leer(cls, carpeta: Path = CARPETA) -> Estado | None:
        """The running account's state; None when there is none (no file, or its server is gone)."""
        try:
            estado = cls(**json.loads((carpeta / "estado.json").read_text()))
        except (OSError, ValueError, TypeError):
            return None
        try:
            os.kill(estado.pid, 0)
        except ProcessLookupError:
            return None
        return estado

    def entorno(self) -> dict[str, str]:
        return entorno(self.endpoint, self.region)


def entorno(endpoint: str, region: str = REGION) -> dict[str, str]:
    """What a client of the account sets: its endpoint, fake credentials, the region."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "test",  # the emulator's; never a real account
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": region,
        "AWS_REGION": region,
    }


def servir(carpeta: Path = CARPETA) -> int:
    """Run the account in the foreground until SIGTERM/SIGINT: MiniStack, then the pipe bridge."""
    from emulated_account.puente_pipes import PuentePipes

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("emulated_account").setLevel(logging.INFO)

    def terminar(senal: int, _marco: object) -> None:
        raise SystemExit(128 + senal)  # unwinds: the bridge, then MiniStack and all it made, are stopped

    for senal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(senal, terminar)
    carpeta.mkdir(parents=True, exist_ok=True)
    ruta = carpeta / "estado.json"
    with contextlib.ExitStack() as pila:
        pila.callback(ruta.unlink, missing_ok=True)
        ms = pila.enter_context(MiniStack(carpeta))
        os.environ.update(entorno(ms.endpoint))  # the bridge's clients (boto3's defaults) go to the account
        os.environ.pop("AWS_PROFILE", None)
        pila.enter_context(PuentePipes())
        estado = Estado(
            pid=os.getpid(),
            endpoint=ms.endpoint,
            gateway=ms.gateway,
            region=REGION,
            carpeta=str(carpeta),
            registro_iam=str(ms.registro_iam),
            parametros_publicos=str(ms.parametros_publicos),
            tema_ausente=str(ms.tema_ausente),
        )
        ruta.write_text(json.dumps(asdict(estado), indent=1))
        print(f"emulated account: {ms.endpoint} (pid {os.getpid()})", flush=True)
        signal.pause()
    return 0


def arrancar(carpeta: Path = CARPETA) -> Estado:
    """The running account, started in the background first when there is none."""
    if (estado := Estado.leer(carpeta)) is not None:
        return estado
    carpeta.mkdir(parents=True, exist_ok=True)
    with (carpeta / "cuenta.log").open("ab") as log:
        proceso = subprocess.Popen(
            [sys.executable, "-m", "emulated_account", "serve", "--dir", str(carpeta)],
            cwd=RAIZ,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives the make that started it, as a service does
            close_fds=True,
        )
    limite = time.monotonic() + ARRANQUE_S
    while (estado := Estado.leer(carpeta)) is None:
        if proceso.poll() is not None:
            raise OSError(f"the emulated account exited {proceso.returncode}: see {carpeta / 'cuenta.log'}")
        if time.monotonic() > limite:
            proceso.terminate()
            raise OSError(f"the emulated account did not start within {ARRANQUE_S} s: see {carpeta / 'cuenta.log'}")
        time.sleep(0.5)  # the server announces itself by writing estado.json
    return estado


def parar(carpeta: Path = CARPETA) -> bool:
    """Stop the running account (and everything it made); False when none was running."""
    estado = Estado.leer(carpeta)
    if estado is None:
        return False
    os.kill(estado.pid, signal.SIGTERM)
    limite = time.monotonic() + PARADA_S
    while Estado.leer(carpeta) is not None or vivo(estado.pid):
        if time.monotonic() > limite:
            os.kill(estado.pid, signal.SIGKILL)
            raise OSError(f"the emulated account (pid {estado.pid}) did not stop within {PARADA_S} s: killed")
        time.sleep(0.5)  # waiting for a process to exit
    return True


def vivo(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
