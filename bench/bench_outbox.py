"""Outbox relay throughput: OutboxRelay vs a naive relay, 4 relays each, on the local PostgreSQL.

EventBridge is replaced by a loopback HTTP endpoint (its own process) that accepts every
entry, so this measures the relay (claim, serialise, PutEvents round trips, mark, commit),
not moto. Both relays are real processes with their own connection and boto3 client.

- OutboxRelay: claims 100 rows (SKIP LOCKED), PutEvents in calls of 10, marks, commits; its
  client is the Lambda's (``relay.EVENTS_CLIENT_CONFIG``: no client-side validation, fixed
  User-Agent).
- naive: one row per transaction, one PutEvents per row, with the project's default client.

The naive relay drains only ``BENCH_OUTBOX_NAIVE_FILAS`` rows (default 2,000: it runs at ~30-200
rows/s here), half before the OutboxRelay's run and half after, so both see the same drift of
the machine's load; its rate is measured on those rows and its 100,000-row time extrapolated.
``BENCH_OUTBOX_FILAS`` (default 100,000) sizes the OutboxRelay's run.

Goals: >= 20x the naive relay's rows/s in the same run, >= 8,000 events/s with 4 relays and 0.1
PutEvents calls per event (issue 6); <= 0.2 ms of the relay processes' own CPU per event (issue
14): user + sys from ``getrusage`` in each relay, from the start barrier to its last batch, so
the figure is the relay's and not the box's. With >= 2 CPUs the endpoint is pinned to the last
CPU and the relays to the others (``sched_setaffinity``); PostgreSQL runs wherever the kernel
puts it. The machine is shared: rows/s move with the load (printed at start and end), CPU per
event much less. ``BENCH_OUTBOX_PERFIL=1`` prints where a relay's CPU goes (cProfile): ~9/10 is
botocore's per-call work (~1.2-1.5 ms per PutEvents of 10 entries, after the client's config),
spread over serialising, signing, hooks, urllib3 and http.client; the relay's own Python and
psycopg are ~0.02 ms per event.

Not done: concurrent PutEvents per batch. They would not lower CPU per event (the same calls,
plus threads), and the batch's calls are sequential on purpose: a rejected entry holds back the
later events of its aggregate in the following calls (per-aggregate order); concurrent calls
would need the batch split into waves with each aggregate at most once per wave. On loopback
the round trip is ~0.1 ms, so no gain could be shown here. Against EventBridge (~20-30 ms per
call) one relay makes ~10 calls per batch of 100: ~300-450 rows/s, ~20,000 a minute by that
arithmetic, three orders of magnitude above the lesson's volume (240,000 orders a month); more
throughput comes from more relays (SKIP LOCKED), with no change to ordering.
``BENCH_OUTBOX_LATENCIA_MS=25`` adds that round trip to the stand-in: at a load average of 20 it
gave 206 rows/s with 4 relays (10,000 rows): ~1.9 s per batch, of which the round trips are
0.25 s, the rest waiting for a CPU and PostgreSQL; the arithmetic above needs a quieter machine.
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
NAIVE_FILAS = int(os.environ.get("BENCH_OUTBOX_NAIVE_FILAS", "2000"))
# Added to each PutEvents response by the stand-in, as EventBridge's round trip (~20-30 ms) would:
# with it the relays' wall time, not their CPU, bounds rows/s (what concurrent calls could change).
LATENCIA_S = float(os.environ.get("BENCH_OUTBOX_LATENCIA_MS", "0")) / 1000
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
        if LATENCIA_S:
            await asyncio.sleep(LATENCIA_S)
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
    from mercadofresco.outbox.relay import EVENTS_CLIENT_CONFIG, OutboxRelay
    from psycopg_pool import ConnectionPool

    os.sched_setaffinity(0, CPUS_RELAY)
    eventos = client("events", endpoint_url=url, config=EVENTS_CLIENT_CONFIG)  # the Lambda's events_client()
    with ConnectionPool(dsn, min_size=1, max_size=1, open=True) as pool:
        relay = OutboxRelay(pool, eventos, OutboxConfig(bus_name="bus-mercadofresco"))
        publicadas = 0
        salida_lista.wait()  # imports, connection and client are not part of the measurement
        cpu_inicio = _cpu_s()
        perfil = None
        if os.environ.get("BENCH_OUTBOX_PERFIL"):  # where a relay's CPU goes: cProfile, top 25 to stderr
            import cProfile

            # CPU time, not wall: waiting for a core or for the network is not the relay's work
            perfil = cProfile.Profile(time.process_time)
            perfil.enable()
        while (r := relay.process_batch()).claimed:
            publicadas += r.published
        if perfil is not None:
            import pstats

            perfil.disable()
            pstats.Stats(perfil, stream=sys.stderr).sort_stats("tottime").print_stats(25)
        salida.put((publicadas, _cpu_s() - cpu_inicio))


def _relay_ingenuo(dsn: str, url: str, salida: mp.Queue, salida_lista: mp.Barrier) -> None:
    """One row per transaction, one PutEvents per row: the baseline."""
    from mercadofresco.aws import client
    from mercadofresco.outbox.config import OutboxConfig
    from mercadofresco.outbox.events import OutboxRow, entry
    from mercadofresco.outbox.postgres import ROW_COLUMNS

    os.sched_setaffinity(0, CPUS_RELAY)
    eventos, config, publicadas = client("events", endpoint_url=url), OutboxConfig(bus_name="bus-mercadofresco"), 0
    with psycopg.connect(dsn) as conn:
        salida_lista.wait()
        cpu_inicio = _cpu_s()
        while True:
            with conn.transaction():
                fila = conn.execute(
                    f"SELECT {ROW_COLUMNS} FROM outbox WHERE NOT publicado"
                    " ORDER BY creado_en LIMIT 1 FOR UPDATE SKIP LOCKED"
                ).fetchone()
                if fila is None:
                    break
                eventos.put_events(Entries=[entry(OutboxRow(*fila), config)])
                conn.execute("UPDATE outbox SET publicado = true, publicado_en = now() WHERE id = %s", (fila[0],))
                publicadas += 1
        salida.put((publicadas, _cpu_s() - cpu_inicio))


# --------------------------------------------------------------------------- run
def _sembrar(dsn: str, filas: int) -> None:
    from mercadofresco.outbox.schema import apply_migrations

    with psycopg.connect(dsn) as conn:
        apply_migrations(conn)
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
    carga_inicio = os.getloadavg()
    try:
        # The naive relay's rows before and after the OutboxRelay's, summed: the machine's load drifts
        # during a run, and this way both relays' figures straddle the same stretch of it.
        _sembrar(dsn, NAIVE_FILAS // 2)
        antes = _medir(_relay_ingenuo, dsn, url, cuentas)
        _sembrar(dsn, FILAS)
        t_relay, n_relay, llamadas, cpu_relay = _medir(_relay_lotes, dsn, url, cuentas)
        _sembrar(dsn, NAIVE_FILAS - NAIVE_FILAS // 2)
        despues = _medir(_relay_ingenuo, dsn, url, cuentas)
        t_naive, n_naive, llamadas_naive, cpu_naive = (a + d for a, d in zip(antes, despues, strict=True))
    finally:
        servidor.terminate()
        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{esquema}" CASCADE')
    carga_fin = os.getloadavg()
    v_relay, v_naive = n_relay / t_relay, n_naive / t_naive
    ms_relay, ms_naive = cpu_relay * 1000 / max(n_relay, 1), cpu_naive * 1000 / max(n_naive, 1)
    llamadas_evento = llamadas / max(n_relay, 1)
    pinned = (
        f"relays pinned to CPU {sorted(CPUS_RELAY)}, endpoint to CPU {sorted(CPUS_SERVIDOR)}"
        if CPUS_RELAY != CPUS_SERVIDOR
        else "one CPU: nothing pinned apart"
    )
    print(
        f"outbox relay bench: {RELAYS} relays (processes) each, local PostgreSQL, loopback EventBridge,"
        f" {os.cpu_count()} CPUs ({pinned}), {LATENCIA_S * 1000:g} ms added per PutEvents"
    )
    print(
        f"  load average {_carga(carga_inicio)} at start, {_carga(carga_fin)} at end: the machine is shared with"
        " other work, so rows/s move with it; CPU per event (the relay processes' own user+sys) much less"
    )
    print(
        f"  OutboxRelay : {n_relay:>7,} rows in {t_relay:6.2f} s = {v_relay:8,.0f} rows/s;"
        f" {llamadas:,} PutEvents = {llamadas_evento:.3f} calls/event; relay CPU {ms_relay:.3f} ms/event"
    )
    print(
        f"  naive       : {n_naive:>7,} rows in {t_naive:6.2f} s = {v_naive:8,.0f} rows/s;"
        f" {llamadas_naive:,} PutEvents = {llamadas_naive / max(n_naive, 1):.3f} calls/event;"
        f" relay CPU {ms_naive:.3f} ms/event (100,000 rows would take ~{100_000 / v_naive:,.0f} s)"
    )
    metas = [
        ("rows/s ratio", f"{v_relay / v_naive:.1f}x", ">= 20x", v_relay >= 20 * v_naive),
        (
            "relay CPU per event",
            f"{ms_relay:.3f} ms ({ms_naive / max(ms_relay, 1e-9):.1f}x less than naive)",
            "<= 0.2 ms",
            ms_relay <= 0.2,
        ),
        ("PutEvents calls per event", f"{llamadas_evento:.3f}", "<= 0.1", llamadas_evento <= 0.1 + 1e-9),
        ("OutboxRelay rows/s", f"{v_relay:,.0f}", ">= 8,000 (issue 6, 4 relays)", v_relay >= 8000),
    ]
    for nombre, valor, meta, cumple in metas:
        print(f"  {nombre:<26}: {valor:<44} goal {meta:<30} {'MET' if cumple else 'NOT MET'}")
    ok = n_relay == FILAS and n_naive == NAIVE_FILAS
    if not ok:
        print(f"  ERROR: published {n_relay}/{FILAS} and {n_naive}/{NAIVE_FILAS}", file=sys.stderr)
    return 0 if ok else 1


def _carga(carga: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.1f}" for x in carga)


if __name__ == "__main__":
    sys.exit(main())
