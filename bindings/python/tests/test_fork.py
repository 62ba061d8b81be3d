"""After fork(), a child never hands out an ID its parent or a sibling hands out: with a worker id
from a table it takes a new one at its first take; with a fixed worker id it raises ForkError."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
from pathlib import Path
from typing import List, Optional

import pytest

import ringflake

N = 20_000


def _child_takes(gen: ringflake.Generator, out: Path) -> None:
    """In a forked child: take N IDs (and the worker id) into `out`, then _exit."""
    code = 0
    try:
        ids = [gen.next_id() for _ in range(N // 2)] + gen.next_ids(N // 2)
        out.write_text(json.dumps({"worker_id": gen.worker_id, "ids": ids}))
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        out.write_text(json.dumps({"error": type(e).__name__, "message": str(e)}))
        code = 1
    finally:
        os._exit(code)


def _fork(gen: ringflake.Generator, out: Path) -> int:
    pid = os.fork()
    if pid == 0:
        _child_takes(gen, out)
    return pid


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_os_fork_children_take_worker_ids_of_their_own(tmp_path: Path) -> None:
    with ringflake.Generator(database="w.db") as gen:
        before = gen.next_ids(N)  # the parent's ring and this thread's taker are warm
        outs = [tmp_path / f"child{i}.json" for i in range(3)]
        pids = [_fork(gen, o) for o in outs]
        after = [gen.next_id() for _ in range(N)]
        codes = [_wait(p) for p in pids]
        results = [json.loads(o.read_text()) for o in outs]
        assert codes == [0, 0, 0], results
        worker_ids = {gen.worker_id} | {r["worker_id"] for r in results}
        assert len(worker_ids) == 4, worker_ids
        every = before + after + [i for r in results for i in r["ids"]]
        assert len(every) == len(set(every)) == 5 * N
        for r in results:
            ids = r["ids"]
            assert all(a < b for a, b in zip(ids, ids[1:]))
            assert {gen.parse(i).worker_id for i in ids} == {r["worker_id"]}
        # The parent goes on with its own worker id.
        assert {gen.parse(i).worker_id for i in after} == {gen.worker_id}


def test_a_grandchild_too(tmp_path: Path) -> None:
    with ringflake.Generator(database="w.db") as gen:
        mine = gen.next_ids(1000)
        out = tmp_path / "grandchild.json"
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                gen.next_id()  # the child's own worker id
                inner = _fork(gen, out)
                code = _wait(inner)
            finally:
                os._exit(code)
        assert _wait(pid) == 0
        r = json.loads(out.read_text())
        assert r["worker_id"] not in (gen.worker_id,)
        assert not set(r["ids"]) & set(mine)


def test_fixed_worker_id_raises_fork_error_in_the_child(tmp_path: Path) -> None:
    with ringflake.Generator(worker_id=7, state_file=False) as gen:
        gen.next_ids(100)
        out = tmp_path / "child.json"
        pid = _fork(gen, out)
        assert _wait(pid) == 1
        r = json.loads(out.read_text())
        assert r["error"] == "ForkError"
        assert "fixed worker id 7" in r["message"]
        gen.next_id()  # the parent is unaffected


# multiprocessing: a generator made at import time (as a gunicorn or Celery worker module would),
# inherited by fork children; made anew by spawn children.
_GLOBAL: Optional[ringflake.Generator] = None


def _take_global(n: int) -> List[int]:
    assert _GLOBAL is not None
    return [_GLOBAL.next_id() for _ in range(n)] + _GLOBAL.next_ids(n)


def _take_own(db: str, n: int) -> List[int]:
    with ringflake.Generator(database=db) as g:
        return [g.next_id() for _ in range(n)] + g.next_ids(n)


def test_multiprocessing_fork_pool(tmp_path: Path) -> None:
    global _GLOBAL
    _GLOBAL = ringflake.Generator(database=str(tmp_path / "w.db"))
    try:
        parent = _GLOBAL.next_ids(N)
        ctx = mp.get_context("fork")
        with ctx.Pool(3) as pool:
            chunks = pool.map(_take_global, [N // 4] * 8)
        parent += _GLOBAL.next_ids(N)
        every = parent + [i for c in chunks for i in c]
        assert len(every) == len(set(every))
        workers = {_GLOBAL.parse(i).worker_id for c in chunks for i in c}
        assert _GLOBAL.worker_id not in workers
        assert 1 <= len(workers) <= 3
    finally:
        _GLOBAL.close()
        _GLOBAL = None


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing_spawn(tmp_path: Path, method: str) -> None:
    db = str(tmp_path / "w.db")
    with ringflake.Generator(database=db) as gen:
        ctx = mp.get_context(method)
        with ctx.Pool(2) as pool:
            chunks = pool.starmap(_take_own, [(db, N // 4)] * 4)
        parent = gen.next_ids(N)
        every = parent + [i for c in chunks for i in c]
        assert len(every) == len(set(every))
        assert gen.worker_id not in {gen.parse(c[0]).worker_id for c in chunks}
