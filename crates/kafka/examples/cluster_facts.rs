//! Prints what ballast reads about a cluster's controller and software, to compare by hand with
//! `kafka-metadata-quorum.sh describe --status` and `kafka-broker-api-versions.sh`:
//! `cargo run -p ballast-kafka --example cluster_facts -- HOST:PORT [ROUNDS]`.

use ballast_kafka::{Client, ClientConfig};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let bootstrap = args.next().unwrap_or_else(|| "127.0.0.1:9092".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let client = Client::connect(ClientConfig::plaintext(&bootstrap)).await?;
    for round in 0..rounds {
        let metadata = client.refresh_metadata().await?;
        let described = client.describe_cluster().await?;
        let active = client.active_controller().await?;
        let software = client.broker_software().await?;
        println!(
            "round {round}: metadata controllerId {:?}, describeCluster controllerId {:?}, active controller {:?} ({}), broker {:?}: {} {}",
            metadata.controller_id,
            described.controller_id,
            active.id,
            active.source,
            software.broker,
            software.metadata_mode.as_str(),
            software.kafka_version,
        );
    }
    match client.describe_quorum().await {
        Ok(q) => println!("{}", serde_json::to_string_pretty(&q)?),
        Err(e) => println!("describe_quorum: {e}"),
    }
    Ok(())
}
