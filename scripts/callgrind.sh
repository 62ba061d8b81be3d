#!/usr/bin/env bash
# Instructions per ID of the take paths, counted by callgrind (valgrind) rather than timed: a
# figure that does not move with the machine's load. Runs crates/ringflake/examples/callgrind.rs at two N for each
# path (local: LocalTaker::next_id; take: CachedUidGenerator::next_id; fetch_add: the floor) and
# prints (Ir(N2) - Ir(N1)) / (N2 - N1): the set-up (building the generator, the first fill of the
# ring) cancels out, and making the IDs (the ring fills on the taking thread) is included.
# Usage: scripts/callgrind.sh [N1 [N2]]   (defaults 1000000 and 5000000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n1="${1:-1000000}"
n2="${2:-5000000}"
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
cargo build --release --example callgrind
bin="${CARGO_TARGET_DIR:-target}/release/examples/callgrind"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Instructions executed by the whole program (every thread) for `path` at `n` takes.
count() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" "$1" "$2" \
        >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err"
}

printf '%-10s %15s %15s %12s\n' path "Ir at $n1" "Ir at $n2" "Ir per ID"
for path in local take fetch_add; do
    a="$(count "$path" "$n1")"
    b="$(count "$path" "$n2")"
    per="$(awk -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.2f", (b - a) / (n2 - n1) }')"
    printf '%-10s %15s %15s %12s\n' "$path" "$a" "$b" "$per"
done
