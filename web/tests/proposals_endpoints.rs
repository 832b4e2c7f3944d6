//! The proposal endpoints over proposals stored as the observer stores them.

mod observed_common;

use ballast_schema::NewProposal;
use observed_common::Harness;
use serde_json::{json, Value};

fn plan(moves: usize) -> Value {
    let mv: Vec<Value> = (0..moves)
        .map(|i| {
            json!({"topic": "t", "partition": i, "replicasBefore": [1, 2], "replicasAfter": [4, 2],
                   "leaderBefore": 1, "leaderAfter": 4, "costClass": "inter-broker", "bytes": 100})
        })
        .collect();
    json!({
        "format": "ballast.plan/v1", "recommended": moves > 0, "moves": mv,
        "loads": {"leaderCount": {"fairShare": 6.0, "counted": true, "noTraffic": false,
            "belowFloor": false, "triggered": true, "maxDistanceBefore": -100.0,
            "maxDistanceAfter": 0.0, "largestDifference": 6.0, "busiestBroker": 1, "quietestBroker": 4,
            "stop": "within_threshold", "stopReason": "the farthest broker, 4, ends +0.00% from fair share 6: within the threshold of 5%"}},
        "estimatedBytes": 100 * moves, "structuralLimits": [], "balanceHold": false, "downBrokers": [],
        "tripped": [{"brokerId": 4, "load": "leaderCount", "distanceBefore": -100.0, "distanceAfter": 0.0, "helped": true}],
        "effectiveBefore": 50.0, "effectiveAfter": 2.0, "evennessBefore": 40.0, "evennessAfter": 1.0,
        "topicSpread": {"overCap": 3, "projectedOverCap": 1, "excessLeaders": 7, "projectedExcessLeaders": 2,
                        "excessReplicas": 5, "projectedExcessReplicas": 0},
        "rackAwareness": {"racks": 3, "violationsBefore": 4, "violationsAfter": 1, "repaired": 3,
                          "limits": [{"partitions": 1, "cause": "recent moves", "proof": "p", "remediation": "r"}]},
        "search": {"iterations": 3, "candidatesEvaluated": 10, "stepsApplied": 2, "stoppedAtPartitionCap": false, "workers": 1},
        "elapsedMs": 1.5
    })
}

fn proposal(id: &str, fingerprint: &str, moves: usize, allowed: bool) -> NewProposal {
    NewProposal {
        id: id.into(),
        fingerprint: fingerprint.into(),
        moves_digest: format!("d{moves}"),
        basis: String::new(),
        recommended: moves > 0,
        application_allowed: allowed,
        moves: moves as u64,
        estimated_bytes: 100 * moves as u64,
        balance_hold: false,
        plan: plan(moves),
        decision: json!({"applicationAllowed": allowed, "nextAction": "apply", "unsafeReasons": [],
                         "readingsBeyondTrigger": 4, "readingsRequired": 4, "warmupRemainingMs": 0}),
        detail: json!({"shares": [{"brokerId": 4, "loads": {"leaderCount": 0.0}}],
                       "topicSpreadAtLimit": {"t@2": {"topic": "t", "brokerId": 2, "replicas": 6, "cap": 6}}}),
    }
}

async fn get(h: &Harness, path: &str) -> (u16, Value) {
    let r = h
        .http
        .get(format!("{}{path}", h.base))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn send(h: &Harness, method: reqwest::Method, path: &str) -> (u16, Value) {
    let r = h
        .http
        .request(method, format!("{}{path}", h.base))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test]
async fn no_current_proposal_is_a_404_envelope() {
    let h = Harness::empty().await;
    let (status, body) = get(&h, "/api/v1/proposals/current").await;
    assert_eq!(status, 404);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"], "no proposal");
    let (status, _) = send(&h, reqwest::Method::POST, "/api/v1/proposals/generate").await;
    assert_eq!(status, 404);
    let (status, body) = get(&h, "/api/v1/proposals").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total"], 0);
}

#[tokio::test]
async fn the_current_proposal_has_the_named_fields() {
    let h = Harness::empty().await;
    h.store
        .save_proposal(&proposal("p-1", "f1", 2, true), 1_000, 200)
        .unwrap();
    let (status, body) = get(&h, "/api/v1/proposals/current").await;
    assert_eq!(status, 200, "{body}");
    let d = &body["data"];
    assert_eq!(d["id"], "p-1");
    assert_eq!(d["decision"]["applicationAllowed"], true);
    assert_eq!(d["checkedAt"], "1970-01-01T00:00:01.000Z");
    assert_eq!(d["candidateAvailable"], true);
    assert_eq!(d["fairShare"]["shares"][0]["brokerId"], 4);
    assert_eq!(d["fairShare"]["loads"]["leaderCount"]["fairShare"], 6.0);
    assert_eq!(d["topicSpread"]["atLimit"]["t@2"]["cap"], 6);
    assert_eq!(d["topicSpread"]["overCap"], 3);
    assert_eq!(d["topicSpread"]["projectedOverCap"], 1);
    assert_eq!(d["topicSpread"]["excessLeaders"], 7);
    assert_eq!(d["topicSpread"]["projectedExcessLeaders"], 2);
    assert_eq!(d["topicSpread"]["excessReplicas"], 5);
    assert_eq!(d["topicSpread"]["projectedExcessReplicas"], 0);
    assert_eq!(d["rackAwareness"]["violationsBefore"], 4);
    assert_eq!(d["rackAwareness"]["violationsAfter"], 1);
    assert_eq!(d["rackAwareness"]["limits"][0]["cause"], "recent moves");
    assert_eq!(d["balance"]["leaderCount"]["stop"], "within_threshold");
    assert!(d["balance"]["leaderCount"]["stopReason"]
        .as_str()
        .is_some_and(|r| r.contains("within the threshold")));
    assert_eq!(d["benefitEvidence"]["tripped"][0]["brokerId"], 4);
    assert_eq!(d["benefitEvidence"]["topicBreaches"], json!([]));
    assert_eq!(d["structuralLimits"], json!([]));
    assert_eq!(d["metrics"]["effective"], 2.0);
    assert_eq!(d["movement"]["estimatedBytes"], 200);
    assert_eq!(d["movement"]["search"]["iterations"], 3);
    assert_eq!(d["balance"]["leaderCount"]["imbalance"], -100.0);
    assert_eq!(d["balance"]["leaderCount"]["busiestBroker"], 1);
    assert_eq!(d["balanceHold"], false);
    assert_eq!(d["reassignments"].as_array().unwrap().len(), 2);
    assert_eq!(d["totalReassignments"], 2);
    assert_eq!(d["reassignmentsTruncated"], false);
    assert_eq!(d["fingerprint"], "f1");
}

#[tokio::test]
async fn generate_returns_the_current_proposal_without_adding_one() {
    let h = Harness::empty().await;
    h.store
        .save_proposal(&proposal("p-1", "f1", 2, false), 1_000, 200)
        .unwrap();
    let (status, body) = send(&h, reqwest::Method::POST, "/api/v1/proposals/generate").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["id"], "p-1");
    assert_eq!(body["data"]["decision"]["applicationAllowed"], false);
    assert_eq!(h.store.proposals(50, 0).unwrap().total, 1);
}

#[tokio::test]
async fn checked_at_advances_while_the_plan_is_unchanged() {
    let h = Harness::empty().await;
    h.store
        .save_proposal(&proposal("p-1", "f1", 2, false), 1_000, 200)
        .unwrap();
    h.store
        .save_proposal(&proposal("p-2", "f1", 2, true), 61_000, 200)
        .unwrap();
    let (_, body) = get(&h, "/api/v1/proposals/current").await;
    assert_eq!(body["data"]["id"], "p-1");
    assert_eq!(body["data"]["createdAt"], "1970-01-01T00:00:01.000Z");
    assert_eq!(body["data"]["checkedAt"], "1970-01-01T00:01:01.000Z");
    assert_eq!(body["data"]["decision"]["applicationAllowed"], true);
}

#[tokio::test]
async fn the_list_is_newest_first_with_each_rows_decision_and_pages() {
    let h = Harness::empty().await;
    for i in 0..5 {
        h.store
            .save_proposal(
                &proposal(&format!("p-{i}"), &format!("f{i}"), i, i == 4),
                1_000 * (i as i64 + 1),
                200,
            )
            .unwrap();
    }
    let (status, body) = get(&h, "/api/v1/proposals?limit=2&offset=1").await;
    assert_eq!(status, 200, "{body}");
    let d = &body["data"];
    assert_eq!(d["total"], 5);
    assert_eq!(d["count"], 2);
    assert_eq!(d["truncated"], true);
    let ids: Vec<&str> = d["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["p-3", "p-2"]);
    assert_eq!(d["proposals"][0]["decision"]["applicationAllowed"], false);
    assert_eq!(d["proposals"][0]["current"], false);
    let (_, body) = get(&h, "/api/v1/proposals").await;
    assert_eq!(body["data"]["proposals"][0]["id"], "p-4");
    assert_eq!(body["data"]["proposals"][0]["current"], true);
}

#[tokio::test]
async fn a_bad_query_is_a_400() {
    let h = Harness::empty().await;
    for q in ["limit=-1", "limit=x", "offset=-3", "lmit=3"] {
        let (status, body) = get(&h, &format!("/api/v1/proposals?{q}")).await;
        assert_eq!(status, 400, "{q}: {body}");
        assert_eq!(body["success"], false);
    }
}

#[tokio::test]
async fn an_unknown_id_is_a_404() {
    let h = Harness::empty().await;
    let (status, body) = get(&h, "/api/v1/proposals/p-nope").await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], "proposal not found");
    let (status, _) = send(&h, reqwest::Method::DELETE, "/api/v1/proposals/p-nope").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn deleting_the_current_proposal_is_a_409_and_an_old_one_goes_with_an_audit_event() {
    let h = Harness::empty().await;
    h.store
        .save_proposal(&proposal("p-1", "f1", 1, false), 1_000, 200)
        .unwrap();
    h.store
        .save_proposal(&proposal("p-2", "f2", 2, false), 2_000, 200)
        .unwrap();
    let (status, body) = send(&h, reqwest::Method::DELETE, "/api/v1/proposals/p-2").await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["success"], false);
    assert_eq!(body["error"], "proposal is current");
    let events = |h: &Harness| {
        h.store
            .list_audit(&ballast_schema::AuditQuery {
                action: Some("proposals.delete".into()),
                ..Default::default()
            })
            .unwrap()
            .events
    };
    assert!(events(&h).is_empty(), "a refused delete records nothing");
    let (status, body) = send(&h, reqwest::Method::DELETE, "/api/v1/proposals/p-1").await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = get(&h, "/api/v1/proposals/p-1").await;
    assert_eq!(status, 404);
    let recorded = events(&h);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(body["data"]["auditEventId"], recorded[0].id);
    assert_eq!(recorded[0].status, 200);
    assert_eq!(recorded[0].target.as_deref(), Some("p-1"));
    assert_eq!(
        recorded[0]
            .before
            .as_ref()
            .map(|b| b["fingerprint"].clone()),
        Some("f1".into())
    );
    let (status, body) = get(&h, "/api/v1/proposals/p-2").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["current"], true);
}

#[tokio::test]
async fn an_old_proposal_reads_as_superseded_whatever_its_own_decision_said() {
    let h = Harness::empty().await;
    h.store
        .save_proposal(&proposal("p-old", "f1", 2, true), 1_000, 200)
        .unwrap();
    h.store
        .save_proposal(&proposal("p-new", "f2", 3, true), 2_000, 200)
        .unwrap();
    let (_, list) = get(&h, "/api/v1/proposals").await;
    let rows = list["data"]["proposals"].as_array().expect("rows");
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).expect("row").clone();
    assert_eq!(row("p-new")["superseded"], false);
    assert_eq!(row("p-old")["superseded"], true);
    assert_eq!(
        row("p-old")["decision"]["applicationAllowed"],
        true,
        "its own decision, kept as it was"
    );
    let (_, old) = get(&h, "/api/v1/proposals/p-old").await;
    assert_eq!(old["data"]["superseded"], true);
    let page = h
        .http
        .get(format!("{}/ui/proposals", h.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("superseded by a newer proposal"), "{page}");
}

/// A plan of `n` moves over three topics, with bytes that repeat (ties) and two broker sets.
fn varied(n: usize) -> NewProposal {
    let mut p = proposal("p-big", "fb", n, true);
    let moves: Vec<Value> = (0..n)
        .map(|i| {
            let (before, after) = if i % 2 == 0 {
                ([1, 2], [4, 2])
            } else {
                ([3, 5], [6, 5])
            };
            json!({"topic": format!("t{}", i % 3), "partition": n - i, "replicasBefore": before,
                   "replicasAfter": after, "leaderBefore": before[0], "leaderAfter": after[0],
                   "costClass": if i % 5 == 0 { "cross-rack" } else { "inter-broker" },
                   "bytes": (i * 37) % 11})
        })
        .collect();
    p.plan["moves"] = Value::Array(moves);
    p
}

/// Every move of a proposal, following `next` from `first`.
async fn walk(h: &Harness, first: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut path = Some(first.to_string());
    while let Some(p) = path {
        let (status, body) = get(h, &p).await;
        assert_eq!(status, 200, "{p}: {body}");
        all.extend(body["data"]["moves"].as_array().unwrap().iter().cloned());
        path = body["data"]["next"].as_str().map(str::to_string);
    }
    all
}

#[tokio::test]
async fn a_large_proposal_embeds_its_first_moves_and_pages_every_move_in_the_documented_orders() {
    let h = Harness::empty().await;
    let n = 250;
    let stored = varied(n);
    let plan_moves = stored.plan["moves"].as_array().unwrap().clone();
    h.store.save_proposal(&stored, 1_000, 200).unwrap();

    let (status, body) = get(&h, "/api/v1/proposals/current").await;
    assert_eq!(status, 200, "{body}");
    let d = &body["data"];
    assert_eq!(d["reassignments"].as_array().unwrap().len(), 100);
    assert_eq!(d["reassignments"][0], plan_moves[0]);
    assert_eq!(d["totalReassignments"], n);
    assert_eq!(d["reassignmentsTruncated"], true);
    assert_eq!(
        d["reassignmentsNext"],
        "/api/v1/proposals/p-big/moves?offset=100&limit=100"
    );
    // The cost classes count every move, not only the embedded ones.
    assert_eq!(d["movement"]["costClasses"]["cross-rack"]["moves"], 50);
    assert_eq!(d["movement"]["costClasses"]["inter-broker"]["moves"], 200);

    // The planner's order, page by page, is the stored plan's.
    let all = walk(&h, "/api/v1/proposals/p-big/moves?limit=40").await;
    assert_eq!(all, plan_moves);
    let rest = walk(&h, d["reassignmentsNext"].as_str().unwrap()).await;
    assert_eq!(rest, plan_moves[100..].to_vec());

    // Most bytes first; ties by topic, then partition.
    let by_bytes = walk(&h, "/api/v1/proposals/current/moves?sort=bytes&limit=70").await;
    assert_eq!(by_bytes.len(), n);
    let key = |m: &Value| {
        (
            -m["bytes"].as_i64().unwrap(),
            m["topic"].as_str().unwrap().to_string(),
            m["partition"].as_i64().unwrap(),
        )
    };
    assert!(by_bytes.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
    // By topic, then partition.
    let by_partition = walk(
        &h,
        "/api/v1/proposals/p-big/moves?sort=partition&limit=1000",
    )
    .await;
    let pkey = |m: &Value| {
        (
            m["topic"].as_str().unwrap().to_string(),
            m["partition"].as_i64().unwrap(),
        )
    };
    assert!(by_partition.windows(2).all(|w| pkey(&w[0]) < pkey(&w[1])));
    assert_eq!(by_partition.len(), n);

    // Filters: one topic, one broker (before or after), each with its own total.
    let (_, t1) = get(&h, "/api/v1/proposals/p-big/moves?topic=t1").await;
    let expected = plan_moves.iter().filter(|m| m["topic"] == "t1").count();
    assert_eq!(t1["data"]["total"], expected);
    assert!(walk(&h, "/api/v1/proposals/p-big/moves?topic=t1&limit=10")
        .await
        .iter()
        .all(|m| m["topic"] == "t1"));
    let on_6 = walk(&h, "/api/v1/proposals/p-big/moves?brokerId=6&limit=30").await;
    assert_eq!(on_6.len(), n / 2);
    assert!(on_6.iter().all(|m| m["replicasAfter"][0] == 6));

    // Bad queries are 400s in the envelope; an unknown proposal is a 404.
    for bad in ["sort=size", "limit=1001", "offset=-1", "colour=red"] {
        let (status, body) = get(&h, &format!("/api/v1/proposals/p-big/moves?{bad}")).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["success"], false);
    }
    let (status, _) = get(&h, "/api/v1/proposals/p-none/moves").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_answer_carries_an_etag_and_the_same_tag_in_if_none_match_is_a_304_until_the_next_check()
{
    let h = Harness::empty().await;
    h.store
        .save_proposal(&proposal("p-1", "f1", 2, true), 1_000, 200)
        .unwrap();
    let url = format!("{}/api/v1/proposals/current", h.base);
    let first = h.http.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let tag = first.headers()["etag"].to_str().unwrap().to_string();
    let again = h
        .http
        .get(&url)
        .header("If-None-Match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), tag);
    assert!(again.bytes().await.unwrap().is_empty());
    // A tag the client does not have is a 200.
    let other = h
        .http
        .get(&url)
        .header("If-None-Match", "\"something-else\"")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    // The next check changes the answer (checkedAt, decision): a 200 with a new tag.
    h.store
        .save_proposal(&proposal("p-1", "f1", 2, true), 2_000, 200)
        .unwrap();
    let after = h
        .http
        .get(&url)
        .header("If-None-Match", &tag)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 200);
    assert_ne!(after.headers()["etag"].to_str().unwrap(), tag);
    let body: Value = after.json().await.unwrap();
    assert_eq!(body["data"]["checkedAt"], "1970-01-01T00:00:02.000Z");
}

#[tokio::test]
async fn the_probes_answer_while_every_pooled_connection_is_taken() {
    let h = Harness::empty().await;
    let (status, _) = get(&h, "/api/v1/health").await;
    assert_eq!(status, 200);
    // Every connection of the pool the other requests share is taken.
    let _hold = h.store.hold_connections(4).unwrap();
    let (status, body) = get(&h, "/api/v1/health").await;
    assert_eq!(status, 200, "{body}");
    assert!(body["data"]["detailsAsOf"].is_string());
    let (status, body) = get(&h, "/api/v1/ready").await;
    // Not ready (no sample yet) is the probe's own answer, not a database error.
    assert_eq!(status, 503);
    assert_eq!(body["error"], "broker view unavailable");
}

#[tokio::test]
async fn the_topic_broker_pairs_are_cut_to_a_hundred_with_every_pair_counted() {
    let h = Harness::empty().await;
    let mut p = proposal("p-pairs", "fp", 2, true);
    let mut at_limit = serde_json::Map::new();
    let mut breaches = Vec::new();
    for i in 0..150 {
        at_limit.insert(
            format!("t{i:03}@1"),
            json!({"topic": format!("t{i:03}"), "brokerId": 1, "replicas": 3, "cap": 3}),
        );
        breaches.push(
            json!({"topic": format!("t{i:03}"), "brokerId": 2, "replicas": 3 + i % 7,
                             "cap": 3, "replicasAfter": 3}),
        );
    }
    p.detail["topicSpreadAtLimit"] = Value::Object(at_limit);
    p.detail["topicBreaches"] = Value::Array(breaches);
    h.store.save_proposal(&p, 1_000, 200).unwrap();
    let (status, body) = get(&h, "/api/v1/proposals/current").await;
    assert_eq!(status, 200, "{body}");
    let spread = &body["data"]["topicSpread"];
    assert_eq!(spread["atLimit"].as_object().unwrap().len(), 100);
    assert_eq!(spread["atLimitTotal"], 150);
    assert_eq!(spread["atLimitTruncated"], true);
    let evidence = &body["data"]["benefitEvidence"];
    let shown = evidence["topicBreaches"].as_array().unwrap();
    assert_eq!(shown.len(), 100);
    assert_eq!(evidence["topicBreachesTotal"], 150);
    assert_eq!(evidence["topicBreachesTruncated"], true);
    // Most replicas beyond the cap first.
    let excess = |b: &Value| b["replicas"].as_i64().unwrap() - b["cap"].as_i64().unwrap();
    assert!(shown.windows(2).all(|w| excess(&w[0]) >= excess(&w[1])));
    assert_eq!(excess(&shown[0]), 6);
}

#[tokio::test]
async fn a_detail_that_keeps_only_the_pairs_shown_is_answered_with_the_totals_it_counted() {
    // The observer stores the first 100 pairs and counts every one (`DETAIL_PAIRS`).
    let h = Harness::empty().await;
    let mut p = proposal("p-kept", "fp", 2, true);
    let mut at_limit = serde_json::Map::new();
    for i in 0..100 {
        at_limit.insert(
            format!("t{i:03}@1"),
            json!({"topic": format!("t{i:03}"), "brokerId": 1, "replicas": 1, "cap": 1}),
        );
    }
    p.detail["topicSpreadAtLimit"] = Value::Object(at_limit);
    p.detail["topicSpreadAtLimitTotal"] = json!(638_000);
    p.detail["topicBreaches"] = json!([{"topic": "t000", "brokerId": 2, "replicas": 4,
                                         "cap": 1, "replicasAfter": 1}]);
    p.detail["topicBreachesTotal"] = json!(1);
    h.store.save_proposal(&p, 1_000, 200).unwrap();
    let (status, body) = get(&h, "/api/v1/proposals/current").await;
    assert_eq!(status, 200, "{body}");
    let spread = &body["data"]["topicSpread"];
    assert_eq!(spread["atLimit"].as_object().unwrap().len(), 100);
    assert_eq!(spread["atLimitTotal"], 638_000);
    assert_eq!(spread["atLimitTruncated"], true);
    let evidence = &body["data"]["benefitEvidence"];
    assert_eq!(evidence["topicBreachesTotal"], 1);
    assert_eq!(evidence["topicBreachesTruncated"], false);
}
