#!/bin/sh
# deploy/Dockerfile's dependency layer: an empty stand-in for the library and for every target
# Cargo.toml declares ([lib], [[bin]], [[example]], [[bench]], [[test]]: at its `path`, else at
# Cargo's default one), so that Cargo reads the manifest (it refuses one whose declared targets
# are missing) and fetches the dependencies before the sources are copied. The targets are read
# from Cargo.toml itself: a target added there needs no change here, and the layer stays valid
# until Cargo.toml, Cargo.lock or this file change. Prints the files it made, one a line, for
# the layer to remove once the dependencies are fetched. `.ci/run` runs it as the Dockerfile does.
# Each member of the workspace (`members` in Cargo.toml: the crates under crates/ and bindings/) whose
# manifest is there (the Dockerfile copies each) is stood in for the same way, under its folder:
# Cargo reads every member's manifest.
#
#   sh deploy/stub-targets.sh
set -eu
# The members' folders, `.` alone without a workspace.
members=$(sed -n 's/^members[ \t]*=[ \t]*\[\(.*\)\].*/\1/p' Cargo.toml | tr -d '",')
for dir in ${members:-.}; do
    [ -f "$dir/Cargo.toml" ] || continue
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
' "$dir/Cargo.toml" | while read -r first rest; do
        case $first in
        L) file=$rest; text='' ;;
        *) file=$first; text='fn main() {}' ;;
        esac
        [ "$dir" = . ] || file=$dir/$file
        if [ -e "$file" ]; then
            continue # a real file (a run in a checkout): never overwritten, never listed for removal
        fi
        mkdir -p "$(dirname "$file")"
        printf '%s\n' "$text" >"$file"
        printf '%s\n' "$file"
    done
done
