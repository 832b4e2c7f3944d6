//! `ballast snapshot --out FILE`: reads the cluster named by the `BALLAST_KAFKA_*` settings twice,
//! `--window` apart (rates are the growth in between), and writes a `ballast.snapshot/v1` file.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use ballast_runtime::{client_config, error_chain, format_rfc3339_ms, Clock, SystemClock};

pub fn run(out: &Path, window: Duration, config: Option<&Path>) -> ExitCode {
    let config = match crate::load(config) {
        Ok((_, config)) => config,
        Err(code) => return code,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ballast: cannot start the async runtime: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    let result = runtime.block_on(async {
        let client = ballast_kafka::Client::connect(client_config(&config.kafka))
            .await
            .map_err(|e| format!("cannot reach the cluster: {}", error_chain(&e)))?;
        let first = ballast_observer::sample::take(&client, SystemClock.now_ms())
            .await
            .map_err(|e| format!("cannot read the cluster: {}", error_chain(&e)))?;
        tokio::time::sleep(window).await;
        let now = SystemClock.now_ms();
        let second = ballast_observer::sample::take(&client, now)
            .await
            .map_err(|e| format!("cannot read the cluster: {}", error_chain(&e)))?;
        Ok::<_, String>(ballast_observer::sample::snapshot(
            &first,
            &second,
            format_rfc3339_ms(now),
        ))
    });
    let snapshot = match result {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ballast: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    let text = match serde_json::to_string_pretty(&snapshot) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ballast: cannot encode the snapshot: {e}");
            return ExitCode::from(crate::EXIT_FAILURE);
        }
    };
    // Write next to the target and rename, so a reader never sees half a file.
    let tmp = out.with_extension("tmp");
    if let Err(e) = std::fs::write(&tmp, text + "\n").and_then(|()| std::fs::rename(&tmp, out)) {
        eprintln!("ballast: cannot write {}: {e}", out.display());
        return ExitCode::from(crate::EXIT_FAILURE);
    }
    eprintln!(
        "ballast: wrote {} ({} brokers, {} partitions, rates over {})",
        out.display(),
        snapshot.brokers.len(),
        snapshot.partitions.len(),
        ballast_config::format_duration(window)
    );
    ExitCode::SUCCESS
}
