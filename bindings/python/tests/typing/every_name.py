"""A small program that uses every public name of ringflake; `mypy --strict` checks it against
the installed package (ci.sh). Not a test module: pytest does not collect it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import List, Optional, Tuple

import ringflake
from ringflake import (
    PRESET_NAMES,
    ClosedError,
    Error,
    ForkError,
    Generator,
    InvalidArgument,
    Layout,
    ParsedId,
    Stats,
    WorkerIdError,
    layout,
    parse,
    parse_uid,
)


def take(gen: Generator) -> Tuple[int, List[int]]:
    return gen.next_id(), gen.next_ids(10)


def describe(p: ParsedId) -> str:
    when: dt.datetime = p.timestamp
    return f"{p.id} {when.isoformat()} {p.worker_id} {p.sequence}"


def main(directory: Path) -> None:
    names: Tuple[str, ...] = PRESET_NAMES
    lay: Layout = layout(preset=names[1])
    lay2: Layout = layout(bits=(31, 10, 22), epoch="2025-01-01", tick="s")
    assert lay2.epoch.year == 2025 and lay.tick in ("s", "10ms", "ms")
    with Generator(
        database=directory / "ringflake.db",
        state_file=directory / "ringflake.state",
        max_lead=10,
        lead_policy="wait",
        recycle=True,
        create_table=False,
    ) as gen:
        i, batch = take(gen)
        worker: int = gen.worker_id
        closed: bool = gen.closed
        p: ParsedId = gen.parse(i)
        q: ParsedId = parse(batch[0], gen.layout)
        text: str = gen.parse_uid(i, tz="UTC") + parse_uid(i, lay2, "Asia/Shanghai")
        s: Stats = gen.stats()
        until: Optional[int] = s.lease_until
        print(describe(p), describe(q), worker, closed, text, s.health, until)
    fixed = ringflake.Generator(worker_id=1, preset="twitter", state_file=False)
    try:
        fixed.next_id()
    except ForkError as e:
        print(e.kind)
    except WorkerIdError:
        pass
    finally:
        fixed.close()
    try:
        fixed.next_id()
    except ClosedError as e:
        kind: str = e.kind
        print(kind)
    try:
        Generator(worker_id=5000, epoch=1_735_689_600)
    except InvalidArgument as e:
        assert isinstance(e, ValueError) and isinstance(e, Error)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        main(Path(d))
