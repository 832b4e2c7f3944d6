//! SASL over Kafka: SaslHandshake v1 names the mechanism, SaslAuthenticate carries the exchange
//! (KIP-152). PLAIN and SCRAM-SHA-256/512 run through rsasl; OAUTHBEARER is built by hand
//! (RFC 7628) with a token from the client-credentials grant.
//!
//! Brokers that only speak SaslHandshake v0 (raw SASL frames, Kafka before 1.0) are not
//! supported: the handshake then fails with an unsupported-version error.

use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::{Request, StrBytes};
use rsasl::prelude::{Mechname, SASLClient, SASLConfig, State};

use crate::codes;
use crate::config::{check_extensions, Sasl};
use crate::connection::Transport;
use crate::error::{Error, Result};
use crate::oauth::TokenProvider;
use crate::wire::{self, ApiVersionMap};

const SEPARATOR: char = '\u{1}';

/// Authenticates `transport`. Returns the session lifetime the broker announced (KIP-368), after
/// which it would close the connection.
pub(crate) async fn authenticate(
    transport: &mut Transport,
    versions: &ApiVersionMap,
    sasl: &Sasl,
    oauth: Option<&TokenProvider>,
) -> Result<Option<Duration>> {
    let mechanism = sasl.mechanism();
    let handshake_version = pick::<SaslHandshakeRequest>(transport, versions)?;
    if handshake_version < 1 {
        return Err(Error::UnsupportedVersion {
            api: "SaslHandshake",
            broker: transport.label.clone(),
            broker_versions: versions.range(SaslHandshakeRequest::KEY),
            client_versions: (1, 1),
        });
    }
    let auth_version = pick::<SaslAuthenticateRequest>(transport, versions)?;

    let mut handshake = SaslHandshakeRequest::default();
    handshake.mechanism = StrBytes::from_static_str(mechanism);
    let answer = transport.exchange(&handshake, handshake_version).await?;
    if answer.error_code != 0 {
        let enabled: Vec<&str> = answer.mechanisms.iter().map(|m| m.as_str()).collect();
        let message = if answer.error_code == codes::UNSUPPORTED_SASL_MECHANISM {
            format!(
                "the broker does not enable {mechanism} (it enables {})",
                if enabled.is_empty() {
                    "none".to_string()
                } else {
                    enabled.join(", ")
                }
            )
        } else {
            format!(
                "handshake refused: {}",
                codes::error_name(answer.error_code)
            )
        };
        return Err(auth_error(transport, mechanism, message));
    }

    let mut exchange = Exchange {
        transport,
        version: auth_version,
        mechanism,
        lifetime: None,
    };
    match sasl {
        Sasl::Plain { username, password }
        | Sasl::ScramSha256 { username, password }
        | Sasl::ScramSha512 { username, password } => {
            rsasl_exchange(&mut exchange, username, password).await?;
        }
        Sasl::OAuthBearer { extensions, .. } => {
            let Some(provider) = oauth else {
                return Err(Error::Config(
                    "oauthbearer without a token provider".to_string(),
                ));
            };
            let token = provider.token().await?;
            let first = oauthbearer_initial_response(&token, extensions).map_err(Error::Config)?;
            let challenge = exchange.step(first.into_bytes()).await?;
            if !challenge.is_empty() {
                // RFC 7628 3.2.2: the server sent an error; answer with %x01 to end the exchange
                let detail = String::from_utf8_lossy(&challenge).into_owned();
                let message = match exchange.step(vec![SEPARATOR as u8]).await {
                    Err(Error::Authentication { message, .. }) => format!("{message} ({detail})"),
                    Err(e) => return Err(e),
                    Ok(_) => format!("the broker refused the token ({detail})"),
                };
                return Err(auth_error(exchange.transport, mechanism, message));
            }
        }
    }
    tracing::debug!(broker = %exchange.transport.label, mechanism, "authenticated");
    Ok(exchange.lifetime)
}

fn pick<R: Request>(transport: &Transport, versions: &ApiVersionMap) -> Result<i16> {
    let ours = wire::client_versions::<R>();
    versions
        .pick(R::KEY, ours)
        .map_err(|broker_versions| Error::UnsupportedVersion {
            api: wire::api_name(R::KEY),
            broker: transport.label.clone(),
            broker_versions,
            client_versions: ours,
        })
}

fn auth_error(transport: &Transport, mechanism: &str, message: String) -> Error {
    Error::Authentication {
        broker: transport.label.clone(),
        mechanism: mechanism.to_string(),
        message,
    }
}

struct Exchange<'a> {
    transport: &'a mut Transport,
    version: i16,
    mechanism: &'static str,
    lifetime: Option<Duration>,
}

impl Exchange<'_> {
    /// One SaslAuthenticate round trip; the broker's refusal becomes an authentication error
    /// with the broker's message.
    async fn step(&mut self, auth_bytes: Vec<u8>) -> Result<Bytes> {
        let mut request = SaslAuthenticateRequest::default();
        request.auth_bytes = Bytes::from(auth_bytes);
        let answer = self.transport.exchange(&request, self.version).await?;
        if answer.error_code != 0 {
            let message = answer
                .error_message
                .map(|m| m.to_string())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| codes::error_name(answer.error_code).to_string());
            return Err(auth_error(self.transport, self.mechanism, message));
        }
        if answer.session_lifetime_ms > 0 {
            self.lifetime = Some(Duration::from_millis(answer.session_lifetime_ms as u64));
        }
        Ok(answer.auth_bytes)
    }
}

async fn rsasl_exchange(exchange: &mut Exchange<'_>, username: &str, password: &str) -> Result<()> {
    let mechanism = exchange.mechanism;
    let config = SASLConfig::with_credentials(None, username.to_string(), password.to_string())
        .map_err(|e| Error::Config(format!("sasl: {e}")))?;
    let name =
        Mechname::parse(mechanism.as_bytes()).map_err(|e| Error::Config(format!("sasl: {e}")))?;
    let mut session = SASLClient::new(config)
        .start_suggested(&[name])
        .map_err(|e| Error::Config(format!("sasl {mechanism}: {e}")))?;
    let mut input: Option<Bytes> = None;
    loop {
        let mut out = Vec::new();
        let state = session.step(input.as_deref(), &mut out).map_err(|e| {
            auth_error(
                exchange.transport,
                mechanism,
                format!("the broker's answer does not verify: {e}"),
            )
        })?;
        match state {
            State::Running => input = Some(exchange.step(out).await?),
            State::Finished(rsasl::prelude::MessageSent::Yes) => {
                exchange.step(out).await?;
                return Ok(());
            }
            State::Finished(rsasl::prelude::MessageSent::No) => return Ok(()),
        }
    }
}

/// The OAUTHBEARER client initial response (RFC 7628 3.1), as Kafka sends it:
/// `n,,\x01auth=Bearer <token>\x01key=value\x01...\x01`.
pub(crate) fn oauthbearer_initial_response(
    token: &str,
    extensions: &[(String, String)],
) -> Result<String, String> {
    check_extensions(extensions)?;
    let mut message = format!("n,,{SEPARATOR}auth=Bearer {token}{SEPARATOR}");
    for (key, value) in extensions {
        message.push_str(key);
        message.push('=');
        message.push_str(value);
        message.push(SEPARATOR);
    }
    message.push(SEPARATOR);
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauthbearer_initial_response_follows_rfc_7628() {
        assert_eq!(
            oauthbearer_initial_response("eyJ.abc.def", &[]).unwrap(),
            "n,,\u{1}auth=Bearer eyJ.abc.def\u{1}\u{1}"
        );
        let extensions = vec![
            ("logicalCluster".to_string(), "lkc-1".to_string()),
            ("identityPoolId".to_string(), "pool-2".to_string()),
        ];
        assert_eq!(
            oauthbearer_initial_response("tok", &extensions).unwrap(),
            "n,,\u{1}auth=Bearer tok\u{1}logicalCluster=lkc-1\u{1}identityPoolId=pool-2\u{1}\u{1}"
        );
    }

    #[test]
    fn the_reserved_auth_extension_is_refused() {
        for key in ["auth", "AUTH", "Auth"] {
            let extensions = vec![(key.to_string(), "x".to_string())];
            let err = oauthbearer_initial_response("tok", &extensions).unwrap_err();
            assert!(err.contains("reserved"), "{err}");
        }
        assert!(check_extensions(&[("a1".into(), "x".into())]).is_err());
        assert!(check_extensions(&[("a".into(), "x\u{1}y".into())]).is_err());
        assert!(check_extensions(&[("a".into(), "x y".into())]).is_ok());
    }

    #[test]
    fn a_reserved_extension_makes_the_configuration_invalid() {
        let config = crate::ClientConfig::plaintext("a:1").with_security(
            crate::Security::SaslPlaintext(Sasl::OAuthBearer {
                token_endpoint: "http://idp/token".into(),
                client_id: "c".into(),
                client_secret: "s".into(),
                scope: None,
                extensions: vec![("auth".into(), "x".into())],
            }),
        );
        assert!(matches!(config.validate(), Err(Error::Config(_))));
    }
}
