//! `ballast license keygen|issue|inspect` (shared/contracts/cli.md) and the demo trial, from
//! outside: the real binary, its files, its output and exit codes.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::Value;

use crate::support::{ballast, ballast_output, free_port, wait_for};

pub use crate::support::dev_license;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = ballast_output(args, &[]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn license_keygen_issue_inspect_round_trip() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prefix = dir.path().join("acme-key");
    let prefix_text = prefix.to_string_lossy().into_owned();
    let (code, stdout, stderr) = run(&["license", "keygen", "--out", &prefix_text]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty());
    let private = std::fs::read_to_string(&prefix).expect("private key");
    let public = std::fs::read_to_string(format!("{prefix_text}.pub")).expect("public key");
    assert!(
        private.starts_with("-----BEGIN PRIVATE KEY-----\n"),
        "{private}"
    );
    assert!(
        public.starts_with("-----BEGIN PUBLIC KEY-----\n"),
        "{public}"
    );
    let mode = std::fs::metadata(&prefix)
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // keygen never overwrites a key.
    let (code, _, stderr) = run(&["license", "keygen", "--out", &prefix_text]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(std::fs::read_to_string(&prefix).expect("key"), private);

    let (code, stdout, stderr) = run(&[
        "license",
        "issue",
        "--key",
        &prefix_text,
        "--sub",
        "ACME Corp",
        "--lic",
        "lic-0042",
        "--days",
        "30",
        "--notes",
        "prod cluster",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let token = stdout.trim().to_string();
    assert_eq!(token.split('.').count(), 3);
    assert!(stderr.contains("not the vendor key"), "{stderr}");

    // Inspect shows the claims; this build refuses the token: the key is not the vendor's.
    let (code, stdout, _) = run(&["license", "inspect", &token]);
    assert_eq!(code, Some(1), "{stdout}");
    for want in [
        "ACME Corp",
        "lic-0042",
        "prod cluster",
        "unknown key",
        "accepted    no:",
    ] {
        assert!(stdout.contains(want), "{want}: {stdout}");
    }
    let (code, stdout, _) = run(&["license", "inspect", "--json", &token]);
    assert_eq!(code, Some(1));
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(doc["claims"]["sub"], "ACME Corp");
    assert_eq!(doc["claims"]["lic"], "lic-0042");
    assert_eq!(doc["claims"]["notes"], "prod cluster");
    let (iat, exp) = (
        doc["claims"]["iat"].as_i64().expect("iat"),
        doc["claims"]["exp"].as_i64().expect("exp"),
    );
    assert_eq!(exp - iat, 30 * 86_400);
    assert_eq!(doc["claims"]["nbf"], doc["claims"]["iat"]);
    assert_eq!(doc["header"]["alg"], "EdDSA");
    assert_eq!(doc["signed_by"], "unknown");
    assert_eq!(doc["accepted"], false);
    assert!(doc["message"]
        .as_str()
        .is_some_and(|m| m.contains("does not match the vendor key")));
}

#[test]
fn a_development_key_license_is_accepted_by_debug_builds_only() {
    let key = ballast_license::keys::development_private_key_path();
    let key = key.to_string_lossy().into_owned();
    let (code, stdout, stderr) = run(&[
        "license", "issue", "--key", &key, "--sub", "dev", "--lic", "dev-1", "--days", "1",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let token = stdout.trim().to_string();
    let (code, stdout, _) = run(&["license", "inspect", "--json", &token]);
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(doc["signed_by"], "development");
    // The test and the binary are built with the same profile.
    if cfg!(debug_assertions) {
        assert_eq!(code, Some(0), "{doc}");
        assert_eq!(doc["state"], "licensed");
        assert_eq!(doc["build"], "debug");
    } else {
        assert_eq!(code, Some(1), "{doc}");
        assert_eq!(doc["build"], "release");
        assert!(doc["message"]
            .as_str()
            .is_some_and(|m| m.contains("only debug builds")));
    }
}

#[test]
fn inspect_refuses_tampered_and_foreign_algorithm_tokens() {
    let key = ballast_license::keys::development_private_key_path();
    let key = key.to_string_lossy().into_owned();
    let (_, stdout, _) = run(&[
        "license", "issue", "--key", &key, "--sub", "dev", "--lic", "dev-1", "--days", "1",
    ]);
    let token = stdout.trim().to_string();
    let parts: Vec<&str> = token.split('.').collect();
    // The payload of another license under this signature.
    let (_, other, _) = run(&[
        "license", "issue", "--key", &key, "--sub", "dev", "--lic", "dev-2", "--days", "3650",
    ]);
    let other_payload = other.trim().split('.').nth(1).expect("payload").to_string();
    let tampered = format!("{}.{other_payload}.{}", parts[0], parts[2]);
    let (code, stdout, _) = run(&["license", "inspect", &tampered]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("accepted    no:"), "{stdout}");
    // {"alg":"HS256","typ":"JWT"}
    let hs256 = format!(
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{}.{}",
        parts[1], parts[2]
    );
    let (code, stdout, _) = run(&["license", "inspect", &hs256]);
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains("algorithm HS256 is not accepted"),
        "{stdout}"
    );
    let (code, stdout, _) = run(&["license", "inspect", "not-a-token"]);
    assert_eq!(code, Some(1));
    assert!(stdout.contains("not a license token"), "{stdout}");
}

#[test]
fn issue_refuses_a_missing_key_and_a_validity_of_zero_days() {
    let (code, _, stderr) = run(&[
        "license",
        "issue",
        "--key",
        "/nonexistent/key",
        "--sub",
        "a",
        "--lic",
        "b",
        "--days",
        "1",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    let key = ballast_license::keys::development_private_key_path();
    let key = key.to_string_lossy().into_owned();
    let (code, stdout, _) = run(&[
        "license", "issue", "--key", &key, "--sub", "a", "--lic", "b", "--days", "0",
    ]);
    assert_eq!(code, Some(2));
    assert!(stdout.is_empty());
}

/// Kills the demo if the test ends early.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn demo_grants_a_trial_on_its_own_simulated_cluster() {
    let port = free_port();
    let tmp = tempfile::tempdir().expect("tmp");
    let mut child = KillOnDrop(
        ballast()
            .args(["demo", "--port", &port.to_string()])
            .env("BALLAST_SAMPLE_INTERVAL", "1s")
            .env("TMPDIR", tmp.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start demo"),
    );
    let url = format!("http://127.0.0.1:{port}/api/v1/license");
    let license: Value = wait_for(Duration::from_secs(30), "the demo trial", || {
        let body: Value = reqwest::blocking::get(&url).ok()?.json().ok()?;
        (body["data"]["state"] == "trial").then_some(body)
    });
    let data = &license["data"];
    assert_eq!(data["management_enabled"], true);
    assert_eq!(data["source"], "trial");
    let cluster_id = data["trial"]["cluster_id"].as_str().expect("cluster id");
    assert!(cluster_id.starts_with("ballast-sim-demo-"), "{cluster_id}");
    // A licensed route is not refused for the license.
    let r = reqwest::blocking::Client::new()
        .post(format!("http://127.0.0.1:{port}/api/v1/acls"))
        .json(&serde_json::json!({"bindings": []}))
        .send()
        .expect("post");
    assert_ne!(r.status().as_u16(), 403);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.0.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = wait_for(Duration::from_secs(15), "demo exit", || {
        child.0.try_wait().ok().flatten()
    });
    assert!(status.success(), "{status:?}");
}

#[test]
fn without_a_license_the_healer_skips_with_license_invalid() {
    // In the spec's gate order `dry_run` (the default) comes before `license_invalid`.
    let service = crate::support::Service::start_with(&[("BALLAST_HEAL_DRY_RUN", "false")]);
    let detail = wait_for(Duration::from_secs(15), "the healer's verdict", || {
        let h: Value = reqwest::blocking::get(service.url("/api/v1/health"))
            .ok()?
            .json()
            .ok()?;
        let healer = h["data"]["workers"]
            .as_array()?
            .iter()
            .find(|w| w["name"] == "healer")?
            .clone();
        healer["detail"]["skipped"]
            .is_string()
            .then_some(healer["detail"].clone())
    });
    assert_eq!(detail["skipped"], "license_invalid", "{detail}");
    assert_eq!(detail["license"], "invalid");
    // The status endpoint and the counter say the same.
    let status: Value = reqwest::blocking::get(service.url("/api/v1/self-healing/status"))
        .and_then(|r| r.json())
        .expect("self-healing status");
    assert_eq!(status["data"]["skipped"], "license_invalid", "{status}");
    assert!(status["data"]["skippedTotal"]["license_invalid"].as_u64() >= Some(1));
    let metrics = reqwest::blocking::get(service.url("/metrics"))
        .and_then(|r| r.text())
        .expect("metrics");
    assert!(
        metrics.lines().any(|l| l
            .starts_with("ballast_selfhealing_skipped_total{reason=\"license_invalid\"}")
            && !l.ends_with(" 0")),
        "{metrics}"
    );
}
