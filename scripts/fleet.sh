#!/usr/bin/env bash
# A fleet on one PostgreSQL table (crates/ringflake-cli/tests/fleet.rs): 300 generators, each with its own node name
# and connection, booting, serving, stopping and being killed at random for 5 minutes, with
# 30 s leases so that worker ids are recycled all the time. Prints boot latency (p50/p99), the
# database's row writes and transactions a second, the rows in the table, the lease extensions
# a second, and fails on any ID handed out twice. docs/workers.md ("A fleet on one table") shows
# its output.
#
# Usage: RINGFLAKE_POSTGRES_URL=postgres://user:password@host:5432/db scripts/fleet.sh [SECS [NODES]]
# (defaults 300 and 300). The database must be a throw-away one: WORKER_NODE is dropped first.
# Its max_connections must exceed NODES + 20 (the PostgreSQL default is 100). Other settings
# (RF_FLEET_WINDOW, RF_FLEET_RATE, RF_FLEET_LIFE, RF_FLEET_SEED) are read by the test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[[ -n "${RINGFLAKE_POSTGRES_URL:-}" ]] || {
    echo "fleet.sh: set RINGFLAKE_POSTGRES_URL to a throw-away PostgreSQL (WORKER_NODE is dropped)" >&2
    exit 1
}
export RF_FLEET_SECS="${1:-300}"
export RF_FLEET_NODES="${2:-300}"
# A debug build, as `cargo test --all-features` in CI makes it: the run is bound by the database,
# not by the generators (500 IDs a second each), and needs no release build of its own.
cargo test --all-features --test fleet -- --ignored --nocapture
