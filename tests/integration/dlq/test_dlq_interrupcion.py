"""Killing ``mf-dlq reprocesar`` mid-run loses nothing: send first, delete after; a re-run finishes the job.

The command runs as a real process against moto's server on loopback and gets SIGKILL
(no handler, no clean-up) while it is moving messages.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest
from dlq_colas import crear_par, drenar, llenar, total

pytestmark = pytest.mark.integration

MF_DLQ = str(Path(sys.executable).parent / "mf-dlq")
MENSAJES = 60
VISIBILIDAD_S = 2


@pytest.fixture
def servidor():
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        puerto = s.getsockname()[1]
    servidor = ThreadedMotoServer(ip_address="127.0.0.1", port=puerto, verbose=False)
    servidor.start()
    yield f"http://127.0.0.1:{puerto}"
    servidor.stop()


def _reprocesar(endpoint: str, **kwargs) -> subprocess.Popen:
    orden = [MF_DLQ, "reprocesar", "--queue", "mercadofresco-pedidos-fallidos", "--endpoint-url", endpoint,
             "--tasa", "20", "--visibilidad-s", str(VISIBILIDAD_S), "--json"]
    return subprocess.Popen(orden, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **kwargs)


def test_reprocesar_matado_a_mitad_y_relanzado_no_pierde_ningun_mensaje(servidor) -> None:
    # GIVEN 60 orders in the DLQ on moto's server
    sqs = boto3.client("sqs", endpoint_url=servidor, region_name="eu-south-2")
    origen, dlq = crear_par(sqs, "cola-mercadofresco-pedidos", "mercadofresco-pedidos-fallidos")
    llenar(sqs, dlq, [{"version": 1, "pedido_id": f"p-{n:02d}"} for n in range(MENSAJES)])

    # WHEN the reprocess is SIGKILLed once some (not all) messages reached the source
    proceso = _reprocesar(servidor)
    limite = time.monotonic() + 30
    while total(sqs, origen) < 10 and time.monotonic() < limite and proceso.poll() is None:
        time.sleep(0.05)
    os.kill(proceso.pid, signal.SIGKILL)
    proceso.wait(timeout=10)
    a_medias = (total(sqs, origen), total(sqs, dlq))

    # AND, once the killed run's in-flight messages are visible again, it is run again to the end
    time.sleep(VISIBILIDAD_S + 0.5)
    segunda = _reprocesar(servidor)
    salida, _ = segunda.communicate(timeout=60)

    # THEN the kill really landed mid-run, the re-run finished, and every order is in the source: none lost
    assert proceso.returncode == -signal.SIGKILL
    assert 10 <= a_medias[0] < MENSAJES and a_medias[1] > 0, a_medias
    assert segunda.returncode == 0, salida
    assert total(sqs, dlq) == 0
    pedidos = [json.loads(m["Body"])["pedido_id"] for m in drenar(sqs, origen)]
    assert set(pedidos) == {f"p-{n:02d}" for n in range(MENSAJES)}
    # at most the one message between its send and its delete is duplicated
    assert len(pedidos) - MENSAJES <= 1
