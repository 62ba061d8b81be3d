"""Worker ids from MariaDB/MySQL and PostgreSQL, against the servers CI starts (TLS-verified
URLs in RINGFLAKE_MYSQL_URL and RINGFLAKE_POSTGRES_URL); skipped when unset."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ringflake

URLS = [
    pytest.param(os.environ.get("RINGFLAKE_MYSQL_URL"), id="mariadb"),
    pytest.param(os.environ.get("RINGFLAKE_POSTGRES_URL"), id="postgres"),
]


@pytest.mark.parametrize("url", URLS)
def test_worker_ids_from_a_server(url: "str | None", tmp_path: Path) -> None:
    if not url:
        pytest.skip("database URL not set")
    with ringflake.Generator(database=url, create_table=True) as a:
        with ringflake.Generator(database=url, state_file=tmp_path / "b.state") as b:
            assert a.worker_id >= 1 and b.worker_id >= 1
            assert a.worker_id != b.worker_id
            ids = a.next_ids(10_000) + [b.next_id() for _ in range(10_000)]
            assert len(set(ids)) == 20_000
            assert a.stats().lease_until is not None
        # The password never shows.
        assert "@" not in repr(a)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                child = a.next_id()
                code = 0 if a.parse(child).worker_id != a.parse(ids[0]).worker_id else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0

