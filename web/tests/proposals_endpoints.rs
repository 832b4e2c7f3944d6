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
