#!/usr/bin/env bash
# Load test of `ringflake serve` with Debian's wrk, on 127.0.0.1 only: GET /id over HTTP and over
# HTTPS, GET /ids?count=1000 (IDs/s = requests/s x 1000), and the floors, a bounded time each,
# with throughput, latency percentiles (wrk --latency: p50, p99) and server CPU per request.
#
# Usage: bash scripts/load.sh [SECONDS]      (default 10 per run, at most 300)
#   RINGFLAKE_LOAD_BIN   the binary to test (default: cargo build --release, then that binary)
#   RINGFLAKE_LOAD_FLOOR_BIN  the floor server, crates/ringflake-server/examples/http_floor.rs (default: built beside the
#                        binary with cargo build --release --example http_floor)
#   LOAD_RUNS            rounds of /id against the HTTP floor (default 3): /id and the floor are
#                        loaded one after the other in each round, and the summary gives the median
#                        of the rounds' ratios (/id ÷ HTTP floor), which holds on a busy machine
#                        better than either figure alone; and the same ratio in server CPU time per
#                        request, which a shared machine disturbs less than throughput
#   RINGFLAKE_LOAD_GRPC_BIN  the gRPC load generator, crates/ringflake-server/examples/grpc_load.rs (default: built beside
#                        the binary with cargo build --release -p ringflake-server --example grpc_load)
#   WRK_THREADS          wrk threads (default 2)
#   WRK_CONNECTIONS      open connections (default 64)
# What runs, in order: LOAD_RUNS rounds of [/id on the service, GET /id on the HTTP floor (the same
# hyper set-up answering a counter; the same request line, as hyper's URI parser answers a bare
# `/` without parsing it, about 130 instructions a request fewer), /api/segment/get/load-orders
# (Leaf's segment mode: a business tag of leaf_alloc in the service's SQLite file)]; /id on a
# second service speaking HTTPS (--tls-cert/--tls-key with the test certificates of
# crates/ringflake-cli/tests/data/tls; wrk keeps its connections, so this measures TLS records, not handshakes);
# /ids?count=1000; gRPC on the same service (crates/ringflake-server/examples/grpc_load: unary Next from WRK_CONNECTIONS
# concurrent calls on one HTTP/2 connection, then Streams of a million IDs into one client); then
# the machine's floor, http_floor --raw (no HTTP library at all: one read and one write per
# request). After each service run the generator's lead over the clock (lead_seconds, from
# /healthz): /ids at tens of millions of IDs/s borrows up to the lead cap (--max-lead, 10 s by
# default) and then waits for the clock, at 2^seq_bits IDs/s. The
# services read their flags from RINGFLAKE_… variables, so RINGFLAKE_MAX_LEAD=60 or
# RINGFLAKE_UNBOUNDED_LEAD=true (Java's borrowing) change the cap here.
# Installs wrk with apt-get when missing (needs root). Each service gets a throw-away SQLite worker
# table and state file and is stopped with SIGTERM at the end; the script fails if any answer was
# not 2xx or a service did not exit 0. It reports, it does not judge: figures depend on the
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
runs="${LOAD_RUNS:-3}"
[[ "$runs" =~ ^[0-9]+$ ]] && ((runs >= 1 && runs <= 9)) || fail "LOAD_RUNS must be 1..9, got '$runs'"

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
    cargo build --release -p ringflake-server --example http_floor
    floor_bin="${CARGO_TARGET_DIR:-target}/release/examples/http_floor"
fi
[[ -x "$floor_bin" ]] || fail "no executable at $floor_bin"
grpc_bin="${RINGFLAKE_LOAD_GRPC_BIN:-}"
if [[ -z "$grpc_bin" ]]; then
    cargo build --release -p ringflake-server --example grpc_load
    grpc_bin="${CARGO_TARGET_DIR:-target}/release/examples/grpc_load"
fi
[[ -x "$grpc_bin" ]] || fail "no executable at $grpc_bin"
tls_dir="crates/ringflake-cli/tests/data/tls"
[[ -r "$tls_dir/server.pem" && -r "$tls_dir/server-key.pem" ]] || fail "no test certificate in $tls_dir"

# What else keeps the machine busy, before this script adds its own load.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
work="$(mktemp -d /tmp/ringflake-load.XXXXXX)"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        if kill -0 "$p" 2>/dev/null; then
            kill -TERM "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT

# The address a server prints (bounded wait: 10 s), into $addr.
wait_addr() {
    local out="$1" p="$2" err="$3"
    addr=""
    for _ in $(seq 200); do
        addr="$(sed -n 's|.*listening on https\?://\([^ ]*\) .*|\1|p' "$out")"
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

# Starts a server (name, then its command line); leaves its pid in $started and address in $addr.
start() {
    local name="$1"
    shift
    "$@" >"$work/$name.out" 2>"$work/$name.err" &
    started=$!
    pids+=("$started")
    wait_addr "$work/$name.out" "$started" "$work/$name.err"
}
# A business tag of Leaf's segment mode, with a large step: the database is not what is measured.
"$bin" segments add load-orders --step 1000000 --db "$work/plain.db" >/dev/null ||
    fail "ringflake segments add failed"
start serve "$bin" serve --listen 127.0.0.1:0 --db "$work/plain.db" --state-file "$work/plain.state"
pid="$started" plain="$addr"
cat "$work/serve.out"
start serve-tls "$bin" serve --listen 127.0.0.1:0 --db "$work/tls.db" --state-file "$work/tls.state" \
    --tls-cert "$tls_dir/server.pem" --tls-key "$tls_dir/server-key.pem"
tls_pid="$started" tls="$addr"
tail -n 1 "$work/serve-tls.out"
start floor "$floor_bin" 127.0.0.1:0
floor_pid="$started" floor="$addr"
start raw "$floor_bin" --raw 127.0.0.1:0
raw_pid="$started" raw="$addr"

# CPU time (user + system) process $1 has used, in clock ticks.
cpu_ticks() {
    awk '{ print $14 + $15 }' "/proc/$1/stat"
}
tick_us="$(awk -v hz="$(getconf CLK_TCK)" 'BEGIN { print 1e6 / hz }')"

# wrk's latency in microseconds ("123.45us", "1.23ms", "1.00s").
micros() {
    awk -v v="$1" 'BEGIN {
        n = v + 0
        if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1e6
    }'
}

# One wrk run on URL $1 served by process $2; prints its report and leaves requests/s in $rps,
# the server's CPU microseconds per request in $cpu_us, and the latency percentiles (us) in $p50
# and $p99.
load() {
    local url="$1" server="$2" report before after total
    before="$(cpu_ticks "$server")"
    report="$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "$url")"
    after="$(cpu_ticks "$server")"
    printf '%s\n' "$report"
    ! grep -q 'Non-2xx or 3xx responses' <<<"$report" || fail "$url answered with errors"
    ! grep -q 'Socket errors' <<<"$report" || fail "$url had socket errors"
    rps="$(awk '/^Requests\/sec:/ {print $2}' <<<"$report")"
    [[ -n "$rps" ]] || fail "no Requests/sec in wrk's report for $url"
    total="$(awk '/ requests in / {print $1}' <<<"$report")"
    ((total > 0)) || fail "wrk completed no request on $url"
    cpu_us="$(awk -v t=$((after - before)) -v us="$tick_us" -v n="$total" 'BEGIN { printf "%.1f", t * us / n }')"
    p50="$(micros "$(awk '$1 == "50%" {print $2}' <<<"$report")")"
    p99="$(micros "$(awk '$1 == "99%" {print $2}' <<<"$report")")"
    [[ -n "$p50" && -n "$p99" ]] || fail "no latency distribution in wrk's report for $url"
}

# The /healthz of the service at $1 (plain HTTP), which must answer 200; leaves its lead over the
# clock in $lead.
lead_now() {
    local a="$1" health
    health="$(exec 3<>"/dev/tcp/${a%:*}/${a##*:}" &&
        printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3 && cat <&3)"
    grep -q '^HTTP/1.1 200' <<<"$health" || fail "healthz after the load: $health"
    lead="$(sed -n 's/.*"lead_seconds":\([0-9]*\).*/\1/p' <<<"$health")"
    [[ -n "$lead" ]] || fail "no lead_seconds in the healthz answer: $health"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

rounds=()
ratios=()
cpu_ratios=()
segment_ratios=()
segment_rounds=()
for round in $(seq "$runs"); do
    echo
    echo "== round $round/$runs: GET /id, ${duration} s, $threads wrk threads, $connections connections"
    load "http://$plain/id" "$pid"
    id_rps="$rps" id_cpu="$cpu_us" id_p50="$p50" id_p99="$p99"
    lead_now "$plain"
    echo "lead_seconds at the end of the /id run: $lead"
    echo
    echo "== round $round/$runs: HTTP floor, GET /id on crates/ringflake-server/examples/http_floor (hyper answering a counter), ${duration} s"
    load "http://$floor/id" "$floor_pid"
    r="$(ratio "$id_rps" "$rps")"
    ratios+=("$r")
    cpu_ratios+=("$(ratio "$cpu_us" "$id_cpu")")
    rounds+=("$(printf '%d  /id %9.0f req/s p50 %6.0f us p99 %6.0f us %5s us CPU | floor %9.0f req/s p50 %6.0f us p99 %6.0f us %5s us CPU | /id = %s x floor' \
        "$round" "$id_rps" "$id_p50" "$id_p99" "$id_cpu" "$rps" "$p50" "$p99" "$cpu_us" "$r")")
    floor_rps="$rps"
    echo
    echo "== round $round/$runs: GET /api/segment/get/load-orders (Leaf's segment mode), ${duration} s"
    load "http://$plain/api/segment/get/load-orders" "$pid"
    r="$(ratio "$rps" "$floor_rps")"
    segment_ratios+=("$r")
    segment_rounds+=("$(printf '%d  /api/segment/get %9.0f req/s p50 %6.0f us p99 %6.0f us %5s us CPU | = %s x the round'"'"'s floor' \
        "$round" "$rps" "$p50" "$p99" "$cpu_us" "$r")")
done
last_id_rps="$id_rps"

echo
echo "== GET /id over HTTPS (a second service, --tls-cert), ${duration} s"
load "https://$tls/id" "$tls_pid"
tls_rps="$rps" tls_cpu="$cpu_us" tls_p50="$p50" tls_p99="$p99"
echo
echo "== GET /ids?count=1000, ${duration} s"
load "http://$plain/ids?count=1000" "$pid"
ids_rps="$rps" ids_p50="$p50" ids_p99="$p99"
lead_now "$plain"
ids_lead="$lead"
echo "lead_seconds at the end of the /ids run: $ids_lead"
echo
echo "== gRPC Next (unary), ${duration} s, $connections concurrent calls on one HTTP/2 connection"
before="$(cpu_ticks "$pid")"
grpc_next="$("$grpc_bin" "$plain" "$duration" "$connections" next)" || fail "grpc_load next failed"
after="$(cpu_ticks "$pid")"
echo "$grpc_next"
next_calls="$(sed -n 's/^grpc-next: \([0-9]*\) calls.*/\1/p' <<<"$grpc_next")"
((next_calls > 0)) || fail "no Next call completed"
next_cpu="$(awk -v t=$((after - before)) -v us="$tick_us" -v n="$next_calls" 'BEGIN { printf "%.1f", t * us / n }')"
echo
echo "== gRPC Stream (a million IDs a stream, one client), ${duration} s"
before="$(cpu_ticks "$pid")"
grpc_stream="$("$grpc_bin" "$plain" "$duration" 1 stream)" || fail "grpc_load stream failed"
after="$(cpu_ticks "$pid")"
echo "$grpc_stream"
stream_ids="$(sed -n 's/^grpc-stream: \([0-9]*\) IDs.*/\1/p' <<<"$grpc_stream")"
((stream_ids > 0)) || fail "no ID streamed"
stream_cpu="$(awk -v t=$((after - before)) -v us="$tick_us" -v n="$stream_ids" 'BEGIN { printf "%.1f", t * us * 1e6 / n / 1e3 }')"
lead_now "$plain"
echo "lead_seconds at the end of the gRPC runs: $lead"
echo
echo "== machine floor: GET /id on crates/ringflake-server/examples/http_floor --raw (no HTTP library), ${duration} s"
load "http://$raw/id" "$raw_pid"
raw_rps="$rps" raw_cpu="$cpu_us" raw_p50="$p50" raw_p99="$p99"

for p in "$pid" "$tls_pid"; do
    status=0
    kill -TERM "$p"
    wait "$p" || status=$?
    ((status == 0)) || { cat "$work"/serve*.err >&2; fail "serve (pid $p) exited with $status after SIGTERM"; }
done

ids_per_s="$(awk -v r="$ids_rps" 'BEGIN { printf "%.0f", r * 1000 }')"
echo
echo "== summary ($(nproc) cores; load average before the run: $load_before; latency from wrk --latency)"
printf '%s\n' "${rounds[@]}"
printf '/id ÷ HTTP floor, median of %d rounds: %s (rounds: %s)\n' "$runs" "$(median "${ratios[@]}")" "${ratios[*]}"
printf 'the same in server CPU per request (floor ÷ /id, above 1: /id costs less), median: %s (rounds: %s)\n' \
    "$(median "${cpu_ratios[@]}")" "${cpu_ratios[*]}"
printf '%s\n' "${segment_rounds[@]}"
printf '/api/segment/get ÷ HTTP floor, median of %d rounds: %s (rounds: %s)\n' "$runs" \
    "$(median "${segment_ratios[@]}")" "${segment_ratios[*]}"
printf '/id over HTTPS:   %9.0f req/s p50 %6.0f us p99 %6.0f us %5s us CPU | = %s x plain /id of the last round\n' \
    "$tls_rps" "$tls_p50" "$tls_p99" "$tls_cpu" "$(ratio "$tls_rps" "$last_id_rps")"
printf '/ids?count=1000:  %9.0f req/s p50 %6.0f us p99 %6.0f us = %.1f M IDs/s, lead %s s at the end\n' \
    "$ids_rps" "$ids_p50" "$ids_p99" "$(awk -v n="$ids_per_s" 'BEGIN { printf "%.1f", n / 1e6 }')" "$ids_lead"
printf 'gRPC Next:        %s\n' "${grpc_next#grpc-next: }; $next_cpu us CPU a call"
printf 'gRPC Stream:      %s\n' "${grpc_stream#grpc-stream: }; $stream_cpu ms server CPU per million IDs"
printf 'machine floor:    %9.0f req/s p50 %6.0f us p99 %6.0f us %5s us CPU | /id of the last round = %s x this floor\n' \
    "$raw_rps" "$raw_p50" "$raw_p99" "$raw_cpu" "$(ratio "$last_id_rps" "$raw_rps")"
echo "both services stopped on SIGTERM with exit 0"
