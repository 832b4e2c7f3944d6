//! Startup validation: every failure the spec lists stops `ballast run` with one line naming the
//! variable and the problem, a non-zero exit, and nothing started.

use crate::support::{ballast_output, free_port};

/// Runs `ballast run` with a valid base plus `env`; asserts it refused with exactly one line
/// without starting anything, and returns that line.
fn refused(env: &[(&str, &str)]) -> String {
    let lines = refused_lines(env);
    assert_eq!(lines.len(), 1, "one line for one problem: {lines:?}");
    lines[0].clone()
}

/// Like [`refused`], for configurations with several problems: one line each.
fn refused_lines(env: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let data_text = data.to_string_lossy().into_owned();
    let port = free_port().to_string();
    let mut all: Vec<(&str, &str)> = vec![
        ("BALLAST_DATA_DIR", data_text.as_str()),
        ("PORT", port.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
    ];
    all.extend_from_slice(env);
    let out = ballast_output(&["run"], &all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for {env:?}: {stderr}"
    );
    assert!(
        !data.exists(),
        "nothing may start: {} was created",
        data.display()
    );
    stderr.lines().map(str::to_string).collect()
}

#[test]
fn sasl_protocol_without_credentials_stops_the_service() {
    let line = refused(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
        ("BALLAST_KAFKA_SASL_USERNAME", "u"),
    ]);
    assert!(line.contains("BALLAST_KAFKA_SASL_PASSWORD"), "{line}");
    let line = refused(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"),
        ("BALLAST_KAFKA_SASL_PASSWORD", "p"),
    ]);
    assert!(line.contains("BALLAST_KAFKA_SASL_USERNAME"), "{line}");
}

#[test]
fn oauthbearer_without_token_endpoint_stops_the_service() {
    let line = refused(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "s3cret"),
    ]);
    assert!(
        line.contains("BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT"),
        "{line}"
    );
    assert!(!line.contains("s3cret"), "secrets never echoed: {line}");
}

#[test]
fn reserved_auth_key_in_oauth_extensions_stops_the_service() {
    let line = refused(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_SSL"),
        ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
        (
            "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT",
            "https://idp.example/token",
        ),
        ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
        ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "s3cret"),
        (
            "BALLAST_KAFKA_OAUTH_EXTENSIONS",
            "logicalCluster=lkc-1,auth=x",
        ),
    ]);
    assert!(line.contains("BALLAST_KAFKA_OAUTH_EXTENSIONS"), "{line}");
    assert!(line.contains("auth"), "{line}");
}

#[test]
fn unloadable_client_certificate_or_key_stops_the_service() {
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not a pem file").expect("write");
    let garbage = garbage.to_string_lossy().into_owned();
    let missing = dir.path().join("missing.pem");
    let missing = missing.to_string_lossy().into_owned();

    // Each unloadable file is its own problem, named by its own variable.
    let lines = refused_lines(&[
        ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SSL"),
        ("BALLAST_KAFKA_SSL_CERT_FILE", garbage.as_str()),
        ("BALLAST_KAFKA_SSL_KEY_FILE", missing.as_str()),
    ]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("BALLAST_KAFKA_SSL_CERT_FILE: "),
        "{lines:?}"
    );
    assert!(lines[0].contains("no PEM certificate"), "{lines:?}");
    assert!(
        lines[1].contains("BALLAST_KAFKA_SSL_KEY_FILE: "),
        "{lines:?}"
    );
    assert!(lines[1].contains("missing.pem"), "{lines:?}");
}

#[test]
fn invalid_throttle_rate_stops_the_service() {
    for bad in ["0", "fast", "5000", "-3"] {
        let line = refused(&[("BALLAST_THROTTLE_RATE_MB", bad)]);
        assert!(line.contains("BALLAST_THROTTLE_RATE_MB"), "{bad}: {line}");
    }
}

#[test]
fn balance_threshold_of_zero_or_below_stops_the_service() {
    for bad in ["0", "-5", "0.0"] {
        let line = refused(&[("BALLAST_BALANCE_THRESHOLD", bad)]);
        assert!(line.contains("BALLAST_BALANCE_THRESHOLD"), "{bad}: {line}");
    }
}

#[test]
fn malformed_values_name_the_variable() {
    for (var, bad, quoted) in [
        ("PORT", "eighty", "eighty"),
        ("BALLAST_THROTTLE_MANAGED", "maybe", "maybe"),
        ("BALLAST_SAMPLE_INTERVAL", "5 minutes", "5 minutes"),
        ("LOG_LEVEL", "LOUD", "LOUD"),
        ("BALLAST_BALANCE_FLOOR", "bytes=fast", "fast"),
        ("BALLAST_BIND", "localhost:80", "localhost:80"),
        (
            "BALLAST_KAFKA_BOOTSTRAP_SERVERS",
            "broker-without-port",
            "broker-without-port",
        ),
    ] {
        let line = refused(&[(var, bad)]);
        assert!(line.contains(var), "{var}={bad}: {line}");
        assert!(
            line.contains(&format!("\"{quoted}\"")),
            "the bad value is quoted: {line}"
        );
    }
}

#[test]
fn a_missing_bootstrap_server_list_stops_the_service() {
    let line = refused(&[("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "")]);
    assert!(line.contains("BALLAST_KAFKA_BOOTSTRAP_SERVERS"), "{line}");
}

#[test]
fn config_check_prints_effective_configuration_with_secrets_redacted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("ballast.env");
    std::fs::write(
        &file,
        "# from the file\nBALLAST_KAFKA_BOOTSTRAP_SERVERS=kafka-1:9092,kafka-2:9092\nBALLAST_THROTTLE_RATE_MB=80\nBALLAST_KAFKA_SASL_PASSWORD=hunter2\nBALLAST_KAFKA_SASL_USERNAME=ballast\nBALLAST_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT\n",
    )
    .expect("write env file");
    let file = file.to_string_lossy().into_owned();
    let out = ballast_output(
        &["config", "check", "--config", file.as_str()],
        &[("BALLAST_THROTTLE_RATE_MB", "90")],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("hunter2"), "secret printed: {stdout}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} missing from {stdout}"))
            .to_string()
    };
    assert!(line("BALLAST_KAFKA_SASL_PASSWORD ").contains("<redacted>"));
    assert!(
        line("BALLAST_THROTTLE_RATE_MB ").contains("90"),
        "environment wins over the file"
    );
    assert!(line("BALLAST_THROTTLE_RATE_MB ").contains("(env)"));
    assert!(line("BALLAST_KAFKA_BOOTSTRAP_SERVERS ").contains("kafka-1:9092,kafka-2:9092"));
    assert!(line("BALLAST_MOVE_MAX_PER_BROKER ").contains("20"));
    assert!(line("BALLAST_MOVE_MAX_PER_BROKER ").contains("(default)"));
}

#[test]
fn config_check_exits_non_zero_on_invalid_configuration() {
    let out = ballast_output(
        &["config", "check"],
        &[
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "k:9092"),
            ("BALLAST_BALANCE_THRESHOLD", "0"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("BALLAST_BALANCE_THRESHOLD"));
}

#[test]
fn the_example_env_file_in_deploy_is_current() {
    let out = ballast_output(&["config", "example"], &[]);
    assert!(out.status.success());
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/ballast.env.example"
    ))
    .expect("deploy/ballast.env.example");
    assert_eq!(
        committed,
        String::from_utf8_lossy(&out.stdout),
        "regenerate with: cargo run -q -- config example > deploy/ballast.env.example"
    );
}
