"""The API of issue 44, as a user calls it, against the installed wheel."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

import ringflake


def test_installed_wheel_not_source_tree() -> None:
    # CI installs the wheel into a venv and runs from elsewhere: the package must come from
    # site-packages, with its native module.
    if os.environ.get("RINGFLAKE_REQUIRE_INSTALLED") == "1":
        assert "site-packages" in ringflake.__file__, ringflake.__file__


def test_the_three_lines(tmp_path: Path) -> None:
    with ringflake.Generator(database="ringflake.db") as gen:
        i = gen.next_id()
        batch = gen.next_ids(1000)
        p = ringflake.parse(i)
    assert isinstance(i, int) and i > 0
    assert len(batch) == 1000
    assert all(a < b for a, b in zip(batch, batch[1:]))
    assert batch[0] > i
    assert p.id == i
    assert p.worker_id == gen.worker_id if not gen.closed else True
    assert isinstance(p.timestamp, dt.datetime)
    assert p.timestamp.tzinfo == dt.timezone.utc
    now = dt.datetime.now(dt.timezone.utc)
    assert abs((p.timestamp - now).total_seconds()) < 15
    assert (tmp_path / "ringflake.db").exists()


def test_default_is_serves_default(tmp_path: Path) -> None:
    with ringflake.Generator() as gen:
        assert gen.worker_id == 1
        gen.next_id()
        assert gen.stats().worker_id == 1
    assert (tmp_path / "ringflake.db").exists()
    assert (tmp_path / "ringflake.state").exists()
    # A restart in the same directory keeps its worker id (serve's --state-file default) and
    # starts above what the first run handed out.
    with ringflake.Generator() as again:
        assert again.worker_id == 1


def test_two_live_generators_on_one_table_differ() -> None:
    with ringflake.Generator(database="w.db") as a, ringflake.Generator(database="w.db") as b:
        assert a.worker_id != b.worker_id
        ids = a.next_ids(5000) + b.next_ids(5000)
        assert len(set(ids)) == 10000


def test_state_file_beside_the_database(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with ringflake.Generator(database=tmp_path / "sub" / "ids.db") as gen:
        gen.next_id()
    assert (tmp_path / "sub" / "ringflake.state").exists()
    with ringflake.Generator(database="sqlite:x.db", state_file=False) as gen:
        gen.next_id()
    assert (tmp_path / "x.db").exists()
    with ringflake.Generator(database="y.db", state_file=tmp_path / "my.state") as gen:
        gen.next_id()
    assert (tmp_path / "my.state").exists()


def test_parse_and_gen_parse_agree() -> None:
    with ringflake.Generator(worker_id=42, state_file=False) as gen:
        i = gen.next_id()
        assert gen.worker_id == 42
        assert gen.parse(i) == ringflake.parse(i)
        p = gen.parse(i)
        assert (p.worker_id, p.id) == (42, i)


def test_layout_keywords() -> None:
    with ringflake.Generator(worker_id=1, preset="twitter", state_file=False) as gen:
        lay = gen.layout
        assert (lay.time_bits, lay.worker_bits, lay.seq_bits, lay.tick) == (41, 10, 12, "ms")
        assert lay.preset == "twitter"
        assert lay.epoch == dt.datetime(2010, 11, 4, 1, 42, 54, 657000, tzinfo=dt.timezone.utc)
        i = gen.next_id()
        p = gen.parse(i)
        assert p.worker_id == 1
        # Milliseconds: within a second of now.
        now = dt.datetime.now(dt.timezone.utc)
        assert abs((p.timestamp - now).total_seconds()) < 2
        assert ringflake.parse(i, ringflake.layout(preset="twitter")) == p
    lay = ringflake.layout(bits=(30, 27, 6), epoch="2016-05-20")
    assert (lay.time_bits, lay.worker_bits, lay.seq_bits) == (30, 27, 6)
    assert lay.epoch == dt.datetime(2016, 5, 20, tzinfo=dt.timezone.utc)
    assert ringflake.layout(epoch=1_700_000_000).epoch.timestamp() == 1_700_000_000
    assert ringflake.layout(tick="10ms").tick == "10ms"
    assert ringflake.layout() == ringflake.layout(preset="default")
    assert "sonyflake" in ringflake.PRESET_NAMES


def test_parse_uid_is_javas_string() -> None:
    # The library's own vector: ID 0 of the default layout, in Asia/Shanghai.
    assert ringflake.parse_uid(0, tz="Asia/Shanghai") == (
        '{"UID":"0","timestamp":"2025-01-01 08:00:00","workerId":"0","sequence":"0"}'
    )
    with ringflake.Generator(worker_id=9, state_file=False) as gen:
        i = gen.next_id()
        d = json.loads(gen.parse_uid(i, tz="UTC"))
        assert d["UID"] == str(i) and d["workerId"] == "9"
        assert d["timestamp"] == gen.parse(i).timestamp.strftime("%Y-%m-%d %H:%M:%S")
        assert json.loads(gen.parse_uid(i))["UID"] == str(i)  # the local zone


def test_stats_as_healthz() -> None:
    with ringflake.Generator(worker_id=3, state_file=False) as gen:
        gen.next_ids(10)
        s = gen.stats()
        assert isinstance(s, ringflake.Stats)
        assert s.health == "serving"
        assert s.worker_id == 3
        assert s.filler_up is True
        assert s.max_lead_seconds == 10
        assert s.capacity > 0


def test_close_then_take_raises() -> None:
    gen = ringflake.Generator(worker_id=3, state_file=False)
    gen.next_id()
    gen.close()
    gen.close()  # idempotent
    assert gen.closed
    with pytest.raises(ringflake.ClosedError, match="closed"):
        gen.next_id()
    with pytest.raises(ringflake.Error):
        gen.next_ids(3)
    assert "closed" in repr(gen)


def test_close_gives_the_lease_back() -> None:
    import sqlite3
    import time

    with ringflake.Generator(database="w.db", state_file=False) as a:
        held = a.stats().lease_until
        assert held is not None and held > time.time() + 10
        worker = a.worker_id
    # Released at the last second it handed out, not at the lease's end.
    with sqlite3.connect("w.db") as db:
        (until,) = db.execute("SELECT LEASE_UNTIL FROM WORKER_NODE WHERE ID = ?", (worker,)).fetchone()
    assert until <= time.time() + 1, (until, held)


@pytest.mark.parametrize(
    "kwargs, kind, words",
    [
        ({"worker_id": 5000}, "WorkerIdOutOfRange", ["5000", "1023"]),
        ({"worker_id": -1}, "InvalidConfig", ["-1", "0 or more"]),
        ({"worker_id": 1, "bits": (30, 20, 12)}, "InvalidBitWidths", ["62", "63"]),
        ({"worker_id": 1, "preset": "snowflake"}, "UnknownLayout", ["snowflake"]),
        ({"worker_id": 1, "preset": "twitter", "bits": (41, 10, 12)}, "InvalidConfig", ["twitter"]),
        ({"worker_id": 1, "tick": "5ms"}, "UnknownTimeUnit", ["5ms"]),
        ({"worker_id": 1, "epoch": 99_999_999_999}, "EpochInFuture", ["99999999999"]),
        ({"worker_id": 1, "lead_policy": "later"}, "InvalidConfig", ["later", "wait"]),
        ({"worker_id": 1, "max_lead": -5}, "InvalidConfig", ["-5", "0 or more"]),
        ({"worker_id": 1, "database": "x.db"}, "InvalidConfig", ["database or worker_id"]),
        ({"database": "ftp://x/y"}, "InvalidConfig", ["ftp://x/y", "mysql://"]),
        (
            {"worker_id": 1, "bits": (28, 22, 13), "epoch": "2016-05-20"},
            "TimeBitsExhausted",
            ["2024-11-20"],
        ),
    ],
)
def test_bad_arguments_name_value_and_limit(
    kwargs: dict[str, object], kind: str, words: list[str]
) -> None:
    with pytest.raises(ringflake.InvalidArgument) as info:
        ringflake.Generator(state_file=False, **kwargs)  # type: ignore[arg-type]
    e = info.value
    assert isinstance(e, ValueError) and isinstance(e, ringflake.Error)
    assert e.kind == kind, (e.kind, str(e))
    for w in words:
        assert w in str(e), (w, str(e))


def test_bad_ids_and_counts() -> None:
    with pytest.raises(ringflake.InvalidArgument, match="-1"):
        ringflake.parse(-1)
    with pytest.raises(ValueError, match="2\\^63"):
        ringflake.parse(2**63)
    # A worker id past the layout's field.
    lay = ringflake.layout(bits=(31, 10, 22))
    assert ringflake.parse(5, lay).sequence == 5
    with ringflake.Generator(worker_id=1, state_file=False) as gen:
        with pytest.raises(ringflake.InvalidArgument, match="n = -3"):
            gen.next_ids(-3)
        assert gen.next_ids(0) == []
        with pytest.raises(ringflake.InvalidArgument, match="n = 10000001: expected 0 to 10,000,000"):
            gen.next_ids(10_000_001)
        with pytest.raises(TypeError):
            gen.next_id(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ringflake.Generator(1)  # type: ignore[misc]


def test_database_error_is_a_worker_id_error(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(ringflake.WorkerIdError) as info:
        ringflake.Generator(database=str(tmp_path / "dir.db"), state_file=False)
    assert "dir.db" in str(info.value)


def test_help_shows_docstrings() -> None:
    assert ringflake.Generator.__doc__ and "worker_id" in ringflake.Generator.__doc__
    assert ringflake.Generator.next_id.__doc__ and "GIL" in ringflake.Generator.next_id.__doc__
    assert "fork" in (ringflake.__doc__ or "")
    import pydoc

    text = pydoc.render_doc(ringflake.Generator, renderer=pydoc.plaintext)
    assert "next_ids" in text and "ForkError" in text
