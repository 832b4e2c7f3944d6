"""The MCP endpoint as a real client sees it: the Python `mcp` SDK (2.x) over Streamable HTTP.

Usage: scenario.py URL WRITE_TOKEN_A WRITE_TOKEN_B READ_TOKEN
A and B are two people with the write scope, READ a read-only token. Exits non-zero, naming the
step, on the first broken expectation; prints one JSON line of facts for the Rust test at the end.
"""

import asyncio
import contextlib
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL, TOKEN_A, TOKEN_B, TOKEN_READ = sys.argv[1:5]

EXPECTED = {
    "get_cluster_overview": "read", "get_cluster_health": "read", "list_proposals": "read",
    "get_proposal": "read", "generate_proposal": "read", "update_topic_config": "mutate",
    "apply_proposal": "mutate", "approve_action": "meta", "reject_action": "meta",
    "list_pending_actions": "meta", "get_broker_racks": "read", "get_topic_config": "read",
    "search_topics": "read", "list_acls": "read", "list_consumer_groups": "read",
    "describe_consumer_group": "read", "get_topic_watermarks": "read", "search_audit_log": "read",
    "list_reassignments": "read", "get_reassignment_history": "read",
    "get_reassignment_by_id": "read", "get_default_configs": "read",
    "get_partition_optimization": "read", "delete_consumer_group": "mutate",
    "cancel_reassignment": "mutate", "set_broker_maintenance": "mutate",
    "remove_broker_maintenance": "mutate", "redistribute_topic": "mutate",
    "preferred_leader_election": "mutate",
}

ENVELOPED = {  # list tools: rows key
    "search_topics": "topics", "list_acls": "bindings", "list_consumer_groups": "groups",
    "get_topic_watermarks": "partitions", "search_audit_log": "events",
    "list_reassignments": "history", "get_reassignment_history": "history",
    "get_partition_optimization": "recommendations",
}


class Failed(Exception):
    pass


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
        for props in by_name["update_topic_config"].input_schema["properties"].values():
            check(props.get("description"), "every parameter is described")
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

        facts["topic"] = topic
        facts["token"] = token
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
