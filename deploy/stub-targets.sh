#!/bin/sh
# deploy/Dockerfile's dependency layer: an empty stand-in for the library and for every target
# Cargo.toml declares ([lib], [[bin]], [[example]], [[bench]], [[test]]: at its `path`, else at
# Cargo's default one), so that Cargo reads the manifest (it refuses one whose declared targets
# are missing) and fetches the dependencies before the sources are copied. The targets are read
# from Cargo.toml itself: a target added there needs no change here, and the layer stays valid
# until Cargo.toml, Cargo.lock or this file change. Prints the files it made, one a line, for
# the layer to remove once the dependencies are fetched. `.ci/run` runs it as the Dockerfile does.
#
#   sh deploy/stub-targets.sh [Cargo.toml]
set -eu
manifest=${1:-Cargo.toml}
awk '
function value(line) {
    sub(/^[^=]*=[ \t]*"/, "", line)
    sub(/".*$/, "", line)
    return line
}
function flush() {
    if (kind == "lib") {
        lib = path
    } else if (kind != "" && name != "") {
        print (path != "" ? path : dir[kind] "/" name ".rs")
    }
    kind = ""; name = ""; path = ""
}
BEGIN {
    dir["bin"] = "src/bin"; dir["example"] = "examples"; dir["bench"] = "benches"; dir["test"] = "tests"
}
/^[ \t]*\[/ {
    flush()
    section = $0
    gsub(/[][ \t]/, "", section)
    sub(/#.*$/, "", section)
    if (section == "lib" || section == "bin" || section == "example" || section == "bench" || section == "test") {
        kind = section
    }
    next
}
kind != "" && /^[ \t]*name[ \t]*=/ { name = value($0) }
kind != "" && /^[ \t]*path[ \t]*=/ { path = value($0) }
END {
    flush()
    print "L " (lib != "" ? lib : "src/lib.rs")
}
' "$manifest" | while read -r first rest; do
    case $first in
    L) file=$rest; text='' ;;
    *) file=$first; text='fn main() {}' ;;
    esac
    if [ -e "$file" ]; then
        continue # a real file (a run in a checkout): never overwritten, never listed for removal
    fi
    mkdir -p "$(dirname "$file")"
    printf '%s\n' "$text" >"$file"
    printf '%s\n' "$file"
done
