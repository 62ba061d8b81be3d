#!/usr/bin/env bash
# A throw-away three-node ZooKeeper ensemble on loopback, for crates/ringflake-cli/tests/zookeeper.rs and .ci/run:
# Debian's zookeeper package (3.8, /usr/share/java/zookeeper.jar), each node started with java
# directly from its own zoo.cfg and myid under DIR. Node N (1..3) listens for clients on
# 127.0.0.1:(2180+N), for its quorum on 2887+N and for leader election on 3887+N.
#
#   zk-ensemble.sh start DIR        writes the configuration, starts the three nodes and waits (at
#                                   most 60 s) until every node answers `srvr` as leader or follower
#   zk-ensemble.sh stop DIR         stops every node (SIGKILL after 10 s)
#   zk-ensemble.sh start-node DIR N starts node N again (its data kept)
#   zk-ensemble.sh kill-node DIR N  kill -9 of node N
#   zk-ensemble.sh leader DIR       prints the number of the node that leads now
#   zk-ensemble.sh wait DIR         waits (at most 60 s) until the nodes that run serve clients
#
# tickTime is 1 s: sessions of 2 s to 20 s, and an election within a few seconds.
set -euo pipefail

cmd="${1:?usage: zk-ensemble.sh start|stop|start-node|kill-node|leader|wait DIR [N]}"
dir="${2:?the ensemble directory}"
classpath="${RINGFLAKE_ZK_CLASSPATH:-/usr/share/java/zookeeper.jar}"

srvr() { # N: what node N answers to `srvr`, empty if nothing
    local port=$((2180 + $1))
    (
        exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 0
        printf 'srvr' >&3
        timeout 2 cat <&3
    ) 2>/dev/null || true
}

mode() { srvr "$1" | sed -n 's/^Mode: //p'; }

running() { [[ -f "$dir/zk$1/pid" ]] && kill -0 "$(cat "$dir/zk$1/pid")" 2>/dev/null; }

start_node() {
    local n=$1
    running "$n" && return 0
    java -Xmx128m -Dzookeeper.log.dir="$dir/zk$n" -Dzookeeper.root.logger=INFO,CONSOLE \
        -cp "$classpath" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zk$n/zoo.cfg" \
        >>"$dir/zk$n/out.log" 2>&1 &
    echo $! >"$dir/zk$n/pid"
}

wait_serving() {
    for _ in $(seq 120); do
        local ok=1
        for n in 1 2 3; do
            running "$n" || continue
            case "$(mode "$n")" in leader | follower) ;; *) ok=0 ;; esac
        done
        ((ok)) && return 0
        sleep 0.5
    done
    echo "zk-ensemble: not serving after 60 s" >&2
    for n in 1 2 3; do tail -n 20 "$dir/zk$n/out.log" >&2 || true; done
    return 1
}

case "$cmd" in
start)
    command -v java >/dev/null 2>&1 || { echo "zk-ensemble: no java" >&2; exit 1; }
    [[ -f "$classpath" ]] || { echo "zk-ensemble: no $classpath (Debian's zookeeper package)" >&2; exit 1; }
    for n in 1 2 3; do
        mkdir -p "$dir/zk$n/data"
        echo "$n" >"$dir/zk$n/data/myid"
        cat >"$dir/zk$n/zoo.cfg" <<CFG
tickTime=1000
initLimit=10
syncLimit=3
dataDir=$dir/zk$n/data
clientPort=$((2180 + n))
clientPortAddress=127.0.0.1
4lw.commands.whitelist=*
admin.enableServer=false
standaloneEnabled=false
server.1=127.0.0.1:2888:3888
server.2=127.0.0.1:2889:3889
server.3=127.0.0.1:2890:3890
CFG
        start_node "$n"
    done
    wait_serving
    ;;
stop)
    for n in 1 2 3; do
        running "$n" && kill -TERM "$(cat "$dir/zk$n/pid")" 2>/dev/null || true
    done
    for n in 1 2 3; do
        for _ in $(seq 50); do running "$n" || break; sleep 0.2; done
        running "$n" && kill -KILL "$(cat "$dir/zk$n/pid")" 2>/dev/null || true
    done
    ;;
start-node) start_node "${3:?node number}" ;;
kill-node)
    n="${3:?node number}"
    running "$n" && kill -KILL "$(cat "$dir/zk$n/pid")"
    for _ in $(seq 50); do running "$n" || break; sleep 0.1; done
    ;;
leader)
    for n in 1 2 3; do
        [[ "$(mode "$n")" == leader ]] && { echo "$n"; exit 0; }
    done
    exit 1
    ;;
wait) wait_serving ;;
*) echo "zk-ensemble: unknown command $cmd" >&2; exit 2 ;;
esac
