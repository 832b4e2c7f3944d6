//! The table of known settings. Defaults, `ballast config check`, the example env file and the
//! unknown-variable warnings are all driven by [`SETTINGS`], so a setting is added in one place.

/// One known setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingSpec {
    /// the environment variable, e.g. `BALLAST_THROTTLE_RATE_MB`
    pub name: &'static str,
    /// the value used when the variable is unset or empty; `None` when there is no default
    pub default: Option<&'static str>,
    /// a secret is never printed: `config check` shows `<redacted>` and errors do not quote it
    pub secret: bool,
    /// one line for the example env file and `config check`
    pub help: &'static str,
    /// section of the example env file: server, kafka, balance, throttle, heal, chat, license,
    /// auth or timing
    pub group: &'static str,
}

/// Variables with the `BALLAST_` prefix that ballast sets or reads itself and that are not
/// settings: they are neither warned about nor listed in the example file.
pub static INTERNAL_VARIABLES: &[&str] = &[
    "BALLAST_SUPERVISOR_PID",
    "BALLAST_BUILD_COMMIT",
    "BALLAST_BUILD_TIME",
];

const fn setting(
    name: &'static str,
    default: Option<&'static str>,
    group: &'static str,
    help: &'static str,
) -> SettingSpec {
    SettingSpec {
        name,
        default,
        secret: false,
        help,
        group,
    }
}

const fn secret(name: &'static str, group: &'static str, help: &'static str) -> SettingSpec {
    SettingSpec {
        name,
        default: None,
        secret: true,
        help,
        group,
    }
}

/// Every setting ballast reads, in the order of the example env file.
pub static SETTINGS: &[SettingSpec] = &[
    // server
    setting(
        "PORT",
        Some("8080"),
        "server",
        "port for the REST API, dashboard, MCP endpoint and metrics (1-65535)",
    ),
    setting(
        "BALLAST_BIND",
        Some("127.0.0.1"),
        "server",
        "IP address to listen on; 0.0.0.0 (or ::) listens on every interface",
    ),
    setting(
        "BALLAST_HTTP_ROUTE_CONCURRENCY",
        Some("16"),
        "server",
        "requests one route serves at once (the probes are not bounded); more wait in line",
    ),
    setting(
        "BALLAST_HTTP_QUEUE_WAIT",
        Some("5s"),
        "server",
        "how long a request waits in its route's line before it is answered 503 with Retry-After (0: not at all)",
    ),
    setting(
        "BALLAST_LIVE_READ_MAX_AGE",
        Some("2s"),
        "server",
        "how old a live read of the cluster (consumer-group list and summary) may be when it answers another request; a change made through this service starts a new read (0: every request waits for a read of its own or one in flight)",
    ),
    setting(
        "BALLAST_DATA_DIR",
        Some("./data"),
        "server",
        "directory for the SQLite database shared by all ballast processes",
    ),
    setting(
        "LOG_LEVEL",
        Some("INFO"),
        "server",
        "DEBUG, INFO or WARN",
    ),
    setting("LOG_FORMAT", Some("text"), "server", "text or json"),
    // kafka
    setting(
        "BALLAST_KAFKA_BOOTSTRAP_SERVERS",
        None,
        "kafka",
        "required: comma-separated brokers as host:port (IPv6 as [::1]:9092)",
    ),
    setting(
        "BALLAST_KAFKA_SECURITY_PROTOCOL",
        Some("PLAINTEXT"),
        "kafka",
        "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
    ),
    setting(
        "BALLAST_KAFKA_SASL_MECHANISM",
        None,
        "kafka",
        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER; PLAIN when unset and the protocol is SASL_*",
    ),
    setting(
        "BALLAST_KAFKA_SASL_USERNAME",
        None,
        "kafka",
        "SASL user for PLAIN and SCRAM",
    ),
    secret(
        "BALLAST_KAFKA_SASL_PASSWORD",
        "kafka",
        "SASL password for PLAIN and SCRAM",
    ),
    setting(
        "BALLAST_KAFKA_SSL_CA_FILE",
        None,
        "kafka",
        "PEM file of CA certificates to trust; the system roots when unset (SSL, SASL_SSL)",
    ),
    setting(
        "BALLAST_KAFKA_SSL_CERT_FILE",
        None,
        "kafka",
        "PEM client certificate for mutual TLS; needs BALLAST_KAFKA_SSL_KEY_FILE",
    ),
    setting(
        "BALLAST_KAFKA_SSL_KEY_FILE",
        None,
        "kafka",
        "PEM private key of the client certificate",
    ),
    setting(
        "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT",
        None,
        "kafka",
        "OAUTHBEARER: http(s) URL of the token endpoint (client credentials flow)",
    ),
    setting(
        "BALLAST_KAFKA_OAUTH_CLIENT_ID",
        None,
        "kafka",
        "OAUTHBEARER: client id",
    ),
    secret(
        "BALLAST_KAFKA_OAUTH_CLIENT_SECRET",
        "kafka",
        "OAUTHBEARER: client secret",
    ),
    setting(
        "BALLAST_KAFKA_OAUTH_SCOPE",
        None,
        "kafka",
        "OAUTHBEARER: scope to request, if the identity provider needs one",
    ),
    setting(
        "BALLAST_KAFKA_OAUTH_EXTENSIONS",
        None,
        "kafka",
        "OAUTHBEARER: SASL extensions as key=value,key=value (letters-only keys; auth is reserved)",
    ),
    setting(
        "BALLAST_KAFKA_CLIENT_ID",
        Some("ballast"),
        "kafka",
        "client id ballast sends to the brokers",
    ),
    setting(
        "BALLAST_KAFKA_REQUEST_TIMEOUT",
        Some("30s"),
        "kafka",
        "how long to wait for a broker to answer one request",
    ),
    // balance
    setting(
        "BALLAST_BALANCE_THRESHOLD",
        Some("5"),
        "balance",
        "percent from the fair share a broker is evened to; twice this triggers moves (above 0, below 50)",
    ),
    setting(
        "BALLAST_BALANCE_FLOOR",
        Some("bytes=2MB/s,disk=0B"),
        "balance",
        "smallest difference worth balancing, e.g. bytes=2MB/s disk=2GiB; an omitted key keeps its default",
    ),
    setting(
        "BALLAST_BALANCE_WORKERS",
        Some("0"),
        "balance",
        "planner threads; 0 uses every CPU (does not change proposal output)",
    ),
    setting(
        "BALLAST_PROPOSAL_MAX_PARTITIONS",
        Some("0"),
        "balance",
        "most partitions moved by one proposal; 0 is unlimited",
    ),
    // throttle
    setting(
        "BALLAST_THROTTLE_RATE_MB",
        Some("50"),
        "throttle",
        "replication throttle for moves in MB/s (1 to BALLAST_THROTTLE_MAX_RATE_MB)",
    ),
    setting(
        "BALLAST_THROTTLE_MAX_RATE_MB",
        Some("1000"),
        "throttle",
        "highest throttle in MB/s the tuning API accepts",
    ),
    setting(
        "BALLAST_THROTTLE_MANAGED",
        Some("true"),
        "throttle",
        "ballast owns replication throttles and clears leftover broker throttles at start",
    ),
    setting(
        "BALLAST_MOVE_MAX_PER_BROKER",
        Some("20"),
        "throttle",
        "concurrent partition moves per broker (at least 1)",
    ),
    setting(
        "BALLAST_MOVE_STALL_READINGS",
        Some("15"),
        "throttle",
        "an in-flight move whose copied bytes have not grown for this many executor readings (one per BALLAST_EXECUTOR_INTERVAL) reads stalled (at least 1)",
    ),
    // heal
    setting(
        "BALLAST_HEAL_DRY_RUN",
        Some("true"),
        "heal",
        "self-healing only reports what it would do",
    ),
    setting(
        "BALLAST_HEAL_MAX_PARTITIONS_PER_RUN",
        Some("0"),
        "heal",
        "most partitions one self-healing run moves; 0 is unlimited",
    ),
    setting(
        "BALLAST_HEAL_WINDOW_START",
        None,
        "heal",
        "start of the daily self-healing window, HH:MM UTC (set both start and end, or neither)",
    ),
    setting(
        "BALLAST_HEAL_WINDOW_END",
        None,
        "heal",
        "end of the daily self-healing window, HH:MM UTC; may be earlier than the start to span midnight",
    ),
    setting(
        "BALLAST_HEAL_CRITICAL_ENABLED",
        Some("true"),
        "heal",
        "the critical-fixes loop runs: replicas of brokers down longer than the grace period are re-created elsewhere",
    ),
    setting(
        "BALLAST_HEAL_REPLICATION_ENABLED",
        Some("true"),
        "heal",
        "the replication-factor loop runs: topics below their target replication factor are raised",
    ),
    setting(
        "BALLAST_HEAL_ACTIVITY_ENABLED",
        Some("true"),
        "heal",
        "the activity loop runs: the current proposal is applied when its decision allows it",
    ),
    setting(
        "BALLAST_HEAL_DEAD_BROKER_GRACE",
        Some("10m"),
        "heal",
        "a broker down (and not in maintenance) longer than this has its replicas re-created elsewhere",
    ),
    setting(
        "BALLAST_HEAL_TARGET_REPLICATION_FACTOR",
        Some("3"),
        "heal",
        "replication factor the replication-factor loop raises topics to (capped by the brokers that take load); 0 raises none",
    ),
    setting(
        "BALLAST_HEAL_TOPIC_REPLICATION_FACTOR",
        None,
        "heal",
        "per-topic targets overriding the default, e.g. audit=5,logs.*=2,scratch=0 (name or prefix*; 0 leaves the topic alone)",
    ),
    // chat
    setting(
        "BALLAST_CHAT_ENABLED",
        Some("false"),
        "chat",
        "enable the AI chat assistant",
    ),
    setting(
        "BALLAST_CHAT_PROVIDER",
        Some("openai"),
        "chat",
        "openai (any OpenAI-compatible chat-completions server: OpenAI, Azure-style, vLLM, llama.cpp, Ollama) or anthropic (the Messages API)",
    ),
    setting(
        "BALLAST_CHAT_BASE_URL",
        None,
        "chat",
        "the provider's base URL; openai: with the version, e.g. http://127.0.0.1:11434/v1 (default https://api.openai.com/v1); anthropic: default https://api.anthropic.com",
    ),
    secret(
        "BALLAST_CHAT_API_KEY",
        "chat",
        "the provider's API key (sent as a bearer token, or x-api-key for anthropic); may be empty for a local server",
    ),
    setting(
        "BALLAST_CHAT_MODEL",
        None,
        "chat",
        "the model name the provider knows, e.g. gpt-4o-mini, claude-sonnet-4-5, llama3.1; required when the assistant is enabled",
    ),
    setting(
        "BALLAST_CHAT_TIMEOUT",
        Some("60s"),
        "chat",
        "how long to wait for the provider's answer to begin, and between two pieces of it",
    ),
    setting(
        "BALLAST_CHAT_MAX_TOKENS",
        Some("2048"),
        "chat",
        "the most tokens one answer of the model may have",
    ),
    // agents
    secret(
        "BALLAST_AGENT_TOKEN",
        "agents",
        "service: the secret agents' credentials are made from (at least 32 characters; unset: agents are refused); agent: its own credential, made where the service's configuration is by `ballast agent-token --broker N`",
    ),
    setting(
        "BALLAST_AGENT_STALE_AFTER",
        Some("30s"),
        "agents",
        "service: an agent not heard from for this long counts as down (ballast_agent_up 0) and gets no restart",
    ),
    setting(
        "BALLAST_ROLL_HEALTHY_TIMEOUT",
        Some("5m"),
        "agents",
        "service: how long a rolling restart waits for the cluster to be healthy (no under-replicated or offline partition beyond the broker's own) before a broker",
    ),
    setting(
        "BALLAST_ROLL_LEADER_TIMEOUT",
        Some("2m"),
        "agents",
        "service: how long a rolling restart waits for leadership to leave a broker before its restart, and to come back after it",
    ),
    setting(
        "BALLAST_ROLL_RESTART_TIMEOUT",
        Some("10m"),
        "agents",
        "service: how long a rolling restart waits for an agent to pick up and finish a broker's restart command",
    ),
    setting(
        "BALLAST_ROLL_RECOVERY_TIMEOUT",
        Some("15m"),
        "agents",
        "service: how long a rolling restart waits, after a restart, for the broker to be back in the ISR of every partition it holds",
    ),
    setting(
        "BALLAST_ROLL_SETTLE",
        Some("10s"),
        "agents",
        "service: pause after a broker is done before the next one's health check",
    ),
    setting(
        "BALLAST_AGENT_SERVICE_URL",
        None,
        "agents",
        "agent: the ballast service's URL, e.g. https://ballast.example.com:8080 (required by ballast agent)",
    ),
    setting(
        "BALLAST_AGENT_CA_FILE",
        None,
        "agents",
        "agent: a PEM file of CA certificates to trust for an https service URL (an internal CA), besides the public roots",
    ),
    setting(
        "BALLAST_AGENT_BROKER_ID",
        None,
        "agents",
        "agent: the id of the broker on this host (required by ballast agent)",
    ),
    setting(
        "BALLAST_AGENT_NODE_ID",
        None,
        "agents",
        "agent: this host's name in metrics and on the dashboard; default the host name",
    ),
    setting(
        "BALLAST_AGENT_RESTART_COMMAND",
        None,
        "agents",
        "agent: the shell command that restarts the local broker and returns when it has restarted, e.g. systemctl restart kafka (required by ballast agent)",
    ),
    setting(
        "BALLAST_AGENT_STATUS_COMMAND",
        None,
        "agents",
        "agent: a shell command that exits 0 while the broker process runs, e.g. systemctl is-active --quiet kafka; unset: broker process state unknown",
    ),
    setting(
        "BALLAST_AGENT_LOG_DIRS",
        None,
        "agents",
        "agent: the broker's log directories (comma-separated) whose disk use the agent reports",
    ),
    setting(
        "BALLAST_AGENT_HEARTBEAT_INTERVAL",
        Some("5s"),
        "agents",
        "agent: how often the agent reports and asks for work",
    ),
    setting(
        "BALLAST_AGENT_COMMAND_TIMEOUT",
        Some("10m"),
        "agents",
        "agent: the longest a restart command may run before the agent kills it and reports a failure",
    ),
    // license
    secret(
        "LICENSE_STRING",
        "license",
        "signed license token; without a license ballast runs in monitoring mode",
    ),
    setting(
        "BALLAST_LICENSE_FILE",
        None,
        "license",
        "file holding the license token",
    ),
    setting(
        "LICENSE_URL",
        Some("https://license.ballast.dev"),
        "license",
        "license server; tokens are fetched from LICENSE_URL/api/license/fetch",
    ),
    setting(
        "LICENSE_FETCH_INTERVAL",
        Some("1h"),
        "license",
        "how often a renewed license is fetched",
    ),
    secret(
        "LICENSE_FETCH_TOKEN",
        "license",
        "credential for fetching the license",
    ),
    setting(
        "LICENSE_SUBSCRIPTION_ID",
        None,
        "license",
        "subscription whose license is fetched",
    ),
    // auth
    setting(
        "AUTH_PROVIDERS",
        None,
        "auth",
        "comma-separated OpenID Connect provider names (letters, digits, _), e.g. corp; authentication is on when this is set (or AUTH_PAT_ENABLED=true). For each name P (upper-cased in variable names) set AUTH_<P>_ISSUER (issuer URL; https, or http on loopback), AUTH_<P>_CLIENT_ID, AUTH_<P>_CLIENT_SECRET, and optionally AUTH_<P>_SCOPES (default openid profile email), AUTH_<P>_DISPLAY_NAME (default P), AUTH_<P>_USERNAME_CLAIM, AUTH_<P>_EMAIL_CLAIM, AUTH_<P>_GROUPS_CLAIM (docs/auth.md)",
    ),
    setting(
        "BALLAST_PUBLIC_URL",
        None,
        "auth",
        "the address people use to reach ballast, e.g. https://ballast.example.com (required with AUTH_PROVIDERS); the OIDC redirect URI registered at each provider is {BALLAST_PUBLIC_URL}/api/v1/auth/callback/<provider>; an https address makes the session cookie Secure",
    ),
    setting(
        "AUTH_SESSION_TTL",
        Some("12h"),
        "auth",
        "how long a login session lasts (POST /api/v1/auth/refresh renews it through the provider)",
    ),
    setting(
        "AUTH_LOGIN_TIMEOUT",
        Some("10m"),
        "auth",
        "how long a started login may take at the provider before its state is refused",
    ),
    setting(
        "AUTH_WRITE_GROUPS",
        None,
        "auth",
        "comma-separated groups whose members get the write scope when they log in; every logged-in person has write when unset (personal access tokens carry their own scope)",
    ),
    setting(
        "AUTH_METRICS_PUBLIC",
        Some("false"),
        "auth",
        "with authentication on, serve /metrics without credentials (otherwise a read token or session is needed)",
    ),
    setting(
        "AUTH_PAT_ENABLED",
        Some("false"),
        "auth",
        "accept personal access tokens (Authorization: Bearer pat_...)",
    ),
    setting(
        "AUTH_ANONYMOUS",
        Some("false"),
        "auth",
        "with AUTH_PAT_ENABLED and no AUTH_PROVIDERS, serve a request without credentials as if authentication were off (anonymous, or the user X-Ballast-User names) while a request with a token acts as the token's user; a change over MCP then needs a token, and only a token of another user approves it. For a trial on one machine (`ballast demo` turns it on); never where others reach the port",
    ),
    secret(
        "AUTH_PAT_HASH_SECRET",
        "auth",
        "stable secret of at least 32 characters for hashing tokens; required when AUTH_PAT_ENABLED=true",
    ),
    setting(
        "ALLOWED_DOMAINS",
        None,
        "auth",
        "comma-separated email domains allowed to log in; any when unset",
    ),
    setting(
        "ALLOWED_GROUPS",
        None,
        "auth",
        "comma-separated identity-provider groups allowed to log in; any when unset",
    ),
    // timing
    setting(
        "BALLAST_SAMPLE_INTERVAL",
        Some("60s"),
        "timing",
        "how often the observer reads the cluster",
    ),
    setting(
        "BALLAST_SAMPLE_REQUEST_POLL",
        Some("1s"),
        "timing",
        "how often the observer checks for a sample requested by POST /api/v1/cluster/refresh-metadata",
    ),
    setting(
        "BALLAST_READBACK_TIMEOUT",
        Some("5s"),
        "timing",
        "how long a change to topic configs, quotas or ACLs is read back until the cluster shows it (KRaft brokers apply it a moment after the write); then the audit records what the cluster shows, with a note",
    ),
    setting(
        "BALLAST_READBACK_POLL",
        Some("100ms"),
        "timing",
        "how often that read is repeated while the cluster does not show the change yet",
    ),
    setting(
        "BALLAST_RATE_WINDOW",
        Some("30m"),
        "timing",
        "window over which rates and partition sizes are averaged",
    ),
    setting(
        "BALLAST_REALIZED_SETTLE",
        Some("2m"),
        "timing",
        "after a plan completes, how long its rates settle (leaders moved, clients catching up) before the rate window it is judged on begins (0 allowed)",
    ),
    setting(
        "BALLAST_WARMUP",
        Some("5m"),
        "timing",
        "measurement history collected after start before a proposal is evaluated (0 allowed)",
    ),
    setting(
        "BALLAST_MOVE_COOLDOWN",
        Some("30m"),
        "timing",
        "a partition moved by ballast is not moved again within this time",
    ),
    setting(
        "BALLAST_HEAL_COOLDOWN",
        Some("30m"),
        "timing",
        "pause of a self-healing loop after it applied a change",
    ),
    setting(
        "BALLAST_PROPOSAL_FRESHNESS",
        Some("2m"),
        "timing",
        "a proposal must have been checked this recently to be applied",
    ),
    setting(
        "BALLAST_PROPOSAL_HOLD",
        Some("15m"),
        "timing",
        "while no partition moved and no broker changed, the current proposal keeps its id and its moves this long (its decision is re-checked at every reading); then a fresh plan replaces it",
    ),
    setting(
        "BALLAST_MOVE_TIMEOUT",
        Some("12h"),
        "timing",
        "a tracked move no execution drives is cancelled this long after its last submission",
    ),
    setting(
        "BALLAST_PREFLIGHT_HOLD_MAX",
        Some("10m"),
        "timing",
        "pending moves a hard pre-flight blocker holds back fail after this long",
    ),
    setting(
        "BALLAST_APPROVAL_TTL",
        Some("15m"),
        "timing",
        "how long an MCP action waits for approval",
    ),
    setting(
        "BALLAST_TOPIC_PREVIEW_MAX_AGE",
        Some("60s"),
        "timing",
        "oldest metadata a topic preview may use",
    ),
    setting(
        "BALLAST_READINGS_RETENTION",
        Some("7d"),
        "timing",
        "how long measurements are kept",
    ),
    setting(
        "BALLAST_PARTITION_READINGS_INTERVAL",
        Some("1h"),
        "timing",
        "how often a reading of every partition (size and four rates) is stored",
    ),
    setting(
        "BALLAST_READY_STALE_AFTER",
        Some("3m"),
        "timing",
        "/api/v1/ready answers 503 when the broker view is older than this",
    ),
    setting(
        "BALLAST_QUORUM_FETCH_TIMEOUT",
        Some("10s"),
        "timing",
        "a KRaft metadata-quorum voter that has not fetched from the quorum leader, or not caught up with it, for this long counts as down in health",
    ),
    setting(
        "BALLAST_HEARTBEAT_INTERVAL",
        Some("5s"),
        "timing",
        "how often each worker records a heartbeat",
    ),
    setting(
        "BALLAST_EXECUTOR_INTERVAL",
        Some("2s"),
        "timing",
        "how often the executor checks progress and submits the next wave",
    ),
    setting(
        "BALLAST_SLOT_LEASE_TTL",
        Some("30s"),
        "timing",
        "the mutation slot lease expires unless renewed within this time",
    ),
    setting(
        "BALLAST_RESTART_BACKOFF_INITIAL",
        Some("1s"),
        "timing",
        "first wait before a crashed worker is restarted",
    ),
    setting(
        "BALLAST_RESTART_BACKOFF_MAX",
        Some("60s"),
        "timing",
        "longest wait before a crashed worker is restarted",
    ),
    setting(
        "BALLAST_RESTART_STABLE_AFTER",
        Some("60s"),
        "timing",
        "a worker that ran this long starts again from the initial backoff",
    ),
    setting(
        "BALLAST_SHUTDOWN_GRACE",
        Some("10s"),
        "timing",
        "time workers get after SIGTERM before they are killed",
    ),
];

/// The entry for `name`, if it is a known setting.
pub fn setting_spec(name: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// The per-provider settings of an OpenID Connect provider named in `AUTH_PROVIDERS`: the
/// variable is `AUTH_<P>_<suffix>` with `P` the upper-cased provider name. Whether it is secret,
/// its default, and its help line.
pub static PROVIDER_SETTINGS: &[(&str, bool, Option<&str>, &str)] = &[
    ("ISSUER", false, None, "issuer URL (discovery at {issuer}/.well-known/openid-configuration)"),
    ("CLIENT_ID", false, None, "client id registered at the provider"),
    ("CLIENT_SECRET", true, None, "client secret; unset for a public client (PKCE only)"),
    ("SCOPES", false, Some("openid profile email"), "scopes requested at login (space or comma separated; openid is always sent)"),
    ("DISPLAY_NAME", false, None, "name on the login page (default: the provider name)"),
    ("USERNAME_CLAIM", false, None, "claim that names the user (default: preferred_username, then upn, unique_name, email, sub)"),
    ("EMAIL_CLAIM", false, None, "claim with the email address (default: email, then upn when it is an address)"),
    ("GROUPS_CLAIM", false, None, "claim with the groups (default: the first non-empty of groups, roles, role, group)"),
];

/// The variable name of a provider's setting: `AUTH_<P>_<suffix>`.
pub fn provider_variable(provider: &str, suffix: &str) -> String {
    format!("AUTH_{}_{suffix}", provider.to_ascii_uppercase())
}

/// Whether `name` is a per-provider variable (`AUTH_<P>_<suffix>`) whose value is secret, for
/// any provider name: secrets are redacted even for a provider that is not (yet) listed.
pub fn is_provider_secret(name: &str) -> bool {
    name.starts_with("AUTH_")
        && PROVIDER_SETTINGS
            .iter()
            .any(|(suffix, secret, _, _)| *secret && name.ends_with(&format!("_{suffix}")))
}
