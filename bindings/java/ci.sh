#!/usr/bin/env bash
# The Java step of CI, whole: the JNI crate's lints and tests, the native library, and the Maven
# multi-module build (`mvn verify`: every module's tests, the jars with their sources and javadoc),
# then checks of what the jars carry. .ci/run calls it once, after the Rust tests:
#
#   bash bindings/java/ci.sh
#
# It assumes CARGO_TARGET_DIR, the debug binary at $CARGO_TARGET_DIR/debug/ringflake (the shared
# table test starts it), and the servers' environment (RINGFLAKE_MYSQL_URL, RINGFLAKE_POSTGRES_URL,
# RINGFLAKE_DB_CA, RINGFLAKE_ZK_ENSEMBLE): the server tests run with RINGFLAKE_JAVA_SERVER_TESTS=1,
# so a missing server is a failure (RINGFLAKE_JAVA_SERVER_TESTS=0 in the environment skips them).
# Maven reads Maven Central online, into a local repository made fresh for this run under a
# temporary directory (RINGFLAKE_M2 names another, to reuse one between runs by hand), removed
# at the end. Needs a JDK 17 (javac, jar) and Maven 3.8 or later. Each sub-step prints its wall time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
java_dir="$(pwd -P)"
repo="$(cd ../.. && pwd -P)"
: "${CARGO_TARGET_DIR:=$repo/target}"
export CARGO_TARGET_DIR
export RINGFLAKE_JAVA_SERVER_TESTS="${RINGFLAKE_JAVA_SERVER_TESTS:-1}"

fail() {
    echo "bindings/java/ci.sh: $*" >&2
    exit 1
}
total_start=$SECONDS
# Runs "$@" as a named sub-step and prints its wall time.
sub() {
    local name="$1" start=$SECONDS
    shift
    echo "--> $name"
    "$@" || fail "$name failed"
    echo "<-- $name: $((SECONDS - start)) s"
}

command -v javac >/dev/null && command -v jar >/dev/null || fail "no JDK (javac, jar): apt-get install openjdk-17-jdk-headless"
command -v mvn >/dev/null || fail "no Maven: apt-get install maven"
javac -version
mvn -v 2>&1 | sed -n 1p

work="$(mktemp -d /tmp/ringflake-java-ci.XXXXXX)"
m2="${RINGFLAKE_M2:-$work/m2}"
trap 'rm -rf "$work"' EXIT

sub "cargo clippy -p ringflake-jni" cargo clippy --manifest-path "$repo/Cargo.toml" -p ringflake-jni --all-targets --no-deps -- -D warnings
sub "cargo test -p ringflake-jni" cargo test --manifest-path "$repo/Cargo.toml" -p ringflake-jni
sub "cargo build -p ringflake-jni" cargo build --manifest-path "$repo/Cargo.toml" -p ringflake-jni

# The jar's native tree: io/github/ringflake/native/<os>-<arch>/<file>, without debug information
# (the dev profile's symbols are ~100 MB).
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) platform=linux-x86_64 lib=libringflake_jni.so ;;
Linux-aarch64) platform=linux-aarch64 lib=libringflake_jni.so ;;
Darwin-arm64) platform=macos-aarch64 lib=libringflake_jni.dylib ;;
Darwin-x86_64) platform=macos-x86_64 lib=libringflake_jni.dylib ;;
*) fail "no rule for $(uname -s)-$(uname -m)" ;;
esac
native="$work/native"
mkdir -p "$native/io/github/ringflake/native/$platform"
strip --strip-debug -o "$native/io/github/ringflake/native/$platform/$lib" "$CARGO_TARGET_DIR/debug/$lib" 2>/dev/null ||
    cp "$CARGO_TARGET_DIR/debug/$lib" "$native/io/github/ringflake/native/$platform/$lib"

# mvn verify: every module's tests (baidu-compat: Baidu UidGenerator's own tests on the bridge,
# beside ringflake serve on MariaDB), the jars (reproducible), sources and javadoc jars, the
# benchmarks' shaded jar. Online, into the fresh local repository.
sub "mvn verify (local repository $m2)" mvn -B -ntp -Dstyle.color=never -Dmaven.repo.local="$m2" \
    -Dringflake.native.dir="$native" -Dringflake.native.platforms="$platform" \
    -Dringflake.bin="$CARGO_TARGET_DIR/debug/ringflake" -Dringflake.repo="$repo" verify

# One entry of a jar, printed (no unzip needed). grep below never uses -q on a pipe: under
# pipefail an early exit would fail the writer with SIGPIPE.
jar_entry() {
    local dir
    dir="$(mktemp -d "$work/entry.XXXXXX")"
    (cd "$dir" && jar xf "$OLDPWD/$1" "$2") && cat "$dir/$2"
}
check_jars() {
    local v jar
    v="$(sed -n 's:^  <version>\(.*\)</version>:\1:p' pom.xml | head -n 1)"
    jar="ringflake-java/target/ringflake-java-$v.jar"
    jar tf "$jar" | grep -x "io/github/ringflake/native/$platform/$lib" >/dev/null || fail "$jar carries no native library for $platform"
    jar_entry "$jar" META-INF/MANIFEST.MF | grep "^Ringflake-Native-Platforms: $platform" >/dev/null ||
        fail "$jar's manifest does not name $platform"
    local ac
    for ac in ringflake-spring-boot-autoconfigure ringflake-spring-boot4-autoconfigure; do
        ac="$ac/target/$ac-$v.jar"
        jar tf "$ac" | grep -x 'META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports' >/dev/null ||
            fail "$ac has no AutoConfiguration.imports"
        jar_entry "$ac" META-INF/spring-configuration-metadata.json | grep '"ringflake.layout.time-bits"' >/dev/null ||
            fail "$ac has no generated configuration metadata"
    done
    for m in ringflake-java ringflake-spring-boot-autoconfigure ringflake-spring-boot4-autoconfigure ringflake-uidgenerator-bridge; do
        for kind in sources javadoc; do
            [[ -f "$m/target/$m-$v-$kind.jar" ]] || fail "no $m-$v-$kind.jar"
        done
    done
    # Surefire says nothing when it finds no JUnit 5 provider: count what ran, per module.
    for m in ringflake-java:20 ringflake-spring-boot-autoconfigure:10 ringflake-spring-boot4-autoconfigure:16 \
        ringflake-uidgenerator-bridge:5 baidu-compat:4; do
        local n
        n="$(cat "${m%%:*}"/target/surefire-reports/TEST-*.xml 2>/dev/null |
            sed -n 's/.*<testsuite [^>]*tests="\([0-9]*\)".*/\1/p' | awk '{ n += $1 } END { print n + 0 }')"
        ((n >= ${m##*:})) || fail "${m%%:*}: $n tests ran under Surefire, expected at least ${m##*:}"
        echo "${m%%:*}: $n tests"
    done
}
sub "the jars: native library, manifest, auto-configuration, metadata, sources, javadoc, test counts" check_jars

# The benchmarks' jar runs (one short iteration; the figures in docs/benchmarks.md are longer runs).
sub "JMH smoke run" java -jar ringflake-benchmarks/target/benchmarks.jar -f 0 -wi 0 -i 1 -r 200ms \
    -foe true 'IdBenchmark.(ringflake_getUID_1|atomicLong_1)$'

rm -rf ringflake-*/target baidu-compat/target
echo "bindings/java/ci.sh: all passed in $((SECONDS - total_start)) s"
