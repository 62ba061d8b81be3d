#!/usr/bin/env bash
# A throw-away Redis primary with one replica and three Sentinels on loopback, for
# crates/ringflake-cli/tests/redis.rs and .ci/run: Debian's redis-server and redis-sentinel (7.0), each started from a
# configuration file of its own under DIR. With BASE = RINGFLAKE_REDIS_BASE_PORT (18520 by
# default): the primary listens on BASE+1, the replica on BASE+2, Sentinel N (1..3) on BASE+10+N;
# the Sentinels watch the primary as `ringflake` (quorum 2, down after 1 s). A standalone server
# without replica nor Sentinel (BASE+3) is for the tests that stop a whole store.
#
#   redis-sentinel.sh start DIR          starts all five, waits (at most 60 s) until the replica
#                                        is in sync and every Sentinel knows the replica
#   redis-sentinel.sh stop DIR           stops all five (SIGKILL after 10 s)
#   redis-sentinel.sh kill DIR NAME      kill -9 of primary, replica, standalone or sentinelN
#   redis-sentinel.sh signal DIR NAME SIG sends SIG (STOP, CONT) to one of them
#   redis-sentinel.sh start-one DIR NAME starts primary, replica or standalone again (a restarted
#                                        old primary is made a replica by the Sentinels)
#   redis-sentinel.sh port DIR NAME      prints the port of primary, replica or standalone as
#                                        started (after a failover, `primary` names the new one)
#   redis-sentinel.sh primary DIR        prints the port of the primary the Sentinels name now
#   redis-sentinel.sh sentinels DIR      prints the Sentinels as host:port, comma-separated
#   redis-sentinel.sh wait-primary DIR PORT
#                                        waits (at most 60 s) until the Sentinels name PORT
#
# The Sentinels are configured for a fast test failover: down after 1 s, failover timeout 5 s.
set -euo pipefail

cmd="${1:?usage: redis-sentinel.sh start|stop|kill|signal|start-one|port|primary|sentinels|wait-primary DIR [ARG]}"
dir="${2:?the directory}"
base="${RINGFLAKE_REDIS_BASE_PORT:-18520}"
primary_port=$((base + 1))
replica_port=$((base + 2))

port_of() {
    case "$1" in
    primary) echo "$primary_port" ;;
    replica) echo "$replica_port" ;;
    standalone) echo $((base + 3)) ;;
    sentinel[1-3]) echo $((base + 10 + ${1#sentinel})) ;;
    *) echo "redis-sentinel: unknown member $1" >&2; exit 2 ;;
    esac
}

running() { [[ -f "$dir/$1/pid" ]] && kill -0 "$(cat "$dir/$1/pid")" 2>/dev/null; }

cli() { redis-cli -h 127.0.0.1 -p "$1" "${@:2}"; }

start_server() { # NAME [replicaof-port]
    local name=$1 port
    port=$(port_of "$name")
    running "$name" && return 0
    mkdir -p "$dir/$name"
    {
        echo "port $port"
        echo "bind 127.0.0.1"
        echo "dir $dir/$name"
        echo "save \"\""
        echo "appendonly no"
        echo "daemonize no"
        echo "protected-mode no"
        echo "repl-diskless-sync yes"
        echo "repl-diskless-sync-delay 0"
        [[ -n "${2:-}" ]] && echo "replicaof 127.0.0.1 $2"
    } >"$dir/$name/redis.conf"
    redis-server "$dir/$name/redis.conf" >>"$dir/$name/out.log" 2>&1 &
    echo $! >"$dir/$name/pid"
}

start_sentinel() { # sentinelN
    local name=$1 port
    port=$(port_of "$name")
    running "$name" && return 0
    mkdir -p "$dir/$name"
    cat >"$dir/$name/sentinel.conf" <<CONF
port $port
bind 127.0.0.1
dir $dir/$name
protected-mode no
sentinel monitor ringflake 127.0.0.1 $primary_port 2
sentinel down-after-milliseconds ringflake 1000
sentinel failover-timeout ringflake 5000
sentinel parallel-syncs ringflake 1
CONF
    redis-sentinel "$dir/$name/sentinel.conf" >>"$dir/$name/out.log" 2>&1 &
    echo $! >"$dir/$name/pid"
}

primary() {
    local n answer
    for n in 1 2 3; do
        answer=$(cli "$(port_of "sentinel$n")" SENTINEL get-master-addr-by-name ringflake 2>/dev/null | tail -n 1 || true)
        [[ -n "$answer" ]] && { echo "$answer"; return 0; }
    done
    return 1
}

case "$cmd" in
start)
    command -v redis-server >/dev/null 2>&1 || { echo "redis-sentinel: no redis-server" >&2; exit 1; }
    command -v redis-sentinel >/dev/null 2>&1 || { echo "redis-sentinel: no redis-sentinel" >&2; exit 1; }
    start_server primary
    for _ in $(seq 50); do cli "$primary_port" PING >/dev/null 2>&1 && break; sleep 0.1; done
    start_server replica "$primary_port"
    start_server standalone
    for _ in $(seq 120); do
        cli "$replica_port" INFO replication 2>/dev/null | grep -q 'master_link_status:up' && break
        sleep 0.5
    done
    for n in 1 2 3; do start_sentinel "sentinel$n"; done
    for _ in $(seq 120); do
        ok=1
        for n in 1 2 3; do
            known=$(cli "$(port_of "sentinel$n")" SENTINEL replicas ringflake 2>/dev/null | grep -c "$replica_port" || true)
            ((known > 0)) || ok=0
        done
        ((ok)) && exit 0
        sleep 0.5
    done
    echo "redis-sentinel: the Sentinels do not know the replica after 60 s" >&2
    exit 1
    ;;
stop)
    for name in sentinel1 sentinel2 sentinel3 replica primary standalone; do
        running "$name" && { kill -CONT "$(cat "$dir/$name/pid")" 2>/dev/null; kill -TERM "$(cat "$dir/$name/pid")" 2>/dev/null; } || true
    done
    for name in sentinel1 sentinel2 sentinel3 replica primary standalone; do
        for _ in $(seq 50); do running "$name" || break; sleep 0.2; done
        running "$name" && kill -KILL "$(cat "$dir/$name/pid")" 2>/dev/null || true
    done
    ;;
kill)
    name="${3:?primary, replica or sentinelN}"
    running "$name" && kill -KILL "$(cat "$dir/$name/pid")"
    for _ in $(seq 50); do running "$name" || break; sleep 0.1; done
    ;;
start-one)
    name="${3:?primary or replica}"
    case "$name" in
    primary) start_server primary ;;
    replica) start_server replica "$primary_port" ;;
    standalone) start_server standalone ;;
    *) echo "redis-sentinel: start-one primary|replica|standalone" >&2; exit 2 ;;
    esac
    ;;
signal)
    name="${3:?member}"
    running "$name" && kill "-${4:?signal}" "$(cat "$dir/$name/pid")"
    ;;
port) port_of "${3:?member}" ;;
primary) primary | tail -n 1 ;;
sentinels) echo "127.0.0.1:$((base + 11)),127.0.0.1:$((base + 12)),127.0.0.1:$((base + 13))" ;;
wait-primary)
    want="${3:?port}"
    for _ in $(seq 120); do
        [[ "$(primary | tail -n 1)" == "$want" ]] && exit 0
        sleep 0.5
    done
    echo "redis-sentinel: the Sentinels do not name $want after 60 s" >&2
    exit 1
    ;;
*) echo "redis-sentinel: unknown command $cmd" >&2; exit 2 ;;
esac
