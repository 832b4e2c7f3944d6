//! The live read endpoints of the real binary against a simulated cluster started in this test
//! process: what the web process reads from the cluster itself (messages, the tail, groups,
//! configuration), not from the observer's database.

use std::io::Read;
use std::time::{Duration, Instant};

use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};
use serde_json::Value;

use crate::support::{wait_for, Service};

fn get(service: &Service, path: &str) -> (u16, Value) {
    let response = reqwest::blocking::get(service.url(path)).expect("request");
    let status = response.status().as_u16();
    (status, response.json().expect("json body"))
}

fn data(service: &Service, path: &str) -> Value {
    let (status, body) = get(service, path);
    assert_eq!(status, 200, "GET {path}: {body}");
    body["data"].clone()
}

#[test]
fn live_reads_and_the_tail_answer_from_the_cluster() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let sim = runtime
        .block_on(SimCluster::start(SimConfig {
            scenario: Scenario::Generate(GenerateParams {
                brokers: 3,
                racks: 3,
                topics: 2,
                partitions_per_topic: 3,
                ..GenerateParams::default()
            }),
            ..SimConfig::default()
        }))
        .expect("simulated cluster");
    let topic = sim.snapshot().partitions[0].topic.clone();
    let controller = sim.truth().controller;
    let service = Service::start_with(&[("BALLAST_KAFKA_BOOTSTRAP_SERVERS", &sim.bootstrap())]);
    let base = format!("/api/v1/topics/{topic}");

    // the web worker answers once it listens
    let marks: Value = wait_for(Duration::from_secs(20), "watermarks", || {
        let r = reqwest::blocking::get(service.url(&format!("{base}/watermarks"))).ok()?;
        (r.status().as_u16() == 200)
            .then(|| r.json().ok())
            .flatten()
    });
    assert_eq!(marks["data"]["partitionCount"], 3);
    assert!(marks["data"]["totalMessages"].as_i64() > Some(0), "{marks}");

    let page = data(&service, &format!("{base}/messages?partition=0&limit=3"));
    assert_eq!(page["count"], 3);
    let last = &page["messages"][2];
    assert_eq!(
        last["key"],
        format!("key-{}", last["offset"]),
        "synthetic records"
    );
    let one = data(&service, &format!("{base}/messages/0/{}", last["offset"]));
    assert_eq!(one["key"], last["key"]);

    let defaults = data(&service, "/api/v1/config/defaults?keyFilter=retention");
    assert_eq!(defaults["broker"], controller);
    let groups = data(&service, "/api/v1/consumer-groups");
    assert!(groups["total"].is_u64());

    let (status, body) = get(&service, "/api/v1/topics/no-such-topic/config");
    assert_eq!(status, 404);
    assert_eq!(body["success"], false);
    let (status, body) = get(&service, &format!("{base}/messages?partition=x"));
    assert_eq!(status, 400);
    assert_eq!(body["success"], false);

    // the topic has traffic: the tail soon delivers a message produced after subscribing
    let mut tail = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
        .get(service.url(&format!("{base}/messages/tail?partition=0")))
        .send()
        .expect("tail");
    assert_eq!(tail.status().as_u16(), 200);
    let mut text = String::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut buf = [0u8; 4096];
    while !(text.contains("event: subscribed") && text.contains("event: message")) {
        assert!(
            Instant::now() < deadline,
            "no message event within 15 s: {text}"
        );
        let n = tail.read(&mut buf).expect("read the stream");
        assert!(n > 0, "stream ended: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let subscribed_at = text
        .split("\n\n")
        .find(|b| b.contains("event: subscribed"))
        .and_then(|b| b.lines().find_map(|l| l.strip_prefix("data: ")))
        .and_then(|d| serde_json::from_str::<Value>(d).ok())
        .and_then(|d| d["partitions"][0]["offset"].as_i64())
        .expect("subscribed offset");
    let first_offset = text
        .split("\n\n")
        .find(|b| b.contains("event: message"))
        .and_then(|b| b.lines().find_map(|l| l.strip_prefix("data: ")))
        .and_then(|d| serde_json::from_str::<Value>(d).ok())
        .and_then(|d| d["offset"].as_i64())
        .expect("message offset");
    assert!(
        first_offset >= subscribed_at,
        "{first_offset} < {subscribed_at}"
    );
    drop(tail);
    drop(service);
    runtime.block_on(sim.shutdown());
}

#[test]
fn an_open_tail_does_not_hold_up_a_graceful_stop() {
    let sim = crate::cluster::Sim::start();
    let mut service = Service::start_with(&[
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        // Far longer than the stop may take: only a tail that ends by itself stops in time.
        ("BALLAST_SHUTDOWN_GRACE", "30s"),
    ]);
    let topic: String = wait_for(Duration::from_secs(20), "a topic", || {
        let r = reqwest::blocking::get(service.url("/api/v1/consumer-groups")).ok()?;
        let body: Value = r.json().ok()?;
        body["data"]["groups"].as_array()?.first()?["topics"]
            .as_array()?
            .first()?
            .as_str()
            .map(str::to_string)
    });
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client");
    let mut tail = client
        .get(service.url(&format!("/api/v1/topics/{topic}/messages/tail")))
        .send()
        .expect("tail opens");
    assert_eq!(tail.status().as_u16(), 200);
    let mut first = [0u8; 64];
    let n = tail.read(&mut first).expect("first event");
    assert!(n > 0);

    let started = Instant::now();
    service.signal(nix::sys::signal::Signal::SIGTERM);
    let status = service.wait_exit(Duration::from_secs(25));
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopping took {:?}: the tail held the web worker open",
        started.elapsed()
    );
    // The stream ended with the worker.
    let mut rest = Vec::new();
    let _ = tail.read_to_end(&mut rest);
}
