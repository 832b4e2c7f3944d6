#!/usr/bin/env python3
"""Kafka's own view of a cluster, for the real-Kafka suite (tests/realkafka).

Everything here goes through confluent-kafka (librdkafka's Admin API and producer), a client
ballast's code has no part in, so the suite checks ballast against Kafka and not against itself.
Each command prints one JSON document on stdout; a failure prints the error on stderr and exits 1.

    kafka_tool.py BOOTSTRAP create-topic NAME '[[1,2],[2,3]]' ['{"retention.ms":"3600000"}']
    kafka_tool.py BOOTSTRAP topics NAME [NAME...]          partitions: replicas, leader, isr
    kafka_tool.py BOOTSTRAP topic-configs NAME              dynamic (non-default) configs
    kafka_tool.py BOOTSTRAP broker-configs ID               dynamic (non-default) configs
    kafka_tool.py BOOTSTRAP produce TOPIC PARTITIONS MB     MB of incompressible data per partition
    kafka_tool.py BOOTSTRAP acls                            every ACL binding
    kafka_tool.py BOOTSTRAP group-offsets GROUP             committed offsets
    kafka_tool.py BOOTSTRAP commit GROUP TOPIC PARTITIONS OFFSET   commit offsets as a consumer would
    kafka_tool.py BOOTSTRAP groups                          group ids
    kafka_tool.py BOOTSTRAP group-state GROUP               the group's state (Empty, Stable, ...)
    kafka_tool.py BOOTSTRAP group-describe GROUP            type, state, assignor, members with assigned and target partitions
    kafka_tool.py BOOTSTRAP consume-848 GROUP TOPIC N STOP  a KIP-848 consumer (group.protocol=consumer): reads and commits
                                                            N records, then stays a member (paused) until the file STOP exists
    kafka_tool.py BOOTSTRAP watermarks TOPIC PARTITIONS     low and high watermark per partition
    kafka_tool.py BOOTSTRAP cluster                         brokers and racks
"""

import json
import os
import sys
import time

from confluent_kafka import Consumer, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from confluent_kafka import ConsumerGroupTopicPartitions

TIMEOUT = 30


# The clients made here live until the process ends: a future whose AdminClient is gone fails
# with "Handle is terminating".
_CLIENTS = []


def admin(bootstrap):
    client = AdminClient({"bootstrap.servers": bootstrap})
    _CLIENTS.append(client)
    return client


def wait(futures):
    return {k: f.result(timeout=TIMEOUT) for k, f in futures.items()}


def create_topic(bootstrap, name, assignment, configs="{}"):
    replicas = json.loads(assignment)
    topic = NewTopic(
        name,
        num_partitions=len(replicas),
        replica_assignment=replicas,
        config=json.loads(configs),
    )
    wait(admin(bootstrap).create_topics([topic], operation_timeout=TIMEOUT))
    return {"created": name}


def topics(bootstrap, *names):
    out = {}
    described = admin(bootstrap).describe_topics(TopicCollection(list(names)))
    for name, future in described.items():
        desc = future.result(timeout=TIMEOUT)
        out[name] = [
            {
                "partition": p.id,
                "leader": p.leader.id if p.leader is not None else -1,
                "replicas": [n.id for n in p.replicas],
                "isr": [n.id for n in p.isr],
            }
            for p in sorted(desc.partitions, key=lambda p: p.id)
        ]
    return out


def dynamic_configs(bootstrap, kind, name):
    resource = ConfigResource(kind, name)
    result = wait(admin(bootstrap).describe_configs([resource]))
    entries = next(iter(result.values()))
    # source: 1 DYNAMIC_TOPIC_CONFIG, 2 DYNAMIC_BROKER_CONFIG, 3 DYNAMIC_DEFAULT_BROKER_CONFIG
    # (confluent-kafka gives the protocol's number)
    return {
        k: e.value
        for k, e in entries.items()
        if int(getattr(e.source, "value", e.source)) in (1, 2, 3)
    }


def produce(bootstrap, topic, partitions, mb):
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all",
         "compression.type": "none", "batch.size": 1000000}
    )
    record = 100_000
    per_partition = int(float(mb) * 1_000_000 / record)
    for p in range(int(partitions)):
        for _ in range(per_partition):
            while True:
                try:
                    producer.produce(topic, os.urandom(record), partition=p)
                    break
                except BufferError:
                    producer.poll(0.1)
        producer.flush(TIMEOUT)
    left = producer.flush(TIMEOUT)
    if left:
        raise RuntimeError(f"{left} records not delivered")
    return {"produced": per_partition * int(partitions)}


def produce_rate(bootstrap, topic, partitions, per_second, record, seconds):
    """Writes `per_second` records of `record` bytes a second into each of the first
    `partitions` partitions of `topic`, in turn, for `seconds`: a fixed rate, even over them."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all",
         "compression.type": "none"}
    )
    partitions, per_second = int(partitions), float(per_second)
    record, seconds = int(record), float(seconds)
    start = time.monotonic()
    sent = 0
    while time.monotonic() - start < seconds:
        due = int((time.monotonic() - start) * per_second)
        while sent < due:
            for p in range(partitions):
                while True:
                    try:
                        producer.produce(topic, os.urandom(record), partition=p)
                        break
                    except BufferError:
                        producer.poll(0.05)
            sent += 1
        producer.poll(0)
        time.sleep(0.01)
    producer.flush(TIMEOUT)
    return {"produced": sent * partitions}


def acls(bootstrap):
    flt = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
        AclOperation.ANY, AclPermissionType.ANY,
    )
    bindings = admin(bootstrap).describe_acls(flt).result(timeout=TIMEOUT)
    return [
        {
            "resourceType": b.restype.name,
            "resourceName": b.name,
            "patternType": b.resource_pattern_type.name,
            "principal": b.principal,
            "host": b.host,
            "operation": b.operation.name,
            "permissionType": b.permission_type.name,
        }
        for b in bindings
    ]


def group_offsets(bootstrap, group):
    futures = admin(bootstrap).list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group)]
    )
    result = wait(futures)[group]
    return {
        f"{tp.topic}:{tp.partition}": tp.offset for tp in result.topic_partitions
    }


def commit(bootstrap, group, topic, partitions, offset):
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    tps = [TopicPartition(topic, p, int(offset)) for p in range(int(partitions))]
    consumer.commit(offsets=tps, asynchronous=False)
    consumer.close()
    return {"committed": len(tps)}


def groups(bootstrap):
    result = admin(bootstrap).list_consumer_groups().result(timeout=TIMEOUT)
    return sorted(g.group_id for g in result.valid)


def group_state(bootstrap, group):
    described = admin(bootstrap).describe_consumer_groups([group])[group].result(timeout=TIMEOUT)
    # ConsumerGroupState.EMPTY -> "Empty", as Kafka's own tools and ballast name it.
    return {"state": described.state.name.title().replace("_", ""), "members": len(described.members)}


def group_describe(bootstrap, group):
    d = admin(bootstrap).describe_consumer_groups([group])[group].result(timeout=TIMEOUT)

    def parts(assignment):
        if assignment is None:
            return None
        return sorted([tp.topic, tp.partition] for tp in assignment.topic_partitions)

    return {
        "type": d.type.name.lower(),
        "state": d.state.name.title().replace("_", ""),
        "assignor": d.partition_assignor,
        "members": sorted(
            (
                {
                    "memberId": m.member_id,
                    "clientId": m.client_id,
                    "host": m.host,
                    "assignment": parts(m.assignment),
                    "targetAssignment": parts(m.target_assignment),
                }
                for m in d.members
            ),
            key=lambda m: m["memberId"],
        ),
    }


def consume_848(bootstrap, group, topic, n, stop):
    """A consumer of the KIP-848 protocol: reads and commits `n` records, then stays in the
    group (its partitions paused, polling) until the file `stop` exists, then leaves."""
    import time

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": "rk-kip848",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    read = 0
    deadline = time.time() + 120
    while read < int(n) and time.time() < deadline:
        m = consumer.poll(0.5)
        if m is not None and not m.error():
            read += 1
    consumer.commit(asynchronous=False)
    consumer.pause(consumer.assignment())
    print(json.dumps({"read": read}), flush=True)
    while not os.path.exists(stop) and time.time() < deadline + 600:
        consumer.poll(0.2)
        # Partitions assigned later (a reconciliation) are paused too.
        consumer.pause(consumer.assignment())
    consumer.close()
    return {"read": read, "left": True}


def watermarks(bootstrap, topic, partitions):
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kafka-tool-watermarks"})
    try:
        out = {}
        for p in range(int(partitions)):
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, p), timeout=TIMEOUT, cached=False
            )
            out[f"{topic}:{p}"] = {"low": low, "high": high}
        return out
    finally:
        consumer.close()


def cluster(bootstrap):
    desc = admin(bootstrap).describe_cluster().result(timeout=TIMEOUT)
    return {
        "clusterId": desc.cluster_id,
        "brokers": sorted(
            [{"id": n.id, "rack": n.rack, "port": n.port} for n in desc.nodes],
            key=lambda b: b["id"],
        ),
    }


def main(argv):
    bootstrap, command, *args = argv
    commands = {
        "create-topic": create_topic,
        "topics": topics,
        "topic-configs": lambda b, name: dynamic_configs(b, ResourceType.TOPIC, name),
        "broker-configs": lambda b, bid: dynamic_configs(b, ResourceType.BROKER, bid),
        "produce": produce,
        "produce-rate": produce_rate,
        "acls": acls,
        "group-offsets": group_offsets,
        "commit": commit,
        "groups": groups,
        "group-state": group_state,
        "group-describe": group_describe,
        "consume-848": consume_848,
        "watermarks": watermarks,
        "cluster": cluster,
    }
    print(json.dumps(commands[command](bootstrap, *args)))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception as e:  # noqa: BLE001 - the suite reads the message
        print(f"kafka_tool: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
