"""The emulated account's Pipes for SQS sources: what MiniStack's Pipes do not run (they poll DynamoDB streams only).

Every few seconds the account's pipes are listed (``ListPipes``); each running pipe whose source is an SQS
queue is described (``DescribePipe``: source, target, ``SourceParameters`` and ``TargetParameters`` as
deployed, ``ministack_del_nivel.py``) and run by :mod:`sam_emulator.pipes` — the local run's Pipe
emulation: ``BatchSize``, ``FilterCriteria``, ``InputTemplate``, a ``FIRE_AND_FORGET`` start, the queue's
own redrive for a batch the target refused. A pipe deleted, stopped or changed is stopped (and a changed
one started again with its new configuration). Nothing here reads a template: a pipe created by hand in
the account runs too.

The clients are boto3's defaults, so the process sets ``AWS_ENDPOINT_URL`` to the account's.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from sam_emulator.background import BackgroundThread
from sam_emulator.pipes import Target, sqs_pipe

if TYPE_CHECKING:
    from sam_emulator.event_sources import EventSourceMapping

PERIODO_S = 2.0
_log = logging.getLogger(__name__)


def configuracion(descrito: dict[str, Any]) -> dict[str, Any]:
    """What running a pipe depends on, from its ``DescribePipe`` answer (a change restarts it)."""
    return {k: descrito.get(k) for k in ("Source", "Target", "SourceParameters", "TargetParameters")}


def mapeo(descrito: dict[str, Any]) -> EventSourceMapping:
    """The poller of one described pipe with an SQS source."""
    fuente, destino = descrito.get("SourceParameters") or {}, descrito.get("TargetParameters") or {}
    filtros = [json.loads(f["Pattern"]) for f in (fuente.get("FilterCriteria") or {}).get("Filters", [])]
    objetivo = Target(
        pipe_name=descrito["Name"],
        arn=descrito["Target"],
        parameters=destino,
        input_template=destino.get("InputTemplate"),
        functions=None,  # type: ignore[arg-type]  # a Lambda target is the account's to call, not ours
    )
    return sqs_pipe(descrito["Name"], descrito["Source"], objetivo, fuente, filtros, 1.0)


class PuentePipes:
    """``with PuentePipes(): ...`` — the account's SQS-source pipes run while the block lasts."""

    def __init__(self) -> None:
        self.corriendo: dict[str, tuple[dict[str, Any], EventSourceMapping]] = {}
        self._hilo = BackgroundThread.every("pipes-sqs", PERIODO_S, self.sincronizar, immediately=True,
                                            on_error=lambda exc: _log.warning("pipes: %r", exc))  # fmt: skip

    def sincronizar(self) -> None:
        """Start what the account runs and this process does not, stop what it no longer runs."""
        import boto3

        pipes = boto3.client("pipes")
        deseados = {}
        for pagina in pipes.get_paginator("list_pipes").paginate():
            for resumen in pagina["Pipes"]:
                # Desired, not current: moto reports a pipe created STOPPED as RUNNING; MiniStack keeps both equal.
                if resumen.get("DesiredState") == "RUNNING" and resumen.get("Source", "").startswith("arn:aws:sqs:"):
                    descrito = pipes.describe_pipe(Name=resumen["Name"])
                    deseados[resumen["Name"]] = descrito
        for nombre in list(self.corriendo):
            if nombre not in deseados or configuracion(deseados[nombre]) != self.corriendo[nombre][0]:
                self.corriendo.pop(nombre)[1].stop()
        for nombre, descrito in deseados.items():
            if nombre not in self.corriendo:
                poller = mapeo(descrito)
                poller.start()
                self.corriendo[nombre] = (configuracion(descrito), poller)
                _log.info("pipes: %s runs (%s -> %s)", nombre, descrito["Source"], descrito["Target"])

    def __enter__(self) -> PuentePipes:
        self._hilo.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._hilo.stop()
        for _config, poller in self.corriendo.values():
            poller.stop()
        self.corriendo.clear()
