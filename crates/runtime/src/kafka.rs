//! The service's `BALLAST_KAFKA_*` settings as the cluster client's configuration. Every
//! process that talks to the cluster builds its client here.

use ballast_config::{KafkaConfig, SaslMechanism, SecurityProtocol};
use ballast_kafka::{ClientConfig, Sasl, Security, TlsConfig};

pub fn client_config(k: &KafkaConfig) -> ClientConfig {
    let tls = || {
        let files = k.tls.clone().unwrap_or_default();
        TlsConfig {
            ca_file: files.ca_file,
            cert_file: files.cert_file,
            key_file: files.key_file,
        }
    };
    let sasl = || -> Option<Sasl> {
        let s = k.sasl.as_ref()?;
        let (username, password) = (s.username.clone(), s.password.expose().to_string());
        Some(match s.mechanism {
            SaslMechanism::Plain => Sasl::Plain { username, password },
            SaslMechanism::ScramSha256 => Sasl::ScramSha256 { username, password },
            SaslMechanism::ScramSha512 => Sasl::ScramSha512 { username, password },
            SaslMechanism::OAuthBearer => {
                let o = k.oauth.as_ref()?;
                Sasl::OAuthBearer {
                    token_endpoint: o.token_endpoint.clone(),
                    client_id: o.client_id.clone(),
                    client_secret: o.client_secret.expose().to_string(),
                    scope: o.scope.clone(),
                    extensions: o.extensions.clone(),
                }
            }
        })
    };
    // Validation guarantees SASL settings exist for the SASL protocols; fall back to
    // plaintext-compatible forms only if that invariant were ever broken.
    let security = match k.security {
        SecurityProtocol::Plaintext => Security::Plaintext,
        SecurityProtocol::Ssl => Security::Ssl(tls()),
        SecurityProtocol::SaslPlaintext => {
            sasl().map_or(Security::Plaintext, Security::SaslPlaintext)
        }
        SecurityProtocol::SaslSsl => match sasl() {
            Some(s) => Security::SaslSsl(tls(), s),
            None => Security::Ssl(tls()),
        },
    };
    let bootstrap = k.bootstrap_servers.join(",");
    ClientConfig::plaintext(&bootstrap)
        .with_client_id(k.client_id.clone())
        .with_request_timeout(k.request_timeout)
        .with_security(security)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_config::{Config, RawConfig};

    fn kafka(pairs: &[(&str, &str)]) -> KafkaConfig {
        let raw = RawConfig::from_pairs(
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            None,
        )
        .expect("raw");
        Config::from_raw(&raw).expect("valid").kafka
    }

    #[test]
    fn every_security_protocol_and_mechanism_maps_to_the_client() {
        let b = ("BALLAST_KAFKA_BOOTSTRAP_SERVERS", "k1:9092,k2:9092");
        let c = client_config(&kafka(&[b]));
        assert_eq!(c.bootstrap_servers, ["k1:9092", "k2:9092"]);
        assert_eq!(c.security.name(), "PLAINTEXT");

        let c = client_config(&kafka(&[
            b,
            ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
            ("BALLAST_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512"),
            ("BALLAST_KAFKA_SASL_USERNAME", "alice"),
            ("BALLAST_KAFKA_SASL_PASSWORD", "s3cret"),
        ]));
        assert_eq!(c.security.name(), "SASL_PLAINTEXT");
        match c.security.sasl() {
            Some(Sasl::ScramSha512 { username, password }) => {
                assert_eq!((username.as_str(), password.as_str()), ("alice", "s3cret"));
            }
            other => panic!("expected SCRAM-SHA-512, got {other:?}"),
        }

        let c = client_config(&kafka(&[
            b,
            ("BALLAST_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT"),
            ("BALLAST_KAFKA_SASL_MECHANISM", "OAUTHBEARER"),
            (
                "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT",
                "https://idp.example/token",
            ),
            ("BALLAST_KAFKA_OAUTH_CLIENT_ID", "ballast"),
            ("BALLAST_KAFKA_OAUTH_CLIENT_SECRET", "x"),
            ("BALLAST_KAFKA_OAUTH_EXTENSIONS", "logicalCluster=lkc-1"),
        ]));
        match c.security.sasl() {
            Some(Sasl::OAuthBearer {
                token_endpoint,
                extensions,
                ..
            }) => {
                assert_eq!(token_endpoint, "https://idp.example/token");
                assert_eq!(
                    extensions,
                    &[("logicalCluster".to_string(), "lkc-1".to_string())]
                );
            }
            other => panic!("expected OAUTHBEARER, got {other:?}"),
        }
    }
}
