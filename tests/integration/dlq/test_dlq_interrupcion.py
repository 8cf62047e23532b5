"""Killing ``mf-dlq reprocesar`` mid-run loses nothing: send first, delete after; a re-run finishes the job.

The command runs as a real process against moto's server on loopback and gets SIGKILL
(no handler, no clean-up) while it is moving messages.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import boto3
import pytest
from dlq_colas import crear_par, drenar, llenar, total

from tests.conftest import HANG_GUARD_S

pytestmark = pytest.mark.integration

MF_DLQ = str(Path(sys.executable).parent / "mf-dlq")
MENSAJES = 60
VISIBILIDAD_S = 2


def _reprocesar(endpoint: str, **kwargs) -> subprocess.Popen:
    orden = [
        MF_DLQ,
        "reprocesar",
        "--cola",
        "mercadofresco-pedidos-fallidos",
        "--endpoint-url",
        endpoint,
        "--tasa",
        "20",
        "--visibilidad-s",
        str(VISIBILIDAD_S),
        "--json",
    ]
    return subprocess.Popen(orden, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kwargs)


class _PuertaEnvios:
    """Holds moto's server on the source queue's 11th SendMessage until the test opens it.

    So the kill lands after exactly 10 sends reached the source, while the 11th is in flight,
    however fast or slow this machine runs the command (moto's server runs in this process).
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, cola: str, antes_de: int) -> None:
        from moto.sqs.models import SQSBackend

        self.llegaron, self.abierta = threading.Event(), threading.Event()
        self._enviados, self._lock = 0, threading.Lock()
        original = SQSBackend.send_message

        def send_message(backend: SQSBackend, queue_name: str, *args: Any, **kwargs: Any) -> Any:
            if queue_name == cola:
                with self._lock:
                    self._enviados += 1
                    n = self._enviados
                if n == antes_de:
                    self.llegaron.set()
                    assert self.abierta.wait(HANG_GUARD_S), "the test never opened the gate"
            return original(backend, queue_name, *args, **kwargs)

        monkeypatch.setattr(SQSBackend, "send_message", send_message)


def test_reprocesar_killed_midway_and_relaunched_loses_no_message(moto_server, reloj_sqs, monkeypatch) -> None:
    # GIVEN 60 orders in the DLQ on moto's server
    sqs = boto3.client("sqs", endpoint_url=moto_server, region_name="eu-south-2")
    origen, dlq = crear_par(sqs, "cola-mercadofresco-pedidos", "mercadofresco-pedidos-fallidos")
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{n:02d}"} for n in range(MENSAJES)])
    puerta = _PuertaEnvios(monkeypatch, "cola-mercadofresco-pedidos", antes_de=11)

    # WHEN the reprocess is SIGKILLed after 10 messages reached the source, the 11th in flight
    proceso = _reprocesar(moto_server)
    assert puerta.llegaron.wait(HANG_GUARD_S), "the command never sent 11 messages"
    os.kill(proceso.pid, signal.SIGKILL)
    proceso.wait(timeout=HANG_GUARD_S)
    puerta.abierta.set()
    a_medias = (total(sqs, origen), total(sqs, dlq))

    # AND, once the killed run's in-flight messages are visible again (moto's clock), it is run again to the end
    reloj_sqs.avanzar(VISIBILIDAD_S + 0.5)
    segunda = _reprocesar(moto_server)
    salida, _ = segunda.communicate(timeout=HANG_GUARD_S)

    # THEN the kill really landed mid-run, the re-run finished, and every order is in the source: none lost
    assert proceso.returncode == -signal.SIGKILL
    assert 10 <= a_medias[0] < MENSAJES and a_medias[1] > 0, a_medias
    assert segunda.returncode == 0, salida.decode()
    assert total(sqs, dlq) == 0
    pedidos = [json.loads(m["Body"])["pedido_id"] for m in drenar(sqs, origen)]
    assert set(pedidos) == {f"p-{n:02d}" for n in range(MENSAJES)}
    # at most the one message between its send and its delete is duplicated
    assert len(pedidos) - MENSAJES <= 1
