//! `ballast demo`: the service on its embedded default, a simulated Kafka cluster, with short
//! timings so things happen within a minute.
//!
//! The simulated cluster runs inside this process on its own runtime threads (six brokers in
//! three racks; the newest broker was just added and is empty, so there is something to
//! balance); the supervisor then runs on the main thread against it, exactly as `ballast run`.
//!
//! Trial: the simulator gets a fresh cluster id real Kafka cannot carry
//! (`ballast-sim-demo-<16 hex>`), and the workers inherit it in `BALLAST_DEMO_TRIAL`; management
//! features are on while they are connected to exactly that cluster (docs/license.md).

use std::process::ExitCode;
use std::time::Duration;

use ballast_config::RawConfig;
use ballast_simcluster::{GenerateParams, Scenario, SimCluster, SimConfig, Skew};

/// Settings the demo fixes; the environment may still override the timings.
fn demo_settings(port: u16, data_dir: &str, bootstrap: &str) -> Vec<(String, String)> {
    [
        ("PORT", port.to_string()),
        ("BALLAST_DATA_DIR", data_dir.to_string()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", bootstrap.to_string()),
        ("BALLAST_SAMPLE_INTERVAL", "5s".to_string()),
        ("BALLAST_WARMUP", "30s".to_string()),
        ("BALLAST_HEARTBEAT_INTERVAL", "1s".to_string()),
        // A partition reading a minute (not an hour), so the topic pages' history charts fill
        // while a newcomer looks.
        ("BALLAST_PARTITION_READINGS_INTERVAL", "1m".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn scenario() -> GenerateParams {
    GenerateParams {
        brokers: 6,
        racks: 3,
        topics: 12,
        partitions_per_topic: 12,
        replication_factor: 3,
        skew: Skew::NewBroker,
        mean_partition_bytes: 200e6,
        mean_msg_rate: 150.0,
        msg_bytes: 700.0,
        ..GenerateParams::default()
    }
}

/// Whether `port` is free on loopback: `Err` with one line for the operator when it is taken.
fn port_free(port: u16) -> Result<(), String> {
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "port {port} is not free ({e}): stop what uses it (another `ballast demo`?) or pick another with `ballast demo --port N`"
        )),
    }
}

/// Starts a fresh data directory for this demo: the previous demo's database described another
/// simulated cluster. Returns whether one was replaced.
fn fresh_data_dir(dir: &std::path::Path) -> Result<bool, String> {
    if !dir.exists() {
        return Ok(false);
    }
    std::fs::remove_dir_all(dir).map(|()| true).map_err(|e| {
        format!(
            "cannot clear the previous demo's data in {}: {e}",
            dir.display()
        )
    })
}

/// Prints one line when the demo's first proposal may be applied (and where to see it), reading
/// the demo's database; gives up quietly after `give_up`.
fn announce_proposal(db: std::path::PathBuf, port: u16, give_up: Duration) {
    let _ = std::thread::Builder::new()
        .name("ballast-demo-guide".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            while started.elapsed() < give_up {
                std::thread::sleep(Duration::from_secs(2));
                // Never create the file: the supervisor makes and migrates it.
                if !db.exists() {
                    continue;
                }
                let Ok(store) = ballast_schema::Store::open(&db) else {
                    continue;
                };
                if let Ok(Some(p)) = store.current_proposal() {
                    if p.application_allowed {
                        eprintln!(
                            "ballast demo: a proposal is ready ({} moves): review and apply it at http://127.0.0.1:{port}/ui/proposals/current",
                            p.moves
                        );
                        return;
                    }
                }
            }
        });
}

/// Groups of the newer protocols beside the scenario's classic ones, as a Kafka 4 cluster has
/// them: a consumer group of KIP-848 (`group.protocol=consumer`, 2 members) and a share group of
/// KIP-932 (1 member), each reading the first consumed topic.
fn demo_groups(sim: &SimCluster) {
    use ballast_simcluster::state::GroupKind;
    let snapshot = sim.snapshot();
    let Some(topic) = snapshot
        .partitions
        .iter()
        .find(|p| p.consumer_msg_rate > 0.0)
        .map(|p| p.topic.clone())
    else {
        return;
    };
    for (id, kind, members) in [
        ("billing-kip848", GroupKind::Consumer, 2),
        ("billing-share", GroupKind::Share, 1),
    ] {
        if let Err(e) = sim.add_group(id, kind, &topic, members) {
            eprintln!("ballast demo: group {id} not added: {e}");
        }
    }
}

pub fn run(port: u16) -> ExitCode {
    if let Err(e) = port_free(port) {
        eprintln!("ballast: {e}");
        return ExitCode::from(crate::EXIT_CONFIG);
    }
    // The trial's cluster id, inherited by every worker. Set while this process has one thread
    // (before any runtime starts), so changing the environment races with no reader.
    let cluster_id = ballast_license::trial::new_demo_cluster_id();
    std::env::set_var(ballast_license::DEMO_TRIAL_ENV, &cluster_id);
    let mut snapshot = ballast_simcluster::generate(&scenario());
    snapshot.cluster_id = Some(cluster_id);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("ballast-demo-sim")
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ballast: cannot start the simulated cluster's runtime: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    let sim = match runtime.block_on(SimCluster::start(SimConfig {
        scenario: Scenario::Snapshot(snapshot),
        control_port: Some(0),
        tick: Duration::from_millis(100),
        ..SimConfig::default()
    })) {
        Ok(sim) => sim,
        Err(e) => {
            eprintln!("ballast: cannot start the simulated cluster: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    demo_groups(&sim);
    let bootstrap = sim.bootstrap();
    let data_path = std::env::temp_dir().join(format!("ballast-demo-{port}"));
    let replaced = match fresh_data_dir(&data_path) {
        Ok(replaced) => replaced,
        Err(e) => {
            eprintln!("ballast: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    let data_dir = data_path.to_string_lossy().into_owned();
    let mut vars = demo_settings(port, &data_dir, &bootstrap);
    // An agent per simulated broker (threads of this process), restarting it through the
    // simulator's control API: the Agents page and rolling restarts work in the demo.
    let agent_token = demo_agent_token();
    vars.push(("BALLAST_AGENT_TOKEN".into(), agent_token.clone()));
    // Two demo identities with tokens, so agent approval can be tried (docs/auth.md): anonymous
    // access stays as without authentication, a token names its user. Not when the environment
    // configures authentication itself.
    let identities = std::env::var_os("AUTH_PROVIDERS").is_none()
        && std::env::var_os("AUTH_PAT_ENABLED").is_none();
    if identities {
        vars.push(("AUTH_PAT_ENABLED".into(), "true".into()));
        vars.push(("AUTH_ANONYMOUS".into(), "true".into()));
        vars.push(("AUTH_PAT_HASH_SECRET".into(), demo_agent_token()));
    }
    // The environment wins for everything but what makes this a demo.
    let fixed = [
        "PORT",
        "BALLAST_DATA_DIR",
        "BALLAST_KAFKA_BOOTSTRAP_SERVERS",
        "BALLAST_AGENT_TOKEN",
    ];
    vars.retain(|(k, _)| fixed.contains(&k.as_str()) || std::env::var(k).is_err());
    // BALLAST_DEMO_TRIAL reaches the workers through the inherited environment; it is no
    // setting, so it stays out of the configuration (no unknown-variable warning).
    let env = std::env::vars()
        .filter(|(k, _)| !fixed.contains(&k.as_str()) && k != ballast_license::DEMO_TRIAL_ENV)
        .chain(vars);
    let code = match RawConfig::from_pairs(env, None) {
        Err(e) => {
            eprintln!("ballast: invalid configuration: {e}");
            ExitCode::from(crate::EXIT_CONFIG)
        }
        Ok(raw) => match crate::load_raw(raw) {
            Err(code) => code,
            Ok((raw, config)) => {
                if let Some(control) = sim.control_url() {
                    start_agents(port, &agent_token, &control);
                }
                let guide = if identities {
                    match demo_identities(&config, &data_path) {
                        Ok(guide) => guide,
                        Err(e) => {
                            eprintln!("ballast: cannot make the demo identities: {e}");
                            return ExitCode::from(crate::EXIT_FAILURE);
                        }
                    }
                } else {
                    String::new()
                };
                eprintln!(
                    "ballast demo: a simulated Kafka cluster of 6 brokers in 3 racks is running at {bootstrap}\n\
                     (broker 6 was just added and is empty; control API: {}).\n\
                     The service:  http://127.0.0.1:{port}/api/v1/health   /api/v1/ready   /api/v1/proposals/current   /metrics\n\
                     Management features run on a {days}-day demo trial bound to this simulated cluster: /api/v1/license\n\
                     The dashboard: http://127.0.0.1:{port}/ui   API docs: http://127.0.0.1:{port}/docs/\n\
                     An agent per broker reports to the service (Agents page): try a rolling restart there.\n\
                     Try offline planning on this cluster: BALLAST_KAFKA_BOOTSTRAP_SERVERS={bootstrap} ballast snapshot --out c.json && ballast plan --snapshot c.json\n\
                     Data directory: {data_dir}{fresh}   (stop with Ctrl-C)\n\
                     From another terminal: BALLAST_DATA_DIR={data_dir} ballast status\n\
                     The first proposal becomes applicable after a warm-up and three readings (about a minute): a line here says when.{guide}",
                    sim.control_url().unwrap_or_else(|| "off".into()),
                    days = ballast_license::trial::TRIAL_DAYS,
                    fresh = if replaced { " (the previous demo's data was cleared: this is a new cluster)" } else { "" },
                );
                announce_proposal(data_path.join("ballast.db"), port, Duration::from_secs(600));
                crate::supervise(&raw, &config)
            }
        },
    };
    runtime.block_on(sim.shutdown());
    code
}

/// The demo's two identities, each with a write token kept in a file of the data directory
/// (0600): `demo-agent` asks for changes over MCP, `demo-reviewer` approves them. Returns the
/// banner's lines on trying it.
fn demo_identities(
    config: &ballast_config::Config,
    dir: &std::path::Path,
) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let db = dir.join("ballast.db");
    ballast_schema::Store::migrate(&db).map_err(|e| ballast_runtime::error_chain(&e))?;
    let store = ballast_schema::Store::open(&db).map_err(|e| ballast_runtime::error_chain(&e))?;
    let now = ballast_runtime::Clock::now_ms(&ballast_runtime::SystemClock);
    let mut files = Vec::new();
    for (user, name) in [
        ("demo-agent", "the demo's AI agent: asks for changes"),
        ("demo-reviewer", "the demo's second person: approves them"),
    ] {
        let (_, value) = crate::token_cmd::mint(
            config,
            &store,
            &crate::token_cmd::Mint {
                owner: "demo:",
                user,
                name,
                scope: "write",
                expires_in: None,
                now,
            },
        )?;
        let file = dir.join(format!("{user}.token"));
        write_private(&file, &value).map_err(|e| format!("{}: {e}", file.display()))?;
        files.push(file);
    }
    Ok(format!(
        "\nAgent approval: two demo identities, demo-agent and demo-reviewer, have write tokens in\n  \
         {}\n  {}\n\
         An agent's change over MCP waits for another person; try it (README, \"Agent approval\"):\n  \
         ballast mcp call --port {} --token-file {} update_topic_config '{{\"topic\":\"orders\",\"configs\":{{\"retention.ms\":\"7200000\"}}}}'\n  \
         ballast mcp call --port {} --token-file {} approve_action '{{\"token\":\"<the token it printed>\"}}'",
        files[0].display(),
        files[1].display(),
        config.port,
        files[0].display(),
        config.port,
        files[1].display(),
    ))
}

/// Writes `value` to a new file only its owner may read.
fn write_private(path: &std::path::Path, value: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(value.as_bytes())?;
    f.write_all(b"\n")
}

/// A random agent secret for this run (32 random bytes).
fn demo_agent_token() -> String {
    ballast_web::auth::random_url_safe(32)
        .unwrap_or_else(|_| format!("demo-agent-secret-{}-of-this-run", std::process::id()))
}

/// Starts an in-process agent for each of the scenario's brokers.
fn start_agents(port: u16, token: &str, control: &str) {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "ballast".into());
    for broker in 1..=scenario().brokers as i32 {
        let settings = ballast_config::AgentSettings {
            service_url: format!("http://127.0.0.1:{port}"),
            token: ballast_config::Secret::new(ballast_web::agents::broker_token(token, broker)),
            ca_file: None,
            broker_id: broker,
            node_id: Some(format!("demo-host-{broker}")),
            restart_command: format!("'{exe}' sim-broker --control {control} restart {broker}"),
            status_command: Some(format!(
                "'{exe}' sim-broker --control {control} alive {broker}"
            )),
            log_dirs: Vec::new(),
            heartbeat_interval: Duration::from_secs(3),
            command_timeout: Duration::from_secs(120),
            log_level: ballast_config::LogLevel::Info,
            log_format: ballast_config::LogFormat::default(),
        };
        if let Err(e) = crate::agent::spawn(settings) {
            eprintln!("ballast demo: agent of broker {broker} not started: {e}");
        }
    }
}
