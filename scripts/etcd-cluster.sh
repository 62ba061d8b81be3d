#!/usr/bin/env bash
# A throw-away three-member etcd cluster on loopback, for crates/ringflake-cli/tests/etcd.rs and .ci/run: Debian's
# etcd-server (3.4) and etcd-client, each member started from the command line with its own data
# directory under DIR. Member N (1..3) listens for clients on 127.0.0.1:(BASE+N) and for its
# peers on 127.0.0.1:(BASE+10+N); BASE is RINGFLAKE_ETCD_BASE_PORT, 18500 by default.
#
#   etcd-cluster.sh start DIR        starts the three members and waits (at most 60 s) until
#                                    each answers as healthy
#   etcd-cluster.sh stop DIR         stops every member (SIGKILL after 10 s)
#   etcd-cluster.sh start-node DIR N starts member N again (its data kept)
#   etcd-cluster.sh kill-node DIR N  kill -9 of member N
#   etcd-cluster.sh freeze DIR       SIGSTOP of every member (an outage: nothing answers)
#   etcd-cluster.sh thaw DIR         SIGCONT of every member
#   etcd-cluster.sh leader DIR       prints the number of the member that leads now
#   etcd-cluster.sh endpoints DIR    prints the client URLs, comma-separated
#   etcd-cluster.sh wait DIR         waits (at most 60 s) until the members that run answer
#
# Heartbeats every 100 ms and elections after 1 s: a new leader within a few seconds.
set -euo pipefail

cmd="${1:?usage: etcd-cluster.sh start|stop|start-node|kill-node|freeze|thaw|leader|endpoints|wait DIR [N]}"
dir="${2:?the cluster directory}"
base="${RINGFLAKE_ETCD_BASE_PORT:-18500}"
etcd="${RINGFLAKE_ETCD_BIN:-etcd}"

client_url() { echo "http://127.0.0.1:$((base + $1))"; }
peer_url() { echo "http://127.0.0.1:$((base + 10 + $1))"; }
endpoints() { echo "$(client_url 1),$(client_url 2),$(client_url 3)"; }

running() { [[ -f "$dir/e$1/pid" ]] && kill -0 "$(cat "$dir/e$1/pid")" 2>/dev/null; }

start_node() {
    local n=$1
    running "$n" && return 0
    mkdir -p "$dir/e$n"
    local state=new
    [[ -d "$dir/e$n/data/member" ]] && state=existing
    "$etcd" --name "e$n" --data-dir "$dir/e$n/data" \
        --listen-client-urls "$(client_url "$n")" --advertise-client-urls "$(client_url "$n")" \
        --listen-peer-urls "$(peer_url "$n")" --initial-advertise-peer-urls "$(peer_url "$n")" \
        --initial-cluster "e1=$(peer_url 1),e2=$(peer_url 2),e3=$(peer_url 3)" \
        --initial-cluster-state "$state" --initial-cluster-token ringflake-test \
        --heartbeat-interval 100 --election-timeout 1000 --log-level warn \
        >>"$dir/e$n/out.log" 2>&1 &
    echo $! >"$dir/e$n/pid"
}

healthy() { ETCDCTL_API=3 etcdctl --endpoints "$(client_url "$1")" --command-timeout 2s endpoint health >/dev/null 2>&1; }

wait_serving() {
    for _ in $(seq 120); do
        local ok=1
        for n in 1 2 3; do
            running "$n" || continue
            healthy "$n" || ok=0
        done
        ((ok)) && return 0
        sleep 0.5
    done
    echo "etcd-cluster: not healthy after 60 s" >&2
    for n in 1 2 3; do tail -n 20 "$dir/e$n/out.log" >&2 || true; done
    return 1
}

signal_all() {
    for n in 1 2 3; do
        running "$n" && kill "-$1" "$(cat "$dir/e$n/pid")" 2>/dev/null || true
    done
}

case "$cmd" in
start)
    command -v "$etcd" >/dev/null 2>&1 || { echo "etcd-cluster: no $etcd (Debian's etcd-server)" >&2; exit 1; }
    command -v etcdctl >/dev/null 2>&1 || { echo "etcd-cluster: no etcdctl (Debian's etcd-client)" >&2; exit 1; }
    for n in 1 2 3; do start_node "$n"; done
    wait_serving
    ;;
stop)
    signal_all CONT
    signal_all TERM
    for n in 1 2 3; do
        for _ in $(seq 50); do running "$n" || break; sleep 0.2; done
        running "$n" && kill -KILL "$(cat "$dir/e$n/pid")" 2>/dev/null || true
    done
    ;;
start-node) start_node "${3:?member number}" ;;
kill-node)
    n="${3:?member number}"
    running "$n" && kill -KILL "$(cat "$dir/e$n/pid")"
    for _ in $(seq 50); do running "$n" || break; sleep 0.1; done
    ;;
freeze) signal_all STOP ;;
thaw) signal_all CONT ;;
leader)
    for n in 1 2 3; do
        running "$n" || continue
        line="$(ETCDCTL_API=3 etcdctl --endpoints "$(client_url "$n")" --command-timeout 2s endpoint status -w simple 2>/dev/null || true)"
        # URL, ID, version, DB size, is leader, ...
        [[ "$(echo "$line" | awk -F', ' '{print $5}')" == true ]] && { echo "$n"; exit 0; }
    done
    exit 1
    ;;
endpoints) endpoints ;;
wait) wait_serving ;;
*) echo "etcd-cluster: unknown command $cmd" >&2; exit 2 ;;
esac
