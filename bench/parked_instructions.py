"""Instructions per record of the latency bench's two broker stretches, counted by valgrind's callgrind
(load-independent, unlike `parked_path.py`'s wall clock on a shared machine): (b) the consumer's next
Fetch frame decoded, served and parked (`Reader._serve`), and (a) the append's notify answering it and
writing the answer (the produce itself is not counted). Collection is off but for the one stretch a run
measures (callgrind's client request, from a function compiled here with `cc`), so a run's total is
that stretch's; a run of two toggles with nothing between them gives the toggles' own cost, taken off.
Each stretch at two record counts, the difference over the records between them: warm-up cancels out.
GC collections the stretch triggers are counted in it.

    python bench/parked_instructions.py [--records 300 900] [--store filesystem|memory] [--isolation 0|1]

Needs valgrind (with its headers) and a C compiler. Another tree: `PYTHONPATH=DIR` where `DIR/trafka` is
its `src/`.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import socket
import subprocess
import sys
import tempfile

TOGGLE_C = "#include <valgrind/callgrind.h>\nvoid toggle(void) { CALLGRIND_TOGGLE_COLLECT; }\n"
STRETCHES = ("serve", "notify", "empty")  # empty: the two toggles' own cost, taken off the others


def child(args: argparse.Namespace) -> None:
    import trio
    import trio.lowlevel
    from parked_path import TP, fetch_frame

    from trafka.adapters.kafka.connection.limits import ServerLimits
    from trafka.adapters.kafka.connection.outbox import Outbox
    from trafka.adapters.kafka.connection.pipeline import Pipeline
    from trafka.adapters.kafka.connection.reader import Reader
    from trafka.adapters.kafka.connection.transport import SocketTransport
    from trafka.adapters.kafka.wire.codec import decode_request
    from trafka.app.config.settings import load_settings
    from trafka.app.wiring.bootstrap import bootstrap, default_adapters
    from trafka.domain.listeners import Listener, SecurityProtocol
    from trafka.domain.security.principal import ANONYMOUS
    from trafka.schema_codec.records import NewRecord, build_batch

    toggle = ctypes.CDLL(args.toggle).toggle
    stretch = args.stretch

    async def run() -> None:
        storage = (
            {"kind": "memory"} if args.store == "memory" else {"kind": "filesystem", "data_dir": tempfile.mkdtemp()}
        )
        settings = load_settings(overrides={"storage": storage})
        ctx = bootstrap(settings, default_adapters(settings))
        ctx.services.catalog.create("a", 1, 1)
        topic_id = ctx.services.catalog.get("a").topic_id
        replicas, appends, clock = ctx.services.replicas, ctx.services.appends, ctx.services.clock_ms
        batch = build_batch([NewRecord(1000, None, b"v" * 100)], replicas.checksum)
        ours, theirs = socket.socketpair()
        theirs.setblocking(False)
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
        limits = ServerLimits()
        transport = SocketTransport(stream)
        outbox = Outbox(transport, limits.max_inflight_requests, limits.max_queued_response_bytes)
        listener = Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "127.0.0.1", 9092)
        pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(appends.run)
            await trio.lowlevel.checkpoint()
            reader = Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, "127.0.0.1:1", ANONYMOUS)
            registry = ctx.registry
            serving, notifying = stretch == "serve", stretch == "notify"
            for i in range(args.records):
                frame = fetch_frame(16, i, replicas.watermarks(TP)[1], args.isolation, topic_id)
                if serving:
                    toggle()
                    reader._serve(decode_request(frame, registry))
                    toggle()
                else:
                    reader._serve(decode_request(frame, registry))
                replicas.produce_many([(TP, bytearray(batch), None, 3)], clock())
                if notifying:
                    toggle()
                    appends.notify([TP])
                    toggle()
                else:
                    appends.notify([TP])
                replicas.forget_appended()
                if stretch == "empty":
                    toggle()
                    toggle()
                assert not outbox.pending and len(theirs.recv(1 << 16)) > 100
                if i % 64 == 0:
                    await trio.lowlevel.checkpoint()
            nursery.cancel_scope.cancel()

    trio.run(run)


def collected(out_file: str) -> int:
    """The instructions a callgrind output file counts (its `totals:` line)."""
    with open(out_file) as lines:
        for line in lines:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise SystemExit(f"no totals in {out_file}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs=2, default=[300, 900])
    parser.add_argument("--store", choices=["filesystem", "memory"], default="filesystem")
    parser.add_argument("--isolation", type=int, choices=[0, 1], default=1)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stretch", choices=STRETCHES, help=argparse.SUPPRESS)
    parser.add_argument("--toggle", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        args.records = args.child
        child(args)
        return
    low, high = args.records
    per: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as work:
        toggle = os.path.join(work, "libtoggle.so")
        source = os.path.join(work, "toggle.c")
        with open(source, "w") as out:
            out.write(TOGGLE_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", toggle, source], check=True)
        for stretch in STRETCHES:
            counts = []
            for records in (low, high):
                out_file = os.path.join(work, f"callgrind.{stretch}.{records}")
                command = [sys.executable, __file__, "--child", str(records), "--stretch", stretch, "--toggle", toggle]
                command += ["--store", args.store, "--isolation", str(args.isolation)]
                valgrind = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out_file}"]
                subprocess.run([*valgrind, *command], check=True, stderr=subprocess.DEVNULL)
                counts.append(collected(out_file))
            per[stretch] = (counts[1] - counts[0]) / (high - low)
    label = f"{args.store} isolation {args.isolation} v16, records {low} -> {high}"
    print(f"{label}: (b) Fetch decoded, served, parked: {per['serve'] - per['empty']:,.0f} instructions per record")
    print(f"{label}: (a) notify, answered, written: {per['notify'] - per['empty']:,.0f} instructions per record")
    print(f"{label}: (the toggles' own cost, taken off each: {per['empty']:,.0f})")


if __name__ == "__main__":
    main()
