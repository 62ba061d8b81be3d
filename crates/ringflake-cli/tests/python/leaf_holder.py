"""Meituan Leaf's SnowflakeZookeeperHolder, step by step, with Python's kazoo: what a Leaf node
does with ZooKeeper, for tests/zookeeper.rs (a Leaf node sharing the path with ringflake nodes).

    leaf_holder.py hold HOSTS LEAF_NAME IP PORT
        init() as Leaf does it, prints `workerID=N`, then rewrites the timestamp every 3 s
        (ScheduledUploadData) until its standard input closes or it is killed.
    leaf_holder.py check HOSTS LEAF_NAME
        reads every child of forever as Leaf would (split on '-', Integer.parseInt) and its data
        as Leaf's Jackson ObjectMapper would (an unknown field fails it), printing `N ip:port`.
    leaf_holder.py decode ID...
        each ID as Leaf's decodeSnowflakeId reads it: `timestamp_ms worker_id sequence`.

With LEAF_IDS=N, `hold` prints a second line after `workerID=N`: `ids=A,B,...`, N IDs made by
Leaf's SnowflakeIDGenImpl.get() with that worker id.

Leaf's session timeout is 6 s and its connection timeout 10 s (createWithOptions). With
LEAF_CLOCK_OFFSET_MS set, the node's wall clock is that many milliseconds off.
"""

import json
import os
import sys
import threading
import time

from kazoo.client import KazooClient

ENDPOINT_FIELDS = {"ip", "port", "timestamp"}


# LEAF_CLOCK_OFFSET_MS: this Leaf node's wall clock is that far off (negative: behind).
CLOCK_OFFSET_MS = int(os.environ.get("LEAF_CLOCK_OFFSET_MS", "0"))


def now_ms():
    return int(time.time() * 1000) + CLOCK_OFFSET_MS


def build_data(ip, port):
    # Jackson's writeValueAsString(new Endpoint(ip, port, System.currentTimeMillis())).
    return json.dumps({"ip": ip, "port": port, "timestamp": now_ms()}, separators=(",", ":"))


def de_build_data(data):
    # mapper.readValue(json, Endpoint.class): FAIL_ON_UNKNOWN_PROPERTIES is on by default.
    endpoint = json.loads(data.decode())
    unknown = set(endpoint) - ENDPOINT_FIELDS
    if unknown:
        raise ValueError("UnrecognizedPropertyException: %s" % sorted(unknown))
    return endpoint


def parse_children(children):
    node_map, real_node = {}, {}
    for key in children:
        node_key = key.split("-")
        real_node[node_key[0]] = key
        node_map[node_key[0]] = int(node_key[1])  # Integer.parseInt: a foreign name throws
        if node_map[node_key[0]] > 2**31 - 1:
            raise ValueError("NumberFormatException: %s" % key)
    return node_map, real_node


# SnowflakeIDGenImpl: twepoch, 10 worker bits, 12 sequence bits.
TWEPOCH = 1288834974657


def leaf_ids(worker_id, n):
    """SnowflakeIDGenImpl.get(), n times: a new millisecond's sequence starts at a random 0-99,
    a full millisecond waits for the next."""
    import random
    ids, last, seq = [], -1, 0
    while len(ids) < n:
        ts = now_ms()
        if ts < last:
            continue
        if ts == last:
            seq = (seq + 1) & 4095
            if seq == 0:
                while now_ms() <= last:
                    pass
                continue
        else:
            seq = random.randint(0, 99)
        last = ts
        ids.append(((ts - TWEPOCH) << 22) | (worker_id << 12) | seq)
    return ids


def decode(id_text):
    # decodeSnowflakeId: timestamp = (id >> 22) + twepoch, workerId = (id >> 12) ^ (id >> 22 << 10),
    # sequence = id ^ (id >> 12 << 12).
    i = int(id_text)
    return ((i >> 22) + TWEPOCH, (i >> 12) ^ ((i >> 22) << 10), i ^ ((i >> 12) << 12))


def hold(hosts, name, ip, port):
    forever = "/snowflake/%s/forever" % name
    listen = ip + ":" + port
    zk = KazooClient(hosts=hosts, timeout=6.0)
    zk.start(timeout=10)

    def create_node():
        return zk.create(forever + "/" + listen + "-", build_data(ip, port).encode(),
                         sequence=True, makepath=True)

    if zk.exists(forever) is None:
        node = create_node()
        worker_id = 0  # Leaf leaves workerID at its default here
    else:
        node_map, real_node = parse_children(zk.get_children(forever))
        if listen in node_map:
            node = forever + "/" + real_node[listen]
            worker_id = node_map[listen]
            data, _ = zk.get(node)
            if de_build_data(data)["timestamp"] > now_ms():
                print("CheckLastTimeException: forever node timestamp gt this node time", flush=True)
                sys.exit(3)
        else:
            node = create_node()
            worker_id = int(node.split("-")[1])
    print("workerID=%d" % worker_id, flush=True)
    if os.environ.get("LEAF_IDS"):
        ids = leaf_ids(worker_id, int(os.environ["LEAF_IDS"]))
        print("ids=" + ",".join(str(i) for i in ids), flush=True)

    def upload():
        last = 0
        while True:
            time.sleep(3)
            try:
                if now_ms() < last:
                    continue
                zk.set(node, build_data(ip, port).encode())
                last = now_ms()
            except Exception as e:  # Leaf logs and goes on
                print("update init data error %s" % e, flush=True)

    threading.Thread(target=upload, daemon=True).start()
    sys.stdin.read()
    zk.stop()


def check(hosts, name):
    forever = "/snowflake/%s/forever" % name
    zk = KazooClient(hosts=hosts, timeout=6.0)
    zk.start(timeout=10)
    children = zk.get_children(forever)
    node_map, real_node = parse_children(children)
    for key in children:
        data, _ = zk.get(forever + "/" + key)
        endpoint = de_build_data(data)
        address = key.split("-")[0]
        if endpoint["ip"] + ":" + endpoint["port"] != address:
            raise ValueError("data of %s names %s:%s" % (key, endpoint["ip"], endpoint["port"]))
        print("%d %s" % (int(key.split("-")[1]), address), flush=True)
    zk.stop()


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold(*sys.argv[2:6])
    elif sys.argv[1] == "check":
        check(*sys.argv[2:4])
    elif sys.argv[1] == "decode":
        for id_text in sys.argv[2:]:
            print("%d %d %d" % decode(id_text), flush=True)
    else:
        sys.exit("usage: leaf_holder.py hold HOSTS NAME IP PORT | check HOSTS NAME | decode ID...")
