//! Evidence from software we did not write: `kcat` (Debian package `kcat`, librdkafka inside)
//! lists metadata, produces and consumes against the simulator. A missing kcat fails the test
//! with what to install.

mod common;

use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

fn kcat() -> String {
    for name in ["kcat", "kafkacat"] {
        let found = Command::new(name)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if found {
            return name.to_string();
        }
    }
    panic!(
        "kcat is not installed: install it with `apt-get install -y kcat` (Debian package kcat)"
    );
}

/// Runs kcat with a timeout; returns (status ok, stdout, stderr).
async fn run(args: Vec<String>, stdin: Option<String>) -> (bool, String, String) {
    let bin = kcat();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        // The tool must load its own librdkafka: `cargo test --workspace` puts the one that
        // rdkafka-sys builds (no zlib, no OpenSSL) on LD_LIBRARY_PATH.
        let mut child = Command::new("timeout")
            .env_remove("LD_LIBRARY_PATH")
            .arg("30")
            .arg(&bin)
            .args(&args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kcat");
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(input.as_bytes()).expect("write to kcat");
        }
        let out = child.wait_with_output().expect("kcat output");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("kcat task")
}

fn scenario() -> ballast_model::snapshot::Snapshot {
    let mut parts = vec![
        partition("quiet", 0, &[1, 2, 3], 0),
        partition("quiet", 1, &[2, 3, 1], 0),
    ];
    let mut busy = partition("busy", 0, &[3, 1, 2], 5_000_000);
    busy.producer_msg_rate = 500.0;
    busy.producer_byte_rate = 50_000.0;
    parts.push(busy);
    snapshot(brokers(3), parts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcat_lists_the_metadata_the_simulator_holds() {
    let sim = start(scenario(), 1.0).await;
    let (ok, out, err) = run(
        vec!["-b".into(), sim.bootstrap(), "-L".into(), "-J".into()],
        None,
    )
    .await;
    assert!(ok, "kcat -L failed: {err}");
    let md: Value = serde_json::from_str(out.trim()).expect("kcat -L -J prints JSON");
    // KRaft: Metadata's controller id is a live broker picked per answer.
    assert!(
        (1..=3).contains(&md["controllerid"].as_i64().unwrap_or(-1)),
        "controller id {} is a live broker",
        md["controllerid"]
    );
    let mut ids: Vec<i64> = md["brokers"]
        .as_array()
        .expect("brokers")
        .iter()
        .filter_map(|b| b["id"].as_i64())
        .collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2, 3]);
    let topics = md["topics"].as_array().expect("topics");
    let busy = topics
        .iter()
        .find(|t| t["topic"] == "busy")
        .expect("busy topic");
    let p = &busy["partitions"][0];
    assert_eq!(p["leader"], 3);
    let replicas: Vec<i64> = p["replicas"]
        .as_array()
        .expect("replicas")
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect();
    assert_eq!(replicas, vec![3, 1, 2]);
    assert_eq!(p["isrs"].as_array().map(|a| a.len()), Some(3));
    // After a broker stops, kcat sees the failover.
    sim.stop_broker(3).await.expect("stop");
    let (ok, out, err) = run(
        vec!["-b".into(), sim.bootstrap(), "-L".into(), "-J".into()],
        None,
    )
    .await;
    assert!(ok, "kcat -L failed after a stop: {err}");
    let md: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(md["brokers"].as_array().map(|a| a.len()), Some(2));
    let busy = md["topics"]
        .as_array()
        .expect("topics")
        .iter()
        .find(|t| t["topic"] == "busy")
        .cloned()
        .expect("busy");
    assert_eq!(busy["partitions"][0]["leader"], 1);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcat_produces_with_every_codec_and_consumes_the_records_back() {
    let sim = start(scenario(), 1.0).await;
    let boot = sim.bootstrap();
    let codecs = ["none", "gzip", "snappy", "lz4", "zstd"];
    for z in codecs {
        let input = format!("k-{z}:first {z}\nk-{z}:second {z}\n");
        let (ok, _, err) = run(
            [
                "-b", &boot, "-P", "-t", "quiet", "-p", "1", "-z", z, "-K", ":",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            Some(input),
        )
        .await;
        assert!(ok, "kcat -P -z {z} failed: {err}");
    }
    let (ok, out, err) = run(
        [
            "-b",
            &boot,
            "-C",
            "-t",
            "quiet",
            "-p",
            "1",
            "-o",
            "beginning",
            "-e",
            "-J",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        None,
    )
    .await;
    assert!(ok, "kcat -C failed: {err}");
    let records: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let got: Vec<(i64, String, String)> = records
        .iter()
        .map(|r| {
            (
                r["offset"].as_i64().unwrap_or(-1),
                r["key"].as_str().unwrap_or_default().to_string(),
                r["payload"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let want: Vec<(i64, String, String)> = codecs
        .iter()
        .flat_map(|z| {
            [
                (format!("k-{z}"), format!("first {z}")),
                (format!("k-{z}"), format!("second {z}")),
            ]
        })
        .enumerate()
        .map(|(i, (k, v))| (i as i64, k, v))
        .collect();
    assert_eq!(got, want);
    // Synthetic traffic reads back as generated records of the partition's message size.
    let (ok, out, err) = run(
        [
            "-b", &boot, "-C", "-t", "busy", "-p", "0", "-o", "-20", "-c", "20", "-J",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        None,
    )
    .await;
    assert!(ok, "kcat -C of synthetic records failed: {err}");
    let recs: Vec<Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(recs.len(), 20);
    for r in &recs {
        let payload = r["payload"].as_str().unwrap_or_default();
        assert_eq!(
            payload.len(),
            100,
            "average message size is 50000/500 bytes"
        );
        assert!(payload.starts_with("simulated busy-0@"));
    }
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcat_logs_in_with_scram_sha_512_over_tls_and_a_bad_password_fails() {
    let (ca, identity) = tls_identity();
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, &ca).expect("write ca");
    let sim = start_with(scenario(), |c| {
        c.security = ballast_simcluster::SecurityConfig {
            protocol: ballast_simcluster::SecurityProtocol::SaslSsl,
            tls: Some(identity),
            users: vec![("alice".into(), "alice-secret".into())],
        }
    })
    .await;
    let args = |password: &str, wait: &str| -> Vec<String> {
        [
            "-b",
            &sim.bootstrap(),
            "-L",
            "-J",
            "-m",
            wait,
            "-X",
            "security.protocol=SASL_SSL",
            "-X",
            "sasl.mechanisms=SCRAM-SHA-512",
            "-X",
            "sasl.username=alice",
            "-X",
            &format!("sasl.password={password}"),
            "-X",
            &format!("ssl.ca.location={}", ca_path.display()),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let (ok, out, err) = run(args("alice-secret", "5"), None).await;
    assert!(ok, "kcat over SASL_SSL failed: {err}");
    let md: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(md["brokers"].as_array().map(|a| a.len()), Some(3));
    let (ok, _, err) = run(args("wrong", "1"), None).await;
    assert!(!ok, "a wrong password must fail");
    assert!(
        err.contains("Authentication failed") || err.contains("SASL"),
        "{err}"
    );
    sim.shutdown().await;
}
