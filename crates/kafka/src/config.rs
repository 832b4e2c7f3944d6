//! How the client reaches the cluster. The service maps its `BALLAST_KAFKA_*` settings into a
//! [`ClientConfig`]; tests build one with [`ClientConfig::plaintext`].

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

/// Everything the client needs to connect. Secrets never appear in `Debug`.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `host:port` entries (IPv6 as `[::1]:9092`); tried in order until one answers Metadata.
    pub bootstrap_servers: Vec<String>,
    pub client_id: String,
    /// How long a request may wait for its answer; a request that gets none fails and its
    /// connection is dropped (re-created on next use).
    pub request_timeout: Duration,
    /// How long opening a connection (TCP, TLS, ApiVersions and SASL) may take.
    pub connect_timeout: Duration,
    /// How many times a retriable failure is tried again (so at most `retries + 1` attempts).
    pub retries: u32,
    /// Pause before the first retry; doubles each retry up to `retry_backoff_max`.
    pub retry_backoff: Duration,
    pub retry_backoff_max: Duration,
    pub security: Security,
}

impl ClientConfig {
    /// A plaintext client for a comma-separated bootstrap list, with default timeouts.
    pub fn plaintext(bootstrap_servers: &str) -> ClientConfig {
        ClientConfig {
            bootstrap_servers: bootstrap_servers
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            client_id: "ballast".to_string(),
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            retries: 5,
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(2),
            security: Security::Plaintext,
        }
    }

    /// The same configuration with another security protocol.
    pub fn with_security(mut self, security: Security) -> ClientConfig {
        self.security = security;
        self
    }

    pub fn with_request_timeout(mut self, timeout: Duration) -> ClientConfig {
        self.request_timeout = timeout;
        self
    }

    pub fn with_connect_timeout(mut self, timeout: Duration) -> ClientConfig {
        self.connect_timeout = timeout;
        self
    }

    pub fn with_retries(mut self, retries: u32, backoff: Duration) -> ClientConfig {
        self.retries = retries;
        self.retry_backoff = backoff;
        self.retry_backoff_max = self.retry_backoff_max.max(backoff);
        self
    }

    pub fn with_client_id(mut self, client_id: impl Into<String>) -> ClientConfig {
        self.client_id = client_id.into();
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.bootstrap_servers.is_empty() {
            return Err(Error::Config("no bootstrap server given".to_string()));
        }
        for server in &self.bootstrap_servers {
            split_host_port(server).map_err(Error::Config)?;
        }
        if let Some(Sasl::OAuthBearer { extensions, .. }) = self.security.sasl() {
            check_extensions(extensions).map_err(Error::Config)?;
        }
        Ok(())
    }

    /// The pause before retry number `attempt` (1-based).
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.retry_backoff
            .saturating_mul(factor)
            .min(self.retry_backoff_max.max(self.retry_backoff))
    }
}

/// The security protocol of the listener ballast connects to.
#[derive(Clone, Debug, Default)]
pub enum Security {
    #[default]
    Plaintext,
    Ssl(TlsConfig),
    SaslPlaintext(Sasl),
    SaslSsl(TlsConfig, Sasl),
}

impl Security {
    pub fn tls(&self) -> Option<&TlsConfig> {
        match self {
            Security::Ssl(tls) | Security::SaslSsl(tls, _) => Some(tls),
            _ => None,
        }
    }

    pub fn sasl(&self) -> Option<&Sasl> {
        match self {
            Security::SaslPlaintext(sasl) | Security::SaslSsl(_, sasl) => Some(sasl),
            _ => None,
        }
    }

    /// The Kafka name: `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`.
    pub fn name(&self) -> &'static str {
        match self {
            Security::Plaintext => "PLAINTEXT",
            Security::Ssl(_) => "SSL",
            Security::SaslPlaintext(_) => "SASL_PLAINTEXT",
            Security::SaslSsl(_, _) => "SASL_SSL",
        }
    }
}

/// TLS files. No CA file means the system roots (rustls-native-certs); a client certificate and
/// key together enable mutual TLS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsConfig {
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

/// A SASL mechanism with its credentials.
#[derive(Clone)]
pub enum Sasl {
    Plain {
        username: String,
        password: String,
    },
    ScramSha256 {
        username: String,
        password: String,
    },
    ScramSha512 {
        username: String,
        password: String,
    },
    /// OAUTHBEARER with a token from the client-credentials grant of `token_endpoint`.
    OAuthBearer {
        token_endpoint: String,
        client_id: String,
        client_secret: String,
        scope: Option<String>,
        /// SASL extensions (RFC 7628), sent in order; the key `auth` is reserved.
        extensions: Vec<(String, String)>,
    },
}

impl Sasl {
    /// The mechanism name as the broker knows it.
    pub fn mechanism(&self) -> &'static str {
        match self {
            Sasl::Plain { .. } => "PLAIN",
            Sasl::ScramSha256 { .. } => "SCRAM-SHA-256",
            Sasl::ScramSha512 { .. } => "SCRAM-SHA-512",
            Sasl::OAuthBearer { .. } => "OAUTHBEARER",
        }
    }
}

impl fmt::Debug for Sasl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sasl::Plain { username, .. }
            | Sasl::ScramSha256 { username, .. }
            | Sasl::ScramSha512 { username, .. } => f
                .debug_struct(self.mechanism())
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            Sasl::OAuthBearer {
                token_endpoint,
                client_id,
                scope,
                extensions,
                ..
            } => f
                .debug_struct("OAUTHBEARER")
                .field("token_endpoint", token_endpoint)
                .field("client_id", client_id)
                .field("client_secret", &"<redacted>")
                .field("scope", scope)
                .field(
                    "extensions",
                    &extensions.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

/// `host:port` or `[v6]:port` into its parts.
pub(crate) fn split_host_port(address: &str) -> Result<(String, u16), String> {
    let address = address.trim();
    let (host, port) = if let Some(rest) = address.strip_prefix('[') {
        let (host, rest) = rest
            .split_once(']')
            .ok_or_else(|| format!("{address:?} is not host:port"))?;
        let port = rest
            .strip_prefix(':')
            .ok_or_else(|| format!("{address:?} is not host:port"))?;
        (host, port)
    } else {
        address
            .rsplit_once(':')
            .ok_or_else(|| format!("{address:?} is not host:port"))?
    };
    if host.is_empty() {
        return Err(format!("{address:?} names no host"));
    }
    let port = port
        .parse::<u16>()
        .map_err(|_| format!("{address:?} has no valid port"))?;
    Ok((host.to_string(), port))
}

/// SASL extension keys are letters only and never `auth` (reserved for the token); values are
/// printable ASCII, space, tab, CR or LF (RFC 7628 3.1, Kafka's `SaslExtensions`).
pub(crate) fn check_extensions(extensions: &[(String, String)]) -> Result<(), String> {
    for (key, value) in extensions {
        if key.eq_ignore_ascii_case("auth") {
            return Err("the sasl extension key auth is reserved (RFC 7628)".to_string());
        }
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(format!(
                "sasl extension keys must be letters only, got {key:?}"
            ));
        }
        if value.is_empty()
            || !value
                .chars()
                .all(|c| matches!(c, '\x21'..='\x7e' | ' ' | '\t' | '\r' | '\n'))
        {
            return Err(format!(
                "the value of sasl extension {key} must be printable ascii"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_absent_from_debug_output() {
        let plain = ClientConfig::plaintext("a:9092").with_security(Security::SaslSsl(
            TlsConfig::default(),
            Sasl::ScramSha512 {
                username: "alice".into(),
                password: "hunter2-very-secret".into(),
            },
        ));
        let text = format!("{plain:?}");
        assert!(text.contains("alice"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");

        let oauth = Sasl::OAuthBearer {
            token_endpoint: "https://idp/token".into(),
            client_id: "ballast".into(),
            client_secret: "s3cr3t-client-secret".into(),
            scope: Some("kafka".into()),
            extensions: vec![("logicalCluster".into(), "lkc-secretvalue".into())],
        };
        let text = format!("{oauth:?}");
        assert!(!text.contains("s3cr3t"), "{text}");
        assert!(!text.contains("lkc-secretvalue"), "{text}");
        assert!(text.contains("logicalCluster"), "{text}");
    }

    #[test]
    fn plaintext_constructor_splits_the_bootstrap_list() {
        let c = ClientConfig::plaintext("a:1, b:2,,");
        assert_eq!(c.bootstrap_servers, vec!["a:1", "b:2"]);
        assert!(c.validate().is_ok());
        assert!(ClientConfig::plaintext("").validate().is_err());
        assert!(ClientConfig::plaintext("nohost").validate().is_err());
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let c = ClientConfig::plaintext("a:1").with_retries(5, Duration::from_millis(100));
        assert_eq!(c.backoff(1), Duration::from_millis(100));
        assert_eq!(c.backoff(2), Duration::from_millis(200));
        assert_eq!(c.backoff(3), Duration::from_millis(400));
        assert_eq!(c.backoff(30), Duration::from_secs(2));
    }
}
