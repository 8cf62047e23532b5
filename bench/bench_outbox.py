"""Outbox relay throughput: OutboxRelay vs a naive relay, 4 relays each, on the local PostgreSQL.

EventBridge is replaced by a loopback HTTP endpoint (its own process) that accepts every
entry, so this measures the relay (claim, serialise, PutEvents round trips, mark, commit),
not moto. Both relays are real processes with their own connection and boto3 client.

- OutboxRelay: claims 100 rows (SKIP LOCKED), PutEvents in calls of 10, marks, commits.
- naive: one row per transaction, one PutEvents per row.

The naive relay drains only the first NAIVE_FILAS rows (it would take minutes for 100,000);
its rate is measured on that subset and its 100,000-row time extrapolated, as printed.
Goals (issue 6): >= 20x the naive relay, >= 8,000 events/s with 4 relays, 0.1 calls/event.
Goal (issue 14): <= 0.2 ms of the relay processes' own CPU (user + sys, ``getrusage`` in each
relay, from the start barrier to its last batch) per event. With >= 2 CPUs the endpoint is
pinned to one CPU and the relays to the others (``sched_setaffinity``). ``BENCH_OUTBOX_PERFIL=1``
prints where a relay's CPU goes (cProfile): mostly botocore's per-call work (serialising,
validating, building the user agent twice, signing), ~3 ms per PutEvents call here.

Not done: concurrent PutEvents per batch. They would not lower CPU per event (the same calls,
plus threads), and the batch's calls are sequential on purpose: a rejected entry holds back the
later events of its aggregate in the following calls (per-aggregate order); concurrent calls
would need the batch partitioned by aggregate first. On loopback the round trip is ~0.1 ms,
so the gain could not be shown here either; against EventBridge (~20 ms per call) it could.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import resource
import socket
import sys
import time
import uuid

import psycopg

FILAS = int(os.environ.get("BENCH_OUTBOX_FILAS", "100000"))
NAIVE_FILAS = int(os.environ.get("BENCH_OUTBOX_NAIVE_FILAS", "8000"))
RELAYS = 4
# With >= 2 CPUs the loopback endpoint gets the last CPU and the relays the others, so the relays'
# figures are not the stand-in's; PostgreSQL (not ours to pin) runs wherever the kernel puts it.
CPUS = sorted(os.sched_getaffinity(0))
CPUS_RELAY, CPUS_SERVIDOR = (set(CPUS[:-1]), {CPUS[-1]}) if len(CPUS) >= 2 else (set(CPUS), set(CPUS))
DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://postgres:postgres@127.0.0.1:5432/postgres")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-south-2")


# ---------------------------------------------------------------- loopback EventBridge
async def _atender(lector: asyncio.StreamReader, escritor: asyncio.StreamWriter, cuenta: list[int]) -> None:
    while True:
        cabecera = await lector.readuntil(b"\r\n\r\n")
        largo = next(
            int(linea.split(b":", 1)[1])
            for linea in cabecera.split(b"\r\n")
            if linea.lower().startswith(b"content-length")
        )
        n = len(json.loads(await lector.readexactly(largo))["Entries"])
        cuenta[0] += 1
        cuenta[1] += n
        cuerpo = json.dumps({"FailedEntryCount": 0, "Entries": [{"EventId": str(uuid.uuid4())} for _ in range(n)]})
        escritor.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\n"
            + f"Content-Length: {len(cuerpo)}\r\n\r\n".encode()
            + cuerpo.encode()
        )
        await escritor.drain()


def _servidor(sock: socket.socket, cuentas: mp.Array) -> None:  # type: ignore[valid-type]
    os.sched_setaffinity(0, CPUS_SERVIDOR)

    async def principal() -> None:
        cuenta = [0, 0]

        async def atender(lector: asyncio.StreamReader, escritor: asyncio.StreamWriter) -> None:
            try:
                await _atender(lector, escritor, cuenta)
            except (asyncio.IncompleteReadError, ConnectionError):
                escritor.close()

        async def volcar() -> None:
            while True:
                cuentas[0], cuentas[1] = cuenta
                await asyncio.sleep(0.05)

        servidor = await asyncio.start_server(atender, sock=sock)
        asyncio.get_running_loop().create_task(volcar())
        await servidor.serve_forever()

    asyncio.run(principal())


# ------------------------------------------------------------------------- relays
def _cpu_s() -> float:
    uso = resource.getrusage(resource.RUSAGE_SELF)
    return uso.ru_utime + uso.ru_stime


def _relay_lotes(dsn: str, url: str, salida: mp.Queue, salida_lista: mp.Barrier) -> None:
    from mercadofresco.aws import client
    from mercadofresco.outbox.config import OutboxConfig
    from mercadofresco.outbox.relay import OutboxRelay
    from psycopg_pool import ConnectionPool

    os.sched_setaffinity(0, CPUS_RELAY)
    with ConnectionPool(dsn, min_size=1, max_size=1, open=True) as pool:
        relay = OutboxRelay(pool, client("events", endpoint_url=url), OutboxConfig(bus_name="bus-mercadofresco"))
        publicadas = 0
        salida_lista.wait()  # imports, connection and client are not part of the measurement
        cpu_inicio = _cpu_s()
        perfil = None
        if os.environ.get("BENCH_OUTBOX_PERFIL"):  # where a relay's CPU goes: cProfile, top 25 to stderr
            import cProfile

            perfil = cProfile.Profile()
            perfil.enable()
        while (r := relay.procesar_lote()).reclamadas:
            publicadas += r.publicadas
        if perfil is not None:
            import pstats

            perfil.disable()
            pstats.Stats(perfil, stream=sys.stderr).sort_stats("tottime").print_stats(25)
        salida.put((publicadas, _cpu_s() - cpu_inicio))


def _relay_ingenuo(dsn: str, url: str, salida: mp.Queue, salida_lista: mp.Barrier) -> None:
    """One row per transaction, one PutEvents per row: the baseline."""
    from mercadofresco.aws import client
    from mercadofresco.outbox.config import OutboxConfig
    from mercadofresco.outbox.eventos import FilaOutbox, entrada

    os.sched_setaffinity(0, CPUS_RELAY)
    eventos, config, publicadas = client("events", endpoint_url=url), OutboxConfig(bus_name="bus-mercadofresco"), 0
    with psycopg.connect(dsn) as conn:
        salida_lista.wait()
        cpu_inicio = _cpu_s()
        while True:
            with conn.transaction():
                fila = conn.execute(
                    "SELECT id, tipo_agregado, agregado_id, tipo_evento, version, payload, creado_en, intentos"
                    " FROM outbox WHERE NOT publicado ORDER BY creado_en LIMIT 1 FOR UPDATE SKIP LOCKED"
                ).fetchone()
                if fila is None:
                    break
                eventos.put_events(Entries=[entrada(FilaOutbox(*fila), config)])
                conn.execute("UPDATE outbox SET publicado = true, publicado_en = now() WHERE id = %s", (fila[0],))
                publicadas += 1
        salida.put((publicadas, _cpu_s() - cpu_inicio))


# --------------------------------------------------------------------------- run
def _sembrar(dsn: str, filas: int) -> None:
    from mercadofresco.outbox.migraciones import aplicar_migraciones

    with psycopg.connect(dsn) as conn:
        aplicar_migraciones(conn)
        conn.execute("TRUNCATE outbox")
        conn.execute(
            "INSERT INTO outbox (id, tipo_agregado, agregado_id, tipo_evento, version, payload)"
            " SELECT gen_random_uuid(), 'pedido', 'PED-' || g, 'PedidoCreado', 1, jsonb_build_object("
            "   'pedido_id', 'PED-' || g, 'cliente_id', 'CLI-' || (g %% 5000), 'email', 'cliente@example.com',"
            "   'lineas', jsonb_build_array(jsonb_build_object('sku', 'FRU-MAN-001', 'cantidad', 2,"
            "     'precio_centimos', 1450), jsonb_build_object('sku', 'VER-TOM-014', 'cantidad', 1,"
            "     'precio_centimos', 1920)), 'importe_centimos', 4820, 'moneda', 'EUR')"
            " FROM generate_series(1, %s) AS g",
            (filas,),
        )
        conn.execute("ANALYZE outbox")


def _medir(objetivo, dsn: str, url: str, cuentas: mp.Array) -> tuple[float, int, int, float]:  # type: ignore[no-untyped-def]
    """Wall time, rows published, PutEvents calls and the relay processes' own CPU seconds (user + sys)."""
    ctx = mp.get_context("spawn")
    salida, listos = ctx.Queue(), ctx.Barrier(RELAYS + 1)
    procesos = [ctx.Process(target=objetivo, args=(dsn, url, salida, listos)) for _ in range(RELAYS)]
    for p in procesos:
        p.start()
    listos.wait(timeout=120)
    llamadas_antes = cuentas[0]
    inicio = time.perf_counter()
    resultados = [salida.get(timeout=600) for _ in procesos]
    duracion = time.perf_counter() - inicio
    publicadas, cpu_s = sum(r[0] for r in resultados), sum(r[1] for r in resultados)
    for p in procesos:
        p.join()
    time.sleep(0.1)  # let the endpoint publish its last counts
    return duracion, publicadas, cuentas[0] - llamadas_antes, cpu_s


def main() -> int:
    esquema = f"bench_outbox_{os.getpid()}"
    with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{esquema}"')
    separador = "&" if "?" in DATABASE_URL else "?"
    dsn = f"{DATABASE_URL}{separador}options=-csearch_path%3D{esquema}"
    sock = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    cuentas = mp.get_context("spawn").Array("q", 2)
    servidor = mp.get_context("spawn").Process(target=_servidor, args=(sock, cuentas), daemon=True)
    servidor.start()
    try:
        _sembrar(dsn, FILAS)
        t_relay, n_relay, llamadas, cpu_relay = _medir(_relay_lotes, dsn, url, cuentas)
        _sembrar(dsn, NAIVE_FILAS)
        t_naive, n_naive, llamadas_naive, cpu_naive = _medir(_relay_ingenuo, dsn, url, cuentas)
    finally:
        servidor.terminate()
        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{esquema}" CASCADE')
    v_relay, v_naive = n_relay / t_relay, n_naive / t_naive
    carga = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    ms_evento_relay, ms_evento_naive = cpu_relay * 1000 / max(n_relay, 1), cpu_naive * 1000 / max(n_naive, 1)
    pinned = (
        f"relays pinned to CPU {sorted(CPUS_RELAY)}, endpoint to CPU {sorted(CPUS_SERVIDOR)}"
        if CPUS_RELAY != CPUS_SERVIDOR
        else "one CPU: nothing pinned apart"
    )
    print(
        f"outbox relay bench: {RELAYS} relays (processes), local PostgreSQL, loopback EventBridge,"
        f" {os.cpu_count()} CPUs ({pinned}), load average {carga} (shared CPUs: rows/s vary with it;"
        " CPU per event is the relay processes' own user+sys time, much less sensitive)"
    )
    print(
        f"  OutboxRelay : {n_relay:>7,} rows in {t_relay:6.2f} s = {v_relay:8,.0f} rows/s;"
        f" {llamadas:,} PutEvents = {llamadas / max(n_relay, 1):.3f} calls/event;"
        f" relay CPU {ms_evento_relay:.3f} ms/event = {ms_evento_relay * 1000:,.0f} ms per 1,000 events"
    )
    print(
        f"  naive       : {n_naive:>7,} rows in {t_naive:6.2f} s = {v_naive:8,.0f} rows/s;"
        f" {llamadas_naive:,} PutEvents = {llamadas_naive / max(n_naive, 1):.3f} calls/event;"
        f" relay CPU {ms_evento_naive:.3f} ms/event"
        f" (measured on {n_naive:,} rows; 100,000 rows would take ~{FILAS / v_naive:,.0f} s)"
    )
    print(
        f"  ratio       : {v_relay / v_naive:.1f}x rows/s (goal >= 20x: {'met' if v_relay >= 20 * v_naive else 'NOT'});"
        f" CPU per event {ms_evento_naive / max(ms_evento_relay, 1e-9):.1f}x less;"
        f" relay CPU {ms_evento_relay:.3f} ms/event (goal <= 0.2: {'met' if ms_evento_relay <= 0.2 else 'NOT met'});"
        f" goal >= 8,000 events/s: {'met' if v_relay >= 8000 else 'NOT met'}; goal 0.1 calls/event"
    )
    ok = n_relay == FILAS and n_naive == NAIVE_FILAS
    if not ok:
        print(f"  ERROR: published {n_relay}/{FILAS} and {n_naive}/{NAIVE_FILAS}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
