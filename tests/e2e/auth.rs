//! Authentication on the real binary: settings refused at start, secrets redacted, and personal
//! access tokens made by `ballast token` working (and stopping at once when revoked) against the
//! web process of a running `ballast run` — two processes sharing only the database.

use std::time::Duration;

use crate::support::{ballast_output, wait_for, Service};

const SECRET: &str = "an-e2e-secret-of-more-than-32-characters";

#[test]
fn a_provider_without_an_issuer_or_a_public_url_stops_the_service_naming_the_setting() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().to_string_lossy().into_owned();
    let out = ballast_output(
        &["run"],
        &[
            ("BALLAST_DATA_DIR", &data),
            ("AUTH_PROVIDERS", "corp"),
            ("AUTH_CORP_CLIENT_ID", "ballast"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("AUTH_CORP_ISSUER"), "{err}");
    assert!(err.contains("BALLAST_PUBLIC_URL"), "{err}");
    assert!(!dir.path().join("ballast.db").exists(), "nothing started");
    let out = ballast_output(
        &["run"],
        &[
            ("BALLAST_DATA_DIR", &data),
            ("AUTH_PROVIDERS", "corp"),
            ("AUTH_CORP_ISSUER", "http://idp.example.com"),
            ("AUTH_CORP_CLIENT_ID", "ballast"),
            ("BALLAST_PUBLIC_URL", "https://ballast.example.com"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("https"));
}

#[test]
fn config_check_redacts_every_provider_secret() {
    let out = ballast_output(
        &["config", "check"],
        &[
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"),
            ("AUTH_PROVIDERS", "corp"),
            ("AUTH_CORP_ISSUER", "https://idp.example.com"),
            ("AUTH_CORP_CLIENT_ID", "ballast"),
            ("AUTH_CORP_CLIENT_SECRET", "very-secret-client-value"),
            ("BALLAST_PUBLIC_URL", "https://ballast.example.com"),
            ("AUTH_PAT_ENABLED", "true"),
            ("AUTH_PAT_HASH_SECRET", SECRET),
        ],
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        !text.contains("very-secret-client-value") && !text.contains(SECRET),
        "{text}"
    );
    assert!(text.contains("AUTH_CORP_CLIENT_SECRET") && text.contains("<redacted>"));
    assert!(text.contains("AUTH_CORP_ISSUER") && text.contains("https://idp.example.com"));
}

#[test]
fn a_token_made_with_ballast_token_works_until_it_is_revoked_across_processes() {
    let service = Service::start_with(&[
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", SECRET),
    ]);
    let data = service.dir.path().to_string_lossy().into_owned();
    let env = [
        ("BALLAST_DATA_DIR", data.as_str()),
        ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
        ("AUTH_PAT_ENABLED", "true"),
        ("AUTH_PAT_HASH_SECRET", SECRET),
    ];
    let made = ballast_output(
        &[
            "token",
            "create",
            "--user",
            "mcp-agent",
            "--name",
            "agent",
            "--scope",
            "read",
        ],
        &env,
    );
    assert_eq!(
        made.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let value = String::from_utf8_lossy(&made.stdout).trim().to_string();
    assert!(value.starts_with("pat_"), "{value}");
    let http = reqwest::blocking::Client::new();
    let get = |token: Option<&str>| {
        let mut r = http.get(service.url("/api/v1/auth/me"));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send().expect("request")
    };
    assert_eq!(get(None).status(), 401, "authentication is on");
    let me = get(Some(&value));
    assert_eq!(me.status(), 200);
    let me: serde_json::Value = me.json().expect("json");
    assert_eq!(me["data"]["userId"], "mcp-agent");
    assert_eq!(me["data"]["scope"], "read");
    let cluster = http
        .get(service.url("/api/v1/license"))
        .bearer_auth(&value)
        .send()
        .expect("request");
    assert_eq!(cluster.status(), 200);
    let write = http
        .post(service.url("/api/v1/cluster/refresh-metadata"))
        .bearer_auth(&value)
        .send()
        .expect("request");
    assert_eq!(write.status(), 403, "a read token does not write");

    let list = ballast_output(&["token", "list"], &env);
    let listed = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(listed.contains("mcp-agent") && !listed.contains(&value));
    let id = listed
        .lines()
        .find(|l| l.contains("mcp-agent"))
        .and_then(|l| l.split_whitespace().next())
        .expect("id")
        .to_string();
    let revoked = ballast_output(&["token", "revoke", &id], &env);
    assert_eq!(revoked.status.code(), Some(0));
    // the web process sees the revocation on the very next request
    wait_for(Duration::from_secs(1), "revocation seen", || {
        (get(Some(&value)).status() == 401).then_some(())
    });
    let store = ballast_schema::Store::open(&service.db_path()).expect("db");
    let actions: Vec<String> = store
        .list_audit(&ballast_schema::AuditQuery::default())
        .expect("audit")
        .events
        .into_iter()
        .filter(|e| e.method == "CLI")
        .map(|e| e.action)
        .collect();
    assert_eq!(actions.len(), 2, "{actions:?}");
}

#[test]
fn without_a_hash_secret_tokens_cannot_be_made() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().to_string_lossy().into_owned();
    let out = ballast_output(
        &["token", "create", "--user", "u", "--name", "n"],
        &[
            ("BALLAST_DATA_DIR", &data),
            ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9"),
            ("AUTH_PAT_ENABLED", "true"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("AUTH_PAT_HASH_SECRET"));
}
