//! Scale benchmark: builds a large simulated cluster, starts it, sends one full Metadata request
//! (all topics) over TCP with a raw kafka-protocol request, and prints the resident memory and
//! the Metadata round trip.
//!
//! `cargo run --release -p ballast-simcluster --example scale -- --brokers 200 --partitions 300000`

use std::time::{Duration, Instant};

use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig};
use bytes::BytesMut;
use kafka_protocol::messages::{
    ApiKey, MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn arg(name: &str, default: u32) -> Result<u32, String> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} needs a number")),
    }
}

/// VmRSS and VmHWM in KiB from /proc/self/status.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn metadata_round_trip(addr: &str) -> std::io::Result<(Duration, usize, usize, usize)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let version = 12;
    let mut header = RequestHeader::default();
    header.request_api_key = ApiKey::Metadata as i16;
    header.request_api_version = version;
    header.correlation_id = 1;
    header.client_id = Some(StrBytes::from_static_str("scale-bench"));
    let mut req = MetadataRequest::default();
    req.topics = None;
    let mut buf = BytesMut::new();
    header
        .encode(&mut buf, ApiKey::Metadata.request_header_version(version))
        .map_err(std::io::Error::other)?;
    req.encode(&mut buf, version)
        .map_err(std::io::Error::other)?;
    let started = Instant::now();
    stream.write_all(&(buf.len() as i32).to_be_bytes()).await?;
    stream.write_all(&buf).await?;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await?;
    let size = i32::from_be_bytes(len) as usize;
    let mut body = vec![0u8; size];
    stream.read_exact(&mut body).await?;
    let elapsed = started.elapsed();
    let mut bytes = bytes::Bytes::from(body);
    ResponseHeader::decode(
        &mut bytes,
        ApiKey::Metadata.response_header_version(version),
    )
    .map_err(std::io::Error::other)?;
    let resp = MetadataResponse::decode(&mut bytes, version).map_err(std::io::Error::other)?;
    let partitions = resp.topics.iter().map(|t| t.partitions.len()).sum();
    Ok((elapsed, size, resp.brokers.len(), partitions))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let brokers = arg("--brokers", 200)?;
    let partitions = arg("--partitions", 300_000)?;
    let per_topic = arg("--partitions-per-topic", 100)?.max(1);
    let topics = partitions.div_ceil(per_topic);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let built = Instant::now();
        let config = SimConfig {
            scenario: Scenario::Generate(GenerateParams {
                brokers,
                racks: 10,
                topics,
                partitions_per_topic: per_topic,
                replication_factor: 3,
                seed: 7,
                ..GenerateParams::default()
            }),
            ..SimConfig::default()
        };
        let sim = SimCluster::start(config).await?;
        let startup = built.elapsed();
        let truth = sim.truth();
        let addr = sim.broker_address(truth.brokers[0].id).ok_or("no broker")?;
        println!(
            "cluster: {} brokers, {} topics, {} partitions, started in {:.2} s",
            truth.brokers.len(),
            truth.topics,
            truth.partitions,
            startup.as_secs_f64()
        );
        // The first request warms up nothing the second needs; report both.
        for round in 1..=2 {
            let (elapsed, size, b, p) = metadata_round_trip(&addr).await?;
            println!(
                "metadata round trip {round}: {:.3} s, response {:.1} MiB, {b} brokers, {p} partitions",
                elapsed.as_secs_f64(),
                size as f64 / (1 << 20) as f64
            );
        }
        let (rss, hwm) = memory();
        println!(
            "memory: VmRSS {:.0} MiB, VmHWM {:.0} MiB",
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0
        );
        sim.shutdown().await;
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
