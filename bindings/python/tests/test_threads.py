"""Threads share one generator: every ID unique, each thread's strictly increasing, and the GIL
released while a take waits."""

from __future__ import annotations

import threading
import time
from typing import Callable, List, Tuple

import ringflake

THREADS = 8
PER_THREAD = 50_000


def test_threads_collect_every_id() -> None:
    with ringflake.Generator(worker_id=1, state_file=False) as gen:
        results: List[List[int]] = [[] for _ in range(THREADS)]
        start = threading.Barrier(THREADS)

        def work(k: int) -> None:
            start.wait()
            out = results[k]
            for j in range(PER_THREAD // 2):
                out.append(gen.next_id())
                if j % 1000 == 0:
                    out.extend(gen.next_ids(10))
            out.extend(gen.next_ids(PER_THREAD // 2))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for ids in results:
            assert all(a < b for a, b in zip(ids, ids[1:]))
        every = [i for ids in results for i in ids]
        assert len(every) == len(set(every))
        assert len(every) == THREADS * (PER_THREAD + PER_THREAD // 2 // 1000 * 10)


def _while_counting(take: Callable[[], List[int]]) -> Tuple[List[int], float, int]:
    """Runs `take` beside a Python thread that counts every millisecond it gets to run: the IDs,
    the seconds `take` waited, and the thread's count meanwhile."""
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    t0 = time.monotonic()
    ids = take()
    waited = time.monotonic() - t0
    seen = ticks
    done.set()
    counter.join()
    return ids, waited, seen


def test_the_gil_is_released_while_a_take_waits() -> None:
    # 10 sequence bits: 1,024 IDs a second, and at most 1 s ahead of the clock: 4,096 IDs wait
    # for the clock for about 2 s. Another Python thread must run meanwhile.
    with ringflake.Generator(
        worker_id=1, bits=(31, 22, 10), max_lead=1, state_file=False
    ) as gen:
        ids, waited, seen = _while_counting(lambda: gen.next_ids(4096))
        assert len(set(ids)) == 4096
        assert waited > 0.8, waited
        # With the GIL held for the whole wait, the counter would not have moved.
        assert seen > 100, (seen, waited)


def test_single_takes_wait_without_the_gil_too() -> None:
    with ringflake.Generator(
        worker_id=1, bits=(31, 22, 10), max_lead=1, state_file=False
    ) as gen:
        ids, waited, seen = _while_counting(lambda: [gen.next_id() for _ in range(4096)])
        assert all(a < b for a, b in zip(ids, ids[1:]))
        assert waited > 0.8, waited
        assert seen > 100, (seen, waited)


def _fillers() -> int:
    import os

    n = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                n += f.read().startswith("ringflake-fill")
        except OSError:
            pass
    return n


def test_a_dropped_generator_stops_its_filler() -> None:
    import gc

    before = _fillers()
    for k in range(5):
        gen = ringflake.Generator(worker_id=k, state_file=False)
        gen.next_id()
        gen.next_ids(10)
        del gen
        gc.collect()
    assert _fillers() == before
    # A thread that took from a closed generator lets it go at its next take.
    a = ringflake.Generator(worker_id=1, state_file=False)
    b = ringflake.Generator(worker_id=2, state_file=False)
    got: List[int] = []

    def take_both() -> None:
        got.append(a.next_id())
        got.append(b.next_id())

    t = threading.Thread(target=take_both)
    t.start()
    t.join()
    a.close()
    b.close()
    assert _fillers() == before
