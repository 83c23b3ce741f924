"""The pgqueuer peer for Derive's queue benchmark: how fast pgqueuer drains a backlog of no-op jobs.

Measures, on the PostgreSQL server named by --dsn:
  enqueue_seconds  inserting N jobs for one entrypoint with Queries.enqueue, in batches of 10,000;
  drain_seconds    wall time from starting the consumers until all N jobs are done and removed
                   from the queue (the consumers' buffered status writes are flushed on exit).
jobs_per_second is N / drain_seconds. Prints one JSON line; exits non-zero with a message on failure.

It mirrors pgqueuer's own benchmark (tools/benchmark.py in its repository): its CI runs it with the
defaults, 5 dequeuers (--dequeue 5), each a PgQueuer over its own asyncpg connection, dequeuing in
batches of 10 (--dequeue-batch-size 10), under uvloop. Of its two strategies this is "drain": the
queue is filled first, then pgq.run(batch_size=10, mode=QueueExecutionMode.drain) on every
dequeuer is timed from start to return. Differences: one async entrypoint instead of a random mix
of "syncfetch"/"asyncfetch"; the entrypoint counts jobs and shuts all dequeuers down at N (drain
mode stays on as a fallback); and the queue table is ANALYZEd (untimed) after the enqueue, because
without statistics drains ran 2-3x slower here until autoanalyze happened to run.

Usage: python3 Benchmarks/pgqueuer_peer.py --dsn postgresql://user@127.0.0.1:PORT/db \
           --jobs 100000 [--batch-size 10] [--dequeuers 5] [--timeout 900]
Needs: pip install pgqueuer asyncpg (pgqueuer installs its schema here if it is missing).
"""
import argparse
import asyncio
import json
import sys
import time

try:
    import asyncpg
    import uvloop
    import pgqueuer
    from pgqueuer import AsyncpgDriver, PgQueuer, Queries
    from pgqueuer.types import QueueExecutionMode
except ImportError as error:
    sys.exit(f"pgqueuer_peer: {error}; install with: python3 -m pip install pgqueuer asyncpg")

ENTRYPOINT = "noop"
ENQUEUE_BATCH = 10_000


async def prepare(dsn: str, jobs: int) -> float:
    """Installs the schema if needed, empties pgqueuer's tables, enqueues the jobs; returns seconds."""
    connection = await asyncpg.connect(dsn=dsn)
    try:
        queries = Queries(AsyncpgDriver(connection))
        if not await queries.schema_is_installed():  # the same check `pgq install` makes
            await queries.install()
        await queries.clear_queue()
        await queries.clear_queue_log()
        await queries.clear_statistics_log()
        start = time.perf_counter()
        for done in range(0, jobs, ENQUEUE_BATCH):
            n = min(ENQUEUE_BATCH, jobs - done)
            await queries.enqueue([ENTRYPOINT] * n, [b""] * n, [0] * n)
        elapsed = time.perf_counter() - start
        # Untimed: until autoanalyze happens to run, a freshly filled queue table drains
        # several times slower, so without this the result depends on autovacuum's timing.
        await queries.driver.execute(f"ANALYZE {queries.qbe.qualified.queue_table}")
        return elapsed
    finally:
        await connection.close()


async def drain(dsn: str, jobs: int, batch_size: int, dequeuers: int) -> float:
    """Runs the consumers until all jobs are processed; returns the wall seconds of the drain."""
    connections = [await asyncpg.connect(dsn=dsn) for _ in range(dequeuers)]
    try:
        consumers = [PgQueuer(AsyncpgDriver(c)) for c in connections]
        processed = 0

        async def noop(job: pgqueuer.Job) -> None:
            nonlocal processed
            processed += 1
            if processed == jobs:
                for consumer in consumers:
                    consumer.shutdown.set()

        for consumer in consumers:
            consumer.entrypoint(ENTRYPOINT)(noop)
        start = time.perf_counter()
        await asyncio.gather(
            *(c.run(batch_size=batch_size, mode=QueueExecutionMode.drain) for c in consumers)
        )
        elapsed = time.perf_counter() - start

        left = sum(s.count for s in await Queries(AsyncpgDriver(connections[0])).queue_size())
        if processed != jobs or left:
            raise RuntimeError(f"drain ended with {processed} of {jobs} jobs run, {left} left in the queue")
        return elapsed
    finally:
        for connection in connections:
            await connection.close()


async def measure(args: argparse.Namespace) -> dict:
    enqueue_seconds = await prepare(args.dsn, args.jobs)
    drain_seconds = await asyncio.wait_for(
        drain(args.dsn, args.jobs, args.batch_size, args.dequeuers), args.timeout
    )
    return {
        "tool": "pgqueuer",
        "jobs": args.jobs,
        "enqueue_seconds": round(enqueue_seconds, 3),
        "drain_seconds": round(drain_seconds, 3),
        "jobs_per_second": round(args.jobs / drain_seconds, 1),
        "batch_size": args.batch_size,
        "dequeuers": args.dequeuers,
        "version": pgqueuer.__version__,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dsn", required=True, help="postgresql://user@127.0.0.1:PORT/dbname")
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--batch-size", type=int, default=10, help="dequeue batch size (default 10)")
    parser.add_argument("--dequeuers", type=int, default=5, help="concurrent consumers (default 5)")
    parser.add_argument("--timeout", type=float, default=900, help="give up on the drain after this many seconds")
    args = parser.parse_args()
    if min(args.jobs, args.batch_size, args.dequeuers) < 1 or args.timeout <= 0:
        parser.error("--jobs, --batch-size, --dequeuers and --timeout must be positive")
    try:
        result = uvloop.run(measure(args))
    except (asyncio.TimeoutError, TimeoutError):
        sys.exit(f"pgqueuer_peer: the drain did not finish within {args.timeout:g} s")
    except Exception as error:
        sys.exit(f"pgqueuer_peer: failed: {type(error).__name__}: {error}")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
