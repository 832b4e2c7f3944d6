#!/usr/bin/env python3
"""An MCP change approved by a second person, through the Python MCP SDK (a client ballast's
code has no part in), for the real-Kafka suite.

    mcp_change.py URL TOKEN_A TOKEN_B TOPIC VALUE

Agent A asks `update_topic_config` to set the topic's retention.ms to VALUE: the action waits
for approval; A may not approve it; agent B approves it. Prints
{"queued": ..., "selfApproval": ..., "approved": ...} as JSON.
"""

import asyncio
import contextlib
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

URL, TOKEN_A, TOKEN_B, TOPIC, VALUE = sys.argv[1:6]


async def open_session(stack, token):
    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60))
    read, write = await stack.enter_async_context(streamable_http_client(URL, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def call(session, name, args):
    r = await session.call_tool(name, args)
    data = r.structured_content
    if data is None:
        data = json.loads(r.content[0].text)
    return {"isError": bool(r.is_error), "data": data}


async def main():
    async with contextlib.AsyncExitStack() as stack:
        a = await open_session(stack, TOKEN_A)
        b = await open_session(stack, TOKEN_B)
        queued = await call(a, "update_topic_config",
                            {"topic": TOPIC, "configs": {"retention.ms": int(VALUE)}})
        token = queued["data"].get("token")
        own = await call(a, "approve_action", {"token": token})
        approved = await call(b, "approve_action", {"token": token})
        print(json.dumps({"queued": queued, "selfApproval": own, "approved": approved}))


asyncio.run(main())
