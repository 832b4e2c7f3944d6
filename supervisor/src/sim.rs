//! `ballast sim`: a simulated Kafka cluster on loopback ports (contract: shared/contracts/cli.md).
//!
//! `ballast sim --snapshot FILE --base-port P [--control-port C]` or
//! `ballast sim --brokers N --racks R --topics T --partitions K --base-port P`. Prints exactly
//! one line `bootstrap=127.0.0.1:P,…` on stdout once every broker accepts connections; logs go
//! to stderr; runs until SIGTERM or SIGINT. The arguments are parsed here (not by the top-level
//! parser) so that a bad flag is one line on stderr and exit 2.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use ballast_config::{LogFormat, LogLevel};
use ballast_simcluster::{
    read_snapshot, GenerateParams, Scenario, SecurityConfig, SecurityProtocol, SimCluster,
    SimConfig, Skew, TlsIdentity,
};
use clap::Parser;

/// Everything after `ballast sim`, handed to [`SimArgs`].
#[derive(clap::Args)]
pub struct Raw {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<String>,
}

/// Run a simulated Kafka cluster that speaks the wire protocol
#[derive(Parser, Debug)]
#[command(name = "ballast sim", version)]
struct SimArgs {
    /// Start from a ballast.snapshot/v1 file
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
    /// Generate a scenario with this many brokers
    #[arg(long, value_name = "N")]
    brokers: Option<u32>,
    /// Racks of a generated scenario (0: no rack layout)
    #[arg(long, value_name = "R", default_value_t = 0)]
    racks: u32,
    /// Topics of a generated scenario
    #[arg(long, value_name = "T")]
    topics: Option<u32>,
    /// Partitions per topic of a generated scenario
    #[arg(long, value_name = "K")]
    partitions: Option<u32>,
    /// Replication factor of a generated scenario
    #[arg(long, value_name = "RF", default_value_t = 3)]
    replication_factor: u32,
    /// Consumer groups of a generated scenario: exactly N, spread over the topics from the seed
    /// (at most 4 a topic), each with committed offsets on every partition of its topic
    /// (default: 0 to 3 a topic from the seed)
    #[arg(long, value_name = "N")]
    groups: Option<u32>,
    /// Seed of a generated scenario (same seed, same cluster)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Imbalance of a generated scenario: none, hot-broker, leaders, new-broker
    #[arg(long, default_value = "none")]
    skew: String,
    /// Brokers listen on P, P+1, … (0: free ports)
    #[arg(long, value_name = "P")]
    base_port: u16,
    /// Port of the control API (HTTP on the same host)
    #[arg(long, value_name = "C")]
    control_port: Option<u16>,
    /// Simulated seconds per real second
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Bytes per second of one unthrottled replica copy
    #[arg(long, value_name = "BYTES_PER_S", default_value_t = ballast_simcluster::DEFAULT_LINK_SPEED)]
    link_speed: f64,
    /// PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    #[arg(long, default_value = "PLAINTEXT")]
    security_protocol: String,
    /// A SASL user (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); repeatable
    #[arg(long = "sasl-user", value_name = "NAME:PASSWORD")]
    sasl_users: Vec<String>,
    /// Server certificate chain (PEM) for SSL and SASL_SSL
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// Server private key (PEM) for SSL and SASL_SSL
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Address to listen on and advertise
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("ballast sim: {message}");
    ExitCode::from(crate::EXIT_CONFIG)
}

/// Turns the arguments into a simulator configuration, or one line saying what is wrong.
fn config(args: SimArgs) -> Result<SimConfig, String> {
    let scenario = match (&args.snapshot, args.brokers) {
        (Some(_), Some(_)) => {
            return Err(
                "give either --snapshot or --brokers/--topics/--partitions, not both".into(),
            )
        }
        (None, None) => {
            return Err(
                "give --snapshot FILE or --brokers N --racks R --topics T --partitions K".into(),
            )
        }
        (Some(path), None) => Scenario::Snapshot(read_snapshot(path).map_err(|e| e.to_string())?),
        (None, Some(brokers)) => {
            let (Some(topics), Some(partitions)) = (args.topics, args.partitions) else {
                return Err("--brokers needs --topics and --partitions".into());
            };
            if brokers == 0 {
                return Err("--brokers must be at least 1".into());
            }
            let skew: Skew = args.skew.parse()?;
            if let Some(groups) = args.groups {
                let most = u64::from(topics) * u64::from(ballast_simcluster::MAX_GROUPS_PER_TOPIC);
                if u64::from(groups) > most {
                    return Err(format!(
                        "--groups {groups} is more than {} a topic over {topics} topics ({most})",
                        ballast_simcluster::MAX_GROUPS_PER_TOPIC
                    ));
                }
            }
            Scenario::Generate(GenerateParams {
                brokers,
                racks: args.racks,
                topics,
                partitions_per_topic: partitions,
                replication_factor: args.replication_factor.clamp(1, brokers),
                seed: args.seed,
                skew,
                groups: args.groups,
                ..GenerateParams::default()
            })
        }
    };
    if !(args.speed.is_finite() && args.speed > 0.0) {
        return Err("--speed must be a positive number".into());
    }
    if !(args.link_speed.is_finite() && args.link_speed > 0.0) {
        return Err("--link-speed must be a positive number of bytes per second".into());
    }
    let protocol: SecurityProtocol = args.security_protocol.parse()?;
    let mut users = Vec::new();
    for u in &args.sasl_users {
        match u.split_once(':') {
            Some((name, password)) if !name.is_empty() && !password.is_empty() => {
                users.push((name.to_string(), password.to_string()))
            }
            _ => return Err(format!("--sasl-user must be NAME:PASSWORD, got {u:?}")),
        }
    }
    if protocol.uses_sasl() && users.is_empty() {
        return Err(format!(
            "{} needs at least one --sasl-user NAME:PASSWORD",
            protocol.name()
        ));
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(TlsIdentity::from_files(cert, key).map_err(|e| e.to_string())?)
        }
        (None, None) if protocol.uses_tls() => {
            return Err(format!(
                "{} needs --tls-cert and --tls-key",
                protocol.name()
            ))
        }
        (None, None) => None,
        _ => return Err("--tls-cert and --tls-key go together".into()),
    };
    Ok(SimConfig {
        scenario,
        base_port: args.base_port,
        control_port: args.control_port,
        security: SecurityConfig {
            protocol,
            tls,
            users,
        },
        speed: args.speed,
        link_speed: args.link_speed,
        tick: Duration::from_millis(100),
        host: args.host,
        // KRaft's metadata lag (changeable through the control API's /metadata-lag).
        metadata_lag: ballast_simcluster::DEFAULT_METADATA_LAG,
    })
}

pub fn run(raw: Raw) -> ExitCode {
    let argv = std::iter::once("ballast sim".to_string()).chain(raw.args);
    let args = match SimArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            return usage_error(line.trim_start_matches("error: "));
        }
    };
    let level = std::env::var("LOG_LEVEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LogLevel::Info);
    let format = std::env::var("LOG_FORMAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LogFormat::Text);
    let config = match config(args) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    ballast_runtime::init_logging("sim", level, format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ballast sim: cannot start the runtime: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    runtime.block_on(serve(config))
}

async fn serve(config: SimConfig) -> ExitCode {
    use tokio::signal::unix::{signal, SignalKind};
    // Signals first, so a TERM right after the bootstrap line is not lost.
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(t), Ok(i)) => (t, i),
        _ => {
            eprintln!("ballast sim: cannot install signal handlers");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    let sim = match SimCluster::start(config).await {
        Ok(s) => s,
        Err(e) => return usage_error(e),
    };
    if let Some(url) = sim.control_url() {
        tracing::info!(control = %url, "control api listening");
    }
    let mut out = std::io::stdout().lock();
    let printed = writeln!(out, "bootstrap={}", sim.bootstrap()).and_then(|()| out.flush());
    drop(out);
    if printed.is_err() {
        tracing::warn!("stdout is closed; running anyway");
    }
    tokio::select! {
        _ = term.recv() => tracing::info!(signal = "SIGTERM", "stopping"),
        _ = int.recv() => tracing::info!(signal = "SIGINT", "stopping"),
    }
    sim.shutdown().await;
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<SimConfig, String> {
        let argv = std::iter::once("ballast sim").chain(args.iter().copied());
        let parsed = SimArgs::try_parse_from(argv).map_err(|e| e.to_string())?;
        config(parsed)
    }

    #[test]
    fn the_generated_form_of_the_contract_parses() {
        let c = parse(&[
            "--brokers",
            "6",
            "--racks",
            "3",
            "--topics",
            "4",
            "--partitions",
            "12",
            "--base-port",
            "9092",
        ])
        .expect("valid");
        assert_eq!(c.base_port, 9092);
        assert_eq!(c.control_port, None);
        match c.scenario {
            Scenario::Generate(p) => {
                assert_eq!(
                    (p.brokers, p.racks, p.topics, p.partitions_per_topic),
                    (6, 3, 4, 12)
                );
                assert_eq!(p.replication_factor, 3);
            }
            Scenario::Snapshot(_) => panic!("expected a generated scenario"),
        }
    }

    #[test]
    fn groups_are_generated_as_asked_up_to_four_a_topic() {
        let base = [
            "--brokers",
            "6",
            "--topics",
            "4",
            "--partitions",
            "2",
            "--base-port",
            "0",
        ];
        let c = parse(&[&base[..], &["--groups", "16"][..]].concat()).expect("valid");
        match c.scenario {
            Scenario::Generate(p) => assert_eq!(p.groups, Some(16)),
            Scenario::Snapshot(_) => panic!("expected a generated scenario"),
        }
        let e = parse(&[&base[..], &["--groups", "17"][..]].concat()).expect_err("too many");
        assert!(e.contains("--groups"), "{e}");
        match parse(&base).expect("valid").scenario {
            Scenario::Generate(p) => assert_eq!(p.groups, None),
            Scenario::Snapshot(_) => panic!("expected a generated scenario"),
        }
    }

    /// `ballast sim` parses its own flags: each says what it is for in `ballast sim --help`.
    #[test]
    fn every_sim_flag_has_help_text() {
        use clap::CommandFactory;
        let missing: Vec<String> = SimArgs::command()
            .get_arguments()
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
            .filter(|a| a.get_help().is_none() && a.get_long_help().is_none())
            .map(|a| a.get_id().to_string())
            .collect();
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }

    #[test]
    fn the_snapshot_form_reads_and_validates_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.json");
        std::fs::write(
            &path,
            r#"{"format":"ballast.snapshot/v1","takenAt":"2026-11-21T10:00:00Z",
                "brokers":[{"id":1,"rack":null,"state":"alive"}],
                "partitions":[{"topic":"t","partition":0,"replicas":[1]}]}"#,
        )
        .expect("write");
        let p = path.to_string_lossy().into_owned();
        let c =
            parse(&["--snapshot", &p, "--base-port", "0", "--control-port", "0"]).expect("valid");
        assert_eq!(c.control_port, Some(0));
        assert!(matches!(c.scenario, Scenario::Snapshot(_)));
        std::fs::write(&path, "{}").expect("write");
        assert!(parse(&["--snapshot", &p, "--base-port", "0"]).is_err());
    }

    #[test]
    fn bad_combinations_say_what_is_wrong() {
        let e = parse(&["--base-port", "1"]).expect_err("no scenario");
        assert!(e.contains("--snapshot"), "{e}");
        let e = parse(&["--brokers", "3", "--base-port", "1"]).expect_err("incomplete");
        assert!(e.contains("--topics"), "{e}");
        let e = parse(&[
            "--brokers",
            "1",
            "--topics",
            "1",
            "--partitions",
            "1",
            "--base-port",
            "1",
            "--security-protocol",
            "SASL_PLAINTEXT",
        ])
        .expect_err("no users");
        assert!(e.contains("--sasl-user"), "{e}");
        let e = parse(&[
            "--brokers",
            "1",
            "--topics",
            "1",
            "--partitions",
            "1",
            "--base-port",
            "1",
            "--sasl-user",
            "nopassword",
        ])
        .expect_err("bad user");
        assert!(e.contains("NAME:PASSWORD"), "{e}");
        let e = parse(&[
            "--brokers",
            "1",
            "--topics",
            "1",
            "--partitions",
            "1",
            "--base-port",
            "1",
            "--skew",
            "sideways",
        ])
        .expect_err("bad skew");
        assert!(e.contains("skew"), "{e}");
        assert!(
            parse(&["--brokers", "1", "--topics", "1", "--partitions", "1"]).is_err(),
            "--base-port is required"
        );
    }
}
