//! `ballast plan --snapshot FILE` (shared/contracts/cli.md and snapshot-v1.md).

use serde_json::{json, Value};

use crate::support::ballast_output;

/// Four brokers; broker 4 is new and empty.
fn snapshot() -> Value {
    let partitions: Vec<Value> = (0..24)
        .map(|i| {
            let a = i % 3 + 1;
            let b = (i + 1) % 3 + 1;
            json!({"topic": "orders", "partition": i, "replicas": [a, b], "leader": a,
                   "sizeBytes": 1_073_741_824u64, "producerMsgRate": 100.0, "producerByteRate": 102400.0})
        })
        .collect();
    json!({
        "format": "ballast.snapshot/v1",
        "takenAt": "2026-11-21T10:00:00Z",
        "brokers": (1..=4).map(|id| json!({"id": id, "rack": null, "state": "alive"})).collect::<Vec<_>>(),
        "partitions": partitions,
    })
}

fn plan(snapshot: &Value, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, snapshot.to_string()).expect("write snapshot");
    let path = path.to_string_lossy().into_owned();
    let out = ballast_output(&["plan", "--snapshot", path.as_str()], env);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plan_prints_one_ballast_plan_v1_document_for_a_snapshot() {
    let (code, stdout, stderr) = plan(&snapshot(), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).expect("one JSON document on stdout");
    assert_eq!(doc["format"], "ballast.plan/v1");
    assert_eq!(doc["recommended"], true);
    let moves = doc["moves"].as_array().expect("moves");
    assert!(moves.iter().any(|m| m["replicasAfter"]
        .as_array()
        .is_some_and(|r| r.contains(&json!(4)))));
    assert!(doc["elapsedMs"].as_f64().is_some_and(|ms| ms > 0.0));
    assert!(doc["loads"]["diskBytes"]["maxDistanceAfter"]
        .as_f64()
        .is_some_and(|d| d <= 5.0));
}

#[test]
fn plan_table_prints_the_same_plan_for_people() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, snapshot().to_string()).expect("write snapshot");
    let path = path.to_string_lossy().into_owned();
    let out = ballast_output(&["plan", "--snapshot", path.as_str(), "--table"], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("Recommended: "), "{stdout}");
    assert!(stdout.contains(" to copy"), "{stdout}");
    assert!(
        stdout.contains("Farthest from fair share") && stdout.contains("diskBytes"),
        "{stdout}"
    );
    assert!(stdout.contains("Replicas now"), "{stdout}");
    assert!(serde_json::from_str::<Value>(&stdout).is_err(), "not JSON");
}

#[test]
fn plan_exits_zero_when_nothing_is_recommended() {
    let mut s = snapshot();
    s["brokers"].as_array_mut().expect("brokers").pop();
    let (code, stdout, _) = plan(&s, &[]);
    assert_eq!(code, Some(0));
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(doc["recommended"], false);
    assert!(doc["reason"]
        .as_str()
        .is_some_and(|r| r.starts_with("balanced")));
}

#[test]
fn plan_follows_the_balancing_settings() {
    // With a 60% threshold (refused: must be below 50) the command stops with the variable named.
    let (code, _, stderr) = plan(&snapshot(), &[("BALLAST_BALANCE_THRESHOLD", "60")]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("BALLAST_BALANCE_THRESHOLD"), "{stderr}");
    // A cap of 2 partitions is honoured.
    let (code, stdout, _) = plan(&snapshot(), &[("BALLAST_PROPOSAL_MAX_PARTITIONS", "2")]);
    assert_eq!(code, Some(0));
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert!(doc["moves"].as_array().is_some_and(|m| m.len() <= 2));
}

#[test]
fn a_bad_snapshot_is_one_clear_line_and_exit_2() {
    let (code, stdout, stderr) = plan(&json!({"format": "ballast.snapshot/v9"}), &[]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let mut s = snapshot();
    s["partitions"][0]["replicas"] = json!([1, 9]);
    let (code, _, stderr) = plan(&s, &[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown broker 9"), "{stderr}");
}
