//! The observer and the observed read endpoints end to end: the real binary samples a simulated
//! cluster, writes its view to SQLite, and the web process serves it.

use std::time::Duration;

use reqwest::blocking::get;
use serde_json::Value;

use crate::cluster::Sim;
use crate::support::{wait_for, Service};

fn fetch(service: &Service, path: &str) -> (u16, Value) {
    let response = get(service.url(path)).expect("request");
    let status = response.status().as_u16();
    (status, response.json().expect("json body"))
}

#[test]
fn observed_endpoints_serve_the_observers_view_of_a_live_cluster() {
    let sim = Sim::start();
    let service = Service::start_with(&[
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", sim.bootstrap.as_str()),
        ("BALLAST_SAMPLE_INTERVAL", "1s"),
        ("BALLAST_RATE_WINDOW", "10s"),
    ]);

    // Rates need two readings: wait until every partition has them.
    let cluster: Value = wait_for(Duration::from_secs(30), "rates of every partition", || {
        let (status, body) = fetch(&service, "/api/v1/cluster");
        (status == 200 && body["data"]["coverage"]["ratesKnown"] == 24)
            .then(|| body["data"].clone())
    });
    assert_eq!(cluster["brokers"]["alive"], 3);
    assert_eq!(cluster["partitions"], 24);
    assert_eq!(cluster["coverage"]["complete"], true);
    assert!(cluster["producerMsgRate"].as_f64().is_some_and(|r| r > 0.0));

    let (status, lag) = fetch(&service, "/api/v1/cluster/follower-lag?summary=true");
    assert_eq!(status, 200);
    let keys: Vec<&str> = lag["data"]
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    // The spec's summary fields (and their twins naming the unit, bytes), never the per-topic,
    // per-partition or under-replicated lists.
    for spec in ["cluster_total_lag", "cluster_max_lag", "broker_lag"] {
        assert!(keys.contains(&spec), "{keys:?}");
    }
    for omitted in ["topic_lag", "partition_lag", "urp_classification"] {
        assert!(!keys.contains(&omitted), "{keys:?}");
    }
    assert_eq!(lag["data"]["lag_unit"], "bytes", "{keys:?}");
    assert_eq!(lag["data"]["broker_lag"].as_array().map(Vec::len), Some(3));

    let (status, racks) = fetch(&service, "/api/v1/brokers/racks");
    assert_eq!(status, 200);
    assert_eq!(racks["data"]["assessment"]["status"], "complete");
    assert_eq!(racks["data"]["assessment"]["notRackAwarePartitions"], 0);

    let (status, parts) = fetch(&service, "/api/v1/partitions?minimal=true");
    assert_eq!(status, 200);
    assert_eq!(parts["data"]["total"], 24);

    let (status, body) = fetch(&service, "/api/v1/cluster/follower-lag?topic=no-such-topic");
    assert_eq!(status, 404);
    assert_eq!(body["success"], false);
    let (status, body) = fetch(&service, "/api/v1/cluster/comprehensive?summary=maybe");
    assert_eq!(status, 400);
    assert_eq!(body["success"], false);

    let metrics = reqwest::blocking::get(service.url("/metrics"))
        .and_then(|r| r.text())
        .expect("metrics");
    for line in [
        "ballast_cluster_broker_observation_current 1",
        "ballast_cluster_rack_assessment_status{status=\"complete\"} 1",
        "ballast_cluster_not_rack_aware_partitions 0",
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
    let loads = metrics
        .lines()
        .filter(|l| l.starts_with("ballast_broker_load{"))
        .count();
    assert_eq!(loads, 3 * 7, "{metrics}");
    assert!(metrics.contains("ballast_observer_sample_duration_seconds"));
}
