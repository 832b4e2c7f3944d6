//! `ballast`: one binary for the supervisor, its workers and the operator commands.
//! The command line is a contract (shared/contracts/cli.md): add flags, never break these.

mod agent;
mod demo;
mod license_cmd;
mod man_cmd;
mod mcp_cmd;
mod plan_cmd;
mod restart;
mod sim;
mod snapshot_cmd;
mod status;
mod supervise;
mod token_cmd;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ballast_config::{Config, RawConfig};
use ballast_runtime::{error_chain, init_logging, run_worker, WorkerContext, WorkerError};
use clap::{Parser, Subcommand};

/// Exit code for a configuration or usage problem: nothing was started.
const EXIT_CONFIG: u8 = 2;
/// Exit code for a failure after configuration was accepted.
const EXIT_FAILURE: u8 = 1;

#[derive(Parser)]
#[command(
    name = "ballast",
    version = ballast_web::LONG_VERSION,
    about = "keeps Apache Kafka clusters balanced and operable"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service: the supervisor starts and watches the observer, executor, healer and web processes
    Run {
        /// An env file (KEY=VALUE lines); variables set in the environment win over it
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Try ballast on its embedded default, with short timings
    Demo {
        /// Port of the web interface
        #[arg(long, default_value_t = 8080)]
        port: u16,
    },
    /// Run a simulated Kafka cluster on loopback ports (see `ballast sim --help`)
    #[command(disable_help_flag = true)]
    Sim(sim::Raw),
    /// Print a ballast.plan/v1 document for a ballast.snapshot/v1 file (offline, same planner as the service)
    Plan {
        /// The ballast.snapshot/v1 file to plan (`ballast snapshot --out FILE` writes one)
        #[arg(long, value_name = "FILE")]
        snapshot: PathBuf,
        /// An env file with balancing settings (BALLAST_BALANCE_*, BALLAST_MOVE_COOLDOWN, ...)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print tables for people (summary, each load before and after, the moves) instead of JSON
        #[arg(long)]
        table: bool,
    },
    /// Read the cluster named by the BALLAST_KAFKA_* settings and write a ballast.snapshot/v1 file
    Snapshot {
        /// Where to write the snapshot (JSON; replaced if it exists)
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Time between the two readings that rates are measured over
        #[arg(long, default_value = "10s", value_parser = parse_window)]
        window: std::time::Duration,
        /// An env file with the BALLAST_KAFKA_* settings of the cluster to read
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Show the supervisor and workers of a data directory: pids, states, restarts, heartbeats
    Status {
        /// The service's env file (its BALLAST_DATA_DIR names the data directory)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// License tokens: keygen, issue, inspect (vendor tooling)
    License {
        #[command(subcommand)]
        command: license_cmd::LicenseCommand,
    },
    /// Call the service's MCP tools from a terminal, as an agent would (try agent approval: README)
    Mcp {
        #[command(subcommand)]
        command: mcp_cmd::McpCommand,
    },
    /// Personal access tokens made by an operator: create (prints the value once), list, revoke
    Token {
        #[command(subcommand)]
        command: token_cmd::TokenCommand,
    },
    /// The on-broker agent: reports the broker to the service and restarts or upgrades on its request (docs/rolling-restarts.md)
    Agent {
        /// An env file (KEY=VALUE lines) with the BALLAST_AGENT_* settings
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Print the credential of one broker's agent, made from this service's BALLAST_AGENT_TOKEN (give it to that host's agent as its BALLAST_AGENT_TOKEN)
    AgentToken {
        /// The broker the agent runs beside
        #[arg(long)]
        broker: i32,
        /// The service's env file (BALLAST_AGENT_TOKEN)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Stop, start or restart a broker of `ballast sim` through its control API, or check it runs (exit 0) — a restart and status command for agents on a simulated cluster
    SimBroker {
        /// The control API's URL, e.g. http://127.0.0.1:19999
        #[arg(long, value_name = "URL")]
        control: String,
        /// restart, stop, start or alive
        action: String,
        /// The broker id
        broker: i32,
        /// restart: how long the broker stays down
        #[arg(long, default_value = "2s", value_parser = parse_window)]
        down: std::time::Duration,
    },
    /// Print the manual page (roff): commands and every setting
    Man,
    /// Print the third-party notices: every crate compiled into this binary, its licence and licence text
    Notices,
    /// Inspect configuration
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    #[command(hide = true)]
    Observer,
    #[command(hide = true)]
    Executor,
    #[command(hide = true)]
    Healer,
    #[command(hide = true)]
    Web,
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Validate and print the effective configuration, secrets redacted
    Check {
        /// An env file (KEY=VALUE lines); variables set in the environment win over it
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Print a commented env file with every setting and its default
    Example,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run { config } => run(config.as_deref()),
        Command::Demo { port } => demo::run(port),
        Command::Sim(raw) => sim::run(raw),
        Command::Plan {
            snapshot,
            config,
            table,
        } => plan_cmd::run(&snapshot, config.as_deref(), table),
        Command::Snapshot {
            out,
            window,
            config,
        } => snapshot_cmd::run(&out, window, config.as_deref()),
        Command::Status { config, json } => status::run(config.as_deref(), json),
        Command::License { command } => license_cmd::run(command),
        Command::Token { command } => token_cmd::run(command),
        Command::Mcp { command } => mcp_cmd::run(command),
        Command::Agent { config } => agent::run(config.as_deref()),
        Command::AgentToken { broker, config } => agent::agent_token(broker, config.as_deref()),
        Command::SimBroker {
            control,
            action,
            broker,
            down,
        } => agent::sim_broker(&control, &action, broker, down),
        Command::Man => man_cmd::run(<Cli as clap::CommandFactory>::command()),
        Command::Notices => match ballast_web::notices::text() {
            Ok(text) => {
                use std::io::Write;
                // A closed pipe (`| head`) is the reader's choice, not a failure.
                let _ = std::io::stdout().write_all(text.as_bytes());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ballast notices: {e}");
                ExitCode::from(EXIT_FAILURE)
            }
        },
        Command::Config { command } => match command {
            ConfigCommand::Check { config } => config_check(config.as_deref()),
            ConfigCommand::Example => {
                print!("{}", ballast_config::example_env_file());
                ExitCode::SUCCESS
            }
        },
        Command::Observer => worker(ballast_observer::NAME, ballast_observer::run),
        Command::Executor => worker(ballast_executor::NAME, ballast_executor::run),
        Command::Healer => worker(ballast_healer::NAME, ballast_healer::run),
        Command::Web => worker(ballast_web::NAME, ballast_web::run),
    }
}

fn parse_window(s: &str) -> Result<std::time::Duration, String> {
    match ballast_config::parse_duration(s)? {
        d if d.is_zero() => Err("must be above 0".to_string()),
        d => Ok(d),
    }
}

/// Reads and validates configuration; on failure prints one line per problem and gives the exit code.
fn load(file: Option<&Path>) -> Result<(RawConfig, Config), ExitCode> {
    let raw = RawConfig::from_process_env(file).map_err(|e| {
        eprintln!("ballast: invalid configuration: {e}");
        ExitCode::from(EXIT_CONFIG)
    })?;
    load_raw(raw)
}

fn load_raw(raw: RawConfig) -> Result<(RawConfig, Config), ExitCode> {
    match Config::from_raw(&raw) {
        Ok(config) => Ok((raw, config)),
        Err(errors) => {
            for e in errors {
                eprintln!("ballast: invalid configuration: {e}");
            }
            Err(ExitCode::from(EXIT_CONFIG))
        }
    }
}

fn run(file: Option<&Path>) -> ExitCode {
    match load(file) {
        Ok((raw, config)) => supervise(&raw, &config),
        Err(code) => code,
    }
}

/// Runs the supervisor on accepted configuration.
fn supervise(raw: &RawConfig, config: &Config) -> ExitCode {
    init_logging("supervisor", config.log_level, config.log_format);
    for warning in raw.warnings() {
        tracing::warn!("{warning}");
    }
    match supervise::run(raw, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(supervise::RunError::Config(msg)) => {
            eprintln!("ballast: invalid configuration: {msg}");
            ExitCode::from(EXIT_CONFIG)
        }
        Err(supervise::RunError::Startup(msg)) => {
            eprintln!("ballast: cannot start: {msg}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn config_check(file: Option<&Path>) -> ExitCode {
    let raw = match RawConfig::from_process_env(file) {
        Ok(raw) => raw,
        Err(e) => {
            eprintln!("ballast: invalid configuration: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let verdict = Config::from_raw(&raw);
    let rows = ballast_config::effective(&raw);
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for row in &rows {
        let source = match &row.source {
            ballast_config::Source::Env => "env".to_string(),
            ballast_config::Source::File(path) => format!("file {}", path.display()),
            ballast_config::Source::Default => "default".to_string(),
        };
        println!("{:width$}  {:40}  ({source})", row.name, row.value);
    }
    for warning in raw.warnings() {
        eprintln!("ballast: warning: {warning}");
    }
    match verdict {
        Ok(_) => {
            println!("configuration is valid");
            ExitCode::SUCCESS
        }
        Err(errors) => {
            for e in errors {
                eprintln!("ballast: invalid configuration: {e}");
            }
            ExitCode::from(EXIT_CONFIG)
        }
    }
}

/// Entry point of a worker process started by the supervisor.
fn worker<F, Fut>(name: &'static str, body: F) -> ExitCode
where
    F: FnOnce(WorkerContext) -> Fut,
    Fut: std::future::Future<Output = Result<(), WorkerError>>,
{
    let config = match load(None) {
        Ok((_, config)) => config,
        Err(code) => return code,
    };
    init_logging(name, config.log_level, config.log_format);
    match run_worker(name, config, body) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %error_chain(&e), "worker failed");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

#[cfg(test)]
mod cli_tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every visible command and every flag or argument of it says what it is for.
    #[test]
    fn every_command_and_every_flag_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" || arg.is_hide_set() {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} --{id}"));
                }
            }
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                let here = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() && sub.get_name() != "help" {
                    missing.push(here.clone());
                }
                // `ballast sim` parses its own flags (`ballast sim --help`).
                if sub.get_name() != "sim" {
                    walk(sub, &here, missing);
                }
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "ballast", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }
}
