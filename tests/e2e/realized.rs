//! Predicted vs realized: the real binary (`ballast demo`, a simulated cluster) applies a
//! proposal, and once it completed `GET /api/v1/reassignments/{id}` keeps the loads its plan
//! predicted beside the loads the readings after it showed.

use std::time::Duration;

use serde_json::Value;

use crate::support::wait_for;

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(url: &str) -> Option<Value> {
    reqwest::blocking::get(url).ok()?.json().ok()
}

#[test]
fn a_completed_plan_keeps_predicted_beside_realized_and_leader_and_follower_counts_match_exactly_on_the_simulator(
) {
    let port = crate::support::free_port();
    let data = tempfile::tempdir().expect("tmp");
    let _child = KillOnDrop(
        crate::support::ballast()
            .args(["demo", "--port", &port.to_string()])
            .env("BALLAST_WARMUP", "0s")
            .env("BALLAST_SAMPLE_INTERVAL", "1s")
            // Rates are compared a full rate window after the settling after completion: short ones.
            .env("BALLAST_RATE_WINDOW", "4s")
            .env("BALLAST_REALIZED_SETTLE", "1s")
            .env("BALLAST_PROPOSAL_MAX_PARTITIONS", "6")
            .env("BALLAST_THROTTLE_RATE_MB", "1000")
            .env("BALLAST_EXECUTOR_INTERVAL", "300ms")
            .env("TMPDIR", data.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start demo"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let proposal = wait_for(Duration::from_secs(60), "an applicable proposal", || {
        let p = get(&format!("{base}/api/v1/proposals/current"))?;
        (p["data"]["decision"]["applicationAllowed"] == true).then_some(p)
    });
    assert!(!proposal["data"]["reassignments"]
        .as_array()
        .expect("moves")
        .is_empty());
    let applied: Value = reqwest::blocking::Client::new()
        .post(format!("{base}/api/v1/proposals/current/apply"))
        .send()
        .and_then(|r| r.json())
        .expect("apply");
    assert_eq!(applied["success"], true, "{applied}");
    let op = applied["data"]["operationId"]
        .as_str()
        .expect("operation id")
        .to_string();
    let url = format!("{base}/api/v1/reassignments/{op}");
    // Queued: the prediction is kept, realized waits for completion.
    let queued = get(&url).expect("operation");
    let r = &queued["data"]["realized"];
    assert!(
        r["status"] == "pending" && r["predictedFrom"].is_string(),
        "{r}"
    );
    let done = wait_for(
        Duration::from_secs(90),
        "completion and every load read",
        || {
            let v = get(&url)?;
            (v["data"]["state"] == "Completed" && v["data"]["realized"]["status"] == "measured")
                .then_some(v)
        },
    );
    let r = &done["data"]["realized"];
    let finished = done["data"]["finishedAt"].as_str().expect("finishedAt");
    assert!(
        r["countsObservedAt"]
            .as_str()
            .is_some_and(|at| at > finished),
        "counts from the first reading after completion: {r}"
    );
    assert!(
        r["ratesObservedAt"].as_str() >= r["ratesDueAt"].as_str(),
        "rates a full window after completion: {r}"
    );
    for load in ["leaderCount", "followerCount"] {
        let l = &r["loads"][load];
        assert_eq!(l["status"], "measured", "{load}: {r}");
        assert_eq!(l["errorPercent"], 0.0, "{load}: {r}");
        assert_eq!(l["predicted"], l["observed"], "{load}: {r}");
        for b in r["brokers"].as_array().expect("brokers") {
            assert_eq!(
                b["predicted"][load], b["observed"][load],
                "{load} of broker {}: {r}",
                b["brokerId"]
            );
        }
    }
    // Disk: sizes grow with the traffic meanwhile, distances stay close.
    let disk = &r["loads"]["diskBytes"];
    assert_eq!(disk["status"], "measured", "{r}");
    assert!(
        disk["errorPercent"].as_f64().is_some_and(|e| e <= 2.0),
        "disk within 2 points: {r}"
    );
    for load in [
        "producerMsgRate",
        "producerByteRate",
        "consumerMsgRate",
        "consumerByteRate",
    ] {
        let l = &r["loads"][load];
        assert!(
            l["status"] == "measured" || (l["status"] == "unknown" && l["reason"].is_string()),
            "{load}: {r}"
        );
    }
    eprintln!("realized of {op}:");
    for (name, l) in r["loads"].as_object().expect("loads") {
        eprintln!(
            "  {name}: before {} predicted {} observed {} error {} ({})",
            l["before"], l["predicted"], l["observed"], l["errorPercent"], l["status"]
        );
    }
    // The metric of the last completed plan.
    let metrics = reqwest::blocking::get(format!("{base}/metrics"))
        .and_then(|r| r.text())
        .expect("metrics");
    assert!(
        metrics.contains("ballast_plan_realized_error_percent{load=\"leaderCount\"} 0\n"),
        "{}",
        metrics
            .lines()
            .filter(|l| l.contains("realized"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The dashboard's operation page shows it.
    let page = reqwest::blocking::get(format!("{base}/ui/reassignments/{op}"))
        .and_then(|r| r.text())
        .expect("page");
    assert!(page.contains("Predicted vs realized: measured"), "{page}");
}
