#!/usr/bin/env bash
# What a Rust program gets when it adds the library: a fresh project outside the repository,
# `cargo add ringflake --path crates/ringflake` (with the features given), the distinct crates
# `cargo tree -e normal` lists (the project itself left out), and a program built and run.
#
# Counts are of the crates pulled in: the project and the crate added are left out.
#
#   bash scripts/crate-reach.sh check
#       CI's check: the default features stay within MAX_DEFAULT_CRATES (30, the goal recorded in
#       docs/benchmarks.md), bring no server and no command line (clap, hyper, tonic, rustls,
#       tracing-subscriber), and a program that takes a worker id from SQLite, takes IDs and
#       parses one builds and runs. --no-default-features stays within MAX_BARE_CRATES (14).
#       Uses $CARGO_TARGET_DIR when set (a warm build: what is checked is the graph, not the time).
#
#   bash scripts/crate-reach.sh measure
#       docs/benchmarks.md's table: crates and cold debug and release build times for the
#       library's defaults, --no-default-features and a few feature sets, beside ferroid and uuid
#       added the same way (from crates.io) in the same run, each in a fresh project with a target
#       directory of its own (the crates already downloaded: build time, not download time).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
MAX_DEFAULT_CRATES=30
MAX_BARE_CRATES=14

fail() {
    printf 'crate-reach: %s\n' "$*" >&2
    exit 1
}

work="$(mktemp -d /tmp/ringflake-reach.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# new_project NAME: a fresh binary project `reach-NAME`, not inside any workspace (the prefix: a
# project may not share its name with a crate it adds).
new_project() {
    cargo new --quiet --vcs none "$work/reach-$1" >/dev/null
    echo "$work/reach-$1"
}

# crates DIR: the distinct crates DIR's normal dependency graph pulls in: the project itself and
# the crate it added (ringflake, ferroid, uuid) left out.
crates() {
    (cd "$1" && cargo tree -e normal --prefix none --format '{p}' 2>/dev/null) |
        sed -e 's/ (\*)$//' -e 's/ (proc-macro)$//' | sort -u |
        grep -v -e "^$(basename "$1") v" -e "^$2 v" || true
}

# A program a user of the defaults writes: a worker id from SQLite, IDs, one parsed.
program() {
    cat <<'RUST'
use ringflake::{CachedUidGenerator, DatabaseAssigner, Layout};

fn main() -> Result<(), ringflake::Error> {
    let dir = std::env::temp_dir().join(format!("reach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let table = DatabaseAssigner::sqlite(dir.join("ringflake.db"))?;
    let generator = CachedUidGenerator::builder(Layout::default())
        .worker_id_from(&table)
        .state_file(dir.join("ringflake.state"))
        .build()?;
    let mut ids = [0u64; 1000];
    generator.next_ids(&mut ids)?;
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let parsed = Layout::default().parse(ids[0])?;
    assert_eq!(parsed.worker_id, generator.worker_id());
    println!("{} {}", generator.worker_id(), parsed.to_java_string()?);
    drop(generator);
    std::fs::remove_dir_all(&dir).expect("remove temp dir");
    Ok(())
}
RUST
}

case "${1:-}" in
check)
    dir="$(new_project defaults)"
    (cd "$dir" && cargo add --quiet ringflake --path "$repo/crates/ringflake")
    list="$(crates "$dir" ringflake)"
    count="$(grep -c . <<<"$list")"
    echo "cargo add ringflake: $count crates (cargo tree -e normal, the project left out; goal <= $MAX_DEFAULT_CRATES)"
    ((count <= MAX_DEFAULT_CRATES)) || { echo "$list" >&2; fail "the default features bring $count crates, more than $MAX_DEFAULT_CRATES"; }
    for banned in clap hyper tonic rustls tracing-subscriber ringflake-server ringflake-cli; do
        ! grep -q "^$banned v" <<<"$list" || fail "the default features bring $banned"
    done
    program >"$dir/src/main.rs"
    out="$(cd "$dir" && cargo run --quiet)" || fail "the program on the default features failed"
    grep -q '^1 {"UID":"' <<<"$out" || fail "the program printed: $out"
    echo "a program on the defaults: worker id 1 from SQLite, 1,000 IDs, parsed: $out"
    bare="$(new_project bare)"
    (cd "$bare" && cargo add --quiet ringflake --path "$repo/crates/ringflake" --no-default-features)
    count="$(crates "$bare" ringflake | grep -c .)"
    echo "cargo add ringflake --no-default-features: $count crates (goal <= $MAX_BARE_CRATES)"
    ((count <= MAX_BARE_CRATES)) || fail "--no-default-features brings $count crates, more than $MAX_BARE_CRATES"
    # The service as a library brings no database driver: its caller opens the worker id source
    # and the segment mode's leaf_alloc.
    server="$(new_project server)"
    (cd "$server" && cargo add --quiet ringflake-server --path "$repo/crates/ringflake-server")
    list="$(crates "$server" ringflake-server)"
    echo "cargo add ringflake-server: $(grep -c . <<<"$list") crates, no database driver"
    for banned in rusqlite libsqlite3-sys mysql tokio-postgres redis zookeeper-client clap; do
        ! grep -q "^$banned v" <<<"$list" || fail "ringflake-server brings $banned"
    done
    ;;
measure)
    # one NAME ADD-ARGS...: a fresh project, the crate added, crates counted, cold builds timed.
    one() {
        local name="$1"
        shift
        local dir
        dir="$(new_project "$name")"
        (cd "$dir" && cargo add --quiet "$@")
        echo 'fn main() {}' >"$dir/src/main.rs"
        (cd "$dir" && cargo fetch --quiet)
        local count debug release start
        count="$(crates "$dir" "${1}" | grep -c .)"
        start=$SECONDS
        (cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo build --quiet 2>/dev/null)
        debug=$((SECONDS - start))
        start=$SECONDS
        (cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo build --quiet --release 2>/dev/null)
        release=$((SECONDS - start))
        printf '| `%s` | %s | %s s | %s s |\n' "cargo add $*" "$count" "$debug" "$release"
        rm -rf "$dir"
    }
    lib="$repo/crates/ringflake"
    echo "| added | crates | cold debug build | cold release build |"
    echo "|---|---|---|---|"
    # RINGFLAKE_REACH_BASELINE: the folder of an earlier ringflake crate, measured first the same
    # way (docs/benchmarks.md: the single crate before the workspace, its defaults the binary's).
    if [[ -n "${RINGFLAKE_REACH_BASELINE:-}" ]]; then
        one baseline ringflake --path "$RINGFLAKE_REACH_BASELINE"
    fi
    one defaults ringflake --path "$lib"
    one bare ringflake --path "$lib" --no-default-features
    one asynchronous ringflake --path "$lib" --features tokio,metrics
    one postgres ringflake --path "$lib" --features postgres
    one ferroid ferroid
    one uuid uuid --features v7
    ;;
*)
    fail "usage: bash scripts/crate-reach.sh check|measure"
    ;;
esac
