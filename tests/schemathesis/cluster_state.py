#!/usr/bin/env python3
"""The cluster state around a schemathesis run (tests/schemathesis/run.sh, docs/schemathesis.md).

  cluster_state.py wait     URL            until /api/v1/ready answers 200 (at most 90 s)
  cluster_state.py snapshot URL > FILE     every topic's configuration, the quotas, the ACLs
  cluster_state.py document URL > FILE     the OpenAPI document (with the token, when given)
  cluster_state.py check    URL FILE       nothing changed on the cluster by a rejected request

`check` holds when:
  1. every resource that differs from the snapshot (a topic's configuration, the quotas, the
     ACLs) is named by a completed REST audit event (status 200/202/207): nothing changed the
     cluster without an audited, accepted request;
  2. no REST audit event is left in progress (102) or failed after sending (500; an accepted
     apply's later failure, which names the apply, aside);
  3. per HTTP method, the completed REST audit events are at most the requests the server
     answered 2xx (its own counter, /metrics): no audited change came from a refused request.
BALLAST_TOKEN (optional) is sent as `Authorization: Bearer`.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

MUTATIONS = ("POST", "PUT", "PATCH", "DELETE")
# Set and cleared by the executor around a reassignment (audited as `reassignments.apply`), not
# by a configuration request.
THROTTLE_KEYS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def get(base, path, raw=False):
    req = urllib.request.Request(base + path)
    token = os.environ.get("BALLAST_TOKEN")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read().decode()
    return body if raw else json.loads(body)["data"]


def wait(base):
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(base + "/api/v1/ready", timeout=5) as r:
                if r.status == 200:
                    return 0
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1)
    print(f"cluster_state: {base} was not ready within 90 s", file=sys.stderr)
    return 1


def snapshot(base):
    topics = sorted({p["topic"] for p in get(base, "/api/v1/partitions?fields=topic")["partitions"]})
    state = {}
    for t in topics:
        entries = get(base, f"/api/v1/topics/{t}/config")["entries"]
        state["topic:" + t] = {e["name"]: e.get("value") for e in entries if e["name"] not in THROTTLE_KEYS}
    state["quotas"] = get(base, "/api/v1/quotas")["quotas"]
    state["acls"] = get(base, "/api/v1/acls?limit=500")["bindings"]
    return state


def audit_events(base):
    events, offset = [], 0
    while True:
        page = get(base, f"/api/v1/audit-log?limit=500&offset={offset}")["events"]
        events += page
        if len(page) < 500:
            return events
        offset += 500


def accepted_by_method(base):
    counts = {}
    pattern = re.compile(r'^ballast_http_requests_total\{method="(\w+)",route="([^"]*)",status="(\d+)"\} (\d+)')
    for line in get(base, "/metrics", raw=True).splitlines():
        m = pattern.match(line)
        if m and m.group(1) in MUTATIONS and m.group(3).startswith("2"):
            counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(4))
    return counts


def check(base, before_file):
    with open(before_file) as f:
        before = json.load(f)
    after = snapshot(base)
    events = [e for e in audit_events(base) if e.get("method") in MUTATIONS]
    done = [e for e in events if e.get("status") in (200, 202, 207)]
    failures = []
    def refused_by_the_cluster(e):
        # A preferred leader election the cluster answered partition by partition with none
        # elected (e.g. PREFERRED_LEADER_NOT_AVAILABLE while schemathesis's own rolling restart
        # or maintenance holds leadership off a broker) is audited 500, yet changed nothing: the
        # cluster's state after it is known, which is what this rule guards.
        # Since an election refused for every partition is refused to its caller too, the event
        # carries no after; its details say so.
        after = e.get("after") or {}
        counted = (isinstance(after, dict) and after.get("elected") == 0
                   and (after.get("failed") or 0) > 0)
        said = str(e.get("details") or "").startswith("the cluster refused the election of all")
        return e.get("action") == "leaders.elect" and (counted or said)

    for e in events:
        # A later failure of an accepted request (an apply whose moves failed) refers to it.
        if e.get("status") == 500 and refused_by_the_cluster(e):
            continue
        if e.get("status") == 102 or (e.get("status") == 500 and e.get("relatedEventId") is None):
            failures.append(f"audit event {e['id']} ({e['action']} {e['method']} {e.get('target')}) has status {e['status']}")
    for key in sorted(set(before) | set(after)):
        if before.get(key) == after.get(key):
            continue
        if key.startswith("topic:"):
            topic = key[len("topic:"):]
            named = any(
                e["action"].startswith("topics.config")
                and (e.get("target") == topic or e["action"] == "topics.config.bulk_update"
                     or e["action"] == "audit.revert")
                for e in done
            ) or any(e["action"] == "audit.revert" for e in done) or any(
                # the topic lifecycle (docs/api/topics.md): a topic created or deleted
                e["action"] in ("topics.create", "topics.delete") and e.get("target") == topic
                for e in done
            )
        else:
            named = any(e["action"].startswith(key) or e["action"] == "audit.revert" for e in done)
        if not named:
            failures.append(f"{key} changed, and no accepted REST request's audit event names it")
    accepted = accepted_by_method(base)
    for method in MUTATIONS:
        audited = sum(1 for e in done if e["method"] == method)
        if audited > accepted.get(method, 0):
            failures.append(f"{audited} completed {method} audit events, but only {accepted.get(method, 0)} {method} requests were accepted")
    changed = [k for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
    print(f"cluster_state: {len(changed)} resources changed ({', '.join(changed) or 'none'}); "
          f"{len(done)} completed REST audit events; accepted mutations by method: {accepted}")
    for f in failures:
        print("cluster_state: FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "wait":
        return wait(argv[1])
    if len(argv) >= 2 and argv[0] == "document":
        sys.stdout.write(get(argv[1], "/api/v1/openapi.json", raw=True))
        return 0
    if len(argv) >= 2 and argv[0] == "snapshot":
        json.dump(snapshot(argv[1]), sys.stdout, sort_keys=True)
        return 0
    if len(argv) >= 3 and argv[0] == "check":
        return check(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
