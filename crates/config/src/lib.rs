//! The typed configuration of every ballast process.
//!
//! Configuration comes from environment variables, optionally merged over an env file given
//! with `--config` (the real environment wins). [`SETTINGS`] is the one table of known
//! settings: it holds the defaults and drives `ballast config check` ([`effective`]), the
//! example env file ([`example_env_file`]) and the warnings about unknown `BALLAST_` variables.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let raw = ballast_config::RawConfig::from_process_env(None)?;
//! match ballast_config::Config::from_raw(&raw) {
//!     Ok(config) => println!("listening on {}:{}", config.bind, config.port),
//!     Err(errors) => errors.iter().for_each(|e| eprintln!("{e}")),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Architecture Invariant: this crate does no IO beyond reading the env file and checking that
//! the configured TLS files load; it never logs (callers log [`RawConfig::warnings`]).

mod config;
mod error;
mod kafka;
mod raw;
mod reader;
mod report;
mod settings;
mod values;

pub use config::{parse_topic_rf, TopicRf};
pub use config::{
    AgentSettings, AuthConfig, BalanceConfig, ChatConfig, Config, HealConfig, HealWindow,
    LicenseConfig, LogFormat, LogLevel, OidcProvider, PlanSettings, RollConfig, ThrottleConfig,
    Timing, AGENT_TOKEN_MIN_CHARS, PAT_HASH_SECRET_MIN_CHARS,
};
pub use error::{ConfigError, Secret};
pub use kafka::{KafkaConfig, OAuthConfig, SaslConfig, SaslMechanism, SecurityProtocol, TlsFiles};
pub use raw::{parse_env_file, RawConfig, Source};
pub use report::{effective, example_env_file, EffectiveSetting};
pub use settings::{
    is_provider_secret, provider_variable, setting_spec, SettingSpec, INTERNAL_VARIABLES,
    PROVIDER_SETTINGS, SETTINGS,
};
pub use values::{format_duration, parse_bool, parse_duration, BalanceFloor, TimeOfDay};
