use ballast_config::{LogFormat, LogLevel};
use tracing::Level;

/// Structured logs on stderr, tagged with the process name. `LOG_LEVEL` is DEBUG, INFO or WARN.
/// Safe to call more than once (later calls are ignored), which tests rely on.
pub fn init_logging(process: &'static str, level: LogLevel, format: LogFormat) {
    let max = match level {
        LogLevel::Debug => Level::DEBUG,
        LogLevel::Info => Level::INFO,
        LogLevel::Warn => Level::WARN,
    };
    let builder = tracing_subscriber::fmt()
        .with_max_level(max)
        .with_writer(std::io::stderr)
        .with_target(false);
    let result = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        LogFormat::Text => builder.with_ansi(false).try_init(),
    };
    if result.is_ok() {
        tracing::debug!(process, "logging started");
    }
}
