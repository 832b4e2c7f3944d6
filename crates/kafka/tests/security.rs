//! TLS (CA file, mutual TLS) and SASL (PLAIN, SCRAM, OAUTHBEARER) against the in-test broker.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ballast_kafka::{Client, ClientConfig, Error, Sasl, Security, TlsConfig};
use kafka_protocol::messages::{
    ApiKey, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use support::{answer, topic, ClusterState, FakeCluster, Handler, Request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn config(bootstrap: &str, security: Security) -> ClientConfig {
    ClientConfig::plaintext(bootstrap)
        .with_security(security)
        .with_retries(1, Duration::from_millis(10))
        .with_connect_timeout(Duration::from_secs(5))
}

// ---------------------------------------------------------------------------------------------
// SASL

/// A broker enabling `mechanisms` whose SaslAuthenticate accepts exactly `accept` as the first
/// message; it records every auth message it receives.
fn sasl_broker(
    mechanisms: &'static [&'static str],
    accept: Vec<u8>,
) -> (Handler, Arc<Mutex<Vec<Vec<u8>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let handler: Handler = Arc::new(move |r: &Request, _s: &mut ClusterState| {
        if r.api_key == ApiKey::SaslHandshake as i16 {
            let req: SaslHandshakeRequest = r.decode();
            let mut response = SaslHandshakeResponse::default();
            response.mechanisms = mechanisms
                .iter()
                .map(|m| StrBytes::from_static_str(m))
                .collect();
            if !mechanisms.contains(&req.mechanism.as_str()) {
                response.error_code = 33;
            }
            return Some(answer(r, &response));
        }
        if r.api_key == ApiKey::SaslAuthenticate as i16 {
            let req: SaslAuthenticateRequest = r.decode();
            record.lock().unwrap().push(req.auth_bytes.to_vec());
            let mut response = SaslAuthenticateResponse::default();
            if req.auth_bytes.as_ref() == accept.as_slice() {
                response.session_lifetime_ms = 0;
            } else {
                response.error_code = 58;
                response.error_message = Some(StrBytes::from_static_str(
                    "Authentication failed: Invalid username or password",
                ));
            }
            return Some(answer(r, &response));
        }
        None
    });
    (handler, seen)
}

#[tokio::test]
async fn sasl_plain_authenticates_with_the_right_password() {
    let (handler, seen) = sasl_broker(&["PLAIN"], b"\0alice\0secret".to_vec());
    let cluster = FakeCluster::start(1, vec![topic("t", &[1])], handler).await;
    let security = Security::SaslPlaintext(Sasl::Plain {
        username: "alice".into(),
        password: "secret".into(),
    });
    let client = Client::connect(config(&cluster.bootstrap(), security))
        .await
        .unwrap();
    client.refresh_metadata().await.unwrap();
    assert!(!seen.lock().unwrap().is_empty());
    let state = cluster.state();
    let handshakes = state.requests(ApiKey::SaslHandshake);
    assert!(
        handshakes.iter().all(|l| l.version == 1),
        "SaslHandshake v1"
    );
}

#[tokio::test]
async fn a_wrong_password_gives_the_brokers_message_and_names_the_broker() {
    let (handler, _) = sasl_broker(&["PLAIN"], b"\0alice\0secret".to_vec());
    let cluster = FakeCluster::start(1, vec![], handler).await;
    let security = Security::SaslPlaintext(Sasl::Plain {
        username: "alice".into(),
        password: "wrong-password".into(),
    });
    let err = Client::connect(config(&cluster.bootstrap(), security))
        .await
        .unwrap_err();
    let Error::Authentication {
        broker,
        mechanism,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(broker, &cluster.bootstrap());
    assert_eq!(mechanism, "PLAIN");
    assert_eq!(
        message,
        "Authentication failed: Invalid username or password"
    );
    let text = err.to_string();
    assert!(text.contains(&cluster.bootstrap()), "{text}");
    assert!(!text.contains("wrong-password"), "{text}");
    assert!(!err.is_retriable());
    assert_eq!(
        cluster.state().requests(ApiKey::SaslAuthenticate).len(),
        1,
        "an authentication failure is not retried"
    );
}

#[tokio::test]
async fn a_mechanism_the_broker_does_not_enable_is_an_authentication_error_listing_the_enabled_ones(
) {
    let (handler, _) = sasl_broker(&["SCRAM-SHA-512", "OAUTHBEARER"], Vec::new());
    let cluster = FakeCluster::start(1, vec![], handler).await;
    let security = Security::SaslPlaintext(Sasl::ScramSha256 {
        username: "alice".into(),
        password: "secret".into(),
    });
    let err = Client::connect(config(&cluster.bootstrap(), security))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("does not enable SCRAM-SHA-256 (it enables SCRAM-SHA-512, OAUTHBEARER)"),
        "{text}"
    );
}

#[tokio::test]
async fn scram_sends_an_rfc_5802_client_first_message() {
    for (sasl, mechanism) in [
        (
            Sasl::ScramSha256 {
                username: "alice".into(),
                password: "secret".into(),
            },
            "SCRAM-SHA-256",
        ),
        (
            Sasl::ScramSha512 {
                username: "alice".into(),
                password: "secret".into(),
            },
            "SCRAM-SHA-512",
        ),
    ] {
        let (handler, seen) = sasl_broker(&["SCRAM-SHA-256", "SCRAM-SHA-512"], Vec::new());
        let cluster = FakeCluster::start(1, vec![], handler).await;
        let err = Client::connect(config(&cluster.bootstrap(), Security::SaslPlaintext(sasl)))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Authentication { mechanism: m, .. } if m == mechanism),
            "{err:?}"
        );
        let first = String::from_utf8(seen.lock().unwrap()[0].clone()).unwrap();
        assert!(first.starts_with("n,,n=alice,r="), "{first}");
    }
}

// ---------------------------------------------------------------------------------------------
// OAUTHBEARER

/// A token endpoint answering `token` for each POST; returns its address and the requests.
async fn token_endpoint(token: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let record = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = stream.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            record
                .lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf).to_string());
            let body =
                format!(r#"{{"access_token":"{token}","token_type":"Bearer","expires_in":3600}}"#);
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    (format!("http://{addr}/oauth2/token"), requests)
}

#[tokio::test]
async fn oauthbearer_authenticates_with_a_client_credentials_token() {
    let (endpoint, http_requests) = token_endpoint("tok-123").await;
    let expected = b"n,,\x01auth=Bearer tok-123\x01logicalCluster=lkc-1\x01\x01".to_vec();
    let (handler, seen) = sasl_broker(&["OAUTHBEARER"], expected.clone());
    let cluster = FakeCluster::start(2, vec![topic("t", &[1, 2])], handler).await;
    let security = Security::SaslPlaintext(Sasl::OAuthBearer {
        token_endpoint: endpoint,
        client_id: "ballast".into(),
        client_secret: "s3cret".into(),
        scope: Some("kafka".into()),
        extensions: vec![("logicalCluster".into(), "lkc-1".into())],
    });
    let client = Client::connect(config(&cluster.bootstrap(), security))
        .await
        .unwrap();
    client.describe_all_log_dirs().await.ok(); // opens connections to both brokers
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen.iter().all(|s| *s == expected));
    let http = http_requests.lock().unwrap().clone();
    assert_eq!(http.len(), 1, "the token is cached across connections");
    let request = &http[0];
    assert!(request.starts_with("POST /oauth2/token"), "{request}");
    assert!(
        request.contains("grant_type=client_credentials"),
        "{request}"
    );
    assert!(request.contains("scope=kafka"), "{request}");
    // basic auth of ballast:s3cret
    assert!(
        request
            .to_ascii_lowercase()
            .contains("authorization: basic ymfsbgfzddpzm2nyzxq="),
        "{request}"
    );
}

#[tokio::test]
async fn an_unreachable_token_endpoint_is_an_oauth_error() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (handler, _) = sasl_broker(&["OAUTHBEARER"], Vec::new());
    let cluster = FakeCluster::start(1, vec![], handler).await;
    let security = Security::SaslPlaintext(Sasl::OAuthBearer {
        token_endpoint: format!("http://127.0.0.1:{closed}/token"),
        client_id: "ballast".into(),
        client_secret: "s3cret".into(),
        scope: None,
        extensions: vec![],
    });
    let err = Client::connect(config(&cluster.bootstrap(), security))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::OAuth { .. }), "{err:?}");
    assert!(!err.to_string().contains("s3cret"));
}

// ---------------------------------------------------------------------------------------------
// TLS

struct Pki {
    ca_pem: String,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

fn pki() -> Pki {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test ca");
    let ca_key = KeyPair::generate().unwrap();
    let ca = params.self_signed(&ca_key).unwrap();
    Pki {
        ca_pem: ca.pem(),
        ca,
        ca_key,
    }
}

impl Pki {
    fn leaf(&self, names: &[&str]) -> (String, String) {
        let params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(content.as_bytes()).unwrap();
    path
}

/// A TLS acceptor with the server certificate of `pki`, requiring a client certificate of the
/// same CA when `mutual`.
fn acceptor(pki: &Pki, mutual: bool) -> tokio_rustls::TlsAcceptor {
    let (cert, key) = pki.leaf(&["127.0.0.1", "localhost"]);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let config = if mutual {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(pki.ca_pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder
            .with_client_cert_verifier(verifier)
            .with_single_cert(certs, key)
            .unwrap()
    } else {
        builder
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap()
    };
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

#[tokio::test]
async fn mutual_tls_with_the_configured_ca_and_client_certificate_connects() {
    let pki = pki();
    let cluster = FakeCluster::start_with(
        2,
        vec![topic("t", &[1, 2])],
        support::no_handler(),
        Some(acceptor(&pki, true)),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (client_cert, client_key) = pki.leaf(&["ballast"]);
    let tls = TlsConfig {
        ca_file: Some(write(&dir, "ca.pem", &pki.ca_pem)),
        cert_file: Some(write(&dir, "client.pem", &client_cert)),
        key_file: Some(write(&dir, "client.key", &client_key)),
    };
    let client = Client::connect(config(&cluster.bootstrap(), Security::Ssl(tls)))
        .await
        .unwrap();
    let metadata = client.metadata(None).await.unwrap();
    assert_eq!(metadata.brokers.len(), 2);
}

#[tokio::test]
async fn an_untrusted_broker_certificate_names_the_broker_and_the_ca() {
    let broker_pki = pki();
    let other_pki = pki();
    let cluster = FakeCluster::start_with(
        1,
        vec![],
        support::no_handler(),
        Some(acceptor(&broker_pki, false)),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let tls = TlsConfig {
        ca_file: Some(write(&dir, "other-ca.pem", &other_pki.ca_pem)),
        cert_file: None,
        key_file: None,
    };
    let err = Client::connect(config(&cluster.bootstrap(), Security::Ssl(tls)))
        .await
        .unwrap_err();
    let Error::Tls { broker, reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(broker, &cluster.bootstrap());
    assert_eq!(
        reason,
        "the broker certificate is not trusted by the configured CA"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "tls handshake with broker {} failed: the broker certificate is not trusted by the configured CA",
            cluster.bootstrap()
        )
    );
}

#[tokio::test]
async fn tls_to_a_plaintext_listener_fails_clearly() {
    let cluster = FakeCluster::start(1, vec![], support::no_handler()).await;
    let pki = pki();
    let dir = tempfile::tempdir().unwrap();
    let tls = TlsConfig {
        ca_file: Some(write(&dir, "ca.pem", &pki.ca_pem)),
        cert_file: None,
        key_file: None,
    };
    let err = Client::connect(config(&cluster.bootstrap(), Security::Ssl(tls)))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Tls { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "tls handshake with broker {} failed: the broker closed the connection during the handshake (is this a TLS listener?)",
            cluster.bootstrap()
        )
    );
}

#[tokio::test]
async fn a_missing_ca_file_is_a_configuration_error() {
    let tls = TlsConfig {
        ca_file: Some("/nonexistent/ca.pem".into()),
        cert_file: None,
        key_file: None,
    };
    let err = Client::connect(config("127.0.0.1:1", Security::Ssl(tls)))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
}

#[tokio::test]
async fn a_connection_is_replaced_before_its_sasl_session_expires() {
    let handler: Handler = Arc::new(|r: &Request, _s: &mut ClusterState| {
        if r.api_key == ApiKey::SaslHandshake as i16 {
            let mut response = SaslHandshakeResponse::default();
            response.mechanisms = vec![StrBytes::from_static_str("PLAIN")];
            return Some(answer(r, &response));
        }
        if r.api_key == ApiKey::SaslAuthenticate as i16 {
            let mut response = SaslAuthenticateResponse::default();
            response.session_lifetime_ms = 400; // KIP-368: the broker closes after this
            return Some(answer(r, &response));
        }
        None
    });
    let cluster = FakeCluster::start(1, vec![topic("t", &[1])], handler).await;
    let security = Security::SaslPlaintext(Sasl::Plain {
        username: "alice".into(),
        password: "secret".into(),
    });
    let client = Client::connect(config(&cluster.bootstrap(), security))
        .await
        .unwrap();
    client.refresh_metadata().await.unwrap();
    client.refresh_metadata().await.unwrap();
    let before = cluster.state().requests(ApiKey::SaslAuthenticate).len();
    tokio::time::sleep(Duration::from_millis(450)).await;
    client.refresh_metadata().await.unwrap();
    let after = cluster.state().requests(ApiKey::SaslAuthenticate).len();
    assert_eq!(after, before + 1, "a new, freshly authenticated connection");
}
