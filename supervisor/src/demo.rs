//! `ballast demo`: the service on its embedded default with short timings.
//!
//! The embedded default is a simulated Kafka cluster (`crates/simcluster`). It is not built yet,
//! so for now the demo runs the real supervisor and workers against no cluster and says so.

use std::process::ExitCode;

use ballast_config::RawConfig;

/// Settings the demo fixes; the environment may still override the timings.
fn demo_settings(port: u16, data_dir: &str) -> Vec<(String, String)> {
    [
        ("PORT", port.to_string()),
        ("BALLAST_DATA_DIR", data_dir.to_string()),
        // No simulated cluster exists yet: this address is a placeholder nothing listens on.
        (
            "BALLAST_KAFKA_BOOTSTRAP_SERVERS",
            "127.0.0.1:9092".to_string(),
        ),
        ("BALLAST_SAMPLE_INTERVAL", "5s".to_string()),
        ("BALLAST_WARMUP", "30s".to_string()),
        ("BALLAST_HEARTBEAT_INTERVAL", "1s".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub fn run(port: u16) -> ExitCode {
    let data_dir = std::env::temp_dir().join(format!("ballast-demo-{port}"));
    let data_dir = data_dir.to_string_lossy().into_owned();
    let mut vars: Vec<(String, String)> = demo_settings(port, &data_dir);
    // The environment wins for everything but what makes this a demo.
    let fixed = [
        "PORT",
        "BALLAST_DATA_DIR",
        "BALLAST_KAFKA_BOOTSTRAP_SERVERS",
    ];
    vars.retain(|(k, _)| fixed.contains(&k.as_str()) || std::env::var(k).is_err());
    let env = std::env::vars()
        .filter(|(k, _)| !fixed.contains(&k.as_str()))
        .chain(vars);
    let raw = match RawConfig::from_pairs(env, None) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("ballast: invalid configuration: {e}");
            return ExitCode::from(crate::EXIT_CONFIG);
        }
    };
    let (raw, config) = match crate::load_raw(raw) {
        Ok(pair) => pair,
        Err(code) => return code,
    };
    eprintln!(
        "ballast demo: NOT COMPLETE YET. The simulated Kafka cluster (crates/simcluster) is not built,\n\
         so this runs the real supervisor and workers with no cluster behind them: readiness stays 503,\n\
         and there are no proposals or dashboard yet.\n\
         What works now: http://127.0.0.1:{port}/api/v1/health  /api/v1/version  /metrics\n\
         Data directory: {data_dir}  (stop with Ctrl-C)"
    );
    crate::supervise(&raw, &config)
}
