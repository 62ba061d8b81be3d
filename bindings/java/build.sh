#!/usr/bin/env bash
# Builds the Java library with Debian's JDK alone (javac, jar; no Maven): the native library
# (cargo build -p ringflake-jni), the classes, and a jar carrying the native library under
# io/github/ringflake/native/<os>-<arch>/. With --test, also compiles the JUnit 5 tests and runs
# them with the JUnit console launcher (Debian's junit5 package, or JUNIT_CONSOLE=path/to/jar),
# all but HealTest, which needs the SQLite JDBC driver from Maven (ci.sh runs every test).
#
#   bash bindings/java/build.sh [--release] [--test] [--bench]
#
# --release builds the native library optimised (for the speed harness, and for a jar to ship);
# the default is cargo's dev profile, which CI's other steps have already built the crate in.
# --bench runs the speed harness (io.github.ringflake.Bench, test sources) after building.
# Output: bindings/java/build/ (ringflake-<version>.jar, classes, test reports), or the directory
# RINGFLAKE_JAVA_BUILD names (CI puts it outside the clone).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
java_dir="$(pwd -P)"
repo="$(cd ../.. && pwd -P)"
profile=dev
out_profile=debug
run_tests=0
run_bench=0
for arg in "$@"; do
    case "$arg" in
    --release) profile=release out_profile=release ;;
    --test) run_tests=1 ;;
    --bench) run_bench=1 ;;
    *) echo "build.sh: unknown argument $arg (expected --release, --test, --bench)" >&2; exit 2 ;;
    esac
done
# The workspace's version (the JNI crate inherits it: `version.workspace = true`).
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -n 1)"
[ -n "$version" ] || { echo "build.sh: no version in $repo/Cargo.toml" >&2; exit 1; }
target_dir="${CARGO_TARGET_DIR:-$repo/target}"

echo "==> cargo build -p ringflake-jni --profile $profile"
(cd "$repo" && cargo build -p ringflake-jni --profile "$profile")
case "$(uname -s)" in
Linux) os=linux lib=libringflake_jni.so ;;
Darwin) os=macos lib=libringflake_jni.dylib ;;
*) echo "build.sh: no rule for $(uname -s): copy the library by hand (README.md, Other platforms)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=x86_64 ;;
aarch64 | arm64) arch=aarch64 ;;
*) arch="$(uname -m)" ;;
esac

build="${RINGFLAKE_JAVA_BUILD:-$java_dir/build}"
rm -rf "$build/classes" "$build/test-classes" "$build/native"
native="io/github/ringflake/native/$os-$arch"
mkdir -p "$build/classes/$native" "$build/test-classes" "$build/native/$native"
# Without debug information: the jar carries what runs (the dev profile's symbols are ~100 MB).
# build/native/ is also pom.xml's resource directory (mvn package after this script).
strip --strip-debug -o "$build/native/$native/$lib" "$target_dir/$out_profile/$lib"
cp "$build/native/$native/$lib" "$build/classes/$native/$lib"

echo "==> javac (release 17), jar"
mapfile -t main_sources < <(find ringflake-java/src/main/java -name '*.java' | sort)
javac --release 17 -Xlint:all -Werror -d "$build/classes" "${main_sources[@]}"
jar="$build/ringflake-$version.jar"
jar --create --file "$jar" -C "$build/classes" .
echo "built $jar ($(du -h "$jar" | cut -f1))"

if ((run_tests || run_bench)); then
    junit="${JUNIT_CONSOLE:-/usr/share/java/junit-platform-console-standalone.jar}"
    [[ -f "$junit" ]] || { echo "build.sh: no JUnit console launcher at $junit (apt-get install junit5)" >&2; exit 1; }
    mapfile -t test_sources < <(find ringflake-java/src/test/java -name '*.java' | sort)
    javac --release 17 -Xlint:all,-try -Werror -cp "$jar:$junit" -d "$build/test-classes" "${test_sources[@]}"
fi
if ((run_tests)); then
    echo "==> JUnit (the jar as users get it, its native library extracted by NativeLoader)"
    # The tests find the jar (class loader tests), the repository's test data and the ringflake
    # binary (the shared table test; RINGFLAKE_TEST_BIN overrides) through these properties.
    java -Dringflake.test.jar="$jar" -Dringflake.test.classes="$build/test-classes" \
        -Dringflake.test.repo="$repo" -Dringflake.test.bin="${RINGFLAKE_TEST_BIN:-$target_dir/debug/ringflake}" \
        -jar "$junit" --class-path "$jar:$build/test-classes" --scan-class-path \
        --fail-if-no-tests --disable-banner --details=tree --reports-dir "$build/test-reports" \
        --exclude-classname='io\.github\.ringflake\.HealTest'
fi
if ((run_bench)); then
    echo "==> speed harness (one JVM run: warm-up, then rounds; ratios to AtomicLong)"
    java -cp "$jar:$build/test-classes" io.github.ringflake.Bench
fi
