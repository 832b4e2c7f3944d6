//! Rates derived from the cluster itself (no broker plugin) match what the simulated cluster was
//! configured to do.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ballast_kafka::{Client, ClientConfig};
use ballast_observer::sample;
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn close(measured: f64, configured: f64, relative: f64) -> bool {
    (measured - configured).abs() <= relative * configured + 1.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rates_derived_from_simcluster_traffic_match_the_configured_rates() {
    let sim = SimCluster::start(SimConfig {
        scenario: Scenario::Generate(GenerateParams {
            brokers: 3,
            racks: 3,
            topics: 3,
            partitions_per_topic: 4,
            replication_factor: 2,
            mean_partition_bytes: 50e6,
            mean_msg_rate: 200.0,
            msg_bytes: 500.0,
            ..GenerateParams::default()
        }),
        tick: Duration::from_millis(20),
        ..SimConfig::default()
    })
    .await
    .expect("simulated cluster starts");
    let configured = sim.snapshot();
    let client = Client::connect(ClientConfig::plaintext(&sim.bootstrap()))
        .await
        .expect("client connects");

    let first = sample::take(&client, now_ms()).await.expect("first sample");
    tokio::time::sleep(Duration::from_secs(4)).await;
    let second = sample::take(&client, now_ms())
        .await
        .expect("second sample");
    let measured = sample::snapshot(&first, &second, "now".into());

    assert_eq!(measured.partitions.len(), configured.partitions.len());
    let mut checked = 0;
    for c in &configured.partitions {
        let m = measured
            .partitions
            .iter()
            .find(|m| m.topic == c.topic && m.partition == c.partition)
            .expect("every partition measured");
        assert_eq!(
            m.replicas, c.replicas,
            "{}-{} placement",
            c.topic, c.partition
        );
        assert!(
            close(m.producer_msg_rate, c.producer_msg_rate, 0.05),
            "{}-{} producer msg/s measured {:.1}, configured {:.1}",
            c.topic,
            c.partition,
            m.producer_msg_rate,
            c.producer_msg_rate
        );
        assert!(
            close(m.consumer_msg_rate, c.consumer_msg_rate, 0.05),
            "{}-{} consumer msg/s measured {:.1}, configured {:.1}",
            c.topic,
            c.partition,
            m.consumer_msg_rate,
            c.consumer_msg_rate
        );
        assert!(
            close(m.producer_byte_rate, c.producer_byte_rate, 0.10),
            "{}-{} producer B/s measured {:.0}, configured {:.0}",
            c.topic,
            c.partition,
            m.producer_byte_rate,
            c.producer_byte_rate
        );
        assert!(
            m.size_bytes >= c.size_bytes,
            "sizes only grow while producing"
        );
        checked += 1;
    }
    assert!(checked >= 12);
    sim.shutdown().await;
}
