"""The runbook's step 2, copied out of ``runbooks/dlq.md`` and run as written by bash, against moto's server.

Only the environment an on-call has is added: ``DLQ`` (the runbook sets it) and the endpoint
(``AWS_ENDPOINT_URL`` stands in for the account). If the runbook's commands change, this runs
the new ones; if they stop working in the order the runbook gives them, this fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from dlq_colas import crear_par, llenar, total

pytestmark = pytest.mark.integration

RUNBOOK = Path(__file__).resolve().parents[3] / "runbooks" / "dlq.md"
DLQ = "mercadofresco-erp-fallidos"


def bloque_del_paso(numero: int) -> str:
    """The first ```bash block under the runbook's ``## <numero>.`` heading."""
    texto = RUNBOOK.read_text()
    seccion = re.search(rf"^## {numero}\..*?(?=^## )", texto, re.S | re.M)
    assert seccion, f"runbooks/dlq.md has no step {numero}"
    bloque = re.search(r"^```bash\n(.*?)^```", seccion.group(0), re.S | re.M)
    assert bloque, f"step {numero} has no bash block"
    return bloque.group(1)


def test_runbook_step_2_as_written_sees_the_whole_dlq_on_every_command_and_leaves_a_verdict(
    moto_server: str, tmp_path: Path
) -> None:
    # GIVEN an ERP DLQ on moto's server with 30 valid notices (redrive) and 5 the consumer refused
    sqs = boto3.client("sqs", endpoint_url=moto_server, region_name="eu-south-2")
    origen, dlq = crear_par(sqs, "mercadofresco-erp", DLQ)
    aviso = {"tipo": "PedidoConfirmado", "version": 1, "cliente_id": "cli-1", "importe_centimos": 4820}
    llenar(sqs, dlq, [aviso | {"pedido_id": f"PED-{n:03d}"} for n in range(30)])
    motivo = {"mf-motivo": {"DataType": "String", "StringValue": "dato-invalido"}}
    llenar(
        sqs, dlq, [aviso | {"pedido_id": f"PED-9{n:02d}", "moneda": "EURO"} for n in range(5)], MessageAttributes=motivo
    )
    bloque = bloque_del_paso(2)
    entorno = {
        **os.environ,
        "DLQ": DLQ,
        "AWS_ENDPOINT_URL": moto_server,
        "COLUMNS": "60",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }

    def bash(ordenes: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-e", "-c", ordenes],
            cwd=tmp_path,
            env=entorno,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    # WHEN bash runs the step's block as written (stopping at the first command that fails)
    hecho = bash(bloque)

    # THEN every command succeeded, in the runbook's order
    assert hecho.returncode == 0, hecho.stderr
    # AND the classification after the inspection still saw all 35 (the inspection hid none of them)
    informe = json.loads((tmp_path / "clasificacion.json").read_text())
    assert informe["muestra"] == 35
    # AND the record has a verdict per group: the valid ones transient, the refused ones data
    grupos = {(g["motivo"], g["tipo"], g["muestra"]) for g in informe["grupos"]}
    assert grupos == {(None, "transitorio", 30), ("dato-invalido", "de datos", 5)}
    assert informe["tipo"] == "mixto"
    # AND each group's command is on one line of the human output, even at 60 columns
    for grupo in informe["grupos"]:
        assert grupo["orden"] in hecho.stdout.splitlines()
    # AND nothing was deleted
    assert total(sqs, dlq) == 35

    # WHEN the transient group's command is pasted as printed (--forzar: moto has no metrics to judge the consumer by)
    (transitorio,) = [g for g in informe["grupos"] if g["tipo"] == "transitorio"]
    movido = bash(transitorio["orden"] + " --forzar --tasa 50")

    # THEN exactly that group went back to its source; the data group waits in the DLQ for its fix
    assert movido.returncode == 0, movido.stderr
    assert (total(sqs, origen), total(sqs, dlq)) == (30, 5)
