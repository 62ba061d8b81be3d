"""ringflake's Python package beside the floor and its peers, in one run, as ratios.

    python bench/bench.py [--seconds 0.3] [--rounds 5]

Each contestant is called as its users call it, one ID per call, in a loop over
itertools.repeat for a fixed time per round; the median of the rounds is its rate. The floor is
next(itertools.count()) called the same way (a C iterator, no lock, nothing per ID but the int).
Peers: snowflake-id (next(SnowflakeGenerator(instance))), snowflake-id-toolkit
(TwitterSnowflakeIDGenerator(node_id).generate_next_id()), sonyflake-py (SonyFlake().next_id()),
uuid-utils (uuid_utils.uuid7()). A peer that is not installed is skipped.

ringflake runs with 25 sequence bits (bits=(31, 7, 25): 33.5 M IDs a second per worker without
borrowing) so that the run measures the binding, not the layout's cap; the default layout's
22 bits sustain 4.19 M IDs/s per worker (plus a 10 s borrowed burst, 42 M IDs), and its row is
shown too.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from typing import Callable, List, Optional, Tuple

import ringflake

CHUNK = 10_000


def rate(f: Callable[[], object], seconds: float) -> float:
    """Calls f in chunks of CHUNK for about `seconds`; calls per second."""
    repeat = itertools.repeat
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in repeat(None, CHUNK):
            f()
        n += CHUNK
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def batch_rate(gen: ringflake.Generator, n: int, seconds: float) -> float:
    """IDs per second from next_ids(n)."""
    k = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        gen.next_ids(n)
        k += n
        now = time.perf_counter()
        if now >= deadline:
            return k / (now - start)


def median_rate(f: Callable[[], float], rounds: int) -> float:
    return statistics.median(f() for _ in range(rounds))


def peers() -> List[Tuple[str, Callable[[], object]]]:
    found: List[Tuple[str, Callable[[], object]]] = []
    try:
        from snowflake import SnowflakeGenerator

        sg = SnowflakeGenerator(42)
        found.append(("snowflake-id next(gen)", lambda: next(sg)))
    except ImportError:
        print("(snowflake-id not installed: skipped)")
    try:
        from snowflake_id_toolkit import TwitterSnowflakeIDGenerator

        tg = TwitterSnowflakeIDGenerator(node_id=1)
        found.append(("snowflake-id-toolkit generate_next_id()", tg.generate_next_id))
    except ImportError:
        print("(snowflake-id-toolkit not installed: skipped)")
    try:
        from sonyflake import SonyFlake

        sf = SonyFlake(machine_id=lambda: 1)
        found.append(("sonyflake-py next_id()", sf.next_id))
    except ImportError:
        print("(sonyflake-py not installed: skipped)")
    try:
        import uuid_utils

        found.append(("uuid_utils.uuid7()", uuid_utils.uuid7))
    except ImportError:
        print("(uuid-utils not installed: skipped)")
    return found


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.3, help="per round (default 0.3)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per contestant (default 5)")
    args = ap.parse_args(argv)
    s, r = args.seconds, args.rounds

    counter = itertools.count()
    floor = median_rate(lambda: rate(counter.__next__, s), r)
    rows: List[Tuple[str, float]] = [("floor next(itertools.count())", floor)]

    with tempfile.TemporaryDirectory() as d, ringflake.Generator(
        worker_id=1, bits=(31, 7, 25), max_lead=60, state_file=False
    ) as gen, ringflake.Generator(database=f"{d}/ringflake.db") as default:
        mine = median_rate(lambda: rate(gen.next_id, s), r)
        rows.append(("ringflake next_id()", mine))
        # The default layout, fewer rounds: its borrowed burst is 42 M IDs.
        dflt = median_rate(lambda: rate(default.next_id, min(s, 0.2)), 3)
        rows.append(("ringflake next_id(), default layout", dflt))
        batch = median_rate(lambda: batch_rate(gen, 1000, s), r)
        rows.append(("ringflake next_ids(1000), IDs/s", batch))
        peer_rates = [(name, median_rate(lambda f=f: rate(f, s), r)) for name, f in peers()]  # type: ignore[misc]
        rows += peer_rates

    from importlib.metadata import version

    print(f"python {sys.version.split()[0]}, ringflake {version('ringflake')}, "
          f"{r} rounds of {s} s, median")
    print(f"{'contestant':<44}{'IDs/s':>14}{'x floor':>10}{'next_id() x it':>16}")
    for name, v in rows:
        print(f"{name:<44}{v:>14,.0f}{v / floor:>10.2f}{mine / v:>16.2f}")
    print()
    print(f"next_id() / floor = {mine / floor:.2f} (goal >= 0.5)")
    for name, v in peer_rates:
        print(f"next_id() / {name} = {mine / v:.1f} (goal >= 5)")
    print(f"next_ids(1000) = {batch / 1e6:.1f} M IDs/s (goal >= 50)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
