#!/usr/bin/env bash
# The Python package's CI, in one script (.ci/run calls it once, after the Rust tests): a fresh
# virtual environment; the wheel built by maturin; that wheel installed (not the source tree);
# pytest against it, run from outside the source tree; mypy --strict on a program using every
# public name; stubtest on the hand-written stub. Each step prints its wall time.
#
# Needs: CARGO_TARGET_DIR (the wheel's crate builds there, beside the Rust tests' build), the
# debug `ringflake` binary at $CARGO_TARGET_DIR/debug/ringflake (or RINGFLAKE_BIN) for the
# shared-table test, python3 (3.9 or later) with venv, and PyPI for maturin, pytest and mypy.
# Optional: RINGFLAKE_MYSQL_URL, RINGFLAKE_POSTGRES_URL (their tests skip without them);
# RINGFLAKE_PY_PROFILE=release to build an optimised wheel (default: the dev profile, which
# reuses the Rust tests' debug build of the dependencies).
#
# Measured on the project's 2-core machine with other builds running (load average 9): 241 s
# with an empty CARGO_TARGET_DIR (maturin's build 216 s of it: every dependency compiled), 48 s
# with the dependencies already built (maturin 22 s, pytest 9 s, the venv and tools 12 s).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${CARGO_TARGET_DIR:?CARGO_TARGET_DIR must be set (the Rust build directory)}"
export CARGO_TARGET_DIR
export RINGFLAKE_BIN="${RINGFLAKE_BIN:-$CARGO_TARGET_DIR/debug/ringflake}"
if [[ ! -x "$RINGFLAKE_BIN" ]]; then
    echo "python ci: no ringflake binary at $RINGFLAKE_BIN (build it, or set RINGFLAKE_BIN)" >&2
    exit 1
fi
python="${PYTHON:-python3}"
profile="${RINGFLAKE_PY_PROFILE:-dev}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# step NAME COMMAND...: runs COMMAND, prints its wall time, and fails the script if it fails.
total_start=$(date +%s%N)
# seconds since START (from date +%s%N), with a tenth.
since() {
    local ms=$((($(date +%s%N) - $1) / 1000000))
    printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100))
}
step() {
    local name=$1
    shift
    local start rc=0
    start=$(date +%s%N)
    echo "== python ci: $name"
    "$@" || rc=$?
    echo "== python ci: $name: $(since "$start") s (exit $rc)"
    if [[ $rc -ne 0 ]]; then
        echo "python ci: $name failed" >&2
        exit "$rc"
    fi
}

venv="$work/venv"
step "venv and tools" bash -c "'$python' -m venv '$venv' && '$venv/bin/pip' install -q --disable-pip-version-check 'maturin>=1.9,<2' 'pytest>=8' 'mypy>=1.18'"

build_args=(build --out "$work/dist" --manifest-path "$here/Cargo.toml" --interpreter "$venv/bin/python")
if [[ "$profile" == release ]]; then
    build_args+=(--release)
fi
step "maturin build ($profile)" "$venv/bin/maturin" "${build_args[@]}"

step "install the wheel" "$venv/bin/pip" install -q --disable-pip-version-check ringflake --no-index --find-links "$work/dist" --force-reinstall

# The tests run from a copy outside the source tree, so that `import ringflake` can only find the
# installed wheel (test_api checks that it comes from site-packages).
cp -r "$here/tests" "$work/tests"
# pytest's exit code 5 (no tests collected) is not 0, so it fails the step like any other.
step "pytest" bash -c "cd '$work' && RINGFLAKE_REQUIRE_INSTALLED=1 '$venv/bin/python' -m pytest -p no:cacheprovider -q -rs tests"

step "mypy --strict" bash -c "cd '$work' && '$venv/bin/python' -m mypy --strict --no-incremental tests/typing/every_name.py"

step "stubtest" bash -c "cd '$work' && '$venv/bin/python' -m mypy.stubtest ringflake"

echo "== python ci: all steps passed in $(since "$total_start") s"
