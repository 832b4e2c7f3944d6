//! The control API: change the scenario while it runs and read the simulator's truth.

mod common;

use common::*;
use serde_json::{json, Value};

async fn call(method: &'static str, url: String, body: Option<Value>) -> (u16, Value) {
    tokio::task::spawn_blocking(move || {
        let client = reqwest::blocking::Client::new();
        let req = match method {
            "GET" => client.get(&url),
            "POST" => client.post(&url),
            _ => client.put(&url),
        };
        let req = match body {
            Some(b) => req.json(&b),
            None => req,
        };
        let resp = req.send().expect("http");
        let status = resp.status().as_u16();
        (status, resp.json::<Value>().unwrap_or(Value::Null))
    })
    .await
    .expect("join")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_control_api_changes_the_scenario_and_reports_the_truth() {
    let sim = start_with(
        snapshot(brokers(3), vec![partition("t", 0, &[1, 2], 1000)]),
        |c| c.control_port = Some(0),
    )
    .await;
    let base = sim.control_url().expect("control url");
    let (status, truth) = call("GET", format!("{base}/truth"), None).await;
    assert_eq!(status, 200);
    assert_eq!(truth["controller"], 1);
    assert_eq!(truth["brokers"].as_array().map(|b| b.len()), Some(3));
    assert_eq!(truth["clusterId"], "simcluster-test");

    let (status, _) = call("POST", format!("{base}/brokers/1/stop"), None).await;
    assert_eq!(status, 200);
    let (_, truth) = call("GET", format!("{base}/truth"), None).await;
    assert_eq!(truth["brokers"][0]["up"], false);
    assert_eq!(truth["controller"], 2);
    let (status, _) = call("POST", format!("{base}/brokers/1/start"), None).await;
    assert_eq!(status, 200);
    let (status, moved) = call(
        "PUT",
        format!("{base}/controller"),
        Some(json!({"broker": 3})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(moved["controller"], 3);
    let (_, truth) = call("GET", format!("{base}/truth"), None).await;
    assert_eq!(truth["controller"], 3, "the quorum leader moved");
    assert_eq!(truth["controllerEpoch"], moved["controllerEpoch"]);
    let (status, _) = call(
        "PUT",
        format!("{base}/controller"),
        Some(json!({"broker": 9})),
    )
    .await;
    assert_eq!(status, 404, "an unknown broker cannot lead");

    let (status, added) = call(
        "POST",
        format!("{base}/brokers"),
        Some(json!({"rack": "r9"})),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(added["id"], 4);
    let addr = added["address"].as_str().expect("address").to_string();
    let mut c = Client::connect(&addr)
        .await
        .expect("the new broker listens");
    let mut req = kafka_protocol::messages::MetadataRequest::default();
    req.topics = None;
    let md = c.send(&req, 12).await.expect("metadata");
    assert_eq!(md.brokers.len(), 4);

    let (status, _) = call(
        "POST",
        format!("{base}/topics"),
        Some(json!({"name": "events", "partitions": 4, "replicationFactor": 2, "producerMsgRate": 50.0, "producerByteRate": 5000.0, "consumerMsgRate": 50.0, "consumerByteRate": 5000.0})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = call(
        "PUT",
        format!("{base}/topics/t/rates"),
        Some(json!({"producerMsgRate": 10.0, "producerByteRate": 1000.0})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call(
        "PUT",
        format!("{base}/topics/events/partitions/2/rates"),
        Some(json!({"consumerMsgRate": 0.0})),
    )
    .await;
    assert_eq!(status, 200);
    let (_, snap) = call("GET", format!("{base}/snapshot"), None).await;
    assert_eq!(snap["format"], "ballast.snapshot/v1");
    let parts = snap["partitions"].as_array().expect("partitions");
    assert_eq!(parts.len(), 5);
    let t0 = parts.iter().find(|p| p["topic"] == "t").expect("t-0");
    assert_eq!(t0["producerMsgRate"], 10.0);
    let e2 = parts
        .iter()
        .find(|p| p["topic"] == "events" && p["partition"] == 2)
        .expect("events-2");
    assert_eq!(e2["consumerMsgRate"], 0.0);
    assert_eq!(e2["producerMsgRate"], 50.0);
    assert_eq!(snap["brokers"].as_array().map(|b| b.len()), Some(4));

    // Errors are JSON with a message and a 4xx.
    let (status, err) = call("POST", format!("{base}/brokers/99/stop"), None).await;
    assert_eq!(status, 404);
    assert!(err["error"].as_str().is_some_and(|m| m.contains("99")));
    let (status, _) = call(
        "PUT",
        format!("{base}/topics/nope/rates"),
        Some(json!({"producerMsgRate": 1.0})),
    )
    .await;
    assert_eq!(status, 400);
    let (status, _) = call(
        "PUT",
        format!("{base}/topics/t/rates"),
        Some(json!({"producerMsgRate": -1.0})),
    )
    .await;
    assert_eq!(status, 400);
    let (status, err) = call(
        "POST",
        format!("{base}/topics"),
        Some(json!({"name": "bad", "partitions": 1, "oops": 1})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(err["error"].is_string());
    let (status, _) = call("GET", format!("{base}/nowhere"), None).await;
    assert_eq!(status, 404);

    // The metadata lag of config and quota describes.
    let (status, lag) = call("GET", format!("{base}/metadata-lag"), None).await;
    assert_eq!((status, lag), (200, json!({"ms": 300})));
    let (status, lag) = call(
        "PUT",
        format!("{base}/metadata-lag"),
        Some(json!({"ms": 0})),
    )
    .await;
    assert_eq!((status, lag), (200, json!({"ms": 0})));
    let (status, _) = call(
        "PUT",
        format!("{base}/metadata-lag"),
        Some(json!({"ms": -1})),
    )
    .await;
    assert_eq!(status, 400);
    sim.shutdown().await;
}
