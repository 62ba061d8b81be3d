#!/usr/bin/env bash
# Load test of `ringflake serve` with Debian's wrk, on 127.0.0.1 only: GET /id (requests/s) and
# GET /ids?count=1000 (requests/s, and IDs/s = requests/s x 1000), a bounded time each.
#
# Usage: bash scripts/load.sh [SECONDS]      (default 10 per endpoint, at most 300)
#   RINGFLAKE_LOAD_BIN   the binary to test (default: cargo build --release, then that binary)
#   WRK_THREADS          wrk threads (default 2)
#   WRK_CONNECTIONS      open connections (default 64)
#   RINGFLAKE_LOAD_FLOOR_BIN  the floor server, examples/http_floor.rs (default: built beside the
#                        binary with cargo build --release --example http_floor), loaded after the
#                        service so that the ratios hold however busy the machine is: first the same
#                        hyper set-up answering a counter (the HTTP floor), then with --raw, no HTTP
#                        library at all (the machine's floor: one read and one write per request)
# Besides requests/s it prints each server's CPU time per request (user + system, from
# /proc/PID/stat), which varies less than throughput when the machine is shared, and after each
# endpoint's run the generator's lead over the clock (lead_seconds, from /healthz): /ids at tens of
# millions of IDs/s borrows up to the lead cap (--max-lead, 10 s by default) and then waits for the
# clock, at 2^seq_bits IDs/s. The service reads its flags from RINGFLAKE_… variables, so
# RINGFLAKE_MAX_LEAD=60 or RINGFLAKE_UNBOUNDED_LEAD=true (Java's borrowing) change the cap here.
# Installs wrk with apt-get when missing (needs root). The server gets a throw-away SQLite worker
# table and state file and is stopped with SIGTERM at the end; the script fails if any answer was
# not 2xx or the server did not exit 0. It reports, it does not judge: figures depend on the
# machine and on what else runs on it (wrk shares the cores with the server).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() {
    printf 'load: %s\n' "$*" >&2
    exit 1
}

duration="${1:-10}"
[[ "$duration" =~ ^[0-9]+$ ]] && ((duration >= 1 && duration <= 300)) ||
    fail "duration must be 1..300 seconds, got '$duration'"
threads="${WRK_THREADS:-2}"
connections="${WRK_CONNECTIONS:-64}"

if ! command -v wrk >/dev/null 2>&1; then
    ((EUID == 0)) || fail "wrk is not installed: run 'apt-get install wrk' as root"
    echo "installing wrk"
    apt-get update -qq || fail "apt-get update failed (no network?)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null ||
        fail "cannot install wrk"
fi

bin="${RINGFLAKE_LOAD_BIN:-}"
if [[ -z "$bin" ]]; then
    cargo build --release --bin ringflake
    bin="${CARGO_TARGET_DIR:-target}/release/ringflake"
fi
[[ -x "$bin" ]] || fail "no executable at $bin"
floor_bin="${RINGFLAKE_LOAD_FLOOR_BIN:-}"
if [[ -z "$floor_bin" ]]; then
    cargo build --release --example http_floor
    floor_bin="${CARGO_TARGET_DIR:-target}/release/examples/http_floor"
fi
[[ -x "$floor_bin" ]] || fail "no executable at $floor_bin"

# What else keeps the machine busy, before this script adds its own load.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
work="$(mktemp -d /tmp/ringflake-load.XXXXXX)"
"$bin" serve --listen 127.0.0.1:0 --db "$work/ringflake.db" --state-file "$work/ringflake.state" >"$work/serve.out" 2>"$work/serve.err" &
pid=$!
stopped=0
floor_pid=""
cleanup() {
    if ((!stopped)) && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    if [[ -n "$floor_pid" ]]; then
        kill -TERM "$floor_pid" 2>/dev/null || true
        wait "$floor_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# The address a server prints on its first line (bounded wait: 10 s), into $addr.
wait_addr() {
    local out="$1" p="$2" err="$3"
    addr=""
    for _ in $(seq 200); do
        addr="$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' "$out")"
        [[ -n "$addr" ]] && break
        kill -0 "$p" 2>/dev/null || { cat "$err" >&2; fail "$out: the server exited at start"; }
        sleep 0.05
    done
    [[ -n "$addr" ]] || fail "$out: no address within 10 s"
    case "$addr" in
    127.*) ;;
    *) fail "refusing to load $addr: only 127.0.0.0/8" ;;
    esac
}
wait_addr "$work/serve.out" "$pid" "$work/serve.err"
cat "$work/serve.out"

# CPU time (user + system) process $1 has used, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
tick_us="$(awk -v hz="$(getconf CLK_TCK)" 'BEGIN { print 1e6 / hz }')"

# One wrk run against server process $2; prints its report and leaves requests/s in $rps and
# the server's CPU microseconds per request in $cpu_us.
load() {
    local path="$1" server="$2" report before after total
    before="$(cpu_ticks "$server")"
    report="$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "http://$addr$path")"
    after="$(cpu_ticks "$server")"
    printf '%s\n' "$report"
    ! grep -q 'Non-2xx or 3xx responses' <<<"$report" || fail "$path answered with errors"
    ! grep -q 'Socket errors' <<<"$report" || fail "$path had socket errors"
    rps="$(awk '/^Requests\/sec:/ {print $2}' <<<"$report")"
    [[ -n "$rps" ]] || fail "no Requests/sec in wrk's report for $path"
    total="$(awk '/ requests in / {print $1}' <<<"$report")"
    ((total > 0)) || fail "wrk completed no request on $path"
    cpu_us="$(awk -v t=$((after - before)) -v us="$tick_us" -v n="$total" 'BEGIN { printf "%.1f", t * us / n }')"
}

# The service's /healthz, which must answer 200; leaves its lead over the clock in $lead.
lead_now() {
    local health
    health="$(exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}" &&
        printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 && cat <&3)"
    grep -q '^HTTP/1.1 200' <<<"$health" || fail "healthz after the load: $health"
    lead="$(sed -n 's/.*"lead_seconds":\([0-9]*\).*/\1/p' <<<"$health")"
    [[ -n "$lead" ]] || fail "no lead_seconds in the healthz answer: $health"
}

echo
echo "== GET /id, ${duration} s, $threads wrk threads, $connections connections"
load /id "$pid"
id_rps="$rps"
id_cpu="$cpu_us"
lead_now
id_lead="$lead"
echo "lead_seconds at the end of the /id run: $id_lead"
echo
echo "== GET /ids?count=1000, ${duration} s, $threads wrk threads, $connections connections"
load '/ids?count=1000' "$pid"
ids_rps="$rps"
lead_now
ids_lead="$lead"
echo "lead_seconds at the end of the /ids run: $ids_lead"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
stopped=1
((status == 0)) || { cat "$work/serve.err" >&2; fail "serve exited with $status after SIGTERM"; }

# The floors, on the same cores right after: the same HTTP stack answering a counter, then no
# HTTP library at all. Leaves requests/s in $rps and CPU per request in $cpu_us.
floor() {
    "$floor_bin" "$@" 127.0.0.1:0 >"$work/floor.out" 2>"$work/floor.err" &
    floor_pid=$!
    wait_addr "$work/floor.out" "$floor_pid" "$work/floor.err"
    load / "$floor_pid"
    kill -TERM "$floor_pid"
    wait "$floor_pid" || true
    floor_pid=""
}
echo
echo "== HTTP floor: GET / on examples/http_floor (hyper answering a counter), ${duration} s"
floor
floor_rps="$rps"
floor_cpu="$cpu_us"
echo
echo "== machine floor: GET / on examples/http_floor --raw (no HTTP library), ${duration} s"
floor --raw
raw_rps="$rps"
raw_cpu="$cpu_us"

ids_per_s="$(awk -v r="$ids_rps" 'BEGIN { printf "%.0f", r * 1000 }')"
echo
echo "== summary ($(nproc) cores; load average before the run: $load_before)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '/id:              %12.0f requests/s   %5s us server CPU per request  (target >= 100,000 requests/s), lead %s s at the end\n' \
    "$id_rps" "$id_cpu" "$id_lead"
printf 'HTTP floor:       %12.0f requests/s   %5s us                         (/id = %s x this floor)\n' \
    "$floor_rps" "$floor_cpu" "$(ratio "$id_rps" "$floor_rps")"
printf 'machine floor:    %12.0f requests/s   %5s us                         (/id = %s x this floor)\n' \
    "$raw_rps" "$raw_cpu" "$(ratio "$id_rps" "$raw_rps")"
printf '/ids?count=1000:  %12.0f requests/s = %.1f M IDs/s (target >= 20 M), lead %s s at the end\n' \
    "$ids_rps" "$(awk -v n="$ids_per_s" 'BEGIN { printf "%.1f", n / 1e6 }')" "$ids_lead"
echo "serve stopped on SIGTERM with exit 0"
