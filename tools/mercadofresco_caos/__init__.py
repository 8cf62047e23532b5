"""The seeded chaos campaign: ``mf-demo --escenario caos --semilla N`` and ``make caos``.

One seed = one reproducible fault schedule (:func:`programa`) applied to a few orders flowing
through the whole local system. The fault kinds are listed, with their parameters and the runner
that can apply each (local, AWS FIS, both), in ``fallos.yaml``; each is one class of the registry
(:mod:`.registro`) drawing from its own stream seeded by (seed, kind), so adding a kind leaves
every recorded seed's schedule as it was. The kinds, by family:

- providers (:mod:`.proveedores`; the loopback stand-ins' fault script): gateway latency, 5xx, read timeouts (a
  latency past the compressed ``PASARELA_READ_TIMEOUT_S``), a gateway outage; 5xx from the consumers' providers;
- Lambda platform faults (:mod:`.lambdas`, through :mod:`sam_emulator.deaths`): a crash or a timeout at an
  arbitrary I/O boundary, or a throttle, for a given function, order and attempt; the outbox
  relay killed between ``PutEvents`` and its commit;
- infrastructure (:mod:`.infraestructura`): the run's PRIVATE Redis frozen (SIGSTOP/SIGCONT), the run's PRIVATE
  PostgreSQL server restarted (:mod:`sam_emulator.private_postgres`: fast shutdown, connections refused for a
  moment, started again on the same port and data; without server binaries, only the handlers'
  connections are dropped and the report says so), the confirmation topic gone for a window (the
  step after the charge fails: the workflow must refund);
- deliveries (:mod:`.entregas`): an order's ``PedidoCreado`` delivered again at once (duplicate) or seconds later
  (``DelaySeconds``: late and out of order), or put in ``mercadofresco-pedidos-fallidos`` and
  redriven by ``mf-dlq reprocesar`` while orders flow; on the fan-out side, an order's
  ``PedidoConfirmado`` notice delivered again, at once or late, to the fan-out's queues.

Which functions, queues and providers those are is the template's answer (``template_model``), never a
list kept here: a new consumer is under the same faults with no edit to the campaign.

The run then waits (bounded) for quiescence and checks, per order, from the providers' records,
PostgreSQL, the idempotency table, the executions and the e-mails sent: DESIGN.md's six
invariants (:mod:`.juicio`, the same judge ``mf-caos --pila`` runs on a deployed stack's records).
A violation is printed with the seed, the order, the faults of the schedule that touched it and
the command that replays it.

Time: the run's compression applies to the platform's and handlers' bounds too
(``LocalRuntime.compressed_deadlines``): HTTP timeouts, leases, the breakers' open periods, ``Wait``,
``Retry`` intervals and ``TimeoutSeconds`` all last ``1/compresion``, so a compensation retried behind an
open breaker outlasts it as in AWS; a function's own ``Timeout`` stays real (``mercadofresco_local.plazos``).
The schedule's latencies are chosen against the compressed timeouts. Several seeds can share one session
(``correr_semillas``): each seed has its own order prefix, and the breaker state, fault script and plan are
reset between seeds.

A campaign can also run in parallel (:mod:`.paralelo`, ``mf-demo --procesos N``): the
seeds are split across N child processes, each a whole independent session (its own moto, Redis,
PostgreSQL server, stand-ins, log directory), each appending one JSON line per finished seed;
the parent merges them into one report. A seed a child did not report (it crashed, was killed)
is a failed seed in that report, with the command that replays it.
"""

from __future__ import annotations

from mercadofresco_caos.calendario import PEDIDOS, RITMO_POR_S, FalloLambda, ProgramaCaos, Suceso
from mercadofresco_caos.informe import ResultadoSemilla, anotar, comando_replay, describir_violaciones
from mercadofresco_caos.juicio import Registros, Violacion, juzgar
from mercadofresco_caos.lambdas import PlanLambda
from mercadofresco_caos.local import COMPRESION, DRENAJE_MAX_S, caos, correr_semilla, prefijo_de
from mercadofresco_caos.paralelo import comando_hijo, correr_en_paralelo
from mercadofresco_caos.sorteo import programa

__all__ = [
    "COMPRESION",
    "DRENAJE_MAX_S",
    "PEDIDOS",
    "RITMO_POR_S",
    "FalloLambda",
    "PlanLambda",
    "ProgramaCaos",
    "Registros",
    "ResultadoSemilla",
    "Suceso",
    "Violacion",
    "anotar",
    "caos",
    "comando_hijo",
    "comando_replay",
    "correr_en_paralelo",
    "correr_semilla",
    "describir_violaciones",
    "juzgar",
    "prefijo_de",
    "programa",
]
