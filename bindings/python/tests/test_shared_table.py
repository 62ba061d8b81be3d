"""A Python generator and a `ringflake serve` on one SQLite file, both with their defaults in one
directory: different worker ids, no duplicate ID. The binary comes from RINGFLAKE_BIN (CI sets
it; skipped when unset)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import List

import pytest

import ringflake

BIN = os.environ.get("RINGFLAKE_BIN")
pytestmark = pytest.mark.skipif(not BIN, reason="RINGFLAKE_BIN is not set")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as r:
        body: bytes = r.read()
        return body


def _serve(cwd: Path) -> "tuple[subprocess.Popen[bytes], str]":
    assert BIN is not None
    port = _free_port()
    proc = subprocess.Popen(
        [BIN, "serve", "--listen", f"127.0.0.1:{port}"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            _get(base + "/healthz")
            return proc, base
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                err = proc.communicate()[1].decode(errors="replace")
                pytest.fail(f"ringflake serve did not start: {err}")
            time.sleep(0.05)


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _served(base: str, n: int) -> List[int]:
    return [int(i) for i in json.loads(_get(f"{base}/ids?count={n}"))]


def test_python_and_serve_share_the_default_table(tmp_path: Path) -> None:
    with ringflake.Generator() as gen:  # ringflake.db and ringflake.state in tmp_path
        mine = gen.next_ids(10_000)
        proc, base = _serve(tmp_path)
        try:
            theirs: List[int] = []
            for _ in range(20):
                theirs += _served(base, 1000)
                mine += [gen.next_id() for _ in range(500)] + gen.next_ids(500)
        finally:
            _stop(proc)
        served_workers = {gen.parse(i).worker_id for i in theirs}
        assert len(served_workers) == 1
        assert gen.worker_id not in served_workers
        every = mine + theirs
        assert len(every) == len(set(every)) == 50_000


def test_serve_first_then_python(tmp_path: Path) -> None:
    proc, base = _serve(tmp_path)
    try:
        theirs = _served(base, 5000)
        with ringflake.Generator(database=tmp_path / "ringflake.db") as gen:
            mine = gen.next_ids(5000)
            theirs += _served(base, 5000)
            assert gen.worker_id != gen.parse(theirs[0]).worker_id
    finally:
        _stop(proc)
    assert not set(mine) & set(theirs)
