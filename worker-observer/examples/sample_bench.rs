//! Observer benchmark: full observer ticks against a simulated cluster running in its own process
//! (`ballast sim`), so the figures are the observer's own. Each tick runs the worker's code path
//! and prints every phase apart: the sample (`sample::take`, with its steps), derive
//! (`History::observe`), the write (`Store::write_observed`), the settings pass (broker configs,
//! ACLs and quotas on the first) and the proposal evaluation (plan and decision); then the tick's
//! total and the process's peak resident memory (VmHWM). With `--read-bench`, it then serves the
//! written database with a real `ballast web` process and measures read latency under concurrent
//! clients. `scripts/bench-observer` builds both and runs it.
//!
//! ```sh
//! cargo build --release -p ballast
//! cargo run --release -p ballast-observer --example sample_bench -- \
//!     --brokers 60 --topics 600 --partitions 100 --groups 860
//! ```
//!
//! Flags: `--brokers N` (default 60) `--topics N` (default 600) `--partitions N` (per topic,
//! default 100) `--groups N` (consumer groups, exactly: `ballast sim --groups`; default 860)
//! `--seed N` `--dump` (print what the first sample read) `--ticks N` (default 3) `--interval S`
//! (seconds between ticks, default 10) `--hold S` (`BALLAST_PROPOSAL_HOLD`, default 900, the
//! service's) `--bootstrap ADDR` (use a running cluster instead of starting one) `--ballast PATH`
//! (default `target/release/ballast`) `--plan-after` (plan the view read back after the write
//! instead of the sample while it is written) `--read-bench` `--clients N` (default 100) `--seconds S` (per
//! endpoint, default 5) `--only TEXT` (only endpoints whose path contains it). After the REST
//! endpoints it measures the MCP endpoint (`/api/v1/mcp`, one session, calls one after another):
//! `tools/list` and the read tools `get_cluster_health`, `get_cluster_overview`,
//! `get_partition_activity` and `search_topics` (`--mcp-calls N`, default 200 each).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ballast_kafka::{Client, ClientConfig};
use ballast_observer::derive::Windows;
use ballast_schema::Store;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn num(name: &str, default: u64) -> Result<u64, String> {
    match arg(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| format!("{name} needs a number")),
    }
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Kills the child (a process this benchmark started) when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ballast_path() -> PathBuf {
    arg("--ballast").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/ballast")
    })
}

fn start_sim(
    brokers: u64,
    topics: u64,
    per_topic: u64,
    groups: u64,
    seed: u64,
) -> Result<(Reaped, String), String> {
    // `ballast sim` when a binary is named, else this benchmark itself in a process of its own
    // running the same simulator (`--serve-sim`: no need to build the whole service).
    let (bin, sub) = match arg("--ballast") {
        Some(path) => (PathBuf::from(path), "sim"),
        None => (
            std::env::current_exe().map_err(|e| e.to_string())?,
            "--serve-sim",
        ),
    };
    let mut child = Command::new(&bin)
        .args([
            sub,
            "--brokers",
            &brokers.to_string(),
            "--racks",
            "3",
            "--topics",
            &topics.to_string(),
            "--partitions",
            &per_topic.to_string(),
            "--groups",
            &groups.to_string(),
            "--seed",
            &seed.to_string(),
            "--base-port",
            "0",
        ])
        .env("LOG_LEVEL", "WARN")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {} (build it with `cargo build --release -p ballast`): {e}",
                bin.display()
            )
        })?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let bootstrap = line
        .trim()
        .strip_prefix("bootstrap=")
        .ok_or_else(|| format!("unexpected first line from ballast sim: {line:?}"))?
        .to_string();
    Ok((Reaped(child), bootstrap))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn read_bench(
    dir: &std::path::Path,
    bootstrap: &str,
    clients: usize,
    seconds: u64,
    topic: &str,
    topics: u64,
) -> Result<(), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let _web = Reaped(
        Command::new(ballast_path())
            .arg("web")
            .env("BALLAST_DATA_DIR", dir)
            .env("PORT", port.to_string())
            .env("BALLAST_KAFKA_BOOTSTRAP_SERVERS", bootstrap)
            .env("BALLAST_READY_STALE_AFTER", "1h")
            .env("LOG_LEVEL", "WARN")
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start ballast web: {e}"))?,
    );
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("{base}/api/v1/cluster")).send().await {
            if r.status().is_success() {
                break;
            }
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err("ballast web did not answer /api/v1/cluster within 60 s".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "web: first answer (view loaded) after {:.2} s; {clients} concurrent clients, {seconds} s per endpoint",
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<58} {:>8} {:>9} {:>9} {:>9} {:>10}",
        "endpoint", "req/s", "p50 ms", "p99 ms", "max ms", "bytes"
    );
    let paths = [
        "/api/v1/cluster".to_string(),
        "/api/v1/cluster/health".to_string(),
        "/api/v1/cluster/follower-lag?summary=true".to_string(),
        "/api/v1/brokers/racks".to_string(),
        "/api/v1/cluster/logdirs?summary=true".to_string(),
        format!("/api/v1/partitions?topic={topic}"),
        format!("/api/v1/cluster/follower-lag?topic={topic}"),
        "/api/v1/activity/partitions?sortBy=score".to_string(),
        "/api/v1/activity/topics".to_string(),
        "/api/v1/activity/brokers".to_string(),
        "/api/v1/optimize/partitions".to_string(),
        "/api/v1/cluster/comprehensive?summary=true".to_string(),
        "/metrics".to_string(),
        "/api/v1/partitions?minimal=true".to_string(),
        "/api/v1/cluster/follower-lag".to_string(),
        "/api/v1/cluster/comprehensive".to_string(),
        // A page from the middle of the cluster (the default page size).
        format!("/api/v1/cluster/comprehensive?offset={}", topics / 2),
    ];
    let only = std::env::args()
        .skip_while(|a| a != "--only")
        .nth(1)
        .unwrap_or_default();
    for path in paths.into_iter().filter(|p| p.contains(&only)) {
        let url = Arc::new(format!("{base}{path}"));
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..clients {
            let http = http.clone();
            let url = url.clone();
            tasks.spawn(async move {
                let mut times = Vec::new();
                let mut bytes = 0usize;
                let mut errors = 0usize;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    match http.get(url.as_str()).send().await {
                        Ok(r) if r.status().is_success() => match r.bytes().await {
                            Ok(b) => {
                                bytes = b.len();
                                times.push(t.elapsed());
                            }
                            Err(_) => errors += 1,
                        },
                        _ => errors += 1,
                    }
                }
                (times, bytes, errors)
            });
        }
        let mut all = Vec::new();
        let mut bytes = 0;
        let mut errors = 0;
        while let Some(Ok((times, b, e))) = tasks.join_next().await {
            all.extend(times);
            bytes = bytes.max(b);
            errors += e;
        }
        all.sort();
        println!(
            "{:<58} {:>8.0} {:>9.1} {:>9.1} {:>9.1} {:>10}{}",
            path,
            all.len() as f64 / seconds as f64,
            percentile(&all, 0.50).as_secs_f64() * 1000.0,
            percentile(&all, 0.99).as_secs_f64() * 1000.0,
            all.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
            bytes,
            if errors > 0 {
                format!("  ({errors} errors)")
            } else {
                String::new()
            }
        );
    }
    mcp_bench(&http, &base, num("--mcp-calls", 200)? as usize).await
}

/// One MCP session over Streamable HTTP: `initialize`, then `calls` of each measured request.
async fn mcp_bench(http: &reqwest::Client, base: &str, calls: usize) -> Result<(), String> {
    let url = format!("{base}/api/v1/mcp");
    let post = |body: serde_json::Value, session: Option<String>| {
        let mut r = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(s) = session {
            r = r.header("mcp-session-id", s);
        }
        r.send()
    };
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}});
    let answer = post(init, None).await.map_err(|e| e.to_string())?;
    let session = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    answer.bytes().await.map_err(|e| e.to_string())?;
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(initialized, session.clone())
        .await
        .map_err(|e| e.to_string())?;
    println!("MCP, one session, {calls} calls each, one after another:");
    println!(
        "{:<58} {:>9} {:>9} {:>9} {:>10}",
        "request", "p50 ms", "p99 ms", "max ms", "bytes"
    );
    let requests = [
        ("tools/list", serde_json::json!({})),
        (
            "tools/call get_cluster_health",
            serde_json::json!({"name": "get_cluster_health", "arguments": {}}),
        ),
        (
            "tools/call get_cluster_overview",
            serde_json::json!({"name": "get_cluster_overview", "arguments": {}}),
        ),
        (
            "tools/call get_partition_activity (sortBy score)",
            serde_json::json!({"name": "get_partition_activity", "arguments": {"sortBy": "score"}}),
        ),
        (
            "tools/call search_topics",
            serde_json::json!({"name": "search_topics", "arguments": {"query": "a"}}),
        ),
    ];
    for (label, params) in requests {
        let method = label.split(' ').next().unwrap_or(label);
        let mut times = Vec::with_capacity(calls);
        let mut bytes = 0;
        for id in 0..calls {
            let body = serde_json::json!({"jsonrpc": "2.0", "id": id + 2, "method": method, "params": params});
            let t = Instant::now();
            let r = post(body, session.clone())
                .await
                .map_err(|e| e.to_string())?;
            if !r.status().is_success() {
                return Err(format!("{label}: {}", r.status()));
            }
            let b = r.bytes().await.map_err(|e| e.to_string())?;
            times.push(t.elapsed());
            bytes = b.len();
        }
        times.sort();
        println!(
            "{:<58} {:>9.1} {:>9.1} {:>9.1} {:>10}",
            label,
            percentile(&times, 0.50).as_secs_f64() * 1000.0,
            percentile(&times, 0.99).as_secs_f64() * 1000.0,
            times.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
            bytes
        );
    }
    Ok(())
}

fn secs(ms: u64) -> String {
    format!("{:.2}", ms as f64 / 1000.0)
}

/// `--serve-sim`: the simulator `ballast sim` runs, generated from the same flags; prints the
/// bootstrap line and serves until killed.
async fn serve_sim() -> Result<(), String> {
    let num32 = |name: &str, default: u64| -> Result<u32, String> {
        u32::try_from(num(name, default)?).map_err(|_| format!("{name} is too large"))
    };
    let sim = ballast_simcluster::SimCluster::start(ballast_simcluster::SimConfig {
        scenario: ballast_simcluster::Scenario::Generate(ballast_simcluster::GenerateParams {
            brokers: num32("--brokers", 60)?,
            racks: 3,
            topics: num32("--topics", 600)?,
            partitions_per_topic: num32("--partitions", 100)?,
            groups: Some(num32("--groups", 860)?),
            seed: num("--seed", 1)?,
            ..ballast_simcluster::GenerateParams::default()
        }),
        base_port: 0,
        tick: Duration::from_millis(100),
        ..ballast_simcluster::SimConfig::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    println!("bootstrap={}", sim.bootstrap());
    loop {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}

#[tokio::main]
async fn main() -> Result<(), String> {
    if flag("--serve-sim") {
        return serve_sim().await;
    }
    let brokers = num("--brokers", 60)?;
    let topics = num("--topics", 600)?.max(1);
    let per_topic = num("--partitions", 100)?.max(1);
    let groups = num("--groups", 860)?;
    let seed = num("--seed", 1)?;
    let ticks = num("--ticks", 3)?.max(1);
    let interval = num("--interval", 10)?;
    let clients = num("--clients", 100)? as usize;
    let seconds = num("--seconds", 5)?;

    let (sim, bootstrap) = match arg("--bootstrap") {
        Some(b) => (None, b),
        None => {
            let started = Instant::now();
            let (child, bootstrap) = start_sim(brokers, topics, per_topic, groups, seed)?;
            println!(
                "simulator (own process): {brokers} brokers in 3 racks, {topics} topics x {per_topic} partitions ({} in all), RF 3, {groups} groups, started in {:.1} s",
                topics * per_topic,
                started.elapsed().as_secs_f64()
            );
            (Some(child), bootstrap)
        }
    };

    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let db = dir.path().join("ballast.db");
    Store::migrate(&db).map_err(|e| e.to_string())?;
    let store = Store::open(&db).map_err(|e| e.to_string())?;
    let client = Client::connect(
        ClientConfig::plaintext(&bootstrap).with_request_timeout(Duration::from_secs(30)),
    )
    .await
    .map_err(|e| format!("cannot connect: {e}"))?;
    let windows = Windows {
        rate_window_ms: 30 * 60_000,
        retention_ms: 7 * 24 * 3_600_000,
        partition_reading_ms: 3_600_000,
    };
    let proposal_settings = ballast_observer::proposals::Settings {
        policy: ballast_balancer::Policy::default(),
        started_at_ms: 0,
        warmup_ms: 0,
        max_gap_ms: i64::MAX,
        throttles_managed: true,
        readings_kept: 100,
        proposals_kept: 200,
        // `BALLAST_PROPOSAL_HOLD` (default 15 min, `--hold S`): with 0 every tick whose plan
        // differs at all adds a proposal and builds its detail.
        hold_ms: i64::try_from(num("--hold", 900)?.saturating_mul(1000)).unwrap_or(i64::MAX),
        sample_interval_ms: 60_000,
        rate_window_ms: windows.rate_window_ms,
    };
    let mut history = None;
    let mut first_topic = String::new();
    let mut totals = Vec::new();
    let mut peak_all = 0u64;
    for i in 0..=ticks {
        if i == ticks {
            // A restarted observer first reloads its rate history from the database.
            history = None;
        }
        // Each tick's peaks are its own: the kernel's peak resident memory (VmHWM) is reset
        // to the current resident memory first.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let started = Instant::now();
        // As the worker does: the sample is planned while it is written (`--plan-after`: the
        // view is read back and planned after the write, as before).
        let plan_while_writing = (!flag("--plan-after")).then(|| proposal_settings.clone());
        let report = ballast_observer::tick_planned(
            &client,
            &store,
            &mut history,
            windows,
            now_ms(),
            plan_while_writing,
        )
        .await
        .map_err(|e| ballast_runtime::error_chain(&e))?;
        let planning: Vec<String> = report
            .planned
            .as_ref()
            .map(|p| {
                p.timings
                    .iter()
                    .map(|(k, v)| format!("{k} {}", secs(*v)))
                    .collect()
            })
            .unwrap_or_default();
        let plan_ms = report.plan_ms;
        let mut report = report;
        let planned = report.planned.take();
        let tick_ms = started.elapsed().as_millis() as u64;
        // The worker's tick goes on with the settings pass (broker configs every sample, ACLs
        // and quotas on the first of every five) and the proposal evaluation.
        let settings_started = Instant::now();
        let s = &report.summary;
        let now = now_ms();
        let _ =
            ballast_observer::settings_pass::broker_configs(&client, &store, &s.brokers, now).await;
        if i == 0 {
            let _ = ballast_observer::settings_pass::security(&client, &store, now).await;
        }
        let settings_ms = settings_started.elapsed().as_millis() as u64;
        let eval_started = Instant::now();
        let evaluation = match planned {
            Some(planned) => {
                ballast_observer::proposals::finish(&store, &proposal_settings, planned, now_ms())
                    .map(Some)
            }
            None => ballast_observer::proposals::evaluate(&store, &proposal_settings, now_ms()),
        }
        .map_err(|e| ballast_runtime::error_chain(&e))?;
        let eval_ms = eval_started.elapsed().as_millis() as u64;
        let (rss, peak) = ballast_observer::memory();
        let steps: Vec<String> = s
            .timings
            .iter()
            .map(|(k, v)| format!("{k} {}", secs(*v)))
            .collect();
        let total = tick_ms + settings_ms + eval_ms;
        let label = if i == ticks {
            "tick after a restart (history reloaded from the database)".to_string()
        } else {
            format!("tick {}", i + 1)
        };
        println!(
            "{label}: {} s total = sample {} s ({}) + derive {} s + write {} s ({} rows; alongside it planning {} s: {}) + settings pass {} s + proposal evaluation {} s ({}; {} moves)",
            secs(total),
            secs(report.sample_ms),
            steps.join(", "),
            secs(report.derive_ms),
            secs(report.write_ms),
            report.stats.rows_written,
            secs(plan_ms),
            if planning.is_empty() { "none".to_string() } else { planning.join(", ") },
            secs(settings_ms),
            secs(eval_ms),
            evaluation.as_ref().map_or(String::new(), |e| e
                .timings
                .iter()
                .map(|(k, v)| format!("{k} {}", secs(*v)))
                .collect::<Vec<_>>()
                .join(", ")),
            evaluation.as_ref().map_or(0, |e| e.plan.moves.len()),
        );
        drop(evaluation);
        let peaks: Vec<String> = report
            .peaks
            .iter()
            .map(|(phase, bytes)| format!("{phase} {:.0}", mib(*bytes)))
            .chain(std::iter::once(format!("evaluation {:.0}", mib(peak))))
            .collect();
        println!(
            "  {} brokers, {} partitions, {} replicas, {} groups ({} group offsets); observer RSS {:.0} MiB, peak (VmHWM) {:.0} MiB; peak by the end of each phase (MiB): {}",
            s.brokers.len(),
            s.partitions,
            s.replicas,
            s.groups,
            s.group_offsets,
            mib(rss),
            mib(peak),
            peaks.join(", "),
        );
        peak_all = peak_all.max(peak);
        if first_topic.is_empty() {
            let meta = client
                .refresh_metadata()
                .await
                .map_err(|e| ballast_runtime::error_chain(&e))?;
            first_topic = meta
                .topics
                .iter()
                .map(|t| t.name.clone())
                .min()
                .unwrap_or_default();
        }
        if i == 0 && flag("--dump") {
            // What a sample reads, to compare with Kafka's tools (kafka-consumer-groups.sh
            // --describe, kafka-log-dirs.sh --describe, kafka-get-offsets.sh).
            let s = ballast_observer::sample::take(&client, now_ms())
                .await
                .map_err(|e| ballast_runtime::error_chain(&e))?;
            for (group, offsets) in &s.committed {
                for (tp, offset) in offsets {
                    println!("committed {group} {tp} {offset}");
                }
            }
            for (tp, p) in &s.partitions {
                let start = p.earliest.unwrap_or(-1);
                let end = p.latest.unwrap_or(-1);
                println!("offsets {tp} earliest {start} latest {end}");
            }
            for (tp, broker, log) in s.replica_logs() {
                println!(
                    "replica {tp} broker {broker} dir {} size {}",
                    log.dir, log.size
                );
            }
            for (topic, meta) in &s.topics {
                println!(
                    "topic {topic} cleanup.policy {:?} min.insync {:?} retention.ms {:?} retention.bytes {:?}",
                    meta.cleanup_policy,
                    s.min_insync.get(topic),
                    meta.retention_ms,
                    meta.retention_bytes
                );
            }
            for (group, g) in &s.groups {
                println!(
                    "group {group} {:?} members {:?} coordinator {:?}",
                    g.state, g.members, g.coordinator
                );
            }
        }
        totals.push(total);
        if i < ticks {
            tokio::time::sleep(Duration::from_secs(interval)).await;
        }
    }
    let peak = peak_all;
    let steady: Vec<u64> = totals
        .iter()
        .skip(1)
        .take(ticks as usize - 1)
        .copied()
        .collect();
    println!(
        "summary: first tick {} s, later ticks {} s, after a restart {} s; observer peak RSS (VmHWM, highest tick) {:.0} MiB; database {:.0} MiB",
        secs(totals[0]),
        if steady.is_empty() { "-".to_string() } else { steady.iter().map(|t| secs(*t)).collect::<Vec<_>>().join(" / ") },
        secs(*totals.last().unwrap_or(&0)),
        mib(peak),
        mib(std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
            + std::fs::metadata(dir.path().join("ballast.db-wal"))
                .map(|m| m.len())
                .unwrap_or(0))
    );
    drop(client);
    drop(sim);
    if flag("--read-bench") {
        read_bench(
            dir.path(),
            &bootstrap,
            clients,
            seconds,
            &first_topic,
            topics,
        )
        .await?;
    }
    Ok(())
}
