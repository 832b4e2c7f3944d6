//! The configuration rules, one test per rule.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ballast_config::{
    effective, example_env_file, format_duration, parse_duration, parse_env_file, BalanceFloor,
    Config, ConfigError, LogFormat, LogLevel, RawConfig, SaslMechanism, SecurityProtocol, Source,
    TimeOfDay, SETTINGS,
};

const BOOTSTRAP: &str = "BALLAST_KAFKA_BOOTSTRAP_SERVERS";

/// A self-signed Ed25519 certificate (CN=test) and its PKCS#8 key, made with
/// `openssl req -x509 -newkey ed25519 -nodes -keyout k.pem -out c.pem -days 3650 -subj /CN=test`.
const TEST_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBMjCB5aADAgECAhRy/fRvjfnVRWgqT9Y/LUuc5l0wlTAFBgMrZXAwDzENMAsG
A1UEAwwEdGVzdDAeFw0yNjExMjExMzE0NThaFw0zNjExMTgxMzE0NThaMA8xDTAL
BgNVBAMMBHRlc3QwKjAFBgMrZXADIQDnnHzHbQIAGiiJ7ZwAd/Z3uU5KPoa2B5uA
GzR8SKkSt6NTMFEwHQYDVR0OBBYEFLOgfbgAOM1txJoX/XqwoVMoVpZZMB8GA1Ud
IwQYMBaAFLOgfbgAOM1txJoX/XqwoVMoVpZZMA8GA1UdEwEB/wQFMAMBAf8wBQYD
K2VwA0EAk+mbTSqLU/wT++K487eFGXSkCoZYbjitr8H+IdiBUZHIW1eSob1CR7UI
xCLgYeJ2xkYkMHcqtkssdQ/qfKAfDA==
-----END CERTIFICATE-----
";

const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIPnrxSGONv2EEbSnBG7/xWDVI3MDSpgQGQn3R9KfWRtM
-----END PRIVATE KEY-----
";

fn pairs(vars: &[(&str, &str)]) -> Vec<(String, String)> {
    vars.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The variables plus a valid bootstrap list unless they name one.
fn raw(vars: &[(&str, &str)]) -> RawConfig {
    let mut all = pairs(vars);
    if !vars.iter().any(|(k, _)| *k == BOOTSTRAP) {
        all.push((BOOTSTRAP.to_string(), "kafka-1:9092".to_string()));
    }
    RawConfig::from_pairs(all, None).expect("no file to read")
}

fn config(vars: &[(&str, &str)]) -> Config {
    match Config::from_raw(&raw(vars)) {
        Ok(config) => config,
        Err(errors) => panic!("expected a valid configuration, got {errors:#?}"),
    }
}

fn errors(vars: &[(&str, &str)]) -> Vec<ConfigError> {
    match Config::from_raw(&raw(vars)) {
        Ok(config) => panic!("expected errors, got {config:#?}"),
        Err(errors) => errors,
    }
}

/// The single error the variables cause.
fn error(vars: &[(&str, &str)]) -> ConfigError {
    let mut errors = errors(vars);
    assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
    errors.remove(0)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write test file");
    path
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

#[test]
fn defaults_match_the_spec() {
    let c = config(&[]);
    assert_eq!(c.port, 8080);
    assert_eq!(c.bind, IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!(c.data_dir, PathBuf::from("./data"));
    assert_eq!(c.log_level, LogLevel::Info);
    assert_eq!(c.log_format, LogFormat::Text);

    assert_eq!(c.kafka.bootstrap_servers, vec!["kafka-1:9092".to_string()]);
    assert_eq!(c.kafka.security, SecurityProtocol::Plaintext);
    assert!(c.kafka.sasl.is_none() && c.kafka.oauth.is_none() && c.kafka.tls.is_none());
    assert_eq!(c.kafka.client_id, "ballast");
    assert_eq!(c.kafka.request_timeout, Duration::from_secs(30));

    assert_eq!(c.balance.threshold_percent, 5.0);
    assert_eq!(c.balance.floor, BalanceFloor::DEFAULT);
    assert_eq!(c.balance.floor.bytes_per_sec, 2_000_000.0);
    assert_eq!(c.balance.floor.disk_bytes, 0);
    assert_eq!(c.balance.workers, 0);
    assert_eq!(c.balance.proposal_max_partitions, None);

    assert_eq!(c.throttle.rate_mb, 50);
    assert_eq!(c.throttle.max_rate_mb, 1000);
    assert!(c.throttle.managed);
    assert_eq!(c.throttle.move_max_per_broker, 20);

    assert!(c.heal.dry_run);
    assert_eq!(c.heal.max_partitions_per_run, None);
    assert_eq!(c.heal.window, None);
    assert!(!c.chat.enabled);

    assert!(c.license.token.is_none() && c.license.file.is_none());
    assert_eq!(c.license.url, "https://license.ballast.dev");
    assert_eq!(
        c.license.fetch_url(),
        "https://license.ballast.dev/api/license/fetch"
    );
    assert_eq!(c.license.fetch_interval, Duration::from_secs(3600));

    assert!(!c.auth.pat_enabled);
    assert!(c.auth.allowed_domains.is_empty() && c.auth.allowed_groups.is_empty());

    let t = &c.timing;
    let min = |m: u64| Duration::from_secs(60 * m);
    assert_eq!(t.sample_interval, Duration::from_secs(60));
    assert_eq!(t.rate_window, min(30));
    assert_eq!(t.warmup, min(5));
    assert_eq!(t.move_cooldown, min(30));
    assert_eq!(t.heal_cooldown, min(30));
    assert_eq!(t.proposal_freshness, min(2));
    assert_eq!(t.move_timeout, min(12 * 60));
    assert_eq!(t.preflight_hold_max, min(10));
    assert_eq!(t.approval_ttl, min(15));
    assert_eq!(t.topic_preview_max_age, Duration::from_secs(60));
    assert_eq!(t.readings_retention, min(7 * 24 * 60));
    assert_eq!(t.ready_stale_after, min(3));
    assert_eq!(t.heartbeat_interval, Duration::from_secs(5));
    assert_eq!(t.slot_lease_ttl, Duration::from_secs(30));
    assert_eq!(t.restart_backoff_initial, Duration::from_secs(1));
    assert_eq!(t.restart_backoff_max, Duration::from_secs(60));
    assert_eq!(t.restart_stable_after, Duration::from_secs(60));
    assert_eq!(t.shutdown_grace, Duration::from_secs(10));
}

#[test]
fn settings_are_read() {
    let c = config(&[
        ("PORT", "9090"),
        ("BALLAST_BIND", "0.0.0.0"),
        ("BALLAST_DATA_DIR", "/var/lib/ballast"),
        ("LOG_LEVEL", "debug"),
        ("LOG_FORMAT", "JSON"),
        (BOOTSTRAP, "a:9092, b:9093,[::1]:9094"),
        ("BALLAST_BALANCE_THRESHOLD", "2.5"),
        ("BALLAST_BALANCE_WORKERS", "4"),
        ("BALLAST_PROPOSAL_MAX_PARTITIONS", "100"),
        ("BALLAST_HEAL_MAX_PARTITIONS_PER_RUN", "10"),
        ("BALLAST_HEAL_WINDOW_START", "22:00"),
        ("BALLAST_HEAL_WINDOW_END", "04:30"),
        ("BALLAST_CHAT_ENABLED", "yes"),
        ("BALLAST_CHAT_MODEL", "llama3.1"),
        ("ALLOWED_DOMAINS", "Example.com, corp.example.com"),
        ("ALLOWED_GROUPS", "kafka-admins"),
        ("LICENSE_URL", "http://localhost:8081/"),
        ("BALLAST_SAMPLE_INTERVAL", "2s"),
        ("BALLAST_WARMUP", "0s"),
    ]);
    assert_eq!(c.port, 9090);
    assert_eq!(c.bind, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert_eq!(c.data_dir, PathBuf::from("/var/lib/ballast"));
    assert_eq!(c.log_level, LogLevel::Debug);
    assert_eq!(c.log_format, LogFormat::Json);
    assert_eq!(
        c.kafka.bootstrap_servers,
        ["a:9092", "b:9093", "[::1]:9094"]
    );
    assert_eq!(c.balance.threshold_percent, 2.5);
    assert_eq!(c.balance.workers, 4);
    assert_eq!(c.balance.proposal_max_partitions, Some(100));
    assert_eq!(c.heal.max_partitions_per_run, Some(10));
    let window = c.heal.window.expect("window set");
    assert_eq!(
        window.start,
        TimeOfDay {
            hour: 22,
            minute: 0
        }
    );
    assert_eq!(
        window.end,
        TimeOfDay {
            hour: 4,
            minute: 30
        }
    );
    assert!(c.chat.enabled);
    assert_eq!(c.auth.allowed_domains, ["example.com", "corp.example.com"]);
    assert_eq!(c.auth.allowed_groups, ["kafka-admins"]);
    assert_eq!(
        c.license.fetch_url(),
        "http://localhost:8081/api/license/fetch"
    );
    assert_eq!(c.timing.sample_interval, Duration::from_secs(2));
    assert_eq!(c.timing.warmup, Duration::ZERO);
}

#[test]
fn error_display_is_var_colon_problem() {
    let e = error(&[("PORT", "http")]);
    assert_eq!(e.to_string(), "PORT: must be a port number, got \"http\"");
    let e = error(&[("PORT", "0")]);
    assert_eq!(e.to_string(), "PORT: must be between 1 and 65535, got 0");
}

#[test]
fn bootstrap_servers_are_required_and_checked() {
    let e = error(&[(BOOTSTRAP, "")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_KAFKA_BOOTSTRAP_SERVERS: not set; name at least one broker as host:port"
    );
    let missing = Config::from_raw(&RawConfig::from_pairs(Vec::new(), None).expect("no file"));
    let missing = missing.expect_err("bootstrap servers are required");
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].var, BOOTSTRAP);

    for bad in [
        "kafka-1",
        "kafka-1:0",
        "kafka-1:99999",
        ":9092",
        "::1:9092",
        "a:9092,b",
    ] {
        let e = error(&[(BOOTSTRAP, bad)]);
        assert_eq!(e.var, BOOTSTRAP, "{bad}");
    }
    let e = error(&[(BOOTSTRAP, "a:9092,kafka-2")]);
    assert_eq!(e.problem, "expected host:port, got \"kafka-2\"");
}

#[test]
fn balance_threshold_of_zero_or_below_is_refused() {
    let e = error(&[("BALLAST_BALANCE_THRESHOLD", "0")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_BALANCE_THRESHOLD: must be above 0, got 0"
    );
    let e = error(&[("BALLAST_BALANCE_THRESHOLD", "-1.5")]);
    assert_eq!(e.problem, "must be above 0, got -1.5");
    let e = error(&[("BALLAST_BALANCE_THRESHOLD", "50")]);
    assert_eq!(e.problem, "must be below 50, got 50");
    for bad in ["five", "nan", "inf", "5%"] {
        let e = error(&[("BALLAST_BALANCE_THRESHOLD", bad)]);
        assert_eq!(
            e.problem,
            format!("must be a percentage such as 5, got {bad:?}")
        );
    }
    assert_eq!(
        config(&[("BALLAST_BALANCE_THRESHOLD", "0.5")])
            .balance
            .threshold_percent,
        0.5
    );
}

#[test]
fn disk_floor_alone_keeps_default_bytes_floor() {
    let floor = config(&[("BALLAST_BALANCE_FLOOR", "disk=2GiB")])
        .balance
        .floor;
    assert_eq!(floor.bytes_per_sec, 2_000_000.0);
    assert_eq!(floor.disk_bytes, 2 * 1024 * 1024 * 1024);
}

#[test]
fn balance_floor_syntax() {
    let floor = config(&[("BALLAST_BALANCE_FLOOR", "bytes=1.5MB/s,disk=500MB")])
        .balance
        .floor;
    assert_eq!(floor.bytes_per_sec, 1_500_000.0);
    assert_eq!(floor.disk_bytes, 500_000_000);
    let floor = config(&[("BALLAST_BALANCE_FLOOR", "bytes=1MiB/s")])
        .balance
        .floor;
    assert_eq!(floor.bytes_per_sec, 1_048_576.0);
    assert_eq!(floor.disk_bytes, 0);

    for bad in [
        "disk=",
        "bytes=2MB",
        "disk=2GiB/s",
        "cpu=1",
        "bytes 2MB/s",
        "bytes=2MB/s bytes=3MB/s",
    ] {
        let e = error(&[("BALLAST_BALANCE_FLOOR", bad)]);
        assert_eq!(e.var, "BALLAST_BALANCE_FLOOR", "{bad}");
    }
    let e = error(&[("BALLAST_BALANCE_FLOOR", "disk=2XB")]);
    assert_eq!(
        e.problem,
        "disk unit must be one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, got \"2XB\""
    );
}

#[test]
fn invalid_throttle_rate_is_refused() {
    let e = error(&[("BALLAST_THROTTLE_RATE_MB", "0")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_THROTTLE_RATE_MB: must be between 1 and BALLAST_THROTTLE_MAX_RATE_MB (1000), got 0"
    );
    let e = error(&[("BALLAST_THROTTLE_RATE_MB", "fast")]);
    assert_eq!(
        e.problem,
        "must be a whole number between 1 and BALLAST_THROTTLE_MAX_RATE_MB (1000), got \"fast\""
    );
    let e = error(&[("BALLAST_THROTTLE_RATE_MB", "5000")]);
    assert_eq!(
        e.problem,
        "must be between 1 and BALLAST_THROTTLE_MAX_RATE_MB (1000), got 5000"
    );
    let e = error(&[("BALLAST_THROTTLE_RATE_MB", "2.5")]);
    assert_eq!(e.var, "BALLAST_THROTTLE_RATE_MB");
    let e = error(&[
        ("BALLAST_THROTTLE_RATE_MB", "300"),
        ("BALLAST_THROTTLE_MAX_RATE_MB", "200"),
    ]);
    assert_eq!(
        e.problem,
        "must be between 1 and BALLAST_THROTTLE_MAX_RATE_MB (200), got 300"
    );
    let e = error(&[("BALLAST_THROTTLE_MAX_RATE_MB", "0")]);
    assert_eq!(e.var, "BALLAST_THROTTLE_MAX_RATE_MB");

    let c = config(&[
        ("BALLAST_THROTTLE_RATE_MB", "2000"),
        ("BALLAST_THROTTLE_MAX_RATE_MB", "2000"),
    ]);
    assert_eq!((c.throttle.rate_mb, c.throttle.max_rate_mb), (2000, 2000));
}

#[test]
fn stall_readings_of_zero_are_refused_and_the_default_is_fifteen() {
    let e = error(&[("BALLAST_MOVE_STALL_READINGS", "0")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_MOVE_STALL_READINGS: must be at least 1, got 0"
    );
    assert_eq!(config(&[]).throttle.move_stall_readings, 15);
}

#[test]
fn move_cap_of_zero_is_refused() {
    let e = error(&[("BALLAST_MOVE_MAX_PER_BROKER", "0")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_MOVE_MAX_PER_BROKER: must be at least 1, got 0"
    );
}

#[test]
fn bools_accept_common_spellings() {
    for (text, value) in [
        ("true", true),
        ("TRUE", true),
        ("1", true),
        ("Yes", true),
        ("false", false),
        ("0", false),
        ("no", false),
    ] {
        assert_eq!(
            config(&[("BALLAST_HEAL_DRY_RUN", text)]).heal.dry_run,
            value,
            "{text}"
        );
    }
    let e = error(&[("BALLAST_HEAL_DRY_RUN", "maybe")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_HEAL_DRY_RUN: must be true or false, got \"maybe\""
    );
}

#[test]
fn integers_name_the_variable_and_the_value() {
    let e = error(&[("BALLAST_BALANCE_WORKERS", "many")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_BALANCE_WORKERS: must be a whole number, got \"many\""
    );
    let e = error(&[("BALLAST_HEAL_MAX_PARTITIONS_PER_RUN", "-3")]);
    assert_eq!(e.problem, "must be a whole number, got \"-3\"");
}

#[test]
fn empty_values_count_as_unset() {
    let c = config(&[("PORT", ""), ("BALLAST_THROTTLE_RATE_MB", "  ")]);
    assert_eq!(c.port, 8080);
    assert_eq!(c.throttle.rate_mb, 50);
}

#[test]
fn heal_window_needs_both_ends() {
    let e = error(&[("BALLAST_HEAL_WINDOW_START", "01:00")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_HEAL_WINDOW_END: required when BALLAST_HEAL_WINDOW_START is set"
    );
    let e = error(&[("BALLAST_HEAL_WINDOW_END", "05:00")]);
    assert_eq!(e.var, "BALLAST_HEAL_WINDOW_START");
    let e = error(&[
        ("BALLAST_HEAL_WINDOW_START", "01:00"),
        ("BALLAST_HEAL_WINDOW_END", "25:00"),
    ]);
    assert_eq!(e.problem, "must be a UTC time as HH:MM, got \"25:00\"");
    let e = error(&[
        ("BALLAST_HEAL_WINDOW_START", "01:00"),
        ("BALLAST_HEAL_WINDOW_END", "01:00"),
    ]);
    assert_eq!(e.var, "BALLAST_HEAL_WINDOW_END");
}

#[test]
fn sasl_protocol_without_credentials_is_refused() {
    let errors = errors(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"),
    ]);
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "BALLAST_KAFKA_SASL_USERNAME: required when BALLAST_KAFKA_SECURITY_PROTOCOL is \
             SASL_SSL and BALLAST_KAFKA_SASL_MECHANISM is SCRAM-SHA-512",
            "BALLAST_KAFKA_SASL_PASSWORD: required when BALLAST_KAFKA_SECURITY_PROTOCOL is \
             SASL_SSL and BALLAST_KAFKA_SASL_MECHANISM is SCRAM-SHA-512",
        ]
    );

    // PLAIN is the default mechanism of a SASL protocol
    let e = error(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "sasl_plaintext"),
        ("BALLAST_KAFKA_SASL_USERNAME", "ballast"),
    ]);
    assert_eq!(e.var, "BALLAST_KAFKA_SASL_PASSWORD");
    assert!(e.problem.contains("SASL_PLAINTEXT"), "{e}");
    assert!(e.problem.contains("PLAIN (the default)"), "{e}");

    let c = config(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
        ("BALLAST_KAFKA_SASL_USERNAME", "ballast"),
        ("BALLAST_KAFKA_SASL_PASSWORD", "s3cret"),
    ]);
    assert_eq!(c.kafka.security, SecurityProtocol::SaslPlaintext);
    let sasl = c.kafka.sasl.expect("sasl settings");
    assert_eq!(sasl.mechanism, SaslMechanism::Plain);
    assert_eq!(sasl.username, "ballast");
    assert_eq!(sasl.password.expose(), "s3cret");
    assert!(c.kafka.tls.is_none());
}

#[test]
fn sasl_settings_without_sasl_protocol_are_refused() {
    let e = error(&[("BALLAST_KAFKA_SASL_MECHANISM", "PLAIN")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_KAFKA_SASL_MECHANISM: only used with SASL; set \
         BALLAST_KAFKA_SECURITY_PROTOCOL to SASL_PLAINTEXT (it is PLAINTEXT)"
    );
    let errors = errors(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "SCRAM-SHA-256"),
        ("BALLAST_KAFKA_SASL_USERNAME", "ballast"),
    ]);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors[0].problem.contains("to SASL_SSL (it is SSL)"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[1].var, "BALLAST_KAFKA_SASL_USERNAME");
}

#[test]
fn tls_files_without_tls_protocol_are_refused() {
    let e = error(&[("BALLAST_KAFKA_SSL_CA_FILE", "/etc/ssl/ca.pem")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_KAFKA_SSL_CA_FILE: only used with TLS; set \
         BALLAST_KAFKA_SECURITY_PROTOCOL to SSL (it is PLAINTEXT)"
    );
    let errors = errors(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
        ("BALLAST_KAFKA_SASL_USERNAME", "u"),
        ("BALLAST_KAFKA_SASL_PASSWORD", "p"),
        ("BALLAST_KAFKA_SSL_CERT_FILE", "/c.pem"),
        ("BALLAST_KAFKA_SSL_KEY_FILE", "/k.pem"),
    ]);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors
        .iter()
        .all(|e| e.problem.contains("to SASL_SSL (it is SASL_PLAINTEXT)")));
}

#[test]
fn unknown_protocol_or_mechanism_is_refused() {
    let e = error(&[("BALLAST_KAFKA_SECURITY_PROTOCOL", "TLS")]);
    assert_eq!(
        e.problem,
        "must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got \"TLS\""
    );
    let e = error(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "GSSAPI"),
    ]);
    assert_eq!(e.var, "BALLAST_KAFKA_SASL_MECHANISM");
}

#[test]
fn oauthbearer_without_token_endpoint_is_refused() {
    let e = error(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "s3cret"),
    ]);
    assert_eq!(
        e.to_string(),
        "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT: required when BALLAST_KAFKA_SASL_MECHANISM is OAUTHBEARER"
    );

    let errors = errors(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "oauthbearer"),
    ]);
    let vars: Vec<&str> = errors.iter().map(|e| e.var.as_str()).collect();
    assert_eq!(
        vars,
        [
            "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT",
            "BALLAST_KAFKA_OAUTH_CLIENT_ID",
            "BALLAST_KAFKA_OAUTH_CLIENT_SECRET",
        ]
    );

    let e = error(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
        (
            "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT",
            "idp.example.com/token",
        ),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "s3cret"),
    ]);
    assert_eq!(
        e.problem,
        "must be an http:// or https:// URL, got \"idp.example.com/token\""
    );
}

#[test]
fn oauthbearer_with_client_credentials_is_accepted() {
    let c = config(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
        (
            "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT",
            "https://idp.example.com/oauth2/token",
        ),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "s3cret"),
        ("BALLAST_KAFKA_OAUTH_SCOPE", "kafka"),
        (
            "BALLAST_KAFKA_OAUTH_EXTENSIONS",
            "logicalCluster=lkc-1,identityPoolId=pool-2",
        ),
    ]);
    let sasl = c.kafka.sasl.expect("sasl");
    assert_eq!(sasl.mechanism, SaslMechanism::OAuthBearer);
    assert!(sasl.username.is_empty() && sasl.password.is_empty());
    let oauth = c.kafka.oauth.expect("oauth");
    assert_eq!(oauth.token_endpoint, "https://idp.example.com/oauth2/token");
    assert_eq!(oauth.client_id, "ballast");
    assert_eq!(oauth.client_secret.expose(), "s3cret");
    assert_eq!(oauth.scope.as_deref(), Some("kafka"));
    assert_eq!(
        oauth.extensions,
        [
            ("logicalCluster".to_string(), "lkc-1".to_string()),
            ("identityPoolId".to_string(), "pool-2".to_string()),
        ]
    );
    assert_eq!(c.kafka.tls, Some(Default::default()));
}

#[test]
fn oauth_settings_without_oauthbearer_are_refused() {
    let e = error(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_USERNAME", "u"),
        ("BALLAST_KAFKA_SASL_PASSWORD", "p"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
    ]);
    assert_eq!(e.var, "BALLAST_KAFKA_OAUTH_CLIENT_ID");
    assert!(e
        .problem
        .starts_with("only used when BALLAST_KAFKA_SASL_MECHANISM is OAUTHBEARER"));
}

fn oauth_with_extensions(extensions: &str) -> Vec<(&'static str, String)> {
    [
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
        ("BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT", "https://idp/token"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "s3cret"),
        ("BALLAST_KAFKA_OAUTH_EXTENSIONS", extensions),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_string()))
    .collect()
}

fn extensions_error(extensions: &str) -> ConfigError {
    let vars = oauth_with_extensions(extensions);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let e = error(&vars);
    assert_eq!(e.var, "BALLAST_KAFKA_OAUTH_EXTENSIONS", "{extensions:?}");
    e
}

#[test]
fn reserved_auth_key_in_oauth_extensions_is_refused() {
    for extensions in ["auth=Bearer x", "a=1,AUTH=x", "Auth=x"] {
        let e = extensions_error(extensions);
        assert_eq!(
            e.to_string(),
            "BALLAST_KAFKA_OAUTH_EXTENSIONS: the key auth is reserved (RFC 7628)"
        );
    }
}

#[test]
fn malformed_oauth_extensions_are_refused() {
    for extensions in ["novalue", "=x", "my_key=x", "k1=x", "a=\u{7}", "a=1,a=2"] {
        extensions_error(extensions);
    }
    let e = extensions_error("trace-id=1");
    assert_eq!(
        e.problem,
        "extension keys must be letters only (RFC 7628), got \"trace-id\""
    );
}

fn ssl(files: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut vars = vec![("BALLAST_KAFKA_SECURITY_PROTOCOL", "SSL".to_string())];
    vars.extend(files.iter().map(|(k, v)| (*k, v.to_string())));
    vars
}

fn ssl_result(files: &[(&'static str, &str)]) -> Result<Config, Vec<ConfigError>> {
    let vars = ssl(files);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Config::from_raw(&raw(&vars))
}

fn ssl_error(files: &[(&'static str, &str)]) -> ConfigError {
    let mut errors = ssl_result(files).expect_err("refused");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    errors.remove(0)
}

#[test]
fn loadable_client_certificate_and_key_are_accepted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = write(dir.path(), "client.pem", TEST_CERT);
    let key = write(dir.path(), "client.key", TEST_KEY);
    let c = ssl_result(&[
        ("BALLAST_KAFKA_SSL_CA_FILE", path_str(&cert)),
        ("BALLAST_KAFKA_SSL_CERT_FILE", path_str(&cert)),
        ("BALLAST_KAFKA_SSL_KEY_FILE", path_str(&key)),
    ])
    .expect("valid mutual tls");
    let tls = c.kafka.tls.expect("tls files");
    assert_eq!(tls.ca_file.as_deref(), Some(cert.as_path()));
    assert_eq!(tls.cert_file.as_deref(), Some(cert.as_path()));
    assert_eq!(tls.key_file.as_deref(), Some(key.as_path()));
}

#[test]
fn unloadable_client_certificate_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = write(dir.path(), "client.key", TEST_KEY);
    let garbage = write(dir.path(), "garbage.pem", "not a certificate\n");
    let missing = dir.path().join("missing.pem");

    let e = ssl_error(&[
        ("BALLAST_KAFKA_SSL_CERT_FILE", path_str(&missing)),
        ("BALLAST_KAFKA_SSL_KEY_FILE", path_str(&key)),
    ]);
    assert_eq!(e.var, "BALLAST_KAFKA_SSL_CERT_FILE");
    assert!(
        e.problem
            .starts_with(&format!("cannot load {}: ", missing.display())),
        "{e}"
    );

    for not_a_cert in [&garbage, &key] {
        let e = ssl_error(&[
            ("BALLAST_KAFKA_SSL_CERT_FILE", path_str(not_a_cert)),
            ("BALLAST_KAFKA_SSL_KEY_FILE", path_str(&key)),
        ]);
        assert_eq!(
            e.to_string(),
            format!(
                "BALLAST_KAFKA_SSL_CERT_FILE: {} holds no PEM certificate",
                not_a_cert.display()
            )
        );
    }

    let broken = write(
        dir.path(),
        "broken.pem",
        "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
    );
    let e = ssl_error(&[
        ("BALLAST_KAFKA_SSL_CERT_FILE", path_str(&broken)),
        ("BALLAST_KAFKA_SSL_KEY_FILE", path_str(&key)),
    ]);
    assert_eq!(e.var, "BALLAST_KAFKA_SSL_CERT_FILE");
}

#[test]
fn unloadable_client_key_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = write(dir.path(), "client.pem", TEST_CERT);
    let garbage = write(dir.path(), "garbage.key", "not a key\n");
    let missing = dir.path().join("missing.key");

    let e = ssl_error(&[
        ("BALLAST_KAFKA_SSL_CERT_FILE", path_str(&cert)),
        ("BALLAST_KAFKA_SSL_KEY_FILE", path_str(&missing)),
    ]);
    assert_eq!(e.var, "BALLAST_KAFKA_SSL_KEY_FILE");
    assert!(
        e.problem
            .starts_with(&format!("cannot load {}: ", missing.display())),
        "{e}"
    );

    for not_a_key in [&garbage, &cert] {
        let e = ssl_error(&[
            ("BALLAST_KAFKA_SSL_CERT_FILE", path_str(&cert)),
            ("BALLAST_KAFKA_SSL_KEY_FILE", path_str(not_a_key)),
        ]);
        assert_eq!(
            e.to_string(),
            format!(
                "BALLAST_KAFKA_SSL_KEY_FILE: {} holds no PEM private key",
                not_a_key.display()
            )
        );
    }
}

#[test]
fn client_certificate_and_key_come_in_pairs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cert = write(dir.path(), "client.pem", TEST_CERT);
    let key = write(dir.path(), "client.key", TEST_KEY);
    let e = ssl_error(&[("BALLAST_KAFKA_SSL_CERT_FILE", path_str(&cert))]);
    assert_eq!(
        e.to_string(),
        "BALLAST_KAFKA_SSL_KEY_FILE: required when BALLAST_KAFKA_SSL_CERT_FILE is set"
    );
    let e = ssl_error(&[("BALLAST_KAFKA_SSL_KEY_FILE", path_str(&key))]);
    assert_eq!(
        e.to_string(),
        "BALLAST_KAFKA_SSL_CERT_FILE: required when BALLAST_KAFKA_SSL_KEY_FILE is set"
    );
}

#[test]
fn unloadable_ca_file_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = write(dir.path(), "ca.pem", "nothing here\n");
    let e = ssl_error(&[("BALLAST_KAFKA_SSL_CA_FILE", path_str(&garbage))]);
    assert_eq!(e.var, "BALLAST_KAFKA_SSL_CA_FILE");
    let e = ssl_error(&[("BALLAST_KAFKA_SSL_CA_FILE", path_str(dir.path()))]);
    assert_eq!(e.var, "BALLAST_KAFKA_SSL_CA_FILE");
    assert!(e.problem.starts_with("cannot load "), "{e}");
}

#[test]
fn pat_hash_secret_is_required_when_pats_are_enabled() {
    let e = error(&[("AUTH_PAT_ENABLED", "true")]);
    assert_eq!(e.var, "AUTH_PAT_HASH_SECRET");
    assert!(e
        .problem
        .starts_with("required when AUTH_PAT_ENABLED is true"));
    let e = error(&[
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", "short-secret"),
    ]);
    assert_eq!(
        e.to_string(),
        "AUTH_PAT_HASH_SECRET: must be at least 32 characters, got 12"
    );
    let long = "x".repeat(32);
    let c = config(&[
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", &long),
    ]);
    assert!(c.auth.pat_enabled);
    assert_eq!(c.auth.pat_hash_secret.map(|s| s.expose().len()), Some(32));
}

#[test]
fn zero_durations_are_refused_where_a_period_is_needed() {
    for name in [
        "BALLAST_SAMPLE_INTERVAL",
        "BALLAST_READY_STALE_AFTER",
        "BALLAST_HEARTBEAT_INTERVAL",
        "BALLAST_SLOT_LEASE_TTL",
        "BALLAST_RESTART_BACKOFF_INITIAL",
        "LICENSE_FETCH_INTERVAL",
        "BALLAST_KAFKA_REQUEST_TIMEOUT",
    ] {
        let e = error(&[(name, "0s")]);
        assert_eq!(e.to_string(), format!("{name}: must be above 0, got 0s"));
    }
    let c = config(&[
        ("BALLAST_WARMUP", "0s"),
        ("BALLAST_MOVE_COOLDOWN", "0ms"),
        ("BALLAST_SHUTDOWN_GRACE", "0s"),
    ]);
    assert_eq!(c.timing.move_cooldown, Duration::ZERO);
    let e = error(&[("BALLAST_MOVE_TIMEOUT", "12 hours")]);
    assert_eq!(
        e.to_string(),
        "BALLAST_MOVE_TIMEOUT: must be a duration such as 500ms, 30s, 5m, 12h or 7d, got \"12 hours\""
    );
}

#[test]
fn restart_backoff_max_below_initial_is_refused() {
    let e = error(&[
        ("BALLAST_RESTART_BACKOFF_INITIAL", "10s"),
        ("BALLAST_RESTART_BACKOFF_MAX", "5s"),
    ]);
    assert_eq!(
        e.to_string(),
        "BALLAST_RESTART_BACKOFF_MAX: must be at least BALLAST_RESTART_BACKOFF_INITIAL (10s), got 5s"
    );
}

#[test]
fn each_bad_value_gets_its_own_error() {
    let errors = errors(&[
        (BOOTSTRAP, ""),
        ("PORT", "eighty"),
        ("BALLAST_BIND", "localhost"),
        ("LOG_LEVEL", "TRACE"),
        ("BALLAST_BALANCE_THRESHOLD", "0"),
        ("BALLAST_THROTTLE_RATE_MB", "fast"),
        ("BALLAST_HEAL_DRY_RUN", "maybe"),
        ("BALLAST_SAMPLE_INTERVAL", "1.5m"),
        ("LICENSE_URL", "license.ballast.dev"),
    ]);
    let mut vars: Vec<&str> = errors.iter().map(|e| e.var.as_str()).collect();
    vars.sort_unstable();
    assert_eq!(
        vars,
        [
            "BALLAST_BALANCE_THRESHOLD",
            "BALLAST_BIND",
            "BALLAST_HEAL_DRY_RUN",
            BOOTSTRAP,
            "BALLAST_SAMPLE_INTERVAL",
            "BALLAST_THROTTLE_RATE_MB",
            "LICENSE_URL",
            "LOG_LEVEL",
            "PORT",
        ]
    );
    for e in &errors {
        let text = e.to_string();
        assert_eq!(
            text,
            text.trim_end_matches('.'),
            "no trailing period: {text}"
        );
        assert!(text.starts_with(&format!("{}: ", e.var)));
    }
}

#[test]
fn environment_wins_over_env_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write(
        dir.path(),
        "ballast.env",
        "PORT=9000\nBALLAST_THROTTLE_RATE_MB=75\nBALLAST_KAFKA_BOOTSTRAP_SERVERS=file:9092\n",
    );
    let raw = RawConfig::from_pairs(pairs(&[("PORT", "9100")]), Some(&file)).expect("reads file");
    assert_eq!(raw.get("PORT"), Some("9100"));
    let c = Config::from_raw(&raw).expect("valid");
    assert_eq!(c.port, 9100);
    assert_eq!(c.throttle.rate_mb, 75);
    assert_eq!(c.kafka.bootstrap_servers, ["file:9092"]);

    let rows = effective(&raw);
    let row = |name: &str| {
        rows.iter()
            .find(|row| row.name == name)
            .expect("row for every setting")
    };
    assert_eq!(row("PORT").source, Source::Env);
    assert_eq!(row("PORT").value, "9100");
    assert_eq!(
        row("BALLAST_THROTTLE_RATE_MB").source,
        Source::File(file.clone())
    );
    assert_eq!(row("BALLAST_THROTTLE_MAX_RATE_MB").source, Source::Default);
    assert_eq!(row("BALLAST_THROTTLE_MAX_RATE_MB").value, "1000");

    assert_eq!(
        raw.warnings(),
        [format!(
            "PORT: set in the environment and in {}; the environment wins",
            file.display()
        )]
    );
}

#[test]
fn unreadable_or_malformed_env_file_is_an_error_on_the_config_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("missing.env");
    let e = RawConfig::from_pairs(Vec::new(), Some(&missing)).expect_err("missing file");
    assert_eq!(e.var, "--config");
    assert!(e
        .problem
        .starts_with(&format!("cannot read {}: ", missing.display())));

    let bad = write(dir.path(), "bad.env", "# ok\nPORT=1\nnot a setting\n");
    let e = RawConfig::from_pairs(Vec::new(), Some(&bad)).expect_err("bad line");
    assert_eq!(
        e.to_string(),
        format!(
            "--config: {} line 3: expected KEY=VALUE, got \"not a setting\"",
            bad.display()
        )
    );
}

#[test]
fn env_file_syntax() {
    let text = "\
# a comment
   # an indented comment

PORT=8081
export BALLAST_BIND=0.0.0.0
  LOG_LEVEL  =  debug
LICENSE_STRING=\"eyJ.a#b.c\"
AUTH_PAT_HASH_SECRET='single $NOT_EXPANDED'
ALLOWED_GROUPS=\"a,b\" # trailing comment
BALLAST_DATA_DIR=/data#not-a-comment
EMPTY=
PORT=8082
";
    let parsed = parse_env_file(text).expect("valid file");
    let expected = pairs(&[
        ("PORT", "8081"),
        ("BALLAST_BIND", "0.0.0.0"),
        ("LOG_LEVEL", "debug"),
        ("LICENSE_STRING", "eyJ.a#b.c"),
        ("AUTH_PAT_HASH_SECRET", "single $NOT_EXPANDED"),
        ("ALLOWED_GROUPS", "a,b"),
        ("BALLAST_DATA_DIR", "/data#not-a-comment"),
        ("EMPTY", ""),
        ("PORT", "8082"),
    ]);
    assert_eq!(parsed, expected);

    assert_eq!(
        parse_env_file("A=1\n\nB\n"),
        Err((3, "expected KEY=VALUE, got \"B\"".to_string()))
    );
    assert_eq!(
        parse_env_file("A=1\nB=\"open\n").map_err(|(line, _)| line),
        Err(2)
    );
    assert_eq!(parse_env_file("1A=x").map_err(|(line, _)| line), Err(1));
    assert_eq!(parse_env_file("A B=x").map_err(|(line, _)| line), Err(1));
    assert_eq!(parse_env_file("A='x' y").map_err(|(line, _)| line), Err(1));
    assert_eq!(parse_env_file("=x").map_err(|(line, _)| line), Err(1));
}

#[test]
fn secrets_are_redacted_in_effective_config_and_debug() {
    let secrets = [
        ("BALLAST_KAFKA_SASL_PASSWORD", "kafka-password-123"),
        ("LICENSE_STRING", "license-token-456"),
        ("LICENSE_FETCH_TOKEN", "fetch-token-789"),
        (
            "AUTH_PAT_HASH_SECRET",
            "pat-hash-secret-0123456789-abcdefghij",
        ),
    ];
    let mut vars = vec![
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_USERNAME", "ballast"),
        ("AUTH_PAT_ENABLED", "true"),
    ];
    vars.extend(secrets);
    let raw = raw(&vars);
    let c = Config::from_raw(&raw).expect("valid");

    let debug = format!("{c:?} {c:#?} {raw:?}");
    for (_, secret) in secrets {
        assert!(!debug.contains(secret), "debug output shows {secret}");
    }
    assert!(debug.contains("<redacted>"));

    let rows = effective(&raw);
    assert_eq!(rows.len(), SETTINGS.len());
    for row in &rows {
        let set = secrets.iter().any(|(name, _)| *name == row.name);
        if set {
            assert!(row.secret);
            assert_eq!(row.value, "<redacted>", "{}", row.name);
        }
    }
    let client_secret = rows
        .iter()
        .find(|row| row.name == "BALLAST_KAFKA_OAUTH_CLIENT_SECRET")
        .expect("row");
    assert!(client_secret.secret);
    assert_eq!(client_secret.value, "");
    let json = serde_json::to_string(&rows).expect("serializes");
    for (_, secret) in secrets {
        assert!(!json.contains(secret));
    }
    assert!(json.contains(r#""source":"env""#), "{json}");

    // an error about a secret does not quote it
    let short = "tooshort-secret";
    let e = error(&[
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", short),
    ]);
    assert!(!e.to_string().contains(short));
}

#[test]
fn durations_parse_and_format() {
    let cases = [
        ("500ms", Duration::from_millis(500)),
        ("30s", Duration::from_secs(30)),
        ("5m", Duration::from_secs(300)),
        ("12h", Duration::from_secs(12 * 3600)),
        ("7d", Duration::from_secs(7 * 86_400)),
        ("0s", Duration::ZERO),
    ];
    for (text, duration) in cases {
        assert_eq!(parse_duration(text), Ok(duration), "{text}");
        assert_eq!(format_duration(duration), text);
    }
    for bad in [
        "", "5", "1.5h", "5 m", "-1s", "+1s", "5M", "s", "10sec", "1h30m",
    ] {
        assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
    }
    assert_eq!(parse_duration("0ms"), Ok(Duration::ZERO));
    assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
    assert!(parse_duration("99999999999999999999d").is_err());
    assert!(parse_duration("999999999999999999d").is_err());
    assert_eq!(format_duration(Duration::from_secs(90)), "90s");
    assert_eq!(format_duration(Duration::from_secs(1800)), "30m");
    assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    assert_eq!(format_duration(Duration::from_secs(36 * 3600)), "36h");
}

#[test]
fn every_setting_is_in_the_example_file() {
    let example = example_env_file();
    for spec in SETTINGS {
        let line = format!("#{}={}", spec.name, spec.default.unwrap_or(""));
        assert!(
            example.lines().any(|l| l == line),
            "missing line {line:?} in the example file"
        );
        assert!(example.contains(spec.help), "missing help of {}", spec.name);
    }
    // as shipped the example sets nothing
    assert_eq!(parse_env_file(&example), Ok(Vec::new()));

    // uncommenting every default gives the default configuration
    let uncommented: String = example
        .lines()
        .filter_map(|line| line.strip_prefix('#'))
        .filter(|line| {
            SETTINGS
                .iter()
                .any(|s| s.default.is_some() && line.starts_with(&format!("{}=", s.name)))
        })
        .map(|line| format!("{line}\n"))
        .collect();
    let pairs = parse_env_file(&uncommented).expect("uncommented example parses");
    assert_eq!(
        pairs.len(),
        SETTINGS.iter().filter(|s| s.default.is_some()).count()
    );
    let mut env = pairs;
    env.push((BOOTSTRAP.to_string(), "kafka-1:9092".to_string()));
    let raw = RawConfig::from_pairs(env, None).expect("no file");
    assert!(raw.warnings().is_empty());
    let c = Config::from_raw(&raw).expect("defaults are valid");
    assert_eq!(c.throttle.rate_mb, 50);
}

#[test]
fn settings_table_is_consistent() {
    for (i, spec) in SETTINGS.iter().enumerate() {
        assert!(
            SETTINGS[..i].iter().all(|s| s.name != spec.name),
            "{} listed twice",
            spec.name
        );
        assert!(
            !spec.help.is_empty() && !spec.help.ends_with('.'),
            "{}",
            spec.name
        );
        assert!(
            !(spec.secret && spec.default.is_some()),
            "secret {} has a default",
            spec.name
        );
    }
    // the default floor string and the floor the parser falls back to agree
    let floor = SETTINGS
        .iter()
        .find(|s| s.name == "BALLAST_BALANCE_FLOOR")
        .and_then(|s| s.default)
        .expect("floor default");
    assert!(floor.contains("bytes=2MB/s"));
}

#[test]
fn unknown_ballast_variable_warns() {
    let raw = raw(&[
        ("BALLAST_THROTLE_RATE_MB", "100"),
        ("BALLAST_SUPERVISOR_PID", "42"),
        ("HOME", "/root"),
        ("AUTH_GOOGLE_USERNAME_CLAIM", "email"),
    ]);
    assert_eq!(
        raw.warnings(),
        ["BALLAST_THROTLE_RATE_MB: not a known setting (ignored)"]
    );
    // the typo does not change the configuration
    assert_eq!(Config::from_raw(&raw).expect("valid").throttle.rate_mb, 50);
}

#[test]
fn exported_passes_settings_from_env_and_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = write(
        dir.path(),
        "ballast.env",
        "BALLAST_THROTTLE_RATE_MB=75\nAUTH_GOOGLE_CLIENT_ID=abc\n",
    );
    let raw = RawConfig::from_pairs(
        pairs(&[(BOOTSTRAP, "k:9092"), ("HOME", "/root"), ("PORT", "9000")]),
        Some(&file),
    )
    .expect("reads file");
    let mut exported = raw.exported();
    exported.sort();
    assert_eq!(
        exported,
        pairs(&[
            ("AUTH_GOOGLE_CLIENT_ID", "abc"),
            (BOOTSTRAP, "k:9092"),
            ("BALLAST_THROTTLE_RATE_MB", "75"),
            ("PORT", "9000"),
        ])
    );
}

#[test]
fn plan_settings_validate_balancing_without_a_kafka_connection() {
    let raw = ballast_config::RawConfig::from_pairs(
        [("BALLAST_BALANCE_THRESHOLD".to_string(), "7".to_string())],
        None,
    )
    .expect("raw");
    let s = ballast_config::PlanSettings::from_raw(&raw).expect("no bootstrap servers needed");
    assert_eq!(s.balance.threshold_percent, 7.0);
    assert_eq!(s.move_cooldown, std::time::Duration::from_secs(30 * 60));
    let bad = ballast_config::RawConfig::from_pairs(
        [("BALLAST_BALANCE_THRESHOLD".to_string(), "0".to_string())],
        None,
    )
    .expect("raw");
    let errors = ballast_config::PlanSettings::from_raw(&bad).expect_err("refused");
    assert_eq!(errors[0].var, "BALLAST_BALANCE_THRESHOLD");
}

// ------------------------------------------------------------------------------ authentication

const CORP: [(&str, &str); 4] = [
    ("AUTH_PROVIDERS", "corp, Partner"),
    ("AUTH_CORP_ISSUER", "https://idp.example.com/realms/corp/"),
    ("AUTH_CORP_CLIENT_ID", "ballast"),
    ("BALLAST_PUBLIC_URL", "https://ballast.example.com/"),
];

#[test]
fn authentication_is_off_unless_a_provider_or_tokens_are_configured() {
    let c = config(&[]);
    assert!(!c.auth.enabled());
    assert!(c.auth.providers.is_empty());
    let c = config(&[
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", "0123456789abcdef0123456789abcdef"),
    ]);
    assert!(c.auth.enabled(), "tokens alone turn it on");
}

#[test]
fn anonymous_access_needs_tokens_on_and_no_login_providers() {
    let pat = [
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", "0123456789abcdef0123456789abcdef"),
    ];
    assert!(!config(&pat).auth.anonymous, "off by default");
    let mut vars = pat.to_vec();
    vars.push(("AUTH_ANONYMOUS", "true"));
    let c = config(&vars);
    assert!(c.auth.anonymous && c.auth.enabled());
    let e = error(&[("AUTH_ANONYMOUS", "true")]);
    assert!(
        e.to_string()
            .starts_with("AUTH_ANONYMOUS: needs AUTH_PAT_ENABLED=true"),
        "{e}"
    );
    let mut vars = CORP.to_vec();
    vars[0] = ("AUTH_PROVIDERS", "corp");
    vars.extend(pat);
    vars.push(("AUTH_ANONYMOUS", "true"));
    let e = error(&vars);
    assert!(
        e.to_string()
            .starts_with("AUTH_ANONYMOUS: cannot be on with AUTH_PROVIDERS"),
        "{e}"
    );
}

#[test]
fn each_provider_reads_its_own_settings_with_defaults() {
    let mut vars = CORP.to_vec();
    vars.extend([
        ("AUTH_PARTNER_ISSUER", "http://127.0.0.1:9999"),
        ("AUTH_PARTNER_CLIENT_ID", "p"),
        ("AUTH_PARTNER_CLIENT_SECRET", "  spaced secret "),
        ("AUTH_PARTNER_SCOPES", "email,groups openid"),
        ("AUTH_PARTNER_DISPLAY_NAME", "Partner SSO"),
        ("AUTH_PARTNER_GROUPS_CLAIM", "realm_access.roles"),
    ]);
    let c = config(&vars);
    assert!(c.auth.enabled());
    assert_eq!(
        c.auth.public_url.as_deref(),
        Some("https://ballast.example.com")
    );
    assert!(c.auth.secure_cookies());
    let corp = c.auth.provider("corp").expect("corp");
    assert_eq!(corp.issuer, "https://idp.example.com/realms/corp");
    assert_eq!(corp.scopes, ["openid", "profile", "email"]);
    assert_eq!(corp.display_name, "corp");
    assert!(corp.client_secret.is_none(), "a public client");
    let partner = c.auth.provider("partner").expect("lower-cased name");
    assert_eq!(partner.scopes, ["openid", "email", "groups"]);
    assert_eq!(partner.display_name, "Partner SSO");
    assert_eq!(partner.groups_claim.as_deref(), Some("realm_access.roles"));
    assert_eq!(
        partner
            .client_secret
            .as_ref()
            .map(|s| s.expose().to_string()),
        Some("  spaced secret ".to_string()),
        "a secret is used exactly as given"
    );
    assert!(!format!("{c:?}").contains("spaced secret"));
    assert_eq!(c.auth.session_ttl, Duration::from_secs(12 * 3600));
    assert_eq!(c.auth.login_timeout, Duration::from_secs(600));
    assert!(!c.auth.metrics_public);
}

#[test]
fn a_provider_needs_an_issuer_a_client_id_and_a_public_url() {
    let e = errors(&[("AUTH_PROVIDERS", "corp")]);
    let vars: Vec<&str> = e.iter().map(|e| e.var.as_str()).collect();
    assert!(vars.contains(&"AUTH_CORP_ISSUER"), "{e:?}");
    assert!(vars.contains(&"AUTH_CORP_CLIENT_ID"), "{e:?}");
    assert!(vars.contains(&"BALLAST_PUBLIC_URL"), "{e:?}");
}

#[test]
fn an_issuer_must_be_https_except_on_loopback() {
    let mut vars = CORP.to_vec();
    vars[0] = ("AUTH_PROVIDERS", "corp");
    vars[1] = ("AUTH_CORP_ISSUER", "http://idp.example.com");
    assert_eq!(error(&vars).var, "AUTH_CORP_ISSUER");
    for loopback in [
        "http://127.0.0.1:8081",
        "http://localhost:3000/oidc",
        "http://[::1]:80",
    ] {
        vars[1] = ("AUTH_CORP_ISSUER", loopback);
        config(&vars);
    }
}

#[test]
fn provider_names_are_plain_and_listed_once() {
    let mut vars = CORP.to_vec();
    vars[0] = ("AUTH_PROVIDERS", "corp,co rp");
    assert_eq!(error(&vars).var, "AUTH_PROVIDERS");
    vars[0] = ("AUTH_PROVIDERS", "corp,CORP");
    assert_eq!(error(&vars).var, "AUTH_PROVIDERS");
}

#[test]
fn config_check_lists_and_redacts_each_providers_settings() {
    let mut vars = CORP.to_vec();
    vars[0] = ("AUTH_PROVIDERS", "corp");
    vars.push(("AUTH_CORP_CLIENT_SECRET", "do-not-print"));
    let rows = effective(&raw(&vars));
    let row = |name: &str| rows.iter().find(|r| r.name == name).expect(name);
    assert_eq!(row("AUTH_CORP_CLIENT_SECRET").value, "<redacted>");
    assert!(row("AUTH_CORP_CLIENT_SECRET").secret);
    assert_eq!(row("AUTH_CORP_SCOPES").value, "openid profile email");
    assert_eq!(row("AUTH_CORP_ISSUER").source, Source::Env);
}

#[test]
fn the_chat_assistant_needs_a_model_when_enabled_and_names_its_provider() {
    let off = config(&[]);
    assert!(!off.chat.enabled);
    assert_eq!(off.chat.provider, "openai");
    assert_eq!(off.chat.timeout, std::time::Duration::from_secs(60));
    assert_eq!(off.chat.max_tokens, 2048);
    assert!(off.chat.base_url.is_none());

    assert_eq!(
        error(&[("BALLAST_CHAT_ENABLED", "true")]).var,
        "BALLAST_CHAT_MODEL"
    );
    let on = config(&[
        ("BALLAST_CHAT_ENABLED", "true"),
        ("BALLAST_CHAT_PROVIDER", "Anthropic"),
        ("BALLAST_CHAT_MODEL", "claude-sonnet-4-5"),
        ("BALLAST_CHAT_BASE_URL", "http://127.0.0.1:11434/v1/"),
        ("BALLAST_CHAT_API_KEY", "sk-secret"),
    ]);
    assert_eq!(on.chat.provider, "anthropic");
    assert_eq!(
        on.chat.base_url.as_deref(),
        Some("http://127.0.0.1:11434/v1")
    );
    assert_eq!(
        on.chat.api_key.as_ref().map(|k| k.expose()),
        Some("sk-secret")
    );
    assert!(
        !format!("{:?}", on.chat).contains("sk-secret"),
        "the key is redacted"
    );

    assert_eq!(
        error(&[("BALLAST_CHAT_PROVIDER", "gemini")]).var,
        "BALLAST_CHAT_PROVIDER"
    );
    assert_eq!(
        error(&[("BALLAST_CHAT_BASE_URL", "ftp://x")]).var,
        "BALLAST_CHAT_BASE_URL"
    );
    assert_eq!(
        error(&[("BALLAST_CHAT_MAX_TOKENS", "0")]).var,
        "BALLAST_CHAT_MAX_TOKENS"
    );
    assert_eq!(
        error(&[("BALLAST_CHAT_TIMEOUT", "0s")]).var,
        "BALLAST_CHAT_TIMEOUT"
    );
}

// ------------------------------------------------------------------------------ agents

#[test]
fn the_agent_needs_its_service_token_broker_and_restart_command_and_names_each_missing_one() {
    let errs = ballast_config::AgentSettings::from_raw(&raw(&[])).expect_err("nothing set");
    let vars: Vec<&str> = errs.iter().map(|e| e.var.as_str()).collect();
    for want in [
        "BALLAST_AGENT_SERVICE_URL",
        "BALLAST_AGENT_TOKEN",
        "BALLAST_AGENT_BROKER_ID",
        "BALLAST_AGENT_RESTART_COMMAND",
    ] {
        assert!(vars.contains(&want), "{want} not reported: {vars:?}");
    }
}

#[test]
fn an_agent_token_shorter_than_32_characters_is_refused_without_being_quoted() {
    let short = "short-agent-token";
    let e = error(&[
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "k:9092"),
        ("BALLAST_AGENT_TOKEN", short),
    ]);
    assert_eq!(e.var, "BALLAST_AGENT_TOKEN");
    assert!(!e.to_string().contains(short), "{e}");
}

#[test]
fn a_complete_agent_configuration_is_read_with_its_defaults() {
    let s = ballast_config::AgentSettings::from_raw(&raw(&[
        (
            "BALLAST_AGENT_SERVICE_URL",
            "https://ballast.example.com:8080/",
        ),
        (
            "BALLAST_AGENT_TOKEN",
            "an-agent-token-of-at-least-32-characters",
        ),
        ("BALLAST_AGENT_BROKER_ID", "3"),
        ("BALLAST_AGENT_RESTART_COMMAND", "systemctl restart kafka"),
        (
            "BALLAST_AGENT_LOG_DIRS",
            "/var/lib/kafka/a, /var/lib/kafka/b",
        ),
    ]))
    .expect("valid");
    assert_eq!(s.service_url, "https://ballast.example.com:8080");
    assert_eq!(s.broker_id, 3);
    assert_eq!(s.log_dirs.len(), 2);
    assert_eq!(s.heartbeat_interval, Duration::from_secs(5));
    assert_eq!(s.command_timeout, Duration::from_secs(600));
    assert!(s.status_command.is_none() && s.ca_file.is_none());
}
