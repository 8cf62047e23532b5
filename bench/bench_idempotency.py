"""DynamoDB calls per operation: our IdempotencyStore vs Powertools' ``@idempotent_function``.

Workload (the issue's): 10,000 charges (2,000 by default, below), 30 % of them duplicates of an earlier charge
(redeliveries), in a seeded random order, against moto's in-process DynamoDB on the
table ``template.yaml`` defines. Both implementations use the same table, payload
validation on (pedido_id, importe), and are run without and with their in-process cache.
Calls are counted with botocore's ``before-call`` event on each implementation's client.
Goal: ours <= Powertools in every column. Wall time is moto's, not DynamoDB's: shown only
as a sanity figure.

Usage: ``python bench/bench_idempotency.py [--ops 2000] [--duplicates 0.3] [--seed 7] [--no-cache]``.
``--ops`` defaults to ``BENCH_IDEMPOTENCY_OPS`` or 2,000: moto's in-process DynamoDB costs a few ms of
CPU per call, so 10,000 operations took over 20 minutes on this shared 2-core machine; the
figures are calls per operation, the same at either size.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

os.environ.update(  # never a real account: fake credentials before boto3 loads
    AWS_ACCESS_KEY_ID="testing",
    AWS_SECRET_ACCESS_KEY="testing",
    AWS_SESSION_TOKEN="testing",
    AWS_DEFAULT_REGION="eu-south-2",
    AWS_REGION="eu-south-2",
    POWERTOOLS_SERVICE_NAME="bench",
    POWERTOOLS_LOG_LEVEL="ERROR",
)

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class Medida:
    """Calls and runs of one implementation over the workload."""

    nombre: str
    llamadas: Counter[str] = field(default_factory=Counter)  # "primera" / "duplicado" -> DynamoDB calls
    operaciones: Counter[str] = field(default_factory=Counter)  # "primera" / "duplicado" -> ops
    ejecuciones: int = 0  # times the side effect really ran
    segundos: float = 0.0

    def por_op(self, tipo: str | None = None) -> float:
        if tipo is None:
            return sum(self.llamadas.values()) / max(1, sum(self.operaciones.values()))
        return self.llamadas[tipo] / max(1, self.operaciones[tipo])


def carga(ops: int, duplicados: float, semilla: int) -> list[tuple[int, bool]]:
    """``(order number, is_duplicate)`` in order; exactly ``round(ops * duplicados)`` duplicates."""
    rng = random.Random(semilla)
    n_dup = round(ops * duplicados)
    es_dup = [False, *rng.sample([True] * n_dup + [False] * (ops - 1 - n_dup), ops - 1)]
    vistos: list[int] = []
    secuencia = []
    for dup in es_dup:
        if dup:
            secuencia.append((rng.choice(vistos), True))
        else:
            vistos.append(len(vistos))
            secuencia.append((vistos[-1], False))
    return secuencia


def medir(medida: Medida, cliente: Any, secuencia: list[tuple[int, bool]], llamar: Callable[[dict], Any]) -> Medida:
    """Run the workload; each implementation+cache variant gets its own order ids (no shared records)."""
    prefijo = f"PED-{abs(hash(medida.nombre)) % 10**8:08d}"
    contador: Counter[str] = Counter()

    def contar(**_: Any) -> None:
        contador["n"] += 1

    cliente.meta.events.register("before-call.dynamodb", contar)
    inicio = time.perf_counter()
    for numero, dup in secuencia:
        tipo = "duplicado" if dup else "primera"
        antes = contador["n"]
        pedido = {"pedido_id": f"{prefijo}-{numero:06d}", "importe": "48.20", "sku": "SKU-1"}
        resultado = llamar(pedido)
        assert resultado == {"referencia_cobro": f"ch-{pedido['pedido_id']}"}, resultado
        medida.llamadas[tipo] += contador["n"] - antes
        medida.operaciones[tipo] += 1
    medida.segundos = time.perf_counter() - inicio
    cliente.meta.events.unregister("before-call.dynamodb", contar)
    return medida


def nuestra(tabla: str, secuencia: list[tuple[int, bool]], cache: bool) -> Medida:
    from mercadofresco import aws
    from mercadofresco.dominio import claves
    from mercadofresco.idempotency import IdempotencyConfig, IdempotencyStore, idempotent

    cliente = aws.client("dynamodb")
    store = IdempotencyStore(tabla, cliente, IdempotencyConfig(local_cache=cache, local_cache_max_items=10_000))
    medida = Medida("ours" + (" + cache" if cache else ""))

    @idempotent(store, key=lambda pedido: claves.cobro(pedido["pedido_id"]), payload_fields=("pedido_id", "importe"))
    def cobrar(pedido: dict[str, Any]) -> dict[str, str]:
        medida.ejecuciones += 1
        return {"referencia_cobro": f"ch-{pedido['pedido_id']}"}

    return medir(medida, cliente, secuencia, lambda pedido: cobrar(pedido))


def powertools(tabla: str, secuencia: list[tuple[int, bool]], cache: bool) -> Medida:
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer,
        IdempotencyConfig,
        idempotent_function,
    )
    from mercadofresco import aws
    from sam_emulator.moto_lambda import LambdaContext

    cliente = aws.client("dynamodb")
    # Same table (its keys are "<function>#<hash>", ours "cobro:...": no collision); one layer per config.
    persistencia = DynamoDBPersistenceLayer(
        table_name=tabla, key_attr="clave", expiry_attr="expira_en", boto3_client=cliente
    )
    config = IdempotencyConfig(
        event_key_jmespath="pedido_id",
        payload_validation_jmespath="[pedido_id, importe]",
        use_local_cache=cache,
        local_cache_max_items=10_000,
    )
    # as in Lambda: the in-progress expiry gets set from the remaining time
    config.register_lambda_context(LambdaContext("bench", "arn:aws:lambda:eu-south-2:123456789012:function:bench"))
    medida = Medida("powertools" + (" + cache" if cache else ""))

    @idempotent_function(data_keyword_argument="pedido", persistence_store=persistencia, config=config)
    def cobrar(pedido: dict[str, Any]) -> dict[str, str]:
        medida.ejecuciones += 1
        return {"referencia_cobro": f"ch-{pedido['pedido_id']}"}

    return medir(medida, cliente, secuencia, lambda pedido: cobrar(pedido=pedido))


def tabla_de_la_plantilla() -> str:
    import boto3
    from sam_emulator.template import Template, create_table_from

    plantilla = Template()
    clave = boto3.client("kms").create_key(Description="alias/mercadofresco-datos (bench)")["KeyMetadata"]
    plantilla.physical_ids["DatosKey"] = {"Ref": clave["KeyId"], "Arn": clave["Arn"]}
    return create_table_from(boto3.client("dynamodb"), plantilla, "TablaIdempotencia")


def informe(pares: list[tuple[Medida, Medida]], unicas: int) -> bool:
    print(f"{'implementation':<20}{'first runs':>12}{'duplicates':>12}{'overall':>10}{'runs':>8}{'wall s':>9}")
    cumple = True
    for nuestra_m, pt in pares:
        for m in (nuestra_m, pt):
            fila = f"{m.nombre:<20}{m.por_op('primera'):>12.3f}{m.por_op('duplicado'):>12.3f}{m.por_op():>10.3f}"
            print(f"{fila}{m.ejecuciones:>8}{m.segundos:>9.1f}")
        ratios = [_ratio(nuestra_m.por_op(t), pt.por_op(t)) for t in ("primera", "duplicado", None)]
        print(f"{'  ratio ours/PT':<20}" + "".join(f"{r:>{w}}" for r, w in zip(ratios, (12, 12, 10), strict=True)))
        cumple &= all(nuestra_m.por_op(t) <= pt.por_op(t) for t in ("primera", "duplicado", None))
        cumple &= nuestra_m.ejecuciones == pt.ejecuciones == unicas
    return cumple


def _ratio(nuestro: float, suyo: float) -> str:
    if suyo == 0:
        return "0/0" if nuestro == 0 else "inf"
    return f"{nuestro / suyo:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=int(os.environ.get("BENCH_IDEMPOTENCY_OPS", "2000")))
    parser.add_argument("--duplicates", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--cache", action=argparse.BooleanOptionalAction, default=True, help="also run both with their in-process cache"
    )
    args = parser.parse_args(argv)
    from moto import mock_aws

    secuencia = carga(args.ops, args.duplicates, args.seed)
    unicas = sum(1 for _, dup in secuencia if not dup)
    print(f"{args.ops} operations, {args.ops - unicas} duplicates ({args.duplicates:.0%}), moto in-process")
    with mock_aws():
        tabla = tabla_de_la_plantilla()
        variantes = (False, True) if args.cache else (False,)
        pares = [(nuestra(tabla, secuencia, c), powertools(tabla, secuencia, c)) for c in variantes]
    cumple = informe(pares, unicas)
    print("goal (ours <= Powertools in every column, each side effect once):", "met" if cumple else "NOT MET")
    return 0 if cumple else 1


if __name__ == "__main__":
    sys.exit(main())
