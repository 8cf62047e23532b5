"""Least privilege over the chaos campaign: every AWS request of every seed, in its child process, allowed by its role.

Faults make the functions take the paths a healthy run does not (refunds, stock releases, the
"not confirmed" e-mail, dead letters, redrives). A small campaign runs as ``mf-caos --local
--procesos 2`` runs it: each child records its requests (``mercadofresco_caos.hijo``), each
seed evaluates its own against the roles of the transformed template and reports any denial as a
violation in its JSON line, and the parent merges them. The test fails on any denied request and
prints the grants no seed used.
"""

from __future__ import annotations

import io

import pytest

# Two children, each starting a whole session (~40 s) and running its seeds (~20 s each on a quiet
# 2-core machine, several times that on a loaded one). The bound is for a hung run.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

SEMILLAS = [1, 2, 3]  # seed 1 of 6 orders refunds a charge (the sin-tema fault)
PEDIDOS_POR_SEMILLA = 6


def test_every_request_of_a_parallel_chaos_campaign_is_allowed_by_its_role(tmp_path) -> None:
    import mercadofresco_caos as caos
    from mercadofresco_caos.permisos import INVARIANTE
    from mercadofresco_local.demo import ESCENARIOS
    from mercadofresco_local.informe import Informe
    from rich.console import Console

    # GIVEN a seeded campaign split across two child processes, as mf-caos --local --procesos 2 runs it
    ritmo = ESCENARIOS["caos"].ritmo_por_s
    # WHEN its seeds have run, each judged (invariants and requests against roles) in its child
    resultados, notas = caos.correr_en_paralelo(SEMILLAS, 2, PEDIDOS_POR_SEMILLA, ritmo, tmp_path)
    informe = Informe("caos")
    caos.anotar(informe, resultados, PEDIDOS_POR_SEMILLA, ritmo)
    consola = Console(file=io.StringIO(), width=200)
    informe.imprimir(consola)
    print(consola.file.getvalue(), *notas, sep="\n")  # the unused grants, shown with -s or on failure

    # THEN every seed was reported by its child and recorded requests (the recorder ran in the children)
    assert [r.semilla for r in resultados] == SEMILLAS
    assert all(r.solicitudes_iam for r in resultados), [(r.semilla, r.solicitudes_iam) for r in resultados]
    vistos = {p for r in resultados for p in r.principales_iam}
    assert {
        "ProcesarPedido",
        "ReclamoFunction",
        "CobroFunction",
        "Consumidores/ErpFunction",
        "Consumidores/CorreoFunction",
    } <= vistos
    # AND the faults took paths a healthy run does not (a refund), whose requests were checked too
    assert sum(r.reembolsos for r in resultados) > 0
    assert sum(r.muertes + r.estrangulados for r in resultados) > 0
    # AND no request is one its role would deny
    denegadas = [v.detalle for r in resultados for v in r.violaciones if v.invariante == INVARIANTE]
    assert not denegadas, "\n".join(denegadas)
    # AND the campaign's report lists the check (and fails on nothing else either)
    (comprobacion,) = [i for i in informe.invariantes if INVARIANTE in i.nombre]
    assert comprobacion.cumple and informe.correcto, consola.file.getvalue()
