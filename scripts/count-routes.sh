#!/usr/bin/env bash
# Instructions per request of every ID route of `ringflake serve`, counted by callgrind rather
# than timed, each as a ratio to the HTTP floor (examples/http_floor: the same hyper set-up
# answering a counter) counted in the same run: figures that do not move with the machine's load.
#
# Usage: scripts/count-routes.sh [--check]
#
# Starts the release `ringflake serve` (a throw-away SQLite worker table, state file and business
# tag) and examples/http_floor, each under `valgrind --tool=callgrind`, and drives one route at a
# time over one kept-alive connection with examples/count_routes, which zeroes the counters
# (`callgrind_control --zero`) before the measured requests and dumps them after, then keeps the
# connection idle COUNT_IDLE_WINDOWS times as long and dumps that too: the idle window (the
# filler's and keepers' wake-ups), divided by as much, is taken off the measured one. Warm-up
# requests go first, then a second's pause (the previous route's leftover work), outside the
# window.
# Prints, for each route, the server's instructions per request (per ID for /ids and Stream) and
# floor ÷ route: above 1, the route costs less than the floor.
#
# With --check, compares each ratio with the one recorded in docs/benchmarks.md (the table between
# the `count-routes:begin` and `count-routes:end` markers) and fails when one is more than
# COUNT_TOLERANCE percent (default 3) below it. A route's goal (the last column, `≥ 0.95`) is
# reported beside it, met or not, without failing the check.
#
# Environment:
#   RINGFLAKE_COUNT_BIN          the ringflake binary (default: cargo build --release)
#   RINGFLAKE_COUNT_FLOOR_BIN    crates/ringflake-server/examples/http_floor (default: built with cargo)
#   RINGFLAKE_COUNT_CLIENT_BIN   crates/ringflake-server/examples/count_routes (default: built with cargo)
#   COUNT_REQUESTS               measured requests per route (default 10000; /ids?count=1000 gets a
#                                tenth of them, Stream streams 1,000 IDs per request)
#   COUNT_WARMUP                 warm-up requests per route (default 200)
#   COUNT_IDLE_WINDOWS           the idle window's length in measured windows (default 3)
#   COUNT_TOLERANCE              --check's allowance, percent below the recorded ratio (default 3)
#   COUNT_DOC                    where --check reads the recorded ratios (default docs/benchmarks.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() {
    printf 'count-routes: %s\n' "$*" >&2
    exit 1
}

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*) fail "usage: scripts/count-routes.sh [--check]" ;;
esac
n="${COUNT_REQUESTS:-10000}"
warmup="${COUNT_WARMUP:-200}"
tolerance="${COUNT_TOLERANCE:-3}"
doc="${COUNT_DOC:-docs/benchmarks.md}"
[[ "$n" =~ ^[0-9]+$ ]] && ((n >= 100 && n <= 100000)) || fail "COUNT_REQUESTS must be 100..100000, got '$n'"
[[ "$warmup" =~ ^[0-9]+$ ]] && ((warmup >= 10)) || fail "COUNT_WARMUP must be 10 or more, got '$warmup'"
idle_windows="${COUNT_IDLE_WINDOWS:-3}"
[[ "$idle_windows" =~ ^[0-9]+$ ]] && ((idle_windows >= 1 && idle_windows <= 20)) ||
    fail "COUNT_IDLE_WINDOWS must be 1..20, got '$idle_windows'"
export COUNT_IDLE_WINDOWS="$idle_windows"
command -v valgrind >/dev/null || fail "valgrind is not installed: apt-get install valgrind"
command -v callgrind_control >/dev/null || fail "callgrind_control is not on PATH (Debian's valgrind has it)"

target="${CARGO_TARGET_DIR:-target}"
bin="${RINGFLAKE_COUNT_BIN:-}"
floor_bin="${RINGFLAKE_COUNT_FLOOR_BIN:-}"
client_bin="${RINGFLAKE_COUNT_CLIENT_BIN:-}"
if [[ -z "$bin" || -z "$floor_bin" || -z "$client_bin" ]]; then
    # One build with one feature set, so that nothing is built twice.
    cargo build --release --bin ringflake -p ringflake-cli -p ringflake-server --example http_floor --example count_routes
fi
bin="${bin:-$target/release/ringflake}"
floor_bin="${floor_bin:-$target/release/examples/http_floor}"
client_bin="${client_bin:-$target/release/examples/count_routes}"
for b in "$bin" "$floor_bin" "$client_bin"; do
    [[ -x "$b" ]] || fail "no executable at $b"
done

work="$(mktemp -d /tmp/ringflake-count.XXXXXX)"
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do
        if kill -0 "$p" 2>/dev/null; then
            kill -KILL "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT

# Starts `name` under callgrind (then its command line); leaves its pid in $started and its
# address in $addr. Under valgrind a start takes seconds: the wait is bounded at 120 s.
start() {
    local name="$1"
    shift
    : >"$work/$name.out"
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.cg" --dump-instr=no \
        "$@" >"$work/$name.out" 2>"$work/$name.err" &
    started=$!
    pids+=("$started")
    addr=""
    for _ in $(seq 1200); do
        addr="$(sed -n 's|.*listening on http://\([^ ]*\) .*|\1|p' "$work/$name.out")"
        [[ -n "$addr" ]] && break
        kill -0 "$started" 2>/dev/null || { cat "$work/$name.err" >&2; fail "$name exited at start"; }
        sleep 0.1
    done
    [[ -n "$addr" ]] || fail "$name: no address within 120 s"
    case "$addr" in
    127.*) ;;
    *) fail "refusing to load $addr: only 127.0.0.0/8" ;;
    esac
}

# The instructions in dump number $2 of server $1 (its `totals:` line).
dumped() {
    local file="$work/$1.cg.$2"
    [[ -r "$file" ]] || fail "no callgrind dump $file"
    awk '/^totals:/ { print $2; found = 1 } END { if (!found) exit 1 }' "$file" ||
        fail "no totals in $file"
}

declare -A dumps=()
declare -A per=()
# Counts `requests` requests of `route` on server `name` (pid $2, address $3), `units` units
# (requests, or IDs) in all; leaves the instructions per unit, idle window taken off, in per[$label].
count() {
    local label="$1" name="$2" pid="$3" address="$4" route="$5" requests="$6" units="$7" warm="$8"
    "$client_bin" "$pid" "$address" "$route" "$requests" "$warm" >"$work/client.out" 2>&1 ||
        { cat "$work/client.out" >&2; fail "$label: the client failed"; }
    local d="${dumps[$name]:-0}"
    local measured idle
    measured="$(dumped "$name" $((d + 1)))"
    idle="$(dumped "$name" $((d + 2)))"
    dumps[$name]=$((d + 2))
    per[$label]="$(awk -v m="$measured" -v i="$idle" -v k="$idle_windows" -v u="$units" 'BEGIN { printf "%.2f", (m - i / k) / u }')"
    printf '%-24s %14s instructions, idle %10s over %s windows, %d units: %10s a unit\n' \
        "$label" "$measured" "$idle" "$idle_windows" "$units" "${per[$label]}"
}

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
tag="count-orders"
"$bin" segments add "$tag" --step 1000000 --db "$work/count.db" >/dev/null ||
    fail "ringflake segments add failed"

start floor "$floor_bin" 127.0.0.1:0 2
floor_pid="$started" floor_addr="$addr"
count "floor" floor "$floor_pid" "$floor_addr" /id "$n" "$n" "$warmup"
kill -KILL "$floor_pid"
wait "$floor_pid" 2>/dev/null || true

start serve "$bin" serve --listen 127.0.0.1:0 --threads 2 --db "$work/count.db" \
    --state-file "$work/count.state"
pid="$started" plain="$addr"
ids_requests=$((n / 10))
count "/id" serve "$pid" "$plain" /id "$n" "$n" "$warmup"
count "/ids?count=1000" serve "$pid" "$plain" "/ids?count=1000" "$ids_requests" $((ids_requests * 1000)) "$warmup"
count "/api/segment/get/{tag}" serve "$pid" "$plain" "/api/segment/get/$tag" "$n" "$n" "$warmup"
count "gRPC Next" serve "$pid" "$plain" grpc:next "$n" "$n" "$warmup"
count "gRPC Stream" serve "$pid" "$plain" grpc:stream $((n * 1000)) $((n * 1000)) $((warmup * 100))
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true

routes=("floor" "/id" "/ids?count=1000" "/api/segment/get/{tag}" "gRPC Next" "gRPC Stream")
declare -A ratio=()
echo
echo "== instructions per request, counted by callgrind ($n requests a route; load average before: $load_before)"
printf '%-24s %14s %14s\n' route "instructions" "floor ÷ route"
for r in "${routes[@]}"; do
    ratio[$r]="$(awk -v f="${per[floor]}" -v x="${per[$r]}" 'BEGIN { printf "%.3f", f / x }')"
    unit=""
    case "$r" in
    "/ids?count=1000" | "gRPC Stream") unit=" (an ID)" ;;
    esac
    printf '%-24s %14s %14s%s\n' "$r" "${per[$r]}" "${ratio[$r]}" "$unit"
done

$check || exit 0

# The recorded ratios: the rows of the table between the markers, `| route | … | ratio | …`, the
# route in the first cell (backticks dropped), the ratio in the third (bold dropped), the goal in
# the sixth where it is `≥ x` (else empty).
[[ -r "$doc" ]] || fail "cannot read $doc"
recorded="$(awk -F'|' '
    /count-routes:begin/ { on = 1; next }
    /count-routes:end/ { on = 0 }
    on && /^\|/ && $2 !~ /route|---/ {
        r = $2; gsub(/[` ]/, "", r); v = $4; gsub(/[* ×x]/, "", v)
        g = $7; if (g ~ /≥/) { sub(/.*≥/, "", g); gsub(/ /, "", g) } else g = ""
        print r "\t" v "\t" g
    }' "$doc")"
[[ -n "$recorded" ]] || fail "no recorded table between count-routes:begin and count-routes:end in $doc"
failed=0
echo
echo "== check against $doc (at most $tolerance % below the recorded ratio)"
for r in "${routes[@]}"; do
    [[ "$r" == floor ]] && continue
    key="${r// /}"
    want="" goal=""
    IFS=$'\t' read -r _ want goal < <(awk -F'\t' -v k="$key" '$1 == k' <<<"$recorded") || true
    [[ -n "$want" ]] || fail "no recorded ratio for $r in $doc"
    # The goal column (`≥ 0.95`), where a route has one, is reported, not enforced: the check
    # holds the recorded figure, which has its tolerance for another machine's instruction counts.
    goal_note=""
    if [[ -n "$goal" ]]; then
        if awk -v got="${ratio[$r]}" -v goal="$goal" 'BEGIN { exit !(got >= goal) }'; then
            goal_note=" (goal >= $goal met)"
        else
            goal_note=" (goal >= $goal NOT met on this machine)"
        fi
    fi
    if awk -v got="${ratio[$r]}" -v want="$want" -v t="$tolerance" 'BEGIN { exit !(got >= want * (1 - t / 100)) }'; then
        printf '%-24s %8s recorded %8s: ok%s\n' "$r" "${ratio[$r]}" "$want" "$goal_note"
    else
        printf '%-24s %8s recorded %8s: MORE THAN %s %% BELOW%s\n' "$r" "${ratio[$r]}" "$want" "$tolerance" "$goal_note"
        failed=1
    fi
done
((failed == 0)) || fail "a route costs more than recorded: find what was added to its requests (callgrind_annotate on a dump), or record the new figure in $doc with the reason"
echo "every route within $tolerance % of its recorded ratio"
