//! The typed configuration and its validation.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{ConfigError, Secret};
use crate::kafka::{read_kafka, KafkaConfig};
use crate::raw::RawConfig;
use crate::reader::Reader;
use crate::values::{parse_balance_floor, parse_http_url, parse_list, BalanceFloor, TimeOfDay};

/// The whole configuration of a ballast process.
#[derive(Debug, Clone)]
pub struct Config {
    /// `PORT`
    pub port: u16,
    /// `BALLAST_BIND`
    pub bind: IpAddr,
    /// `BALLAST_HTTP_ROUTE_CONCURRENCY`: requests one route serves at once
    pub http_route_concurrency: usize,
    /// `BALLAST_HTTP_QUEUE_WAIT` (may be 0): how long a request waits for its route
    pub http_queue_wait: Duration,
    /// `BALLAST_LIVE_READ_MAX_AGE` (may be 0): how old a shared live read may be when served
    pub live_read_max_age: Duration,
    /// `BALLAST_DATA_DIR`
    pub data_dir: PathBuf,
    /// `LOG_LEVEL`
    pub log_level: LogLevel,
    /// `LOG_FORMAT`
    pub log_format: LogFormat,
    pub kafka: KafkaConfig,
    pub balance: BalanceConfig,
    pub throttle: ThrottleConfig,
    pub heal: HealConfig,
    pub chat: ChatConfig,
    pub roll: RollConfig,
    pub license: LicenseConfig,
    pub auth: AuthConfig,
    pub timing: Timing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogLevel {
    Debug,
    #[default]
    Info,
    Warn,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "DEBUG",
            LogLevel::Info => "INFO",
            LogLevel::Warn => "WARN",
        }
    }
}

impl FromStr for LogLevel {
    type Err = String;

    /// Case-insensitive.
    fn from_str(s: &str) -> Result<LogLevel, String> {
        match s.to_ascii_uppercase().as_str() {
            "DEBUG" => Ok(LogLevel::Debug),
            "INFO" => Ok(LogLevel::Info),
            "WARN" => Ok(LogLevel::Warn),
            _ => Err(format!("must be DEBUG, INFO or WARN, got {s:?}")),
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    /// Case-insensitive.
    fn from_str(s: &str) -> Result<LogFormat, String> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("must be text or json, got {s:?}")),
        }
    }
}

/// Proposal generation.
#[derive(Debug, Clone)]
pub struct BalanceConfig {
    /// `BALLAST_BALANCE_THRESHOLD`: percent from the fair share, above 0 and below 50; a broker
    /// beyond twice this triggers moves
    pub threshold_percent: f64,
    /// `BALLAST_BALANCE_FLOOR`
    pub floor: BalanceFloor,
    /// `BALLAST_BALANCE_WORKERS`: planner threads, 0 = one per CPU
    pub workers: usize,
    /// `BALLAST_PROPOSAL_MAX_PARTITIONS`: `None` = unlimited (the setting is 0)
    pub proposal_max_partitions: Option<usize>,
}

/// Reassignment execution.
#[derive(Debug, Clone)]
pub struct ThrottleConfig {
    /// `BALLAST_THROTTLE_RATE_MB`: replication throttle in MB/s, 1..=`max_rate_mb`
    pub rate_mb: u64,
    /// `BALLAST_THROTTLE_MAX_RATE_MB`: the highest rate the tuning API accepts
    pub max_rate_mb: u64,
    /// `BALLAST_THROTTLE_MANAGED`: ballast owns throttles and clears leftovers at start
    pub managed: bool,
    /// `BALLAST_MOVE_MAX_PER_BROKER`: concurrent moves per broker, at least 1
    pub move_max_per_broker: u32,
    /// `BALLAST_MOVE_STALL_READINGS`: executor readings without copied bytes growing before an
    /// in-flight move reads stalled, at least 1
    pub move_stall_readings: u32,
}

/// Self-healing.
#[derive(Debug, Clone)]
pub struct HealConfig {
    /// `BALLAST_HEAL_DRY_RUN`
    pub dry_run: bool,
    /// `BALLAST_HEAL_MAX_PARTITIONS_PER_RUN`: `None` = unlimited (the setting is 0)
    pub max_partitions_per_run: Option<u32>,
    /// `BALLAST_HEAL_WINDOW_START` / `_END`: `None` = any time
    pub window: Option<HealWindow>,
    /// `BALLAST_HEAL_CRITICAL_ENABLED`, `_REPLICATION_ENABLED`, `_ACTIVITY_ENABLED`
    pub critical_enabled: bool,
    pub replication_enabled: bool,
    pub activity_enabled: bool,
    /// `BALLAST_HEAL_DEAD_BROKER_GRACE`
    pub dead_broker_grace: Duration,
    /// `BALLAST_HEAL_TARGET_REPLICATION_FACTOR`: 0 = raise none
    pub target_replication_factor: u32,
    /// `BALLAST_HEAL_TOPIC_REPLICATION_FACTOR`, in the order given
    pub topic_replication_factor: Vec<TopicRf>,
}

/// One per-topic replication-factor rule: an exact topic name, or a prefix (`logs.*` is written
/// with a trailing `*`), and its target (0 = leave the topic alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicRf {
    pub pattern: String,
    pub prefix: bool,
    pub rf: u32,
}

impl HealConfig {
    /// The target replication factor of `topic`: an exact rule first, then the longest matching
    /// prefix, then the default.
    pub fn target_rf(&self, topic: &str) -> u32 {
        if let Some(r) = self
            .topic_replication_factor
            .iter()
            .find(|r| !r.prefix && r.pattern == topic)
        {
            return r.rf;
        }
        self.topic_replication_factor
            .iter()
            .filter(|r| r.prefix && topic.starts_with(&r.pattern))
            .max_by_key(|r| r.pattern.len())
            .map_or(self.target_replication_factor, |r| r.rf)
    }
}

/// Parses `name=rf,prefix*=rf`.
pub fn parse_topic_rf(value: &str) -> Result<Vec<TopicRf>, String> {
    let mut out = Vec::new();
    for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, rf) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not topic=rf"))?;
        let name = name.trim();
        let rf: u32 = rf
            .trim()
            .parse()
            .ok()
            .filter(|rf| *rf <= 16)
            .ok_or_else(|| format!("{item:?}: the replication factor must be 0 to 16"))?;
        let (pattern, prefix) = match name.strip_suffix('*') {
            Some(p) => (p, true),
            None => (name, false),
        };
        if pattern.is_empty() && !prefix {
            return Err(format!("{item:?}: the topic name is empty"));
        }
        out.push(TopicRf {
            pattern: pattern.to_string(),
            prefix,
            rf,
        });
    }
    Ok(out)
}

/// The daily UTC window self-healing runs in; an end before the start spans midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealWindow {
    pub start: TimeOfDay,
    pub end: TimeOfDay,
}

impl HealWindow {
    /// Whether `t` is inside the window: start inclusive, end exclusive.
    pub fn contains(&self, t: TimeOfDay) -> bool {
        if self.start <= self.end {
            self.start <= t && t < self.end
        } else {
            t >= self.start || t < self.end
        }
    }
}

/// The AI chat assistant.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// `BALLAST_CHAT_ENABLED`
    pub enabled: bool,
    /// `BALLAST_CHAT_PROVIDER`: `openai` or `anthropic`
    pub provider: String,
    /// `BALLAST_CHAT_BASE_URL`, without a trailing slash; `None`: the provider's default
    pub base_url: Option<String>,
    /// `BALLAST_CHAT_API_KEY`
    pub api_key: Option<Secret>,
    /// `BALLAST_CHAT_MODEL` (required when enabled)
    pub model: Option<String>,
    /// `BALLAST_CHAT_TIMEOUT`, above 0
    pub timeout: Duration,
    /// `BALLAST_CHAT_MAX_TOKENS`, above 0
    pub max_tokens: u32,
}

/// The service's side of the on-broker agents and rolling restarts (docs/rolling-restarts.md).
#[derive(Debug, Clone)]
pub struct RollConfig {
    /// `BALLAST_AGENT_TOKEN`: `None` refuses every agent request
    pub agent_token: Option<Secret>,
    /// `BALLAST_AGENT_STALE_AFTER`, above 0
    pub agent_stale_after: Duration,
    /// `BALLAST_ROLL_HEALTHY_TIMEOUT`, above 0
    pub healthy_timeout: Duration,
    /// `BALLAST_ROLL_LEADER_TIMEOUT`, above 0
    pub leader_timeout: Duration,
    /// `BALLAST_ROLL_RESTART_TIMEOUT`, above 0
    pub restart_timeout: Duration,
    /// `BALLAST_ROLL_RECOVERY_TIMEOUT`, above 0
    pub recovery_timeout: Duration,
    /// `BALLAST_ROLL_SETTLE` (may be 0)
    pub settle: Duration,
}

/// The least number of characters of `BALLAST_AGENT_TOKEN`.
pub const AGENT_TOKEN_MIN_CHARS: usize = 32;

/// What `ballast agent` needs (docs/rolling-restarts.md), validated without the service's
/// settings.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// `BALLAST_AGENT_SERVICE_URL`, without a trailing slash
    pub service_url: String,
    /// `BALLAST_AGENT_TOKEN`
    pub token: Secret,
    /// `BALLAST_AGENT_CA_FILE`
    pub ca_file: Option<PathBuf>,
    /// `BALLAST_AGENT_BROKER_ID`
    pub broker_id: i32,
    /// `BALLAST_AGENT_NODE_ID`; `None`: the host name
    pub node_id: Option<String>,
    /// `BALLAST_AGENT_RESTART_COMMAND`
    pub restart_command: String,
    /// `BALLAST_AGENT_STATUS_COMMAND`
    pub status_command: Option<String>,
    /// `BALLAST_AGENT_LOG_DIRS`
    pub log_dirs: Vec<PathBuf>,
    /// `BALLAST_AGENT_HEARTBEAT_INTERVAL`, above 0
    pub heartbeat_interval: Duration,
    /// `BALLAST_AGENT_COMMAND_TIMEOUT`, above 0
    pub command_timeout: Duration,
    /// `LOG_LEVEL`
    pub log_level: LogLevel,
    /// `LOG_FORMAT`
    pub log_format: LogFormat,
}

impl AgentSettings {
    pub fn from_raw(raw: &RawConfig) -> Result<AgentSettings, Vec<ConfigError>> {
        let mut r = Reader::new(raw);
        let service_url = r.parse("BALLAST_AGENT_SERVICE_URL", parse_http_url);
        if service_url.is_none() && !r.is_set("BALLAST_AGENT_SERVICE_URL") {
            r.fail("BALLAST_AGENT_SERVICE_URL", "required by ballast agent");
        }
        let token = agent_token(&mut r, true);
        let broker_id = r.parse("BALLAST_AGENT_BROKER_ID", |v| {
            v.trim()
                .parse::<i32>()
                .ok()
                .filter(|id| *id >= 0)
                .ok_or_else(|| {
                    format!("must be a broker id (a whole number 0 or above), got {v:?}")
                })
        });
        if broker_id.is_none() && !r.is_set("BALLAST_AGENT_BROKER_ID") {
            r.fail("BALLAST_AGENT_BROKER_ID", "required by ballast agent");
        }
        let restart_command = r.text("BALLAST_AGENT_RESTART_COMMAND");
        if restart_command.is_none() {
            r.fail(
                "BALLAST_AGENT_RESTART_COMMAND",
                "required by ballast agent: the command that restarts the local broker",
            );
        }
        let settings = AgentSettings {
            service_url: service_url.unwrap_or_default(),
            token: token.unwrap_or_else(|| Secret::new("")),
            ca_file: r.set("BALLAST_AGENT_CA_FILE").map(PathBuf::from),
            broker_id: broker_id.unwrap_or_default(),
            node_id: r.text("BALLAST_AGENT_NODE_ID"),
            restart_command: restart_command.unwrap_or_default(),
            status_command: r.text("BALLAST_AGENT_STATUS_COMMAND"),
            log_dirs: r
                .parse("BALLAST_AGENT_LOG_DIRS", |v| Ok(parse_list(v)))
                .unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            heartbeat_interval: r
                .positive_duration("BALLAST_AGENT_HEARTBEAT_INTERVAL")
                .unwrap_or_default(),
            command_timeout: r
                .positive_duration("BALLAST_AGENT_COMMAND_TIMEOUT")
                .unwrap_or_default(),
            log_level: r.parse("LOG_LEVEL", str::parse).unwrap_or_default(),
            log_format: r.parse("LOG_FORMAT", str::parse).unwrap_or_default(),
        };
        if r.errors.is_empty() {
            Ok(settings)
        } else {
            Err(r.errors)
        }
    }
}

/// `BALLAST_AGENT_TOKEN`: at least [`AGENT_TOKEN_MIN_CHARS`] characters when set.
fn agent_token(r: &mut Reader, required: bool) -> Option<Secret> {
    const NAME: &str = "BALLAST_AGENT_TOKEN";
    let token = r.secret(NAME);
    match &token {
        None if required => r.fail(
            NAME,
            "required by ballast agent: the token the service was given",
        ),
        Some(t) if t.expose().chars().count() < AGENT_TOKEN_MIN_CHARS => r.fail(
            NAME,
            format!("must have at least {AGENT_TOKEN_MIN_CHARS} characters"),
        ),
        _ => {}
    }
    token
}

fn read_roll(r: &mut Reader) -> RollConfig {
    RollConfig {
        agent_token: agent_token(r, false),
        agent_stale_after: r
            .positive_duration("BALLAST_AGENT_STALE_AFTER")
            .unwrap_or_default(),
        healthy_timeout: r
            .positive_duration("BALLAST_ROLL_HEALTHY_TIMEOUT")
            .unwrap_or_default(),
        leader_timeout: r
            .positive_duration("BALLAST_ROLL_LEADER_TIMEOUT")
            .unwrap_or_default(),
        restart_timeout: r
            .positive_duration("BALLAST_ROLL_RESTART_TIMEOUT")
            .unwrap_or_default(),
        recovery_timeout: r
            .positive_duration("BALLAST_ROLL_RECOVERY_TIMEOUT")
            .unwrap_or_default(),
        settle: r.duration("BALLAST_ROLL_SETTLE"),
    }
}

/// License token and auto-fetch.
#[derive(Debug, Clone)]
pub struct LicenseConfig {
    /// `LICENSE_STRING`
    pub token: Option<Secret>,
    /// `BALLAST_LICENSE_FILE`
    pub file: Option<PathBuf>,
    /// `LICENSE_URL`, without a trailing slash
    pub url: String,
    /// `LICENSE_FETCH_INTERVAL`, above 0
    pub fetch_interval: Duration,
    /// `LICENSE_FETCH_TOKEN`
    pub fetch_token: Option<Secret>,
    /// `LICENSE_SUBSCRIPTION_ID`
    pub subscription_id: Option<String>,
}

impl LicenseConfig {
    /// `{LICENSE_URL}/api/license/fetch`
    pub fn fetch_url(&self) -> String {
        format!("{}/api/license/fetch", self.url)
    }
}

/// API authentication (docs/auth.md).
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// `AUTH_PROVIDERS` with each provider's `AUTH_<P>_*` settings, in the listed order
    pub providers: Vec<OidcProvider>,
    /// `BALLAST_PUBLIC_URL`, without a trailing slash; required with providers
    pub public_url: Option<String>,
    /// `AUTH_SESSION_TTL`
    pub session_ttl: Duration,
    /// `AUTH_LOGIN_TIMEOUT`
    pub login_timeout: Duration,
    /// `AUTH_WRITE_GROUPS`; empty = every logged-in person has write
    pub write_groups: Vec<String>,
    /// `AUTH_METRICS_PUBLIC`
    pub metrics_public: bool,
    /// `AUTH_PAT_ENABLED`
    pub pat_enabled: bool,
    /// `AUTH_ANONYMOUS`: with tokens on (and no providers), a request without credentials is
    /// served open; a token names its user
    pub anonymous: bool,
    /// `AUTH_PAT_HASH_SECRET`: at least 32 characters when PATs are enabled
    pub pat_hash_secret: Option<Secret>,
    /// `ALLOWED_DOMAINS`, lowercased; empty = any
    pub allowed_domains: Vec<String>,
    /// `ALLOWED_GROUPS`; empty = any
    pub allowed_groups: Vec<String>,
}

impl AuthConfig {
    /// Authentication is on when a provider is configured or personal access tokens are
    /// enabled; off (every route open, as in the demo) otherwise.
    pub fn enabled(&self) -> bool {
        !self.providers.is_empty() || self.pat_enabled
    }

    /// The provider named `name` (lower case, as in URLs).
    pub fn provider(&self, name: &str) -> Option<&OidcProvider> {
        self.providers.iter().find(|p| p.name == name)
    }

    /// Whether the session cookie must be `Secure` (the public address is https).
    pub fn secure_cookies(&self) -> bool {
        self.public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
    }
}

/// One OpenID Connect provider (`AUTH_<P>_*`).
#[derive(Debug, Clone)]
pub struct OidcProvider {
    /// the name as in `AUTH_PROVIDERS`, lower case: the URL segment of login and callback
    pub name: String,
    /// `AUTH_<P>_ISSUER`, without a trailing slash
    pub issuer: String,
    /// `AUTH_<P>_CLIENT_ID`
    pub client_id: String,
    /// `AUTH_<P>_CLIENT_SECRET`; `None` for a public client
    pub client_secret: Option<Secret>,
    /// `AUTH_<P>_SCOPES`, `openid` first
    pub scopes: Vec<String>,
    /// `AUTH_<P>_DISPLAY_NAME`
    pub display_name: String,
    /// `AUTH_<P>_USERNAME_CLAIM`
    pub username_claim: Option<String>,
    /// `AUTH_<P>_EMAIL_CLAIM`
    pub email_claim: Option<String>,
    /// `AUTH_<P>_GROUPS_CLAIM`
    pub groups_claim: Option<String>,
}

/// The minimum length of `AUTH_PAT_HASH_SECRET`.
pub const PAT_HASH_SECRET_MIN_CHARS: usize = 32;

/// Every duration a rule depends on, so tests can run the same code in seconds.
#[derive(Debug, Clone)]
pub struct Timing {
    /// `BALLAST_SAMPLE_INTERVAL`
    pub sample_interval: Duration,
    /// `BALLAST_SAMPLE_REQUEST_POLL`
    pub sample_request_poll: Duration,
    /// `BALLAST_READBACK_TIMEOUT`: how long a change is read back until the cluster shows it
    pub readback_timeout: Duration,
    /// `BALLAST_READBACK_POLL`
    pub readback_poll: Duration,
    /// `BALLAST_RATE_WINDOW`
    pub rate_window: Duration,
    /// `BALLAST_REALIZED_SETTLE` (may be 0): a completed plan's rates are read a full rate
    /// window after this much time after its completion
    pub realized_settle: Duration,
    /// `BALLAST_WARMUP` (may be 0)
    pub warmup: Duration,
    /// `BALLAST_MOVE_COOLDOWN` (may be 0)
    pub move_cooldown: Duration,
    /// `BALLAST_HEAL_COOLDOWN` (may be 0)
    pub heal_cooldown: Duration,
    /// `BALLAST_PROPOSAL_FRESHNESS`
    pub proposal_freshness: Duration,
    /// `BALLAST_PROPOSAL_HOLD`: how long the current proposal keeps its id and moves while the
    /// placement is unchanged
    pub proposal_hold: Duration,
    /// `BALLAST_MOVE_TIMEOUT`
    pub move_timeout: Duration,
    /// `BALLAST_PREFLIGHT_HOLD_MAX`
    pub preflight_hold_max: Duration,
    /// `BALLAST_APPROVAL_TTL`
    pub approval_ttl: Duration,
    /// `BALLAST_TOPIC_PREVIEW_MAX_AGE`
    pub topic_preview_max_age: Duration,
    /// `BALLAST_READINGS_RETENTION`
    pub readings_retention: Duration,
    /// `BALLAST_PARTITION_READINGS_INTERVAL`
    pub partition_readings_interval: Duration,
    /// `BALLAST_READY_STALE_AFTER`
    pub ready_stale_after: Duration,
    /// `BALLAST_QUORUM_FETCH_TIMEOUT`
    pub quorum_fetch_timeout: Duration,
    /// `BALLAST_HEARTBEAT_INTERVAL`
    pub heartbeat_interval: Duration,
    /// `BALLAST_EXECUTOR_INTERVAL`
    pub executor_interval: Duration,
    /// `BALLAST_SLOT_LEASE_TTL`
    pub slot_lease_ttl: Duration,
    /// `BALLAST_RESTART_BACKOFF_INITIAL`
    pub restart_backoff_initial: Duration,
    /// `BALLAST_RESTART_BACKOFF_MAX` (at least the initial backoff)
    pub restart_backoff_max: Duration,
    /// `BALLAST_RESTART_STABLE_AFTER` (may be 0)
    pub restart_stable_after: Duration,
    /// `BALLAST_SHUTDOWN_GRACE` (may be 0)
    pub shutdown_grace: Duration,
}

impl Config {
    /// Validates every setting. On failure, every problem found, one [`ConfigError`] each.
    pub fn from_raw(raw: &RawConfig) -> Result<Config, Vec<ConfigError>> {
        let mut r = Reader::new(raw);
        let config = Config {
            port: read_port(&mut r),
            bind: r
                .parse("BALLAST_BIND", |v| {
                    v.parse().map_err(|_| {
                        format!("must be an IP address such as 127.0.0.1 or 0.0.0.0, got {v:?}")
                    })
                })
                .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            http_route_concurrency: r.whole::<usize>("BALLAST_HTTP_ROUTE_CONCURRENCY").max(1),
            http_queue_wait: r.duration("BALLAST_HTTP_QUEUE_WAIT"),
            live_read_max_age: r.duration("BALLAST_LIVE_READ_MAX_AGE"),
            data_dir: PathBuf::from(r.value("BALLAST_DATA_DIR").unwrap_or_default()),
            log_level: r.parse("LOG_LEVEL", str::parse).unwrap_or_default(),
            log_format: r.parse("LOG_FORMAT", str::parse).unwrap_or_default(),
            kafka: read_kafka(&mut r),
            balance: read_balance(&mut r),
            throttle: read_throttle(&mut r),
            heal: read_heal(&mut r),
            chat: read_chat(&mut r),
            roll: read_roll(&mut r),
            license: read_license(&mut r),
            auth: read_auth(&mut r),
            timing: read_timing(&mut r),
        };
        if r.errors.is_empty() {
            Ok(config)
        } else {
            Err(r.errors)
        }
    }
}

/// The settings offline planning needs (`ballast plan`): balancing and the move cooldown,
/// validated exactly as [`Config::from_raw`] does, without requiring a Kafka connection.
#[derive(Debug, Clone)]
pub struct PlanSettings {
    pub balance: BalanceConfig,
    /// `BALLAST_MOVE_COOLDOWN`
    pub move_cooldown: Duration,
}

impl PlanSettings {
    pub fn from_raw(raw: &RawConfig) -> Result<PlanSettings, Vec<ConfigError>> {
        let mut r = Reader::new(raw);
        let settings = PlanSettings {
            balance: read_balance(&mut r),
            move_cooldown: r.duration("BALLAST_MOVE_COOLDOWN"),
        };
        if r.errors.is_empty() {
            Ok(settings)
        } else {
            Err(r.errors)
        }
    }
}

fn read_port(r: &mut Reader) -> u16 {
    r.parse("PORT", |v| match v.parse::<u64>() {
        Ok(port) => u16::try_from(port)
            .ok()
            .filter(|port| *port >= 1)
            .ok_or_else(|| format!("must be between 1 and 65535, got {port}")),
        Err(_) => Err(format!("must be a port number, got {v:?}")),
    })
    .unwrap_or_default()
}

fn read_balance(r: &mut Reader) -> BalanceConfig {
    let threshold_percent = r
        .parse("BALLAST_BALANCE_THRESHOLD", |v| {
            let percent: f64 = v
                .parse()
                .ok()
                .filter(|p: &f64| p.is_finite())
                .ok_or_else(|| format!("must be a percentage such as 5, got {v:?}"))?;
            if percent <= 0.0 {
                Err(format!("must be above 0, got {v}"))
            } else if percent >= 50.0 {
                Err(format!("must be below 50, got {v}"))
            } else {
                Ok(percent)
            }
        })
        .unwrap_or_default();
    let max_partitions: usize = r.whole("BALLAST_PROPOSAL_MAX_PARTITIONS");
    BalanceConfig {
        threshold_percent,
        floor: r
            .parse("BALLAST_BALANCE_FLOOR", parse_balance_floor)
            .unwrap_or_default(),
        workers: r.whole("BALLAST_BALANCE_WORKERS"),
        proposal_max_partitions: (max_partitions > 0).then_some(max_partitions),
    }
}

fn read_throttle(r: &mut Reader) -> ThrottleConfig {
    const RATE: &str = "BALLAST_THROTTLE_RATE_MB";
    const MAX_RATE: &str = "BALLAST_THROTTLE_MAX_RATE_MB";
    let max_rate_mb = r.parse(MAX_RATE, |v| match v.parse::<u64>() {
        Ok(0) => Err(format!("must be at least 1, got {v}")),
        Ok(max) => Ok(max),
        Err(_) => Err(format!("must be a whole number of MB/s, got {v:?}")),
    });
    // when the maximum itself is bad, the rate is only checked to be a whole number above 0
    let limit = max_rate_mb.unwrap_or(u64::MAX);
    let range = match max_rate_mb {
        Some(max) => format!("between 1 and {MAX_RATE} ({max})"),
        None => "at least 1".to_string(),
    };
    let rate_mb = r.parse(RATE, |v| match v.parse::<u64>() {
        Ok(rate) if (1..=limit).contains(&rate) => Ok(rate),
        Ok(_) => Err(format!("must be {range}, got {v}")),
        Err(_) => Err(format!("must be a whole number {range}, got {v:?}")),
    });
    let move_max_per_broker = r
        .parse("BALLAST_MOVE_MAX_PER_BROKER", |v| match v.parse::<u32>() {
            Ok(0) => Err(format!("must be at least 1, got {v}")),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("must be a whole number of at least 1, got {v:?}")),
        })
        .unwrap_or_default();
    let move_stall_readings = r
        .parse("BALLAST_MOVE_STALL_READINGS", |v| match v.parse::<u32>() {
            Ok(0) => Err(format!("must be at least 1, got {v}")),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("must be a whole number of at least 1, got {v:?}")),
        })
        .unwrap_or_default();
    ThrottleConfig {
        rate_mb: rate_mb.unwrap_or_default(),
        max_rate_mb: max_rate_mb.unwrap_or_default(),
        managed: r.bool("BALLAST_THROTTLE_MANAGED"),
        move_max_per_broker,
        move_stall_readings,
    }
}

fn read_heal(r: &mut Reader) -> HealConfig {
    const START: &str = "BALLAST_HEAL_WINDOW_START";
    const END: &str = "BALLAST_HEAL_WINDOW_END";
    let max_partitions: u32 = r.whole("BALLAST_HEAL_MAX_PARTITIONS_PER_RUN");
    let start = r.parse(START, str::parse::<TimeOfDay>);
    let end = r.parse(END, str::parse::<TimeOfDay>);
    let window = match (r.is_set(START), r.is_set(END)) {
        (true, false) => {
            r.fail(END, format!("required when {START} is set"));
            None
        }
        (false, true) => {
            r.fail(START, format!("required when {END} is set"));
            None
        }
        _ => match (start, end) {
            (Some(start), Some(end)) if start == end => {
                r.fail(
                    END,
                    format!("must differ from {START} ({start}), got {end}"),
                );
                None
            }
            (Some(start), Some(end)) => Some(HealWindow { start, end }),
            _ => None,
        },
    };
    HealConfig {
        dry_run: r.bool("BALLAST_HEAL_DRY_RUN"),
        max_partitions_per_run: (max_partitions > 0).then_some(max_partitions),
        window,
        critical_enabled: r.bool("BALLAST_HEAL_CRITICAL_ENABLED"),
        replication_enabled: r.bool("BALLAST_HEAL_REPLICATION_ENABLED"),
        activity_enabled: r.bool("BALLAST_HEAL_ACTIVITY_ENABLED"),
        dead_broker_grace: r.duration("BALLAST_HEAL_DEAD_BROKER_GRACE"),
        target_replication_factor: r
            .parse("BALLAST_HEAL_TARGET_REPLICATION_FACTOR", |v| {
                v.parse::<u32>()
                    .ok()
                    .filter(|rf| *rf <= 16)
                    .ok_or_else(|| format!("must be a whole number 0 to 16, got {v}"))
            })
            .unwrap_or_default(),
        topic_replication_factor: r
            .parse("BALLAST_HEAL_TOPIC_REPLICATION_FACTOR", parse_topic_rf)
            .unwrap_or_default(),
    }
}

fn read_chat(r: &mut Reader) -> ChatConfig {
    let enabled = r.bool("BALLAST_CHAT_ENABLED");
    let provider = r
        .parse("BALLAST_CHAT_PROVIDER", |v| {
            let v = v.trim().to_ascii_lowercase();
            if v == "openai" || v == "anthropic" {
                Ok(v)
            } else {
                Err(format!("must be openai or anthropic, got {v:?}"))
            }
        })
        .unwrap_or_else(|| "openai".into());
    let base_url = r.parse("BALLAST_CHAT_BASE_URL", parse_http_url);
    let model = r.text("BALLAST_CHAT_MODEL");
    if enabled && model.is_none() {
        r.fail(
            "BALLAST_CHAT_MODEL",
            "required when BALLAST_CHAT_ENABLED is true: the model name the provider knows",
        );
    }
    let max_tokens = r
        .parse("BALLAST_CHAT_MAX_TOKENS", |v| {
            match v.trim().parse::<u32>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("must be a whole number above 0, got {v:?}")),
            }
        })
        .unwrap_or(2048);
    ChatConfig {
        enabled,
        provider,
        base_url,
        api_key: r.secret("BALLAST_CHAT_API_KEY"),
        model,
        timeout: r
            .positive_duration("BALLAST_CHAT_TIMEOUT")
            .unwrap_or_default(),
        max_tokens,
    }
}

fn read_license(r: &mut Reader) -> LicenseConfig {
    LicenseConfig {
        token: r.secret("LICENSE_STRING"),
        file: r.set("BALLAST_LICENSE_FILE").map(PathBuf::from),
        url: r.parse("LICENSE_URL", parse_http_url).unwrap_or_default(),
        fetch_interval: r
            .positive_duration("LICENSE_FETCH_INTERVAL")
            .unwrap_or_default(),
        fetch_token: r.secret("LICENSE_FETCH_TOKEN"),
        subscription_id: r.text("LICENSE_SUBSCRIPTION_ID"),
    }
}

fn read_auth(r: &mut Reader) -> AuthConfig {
    const SECRET: &str = "AUTH_PAT_HASH_SECRET";
    let pat_enabled = r.bool("AUTH_PAT_ENABLED");
    let pat_hash_secret = r.secret(SECRET);
    if pat_enabled {
        match &pat_hash_secret {
            None => r.fail(
                SECRET,
                format!(
                    "required when AUTH_PAT_ENABLED is true; use a stable random value of at \
                     least {PAT_HASH_SECRET_MIN_CHARS} characters"
                ),
            ),
            Some(secret) if secret.expose().chars().count() < PAT_HASH_SECRET_MIN_CHARS => r.fail(
                SECRET,
                format!(
                    "must be at least {PAT_HASH_SECRET_MIN_CHARS} characters, got {}",
                    secret.expose().chars().count()
                ),
            ),
            Some(_) => {}
        }
    }
    let providers = read_providers(r);
    let anonymous = r.bool("AUTH_ANONYMOUS");
    if anonymous && !pat_enabled {
        r.fail(
            "AUTH_ANONYMOUS",
            "needs AUTH_PAT_ENABLED=true: anonymous access beside tokens is what it turns on \
             (without tokens, leave authentication off)",
        );
    }
    if anonymous && r.is_set("AUTH_PROVIDERS") {
        r.fail(
            "AUTH_ANONYMOUS",
            "cannot be on with AUTH_PROVIDERS: a login would be optional",
        );
    }
    let public_url = r.parse("BALLAST_PUBLIC_URL", parse_http_url);
    if r.is_set("AUTH_PROVIDERS") && !r.is_set("BALLAST_PUBLIC_URL") {
        r.fail(
            "BALLAST_PUBLIC_URL",
            "required when AUTH_PROVIDERS is set: the address people use to reach ballast \
             (the OIDC redirect URI is {BALLAST_PUBLIC_URL}/api/v1/auth/callback/<provider>)",
        );
    }
    AuthConfig {
        providers,
        public_url,
        session_ttl: r.positive_duration("AUTH_SESSION_TTL").unwrap_or_default(),
        login_timeout: r
            .positive_duration("AUTH_LOGIN_TIMEOUT")
            .unwrap_or_default(),
        write_groups: r
            .value("AUTH_WRITE_GROUPS")
            .map(parse_list)
            .unwrap_or_default(),
        metrics_public: r.bool("AUTH_METRICS_PUBLIC"),
        pat_enabled,
        anonymous,
        pat_hash_secret,
        allowed_domains: r
            .value("ALLOWED_DOMAINS")
            .map(|v| parse_list(&v.to_ascii_lowercase()))
            .unwrap_or_default(),
        allowed_groups: r
            .value("ALLOWED_GROUPS")
            .map(parse_list)
            .unwrap_or_default(),
    }
}

/// `AUTH_PROVIDERS` and each provider's `AUTH_<P>_*` settings.
fn read_providers(r: &mut Reader) -> Vec<OidcProvider> {
    const LIST: &str = "AUTH_PROVIDERS";
    let Some(list) = r.value(LIST) else {
        return Vec::new();
    };
    let mut providers: Vec<OidcProvider> = Vec::new();
    for name in parse_list(list) {
        let valid = name.len() <= 40 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            r.fail(
                LIST,
                format!("provider names are letters, digits and _ (at most 40), got {name:?}"),
            );
            continue;
        }
        let name = name.to_ascii_lowercase();
        if providers.iter().any(|p| p.name == name) {
            r.fail(LIST, format!("names {name:?} twice"));
            continue;
        }
        if let Some(provider) = read_provider(r, &name) {
            providers.push(provider);
        }
    }
    providers
}

fn read_provider(r: &mut Reader, name: &str) -> Option<OidcProvider> {
    let var = |suffix: &str| crate::settings::provider_variable(name, suffix);
    let text = |r: &Reader, suffix: &str| r.dynamic(&var(suffix)).map(str::to_string);
    let issuer = match r.dynamic(&var("ISSUER")) {
        None => {
            r.fail(
                &var("ISSUER"),
                format!("required for provider {name:?} in AUTH_PROVIDERS"),
            );
            None
        }
        Some(v) => match parse_issuer(v) {
            Ok(issuer) => Some(issuer),
            Err(problem) => {
                r.fail(&var("ISSUER"), problem);
                None
            }
        },
    };
    let client_id = text(r, "CLIENT_ID");
    if client_id.is_none() {
        r.fail(
            &var("CLIENT_ID"),
            format!("required for provider {name:?} in AUTH_PROVIDERS"),
        );
    }
    let mut scopes: Vec<String> = r
        .dynamic(&var("SCOPES"))
        .unwrap_or("openid profile email")
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    scopes.retain(|s| s != "openid");
    scopes.insert(0, "openid".to_string());
    let client_secret = r
        .dynamic(&var("CLIENT_SECRET"))
        .and_then(|_| r.raw_value(&var("CLIENT_SECRET")))
        .map(Secret::new);
    Some(OidcProvider {
        name: name.to_string(),
        issuer: issuer?,
        client_id: client_id?,
        client_secret,
        scopes,
        display_name: text(r, "DISPLAY_NAME").unwrap_or_else(|| name.to_string()),
        username_claim: text(r, "USERNAME_CLAIM"),
        email_claim: text(r, "EMAIL_CLAIM"),
        groups_claim: text(r, "GROUPS_CLAIM"),
    })
}

/// An issuer URL: https, or http on a loopback host (a provider on the same machine, tests).
fn parse_issuer(v: &str) -> Result<String, String> {
    let url = parse_http_url(v)?;
    if let Some(rest) = url.strip_prefix("http://") {
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host = host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        });
        if !matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
            return Err(format!(
                "must be an https:// URL (http only on loopback), got {v:?}"
            ));
        }
    }
    Ok(url)
}

fn read_timing(r: &mut Reader) -> Timing {
    let restart_backoff_initial = r.positive_duration("BALLAST_RESTART_BACKOFF_INITIAL");
    let restart_backoff_max = r.positive_duration("BALLAST_RESTART_BACKOFF_MAX");
    if let (Some(initial), Some(max)) = (restart_backoff_initial, restart_backoff_max) {
        if max < initial {
            r.fail(
                "BALLAST_RESTART_BACKOFF_MAX",
                format!(
                    "must be at least BALLAST_RESTART_BACKOFF_INITIAL ({}), got {}",
                    crate::format_duration(initial),
                    crate::format_duration(max)
                ),
            );
        }
    }
    let mut positive = |name: &str| r.positive_duration(name).unwrap_or_default();
    Timing {
        sample_interval: positive("BALLAST_SAMPLE_INTERVAL"),
        sample_request_poll: positive("BALLAST_SAMPLE_REQUEST_POLL"),
        readback_timeout: positive("BALLAST_READBACK_TIMEOUT"),
        readback_poll: positive("BALLAST_READBACK_POLL"),
        rate_window: positive("BALLAST_RATE_WINDOW"),
        proposal_freshness: positive("BALLAST_PROPOSAL_FRESHNESS"),
        proposal_hold: positive("BALLAST_PROPOSAL_HOLD"),
        move_timeout: positive("BALLAST_MOVE_TIMEOUT"),
        preflight_hold_max: positive("BALLAST_PREFLIGHT_HOLD_MAX"),
        approval_ttl: positive("BALLAST_APPROVAL_TTL"),
        topic_preview_max_age: positive("BALLAST_TOPIC_PREVIEW_MAX_AGE"),
        readings_retention: positive("BALLAST_READINGS_RETENTION"),
        partition_readings_interval: positive("BALLAST_PARTITION_READINGS_INTERVAL"),
        ready_stale_after: positive("BALLAST_READY_STALE_AFTER"),
        quorum_fetch_timeout: positive("BALLAST_QUORUM_FETCH_TIMEOUT"),
        heartbeat_interval: positive("BALLAST_HEARTBEAT_INTERVAL"),
        executor_interval: positive("BALLAST_EXECUTOR_INTERVAL"),
        slot_lease_ttl: positive("BALLAST_SLOT_LEASE_TTL"),
        warmup: r.duration("BALLAST_WARMUP"),
        realized_settle: r.duration("BALLAST_REALIZED_SETTLE"),
        move_cooldown: r.duration("BALLAST_MOVE_COOLDOWN"),
        heal_cooldown: r.duration("BALLAST_HEAL_COOLDOWN"),
        restart_backoff_initial: restart_backoff_initial.unwrap_or_default(),
        restart_backoff_max: restart_backoff_max.unwrap_or_default(),
        restart_stable_after: r.duration("BALLAST_RESTART_STABLE_AFTER"),
        shutdown_grace: r.duration("BALLAST_SHUTDOWN_GRACE"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hour: u8, minute: u8) -> TimeOfDay {
        TimeOfDay { hour, minute }
    }

    #[test]
    fn a_topic_target_replication_factor_is_its_exact_rule_then_its_longest_prefix_then_the_default(
    ) {
        let heal = HealConfig {
            dry_run: true,
            max_partitions_per_run: None,
            window: None,
            critical_enabled: true,
            replication_enabled: true,
            activity_enabled: true,
            dead_broker_grace: Duration::from_secs(600),
            target_replication_factor: 3,
            topic_replication_factor: parse_topic_rf("logs*=2, logs.audit*=4, logs.x=0,scratch=1")
                .expect("rules"),
        };
        assert_eq!(heal.target_rf("orders"), 3);
        assert_eq!(heal.target_rf("logs.web"), 2);
        assert_eq!(heal.target_rf("logs.audit.eu"), 4);
        assert_eq!(heal.target_rf("logs.x"), 0);
        assert_eq!(heal.target_rf("scratch"), 1);
        assert!(parse_topic_rf("orders").is_err());
        assert!(parse_topic_rf("orders=17").is_err());
        assert!(parse_topic_rf("=2").is_err());
    }

    #[test]
    fn heal_window_may_span_midnight() {
        let night = HealWindow {
            start: at(22, 0),
            end: at(4, 0),
        };
        assert!(night.contains(at(23, 30)));
        assert!(night.contains(at(3, 59)));
        assert!(!night.contains(at(4, 0)));
        assert!(!night.contains(at(12, 0)));
        let day = HealWindow {
            start: at(9, 0),
            end: at(17, 0),
        };
        assert!(day.contains(at(9, 0)));
        assert!(!day.contains(at(17, 0)));
        assert!(!day.contains(at(8, 59)));
    }
}
