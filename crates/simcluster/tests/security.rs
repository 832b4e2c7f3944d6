//! Listener security: TLS, SASL PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER.

mod common;

use ballast_simcluster::{SecurityConfig, SecurityProtocol};
use base64::Engine;
use bytes::Bytes;
use common::*;
use kafka_protocol::messages::*;

fn scenario() -> ballast_model::snapshot::Snapshot {
    snapshot(brokers(2), vec![partition("t", 0, &[1, 2], 100)])
}

fn users() -> Vec<(String, String)> {
    vec![
        ("alice".into(), "alice-secret".into()),
        ("bob".into(), "bob-secret".into()),
    ]
}

async fn metadata_works(c: &mut Client) -> bool {
    let mut req = MetadataRequest::default();
    req.topics = None;
    c.send(&req, 12)
        .await
        .map(|md| md.brokers.len() == 2)
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_scram_sha_512_over_tls_is_accepted_and_a_bad_password_refused() {
    let (ca, identity) = tls_identity();
    let sim = start_with(scenario(), |c| {
        c.security = SecurityConfig {
            protocol: SecurityProtocol::SaslSsl,
            tls: Some(identity),
            users: users(),
        }
    })
    .await;
    let addr = sim.broker_address(1).expect("broker 1");
    let mut good = Client::connect_tls(&addr, &ca).await.expect("tls");
    sasl_login(&mut good, "SCRAM-SHA-512", "alice", "alice-secret")
        .await
        .expect("scram-sha-512 login");
    assert!(metadata_works(&mut good).await);
    let mut bad = Client::connect_tls(&addr, &ca).await.expect("tls");
    let err = sasl_login(&mut bad, "SCRAM-SHA-512", "alice", "wrong")
        .await
        .expect_err("refused");
    assert_eq!(err.0, 58, "SASL_AUTHENTICATION_FAILED: {}", err.1);
    assert!(!err.1.is_empty(), "with a message");
    assert!(
        bad.read_frame().await.is_err(),
        "then the connection is closed"
    );
    let mut unknown = Client::connect_tls(&addr, &ca).await.expect("tls");
    assert_eq!(
        sasl_login(&mut unknown, "SCRAM-SHA-256", "mallory", "x")
            .await
            .expect_err("refused")
            .0,
        58
    );
    // Plain TCP to a TLS listener gets nowhere.
    let mut plain = Client::connect(&addr).await.expect("tcp");
    assert!(!metadata_works(&mut plain).await);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_plain_and_scram_sha_256_log_in_and_nothing_is_served_before() {
    let sim = start_with(scenario(), |c| {
        c.security = SecurityConfig {
            protocol: SecurityProtocol::SaslPlaintext,
            tls: None,
            users: users(),
        }
    })
    .await;
    let addr = sim.broker_address(2).expect("broker 2");
    let mut early = Client::connect(&addr).await.expect("tcp");
    assert!(
        !metadata_works(&mut early).await,
        "a request before authentication closes the connection"
    );
    let mut c = Client::connect(&addr).await.expect("tcp");
    let versions = c.versions().await;
    assert!(
        versions.contains_key(&(ApiKey::SaslAuthenticate as i16)),
        "ApiVersions is served before login"
    );
    sasl_login(&mut c, "PLAIN", "bob", "bob-secret")
        .await
        .expect("plain");
    assert!(metadata_works(&mut c).await);
    let mut c = Client::connect(&addr).await.expect("tcp");
    sasl_login(&mut c, "SCRAM-SHA-256", "bob", "bob-secret")
        .await
        .expect("scram-sha-256");
    assert!(metadata_works(&mut c).await);
    let mut c = Client::connect(&addr).await.expect("tcp");
    assert_eq!(
        sasl_login(&mut c, "PLAIN", "bob", "nope")
            .await
            .expect_err("refused")
            .0,
        58
    );
    let mut c = Client::connect(&addr).await.expect("tcp");
    assert_eq!(
        sasl_login(&mut c, "GSSAPI", "bob", "x")
            .await
            .expect_err("refused")
            .0,
        33
    );
    sim.shutdown().await;
}

fn jwt(claims: serde_json::Value) -> String {
    let e = |s: String| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.",
        e(r#"{"alg":"none"}"#.into()),
        e(claims.to_string())
    )
}

async fn oauth(c: &mut Client, token: &str, extensions: &str) -> i16 {
    let mut hs = SaslHandshakeRequest::default();
    hs.mechanism = sb("OAUTHBEARER");
    assert_eq!(c.send(&hs, 1).await.expect("handshake").error_code, 0);
    let mut auth = SaslAuthenticateRequest::default();
    auth.auth_bytes = Bytes::from(format!("n,,\x01auth=Bearer {token}\x01{extensions}\x01"));
    let resp = c.send(&auth, 2).await.expect("authenticate");
    if resp.error_code != 0 || resp.auth_bytes.is_empty() {
        return resp.error_code;
    }
    // An error challenge: the client acknowledges, the server fails the exchange.
    let mut ack = SaslAuthenticateRequest::default();
    ack.auth_bytes = Bytes::from_static(b"\x01");
    c.send(&ack, 2).await.expect("ack").error_code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauthbearer_accepts_a_current_jwt_with_a_subject_and_refuses_others() {
    let sim = start_with(scenario(), |c| {
        c.security = SecurityConfig {
            protocol: SecurityProtocol::SaslPlaintext,
            tls: None,
            users: users(),
        }
    })
    .await;
    let addr = sim.broker_address(1).expect("broker 1");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let good = jwt(serde_json::json!({"sub": "svc-ballast", "exp": now + 600}));
    let mut c = Client::connect(&addr).await.expect("tcp");
    assert_eq!(oauth(&mut c, &good, "traceId=abc\x01").await, 0);
    assert!(metadata_works(&mut c).await);
    let expired = jwt(serde_json::json!({"sub": "svc-ballast", "exp": now - 10}));
    let mut c = Client::connect(&addr).await.expect("tcp");
    assert_eq!(oauth(&mut c, &expired, "").await, 58);
    let anonymous = jwt(serde_json::json!({"exp": now + 600}));
    let mut c = Client::connect(&addr).await.expect("tcp");
    assert_eq!(oauth(&mut c, &anonymous, "").await, 58);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ssl_listener_serves_over_tls() {
    let (ca, identity) = tls_identity();
    let sim = start_with(scenario(), |c| {
        c.security = SecurityConfig {
            protocol: SecurityProtocol::Ssl,
            tls: Some(identity),
            users: vec![],
        }
    })
    .await;
    let mut c = Client::connect_tls(&sim.broker_address(1).expect("addr"), &ca)
        .await
        .expect("tls");
    assert!(metadata_works(&mut c).await);
    sim.shutdown().await;
}
