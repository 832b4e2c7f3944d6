"""The MCP endpoint as a real client sees it: the Python `mcp` SDK (2.x) over Streamable HTTP.

Usage: scenario.py URL WRITE_TOKEN_A WRITE_TOKEN_B READ_TOKEN BOOTSTRAP EXPIRY_WAIT_SECONDS
A and B are two people with the write scope, READ a read-only token. Exits non-zero, naming the
step, on the first broken expectation; prints one JSON line of facts for the Rust test at the end.
"""

import asyncio
import contextlib
import json
import logging
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL, TOKEN_A, TOKEN_B, TOKEN_READ, BOOTSTRAP, EXPIRY_WAIT = sys.argv[1:7]

READ = [
    "get_cluster_overview", "get_cluster_health", "get_partition_activity", "get_broker_racks",
    "get_topic_config", "search_topics", "search_topics_by_config", "list_acls",
    "list_consumer_groups", "describe_consumer_group", "get_consumer_group_lag", "browse_messages",
    "get_topic_watermarks", "list_quotas", "list_proposals", "generate_proposal",
    "get_cluster_logdirs", "what_if_simulate", "blast_radius_analyze", "search_audit_log",
    "get_proposal", "list_reassignments", "get_reassignment_history", "get_reassignment_by_id",
    "get_partition_optimization", "get_default_configs",
]
MUTATE = [
    "update_topic_config", "bulk_update_topic_config", "create_acls", "delete_acls",
    "reset_consumer_group_offsets", "delete_consumer_group", "update_quota", "delete_quota",
    "redistribute_topic", "redistribute_partition", "bulk_reassign_partitions",
    "cancel_reassignment", "apply_proposal", "set_broker_maintenance", "remove_broker_maintenance",
    "preferred_leader_election", "move_broker_logdirs", "revert_audit_event",
    # beyond the spec's list: the topic lifecycle (docs/api/topics.md)
    "create_topic", "add_partitions", "change_replication_factor", "delete_topic",
]
META = ["approve_action", "reject_action", "list_pending_actions"]
EXPECTED = {**{n: "read" for n in READ}, **{n: "mutate" for n in MUTATE}, **{n: "meta" for n in META}}

ENVELOPED = {  # list tools: rows key
    "get_partition_activity": "partitions", "search_topics_by_config": "topics",
    "get_consumer_group_lag": "topPartitions", "browse_messages": "messages",
    "list_quotas": "quotas", "get_cluster_logdirs": "topics", "what_if_simulate": "moves",
    "search_topics": "topics", "list_acls": "bindings", "list_consumer_groups": "groups",
    "get_topic_watermarks": "partitions", "search_audit_log": "events",
    "list_reassignments": "history", "get_reassignment_history": "history",
    "get_partition_optimization": "recommendations",
}


# tools taking `limit`: the limits table's non-fixed rows, and the lists it does not name
LIMITED = {
    "get_cluster_overview", "get_partition_activity", "search_topics", "search_topics_by_config",
    "list_acls", "list_consumer_groups", "get_consumer_group_lag", "get_topic_watermarks",
    "get_cluster_logdirs", "get_reassignment_history", "get_partition_optimization",
    "search_audit_log", "browse_messages", "list_quotas", "what_if_simulate",
    "blast_radius_analyze", "list_pending_actions", "list_proposals",
}


class Failed(Exception):
    pass


class Warnings(logging.Handler):
    """The SDK's warnings, e.g. "Session termination failed: 202" when a DELETE is not 200/204."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


SDK_WARNINGS = Warnings()
logging.getLogger("mcp").addHandler(SDK_WARNINGS)


def check(cond, what):
    if not cond:
        raise Failed(what)


class Agent:
    """One client session, opened on `stack`."""

    @classmethod
    async def open(cls, stack, token):
        self = cls()
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60))
        read, write = await stack.enter_async_context(streamable_http_client(URL, http_client=http))
        self.session = await stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()
        return self

    async def call(self, name, args=None):
        r = await self.session.call_tool(name, args or {})
        data = r.structured_content
        if data is None:
            data = json.loads(r.content[0].text)
        return bool(r.is_error), data


async def main():
    facts = {}
    async with contextlib.AsyncExitStack() as stack:
        a = await Agent.open(stack, TOKEN_A)
        b = await Agent.open(stack, TOKEN_B)
        reader = await Agent.open(stack, TOKEN_READ)
        tools = (await a.session.list_tools()).tools
        by_name = {t.name: t for t in tools}
        for name, category in EXPECTED.items():
            check(name in by_name, f"tool {name} listed")
            t = by_name[name]
            check(t.input_schema.get("type") == "object", f"{name} has an object input schema")
            check(t.description and t.description.startswith(f"[{category}"), f"{name} names its category")
            meta = (t.meta or {}).get("ballast/category", {})
            check(meta.get("category") == category, f"{name} _meta category")
            check(t.annotations is not None, f"{name} annotations")
            check(t.annotations.read_only_hint == (category == "read" or name == "list_pending_actions"),
                  f"{name} readOnlyHint")
        check(len(tools) == len(EXPECTED) == 51, f"51 tools, got {len(tools)}")
        for t in tools:
            for pname, props in t.input_schema.get("properties", {}).items():
                check(props.get("description"), f"{t.name}.{pname} is described")
            check(("limit" in t.input_schema.get("properties", {})) == (t.name in LIMITED),
                  f"{t.name}: a limit exactly when the limits table gives one")
        facts["tools"] = len(tools)

        err, overview = await a.call("get_cluster_overview", {"limit": 2})
        check(not err, f"overview: {overview}")
        check(overview["count"] == len(overview["topics"]) <= 2, "overview respects limit")
        check(overview["total"] == overview["totalTopics"], "overview total")
        check(overview["truncated"] == (overview["total"] > 2), "overview truncated")
        check(("hint" in overview) == overview["truncated"], "hint only when truncated")
        counts = [t["partitionCount"] for t in overview["topics"]]
        check(counts == sorted(counts, reverse=True), "largest partition count first")
        err, big = await a.call("get_cluster_overview", {"limit": 100000})
        check(big["count"] == min(big["total"], 500), "a limit above the maximum is clamped")
        topic = overview["topics"][0]["name"]
        err, health = await reader.call("get_cluster_health")
        check(not err and "rackAssessment" in health, f"health: {health}")
        err, proposals = await reader.call("list_proposals")
        check(not err and "proposals" in proposals, f"list_proposals: {proposals}")
        for row in proposals["proposals"]:
            check("decision" in row, "each proposal row has its decision")

        # every read tool answers, list tools in the envelope
        reads = {
            "get_broker_racks": {}, "get_topic_config": {"topic": topic},
            "search_topics": {"query": "", "limit": 1}, "list_acls": {},
            "list_consumer_groups": {}, "get_topic_watermarks": {"topic": topic, "limit": 1},
            "search_audit_log": {"limit": 1}, "list_reassignments": {},
            "get_reassignment_history": {}, "get_default_configs": {"keyFilter": "log.retention"},
            "get_partition_optimization": {}, "generate_proposal": {},
        }
        for name, args in reads.items():
            err, answer = await reader.call(name, args)
            check(not err or answer["error"]["code"] == "NOT_FOUND", f"{name}: {answer}")
            rows = ENVELOPED.get(name)
            if rows and not err:
                for key in ("count", "total", "truncated", rows):
                    check(key in answer, f"{name} has {key}: {answer}")
                check(answer["count"] == len(answer[rows]), f"{name} count")
                check(("hint" in answer) == answer["truncated"], f"{name} hint only when truncated")
        err, one = await reader.call("search_topics", {"query": "", "limit": 1})
        check(one["count"] == 1 and (one["truncated"] == (one["total"] > 1)), f"search limit: {one}")
        err, marks = await reader.call("get_topic_watermarks", {"topic": topic, "limit": 1})
        check(marks["count"] == 1 and marks["totalMessages"] is not None, f"watermarks: {marks}")
        err, defaults = await reader.call("get_default_configs", {"keyFilter": "log.retention"})
        check(all("log.retention" in e["name"].lower() for e in defaults["entries"]), "keyFilter")
        err, missing = await reader.call("get_reassignment_by_id", {"id": "no-such-operation"})
        check(err and missing["error"]["code"] == "NOT_FOUND", f"unknown id: {missing}")
        err, unknown = await reader.call("get_topic_config", {"topic": topic, "bogus": 1})
        check(err and unknown["error"]["code"] == "INVALID_INPUT", "unknown parameters are refused")

        # bad input: a tool error, nothing queued
        err, bad = await a.call("update_topic_config", {"topic": topic, "configs": {}})
        check(err and bad["error"]["code"] == "INVALID_INPUT", f"bad input refused: {bad}")
        err, bad = await a.call("update_topic_config", {"topic": topic})
        check(err, "missing configs refused")
        err, pending = await reader.call("list_pending_actions")
        check(not err and pending["count"] == 0, f"nothing queued: {pending}")

        # a read identity: mutate and approval tools refused per tool
        err, refused = await reader.call("update_topic_config", {"topic": topic, "configs": {"retention.ms": 1}})
        check(err and refused["error"]["code"] == "INSUFFICIENT_SCOPE", f"read refused mutate: {refused}")

        err, queued = await a.call("update_topic_config", {"topic": topic, "configs": {"retention.ms": 7200000}})
        check(not err and queued["status"] == "pending_approval", f"queued: {queued}")
        token = queued["token"]
        check(queued["expiresAt"] and queued["summary"], "token, summary and expiry")
        err, pending = await reader.call("list_pending_actions")
        check(pending["count"] == 1 and pending["actions"][0]["token"] == token, "listed as pending")

        err, self_ok = await a.call("approve_action", {"token": token})
        check(err and self_ok["error"]["code"] == "FORBIDDEN", f"self-approval refused: {self_ok}")
        err, read_ok = await reader.call("approve_action", {"token": token})
        check(err and read_ok["error"]["code"] == "INSUFFICIENT_SCOPE", f"read approval refused: {read_ok}")
        err, done = await b.call("approve_action", {"token": token})
        check(not err and done["status"] == "executed", f"approved and run: {done}")
        facts["changed"] = done["result"]
        err, again = await b.call("approve_action", {"token": token})
        check(err and again["error"]["code"] == "CONFLICT", f"approved once only: {again}")

        err, second = await a.call("update_topic_config", {"topic": topic, "configs": {"retention.ms": 1}})
        err, rejected = await b.call("reject_action", {"token": second["token"]})
        check(not err and rejected["status"] == "rejected", f"rejected: {rejected}")
        err, late = await b.call("approve_action", {"token": second["token"]})
        check(err, "a rejected action cannot be approved")
        async def approved(tool, args):
            err, queued = await a.call(tool, args)
            check(not err and queued["status"] == "pending_approval", f"{tool} queued: {queued}")
            err, done = await b.call("approve_action", {"token": queued["token"]})
            check(not err, f"{tool} approved: {done}")
            return done

        done = await approved("preferred_leader_election", {"topic": topic})
        check(done["status"] == "executed", f"election: {done}")
        done = await approved("redistribute_topic", {"topic": topic})
        check(done["status"] == "executed" and done["result"]["status"] == "completed",
              f"a reassignment tool runs to completion: {done}")
        facts["redistribution"] = done["result"].get("operationId")
        done = await approved("set_broker_maintenance", {"brokerId": 1, "reason": "mcp test", "drain": False})
        check(done["status"] == "executed", f"maintenance: {done}")
        done = await approved("remove_broker_maintenance", {"brokerId": 1})
        check(done["status"] == "executed", f"maintenance ends: {done}")
        err, bad = await a.call("preferred_leader_election", {"partitions": [0]})
        check(err and bad["error"]["code"] == "INVALID_INPUT", "partitions without a topic refused")


        # ---- the drill-down and simulation reads
        err, act = await reader.call("get_partition_activity", {})
        check(not err and act["count"] == len(act["partitions"]) <= 50, f"activity: {act}")
        keys = [(p["topic"], p["partition"]) for p in act["partitions"]]
        check(keys == sorted(keys), "plain activity: topic then partition")
        err, act = await reader.call("get_partition_activity", {"sortBy": "score", "limit": 5})
        scores = [p["activityScore"] or 0 for p in act["partitions"]]
        check(scores == sorted(scores, reverse=True) and act["count"] <= 5, f"sortBy: {act}")
        err, act = await reader.call("get_partition_activity", {"limit": 100000})
        check(act["count"] == min(act["total"], 200), f"activity clamps to 200: {act['count']}")
        err, agg = await reader.call("get_partition_activity", {"aggregate": "topic", "limit": 1000})
        check(not err and "topics" in agg and agg["count"] == min(agg["total"], 100), f"aggregate: {agg}")
        err, act = await reader.call("get_partition_activity", {"topic": topic, "brokerId": 1})
        check(not err and all(p["topic"] == topic for p in act["partitions"]), f"activity topic: {act}")
        err, bad = await reader.call("get_partition_activity", {"aggregate": "broker"})
        check(err and bad["error"]["code"] == "INVALID_INPUT", f"aggregate checked: {bad}")

        err, dirs = await reader.call("get_cluster_logdirs", {})
        check(not err and dirs["total"] == dirs["totalTopics"] and dirs["count"] <= 20, f"logdirs: {dirs}")
        sizes = [t["sizeBytes"] for t in dirs["topics"]]
        check(sizes == sorted(sizes, reverse=True), "logdirs topics largest first")
        err, detail = await reader.call("get_cluster_logdirs", {"brokerId": 1, "limit": 1000})
        check(not err and detail["total"] == detail["totalPartitions"], f"logdir detail: {detail}")
        check(detail["count"] == min(detail["total"], 200), "detail clamps to 200")
        check(all(p["brokerId"] == 1 for p in detail["partitions"]), "detail of broker 1 only")
        err, mine = await reader.call("get_cluster_logdirs", {"topic": topic})
        check(not err and all(p["topic"] == topic for p in mine["partitions"]), f"logdirs topic: {mine}")

        err, cfg = await reader.call("search_topics_by_config", {"key": "cleanup.policy", "value": "delete", "limit": 1})
        check(not err and cfg["count"] <= 1 and cfg["total"] >= cfg["count"], f"config search: {cfg}")
        err, bad = await reader.call("search_topics_by_config", {"key": "retention.ms", "op": "gt", "value": "x"})
        check(err and bad["error"]["code"] == "INVALID_INPUT", f"numeric op needs a number: {bad}")

        err, groups = await reader.call("list_consumer_groups", {})
        group = groups["groups"][0]["groupId"]
        err, lag = await reader.call("get_consumer_group_lag", {"group": group, "limit": 1})
        check(not err and lag["count"] <= 1 and lag["groupId"] == group, f"lag: {lag}")
        check(lag["total"] == lag["partitionCount"], "lag total covers every partition")
        err, lag_all = await reader.call("get_consumer_group_lag", {"group": group, "limit": 200})
        lags = [p["lag"] or 0 for p in lag_all["topPartitions"]]
        check(lags == sorted(lags, reverse=True), "lag desc")
        # one answer's totals cover all its partitions (two calls may see different lag: the
        # cluster is live)
        check(lag_all["truncated"] or lag_all["totalLag"] == sum(lags), "totals over every partition")
        cut = [p["lag"] or 0 for p in lag["topPartitions"]]
        check(lag["totalLag"] >= sum(cut), "aggregates complete when rows are cut")
        err, g = await reader.call("describe_consumer_group", {"group": group})
        check(not err, f"describe: {g}")

        err, msgs = await reader.call("browse_messages", {"topic": topic, "limit": 2})
        check(not err and msgs["count"] == len(msgs["messages"]) <= 2, f"browse: {msgs}")
        check(("hint" in msgs) == msgs["truncated"], "browse hint only when truncated")
        err, msgs = await reader.call("browse_messages", {"topic": topic, "limit": 1000})
        check(msgs["count"] <= 50, "browse clamps to 50")
        err, first = await reader.call("browse_messages", {"topic": topic, "partition": 0, "from": "earliest", "limit": 3})
        offsets = [m["offset"] for m in first["messages"]]
        check(offsets == sorted(offsets), f"seek order: {offsets}")

        err, sim = await reader.call("what_if_simulate", {"scenarios": [{"type": "addBrokers", "count": 1}], "limit": 3})
        check(not err and sim["count"] <= 3 and sim["total"] == sim["movement"]["moves"], f"what-if: {sim}")
        check(("hint" in sim) == sim["truncated"], "what-if hint only when truncated")
        err, bad = await reader.call("what_if_simulate", {"scenarios": [{"type": "explode"}]})
        check(err and bad["error"]["code"] == "INVALID_INPUT", f"bad scenario: {bad}")
        err, blast = await reader.call("blast_radius_analyze", {"brokerId": 1})
        check(not err and blast["failure"]["brokers"] == [1] and "summary" in blast, f"blast: {blast}")
        err, bad = await reader.call("blast_radius_analyze", {"brokerId": 1, "rack": "x"})
        check(err and bad["error"]["code"] == "INVALID_INPUT", "exactly one failure")

        # ---- every other mutate tool: request by A, approval by B, effect checked
        err, topics = await reader.call("search_topics", {"query": "", "limit": 3})
        others = [t["name"] for t in topics["topics"] if t["name"] != topic]
        pair = [topic, others[0]]
        done = await approved("bulk_update_topic_config", {"topics": pair, "configs": {"retention.ms": 3600000}})
        check(done["status"] == "executed", f"bulk config: {done}")
        err, found = await reader.call("search_topics_by_config", {"key": "retention.ms", "value": "3600000", "overriddenOnly": True})
        check(sorted(t["topic"] for t in found["topics"]) == sorted(pair), f"bulk config applied: {found}")
        err, ev = await reader.call("search_audit_log", {"action": "topics.config.bulk_update", "limit": 1})
        bulk_event = ev["events"][0]["id"]
        done = await approved("revert_audit_event", {"eventId": bulk_event})
        check(done["status"] == "executed" and done["result"]["status"] == "completed", f"revert: {done}")
        err, found = await reader.call("search_topics_by_config", {"key": "retention.ms", "value": "3600000"})
        check(found["total"] == 0, f"reverted: {found}")

        binding = {"resourceType": "Topic", "resourceName": topic, "principal": "User:mcp-agent",
                   "operation": "Read", "permissionType": "Allow"}
        done = await approved("create_acls", {"bindings": [binding]})
        check(done["status"] == "executed", f"acls created: {done}")
        err, acls = await reader.call("list_acls", {"principal": "User:mcp-agent"})
        check(acls["total"] == 1, f"acl present: {acls}")
        err, bad = await a.call("delete_acls", {})
        check(err and bad["error"]["code"] == "INVALID_INPUT", "an empty ACL filter is refused")
        done = await approved("delete_acls", {"principal": "User:mcp-agent"})
        check(done["status"] == "executed", f"acls deleted: {done}")
        err, acls = await reader.call("list_acls", {"principal": "User:mcp-agent"})
        check(acls["total"] == 0, f"acl gone: {acls}")

        done = await approved("update_quota", {"user": "mcp-agent", "values": {"producer_byte_rate": 1048576}})
        check(done["status"] == "executed", f"quota set: {done}")
        err, quotas = await reader.call("list_quotas", {"search": "mcp-agent"})
        check(quotas["total"] == 1 and quotas["quotas"][0]["values"]["producer_byte_rate"] == 1048576,
              f"quota listed: {quotas}")
        done = await approved("delete_quota", {"user": "mcp-agent"})
        check(done["status"] == "executed", f"quota removed: {done}")
        err, quotas = await reader.call("list_quotas", {"search": "mcp-agent"})
        check(quotas["total"] == 0, f"quota gone: {quotas}")

        # an empty group with committed offsets, made by a client we did not write
        from confluent_kafka import Consumer, TopicPartition
        consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "mcp-reset",
                             "enable.auto.commit": False})
        consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        consumer.close()
        err, bad = await a.call("reset_consumer_group_offsets", {"group": "mcp-reset", "strategy": "earliest", "shiftBy": 1})
        check(err and bad["error"]["code"] == "INVALID_INPUT", f"a field of another strategy: {bad}")
        done = await approved("reset_consumer_group_offsets", {"group": "mcp-reset", "strategy": "latest", "topic": topic, "partitions": [0]})
        check(done["status"] == "executed" and done["result"]["applied"], f"offsets reset: {done}")
        done = await approved("delete_consumer_group", {"group": "mcp-reset"})
        check(done["status"] == "executed" and done["result"]["deleted"], f"group deleted: {done}")

        err, racks = await reader.call("get_broker_racks")
        brokers = sorted(b for r in racks["racks"] for b in r["brokers"]) + racks["brokersWithoutRack"]
        err, placed = await reader.call("get_cluster_logdirs", {"topic": topic, "limit": 200})
        def replicas_of(p):
            return sorted({r["brokerId"] for r in placed["partitions"] if r["partition"] == p})
        current = replicas_of(0)
        spare = [b for b in brokers if b not in current]
        check(spare, f"a broker without a replica of {topic}-0: {current} of {brokers}")
        target = [spare[0]] + current[1:]
        done = await approved("redistribute_partition", {"topic": topic, "partition": 0, "replicas": target})
        check(done["status"] == "executed" and done["result"]["status"] == "completed",
              f"one partition moved to completion: {done}")
        facts["partitionMove"] = {"partition": 0, "replicas": target}
        current = replicas_of(1)
        spare = [b for b in brokers if b not in current]
        check(spare, f"a broker without a replica of {topic}-1: {current} of {brokers}")
        target = current[:-1] + [spare[-1]]
        done = await approved("bulk_reassign_partitions", {"topic": topic, "description": "mcp bulk",
                                                           "partitions": [{"partition": 1, "replicas": target}]})
        check(done["status"] == "executed" and done["result"]["status"] == "completed",
              f"bulk moved to completion: {done}")
        facts["bulkMove"] = {"partition": 1, "replicas": target}

        err, detail = await reader.call("get_cluster_logdirs", {"brokerId": 2})
        paths = [d["path"] for b in detail["brokers"] if b["brokerId"] == 2 for d in b.get("dirs", [])]
        replica = detail["partitions"][0]
        to = [p for p in paths if p != replica["logDir"]][0]
        done = await approved("move_broker_logdirs", {"brokerId": 2, "moves": [
            {"topic": replica["topic"], "partition": replica["partition"], "path": to}]})
        check(done["status"] == "executed" and all(r["success"] for r in done["result"]["results"]),
              f"log dir move: {done}")

        err, history = await reader.call("get_reassignment_history", {"limit": 1})
        finished = history["history"][0]["id"]
        err, cancel = await a.call("cancel_reassignment", {"id": finished})
        err, cancelled = await b.call("approve_action", {"token": cancel["token"]})
        check(err and cancelled["error"]["code"] in ("CONFLICT", "NOT_FOUND"),
              f"cancelling a finished operation: the REST path's refusal: {cancelled}")

        err, applied = await a.call("apply_proposal", {"proposalId": "current"})
        if applied.get("status") == "blocked":
            check(applied["reason"], "blocked with a reason")
        else:
            check(applied.get("status") == "pending_approval", f"apply queued: {applied}")
            err, done = await b.call("approve_action", {"token": applied["token"]})
            # blocked again at approval, or run: completed, or ended with its reason
            result = done.get("result", {})
            check(result.get("status") in ("completed", "blocked", "failed", "cancelled")
                  and (result["status"] == "completed" or result.get("reason")), f"apply: {done}")

        # expiry: an action not approved in time is refused
        err, late = await a.call("update_topic_config", {"topic": topic, "configs": {"retention.ms": 5}})
        await asyncio.sleep(float(EXPIRY_WAIT))
        err, expired = await b.call("approve_action", {"token": late["token"]})
        check(err and "expire" in json.dumps(expired).lower(), f"expired action refused: {expired}")
        facts["topic"] = topic
        facts["token"] = token
    # Every session was ended (DELETE) as the stack closed: the SDK took each answer.
    ended = [m for m in SDK_WARNINGS.messages if "termination" in m]
    check(not ended, f"sessions ended without a warning: {ended}")
    print(json.dumps(facts))


def first_failure(e):
    """The Failed (or other error) inside anyio's exception groups."""
    if isinstance(e, BaseExceptionGroup):
        return first_failure(e.exceptions[0])
    return e


try:
    asyncio.run(main())
except BaseException as e:  # noqa: BLE001 - report whatever broke, then fail
    failure = first_failure(e)
    print(f"FAILED: {type(failure).__name__}: {failure}", flush=True)
    sys.exit(1)
