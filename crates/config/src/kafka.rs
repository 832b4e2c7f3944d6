//! The `BALLAST_KAFKA_*` settings: how ballast connects to the cluster.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::Secret;
use crate::reader::Reader;
use crate::values::{check_broker_address, parse_http_url, parse_list};

const BOOTSTRAP_SERVERS: &str = "BALLAST_KAFKA_BOOTSTRAP_SERVERS";
const SECURITY_PROTOCOL: &str = "BALLAST_KAFKA_SECURITY_PROTOCOL";
const SASL_MECHANISM: &str = "BALLAST_KAFKA_SASL_MECHANISM";
const SASL_USERNAME: &str = "BALLAST_KAFKA_SASL_USERNAME";
const SASL_PASSWORD: &str = "BALLAST_KAFKA_SASL_PASSWORD";
const SSL_CA_FILE: &str = "BALLAST_KAFKA_SSL_CA_FILE";
const SSL_CERT_FILE: &str = "BALLAST_KAFKA_SSL_CERT_FILE";
const SSL_KEY_FILE: &str = "BALLAST_KAFKA_SSL_KEY_FILE";
const OAUTH_TOKEN_ENDPOINT: &str = "BALLAST_KAFKA_OAUTH_TOKEN_ENDPOINT";
const OAUTH_CLIENT_ID: &str = "BALLAST_KAFKA_OAUTH_CLIENT_ID";
const OAUTH_CLIENT_SECRET: &str = "BALLAST_KAFKA_OAUTH_CLIENT_SECRET";
const OAUTH_SCOPE: &str = "BALLAST_KAFKA_OAUTH_SCOPE";
const OAUTH_EXTENSIONS: &str = "BALLAST_KAFKA_OAUTH_EXTENSIONS";
const CLIENT_ID: &str = "BALLAST_KAFKA_CLIENT_ID";
const REQUEST_TIMEOUT: &str = "BALLAST_KAFKA_REQUEST_TIMEOUT";

const OAUTH_SETTINGS: [&str; 5] = [
    OAUTH_TOKEN_ENDPOINT,
    OAUTH_CLIENT_ID,
    OAUTH_CLIENT_SECRET,
    OAUTH_SCOPE,
    OAUTH_EXTENSIONS,
];

/// How ballast connects to the cluster.
#[derive(Debug, Clone)]
pub struct KafkaConfig {
    /// `host:port` entries as given (IPv6 as `[::1]:9092`); never empty
    pub bootstrap_servers: Vec<String>,
    pub security: SecurityProtocol,
    /// `Some` exactly when `security` is SASL_PLAINTEXT or SASL_SSL
    pub sasl: Option<SaslConfig>,
    /// `Some` exactly when the SASL mechanism is OAUTHBEARER
    pub oauth: Option<OAuthConfig>,
    /// `Some` exactly when `security` is SSL or SASL_SSL; the files were checked to load
    pub tls: Option<TlsFiles>,
    pub client_id: String,
    pub request_timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    #[default]
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }

    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }
}

impl FromStr for SecurityProtocol {
    type Err = String;

    /// Case-insensitive.
    fn from_str(s: &str) -> Result<SecurityProtocol, String> {
        match s.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(SecurityProtocol::Plaintext),
            "SSL" => Ok(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Ok(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Ok(SecurityProtocol::SaslSsl),
            _ => Err(format!(
                "must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got {s:?}"
            )),
        }
    }
}

impl fmt::Display for SecurityProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SaslMechanism {
    #[default]
    Plain,
    ScramSha256,
    ScramSha512,
    OAuthBearer,
}

impl SaslMechanism {
    pub fn as_str(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
            SaslMechanism::OAuthBearer => "OAUTHBEARER",
        }
    }
}

impl FromStr for SaslMechanism {
    type Err = String;

    /// Case-insensitive.
    fn from_str(s: &str) -> Result<SaslMechanism, String> {
        match s.to_ascii_uppercase().as_str() {
            "PLAIN" => Ok(SaslMechanism::Plain),
            "SCRAM-SHA-256" => Ok(SaslMechanism::ScramSha256),
            "SCRAM-SHA-512" => Ok(SaslMechanism::ScramSha512),
            "OAUTHBEARER" => Ok(SaslMechanism::OAuthBearer),
            _ => Err(format!(
                "must be PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER, got {s:?}"
            )),
        }
    }
}

impl fmt::Display for SaslMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// SASL settings. For OAUTHBEARER `username` and `password` are empty and the credentials are
/// in [`KafkaConfig::oauth`].
#[derive(Debug, Clone)]
pub struct SaslConfig {
    pub mechanism: SaslMechanism,
    pub username: String,
    pub password: Secret,
}

/// OAUTHBEARER with the client credentials flow.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// http:// or https:// URL, without a trailing slash
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Secret,
    pub scope: Option<String>,
    /// SASL extensions (RFC 7628), in the order given; keys are letters only and never `auth`
    pub extensions: Vec<(String, String)>,
}

/// TLS files; each set file was checked to hold at least one PEM item of its kind. No CA file
/// means the system roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca_file: Option<PathBuf>,
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
}

pub(crate) fn read_kafka(r: &mut Reader) -> KafkaConfig {
    let bootstrap_servers = if r.is_set(BOOTSTRAP_SERVERS) {
        r.parse(BOOTSTRAP_SERVERS, parse_bootstrap_servers)
            .unwrap_or_default()
    } else {
        r.fail(
            BOOTSTRAP_SERVERS,
            "not set; name at least one broker as host:port",
        );
        Vec::new()
    };

    let security = r.parse(SECURITY_PROTOCOL, str::parse::<SecurityProtocol>);
    let mechanism_set = r.is_set(SASL_MECHANISM);
    let mechanism = if mechanism_set {
        r.parse(SASL_MECHANISM, str::parse::<SaslMechanism>)
    } else {
        Some(SaslMechanism::Plain)
    };

    let (sasl, oauth) = match (security, mechanism) {
        (Some(protocol), Some(mechanism)) if protocol.uses_sasl() => {
            read_sasl(r, protocol, mechanism, mechanism_set)
        }
        (Some(protocol), _) if !protocol.uses_sasl() => {
            refuse_sasl_settings(r, protocol, mechanism_set && mechanism.is_some());
            (None, None)
        }
        _ => (None, None),
    };

    let tls = match security {
        Some(protocol) if protocol.uses_tls() => Some(read_tls_files(r)),
        Some(protocol) => {
            refuse_tls_settings(r, protocol);
            None
        }
        None => None,
    };

    KafkaConfig {
        bootstrap_servers,
        security: security.unwrap_or_default(),
        sasl,
        oauth,
        tls,
        client_id: r.text(CLIENT_ID).unwrap_or_default(),
        request_timeout: r.positive_duration(REQUEST_TIMEOUT).unwrap_or_default(),
    }
}

fn parse_bootstrap_servers(value: &str) -> Result<Vec<String>, String> {
    let servers = parse_list(value);
    if servers.is_empty() {
        return Err("names no broker; name at least one as host:port".to_string());
    }
    for server in &servers {
        check_broker_address(server)?;
    }
    Ok(servers)
}

fn read_sasl(
    r: &mut Reader,
    protocol: SecurityProtocol,
    mechanism: SaslMechanism,
    mechanism_set: bool,
) -> (Option<SaslConfig>, Option<OAuthConfig>) {
    if mechanism == SaslMechanism::OAuthBearer {
        let oauth = read_oauth(r);
        let sasl = SaslConfig {
            mechanism,
            username: String::new(),
            password: Secret::default(),
        };
        return (Some(sasl), Some(oauth));
    }

    let mechanism_text = if mechanism_set {
        mechanism.as_str()
    } else {
        "PLAIN (the default)"
    };
    let needed = format!(
        "required when {SECURITY_PROTOCOL} is {protocol} and {SASL_MECHANISM} is {mechanism_text}"
    );
    let username = r.text(SASL_USERNAME).unwrap_or_else(|| {
        r.fail(SASL_USERNAME, needed.as_str());
        String::new()
    });
    let password = r.secret(SASL_PASSWORD).unwrap_or_else(|| {
        r.fail(SASL_PASSWORD, needed.as_str());
        Secret::default()
    });
    for name in OAUTH_SETTINGS {
        if r.is_set(name) {
            r.fail(
                name,
                format!("only used when {SASL_MECHANISM} is OAUTHBEARER, it is {mechanism_text}"),
            );
        }
    }
    let sasl = SaslConfig {
        mechanism,
        username,
        password,
    };
    (Some(sasl), None)
}

fn read_oauth(r: &mut Reader) -> OAuthConfig {
    let needed = format!("required when {SASL_MECHANISM} is OAUTHBEARER");
    for (name, instead) in [
        (SASL_USERNAME, OAUTH_CLIENT_ID),
        (SASL_PASSWORD, OAUTH_CLIENT_SECRET),
    ] {
        if r.is_set(name) {
            r.fail(
                name,
                format!("not used when {SASL_MECHANISM} is OAUTHBEARER; set {instead} instead"),
            );
        }
    }
    let token_endpoint = if r.is_set(OAUTH_TOKEN_ENDPOINT) {
        r.parse(OAUTH_TOKEN_ENDPOINT, parse_http_url)
    } else {
        r.fail(OAUTH_TOKEN_ENDPOINT, needed.as_str());
        None
    };
    let client_id = r.text(OAUTH_CLIENT_ID).unwrap_or_else(|| {
        r.fail(
            OAUTH_CLIENT_ID,
            format!("{needed} (client credentials flow)"),
        );
        String::new()
    });
    let client_secret = r.secret(OAUTH_CLIENT_SECRET).unwrap_or_else(|| {
        r.fail(
            OAUTH_CLIENT_SECRET,
            format!("{needed} (client credentials flow)"),
        );
        Secret::default()
    });
    OAuthConfig {
        token_endpoint: token_endpoint.unwrap_or_default(),
        client_id,
        client_secret,
        scope: r.text(OAUTH_SCOPE),
        extensions: r
            .parse(OAUTH_EXTENSIONS, parse_oauth_extensions)
            .unwrap_or_default(),
    }
}

/// `key=value,key=value` SASL extensions (RFC 7628): keys are letters only, `auth` is reserved,
/// values hold no control characters. Empty entries are skipped.
pub(crate) fn parse_oauth_extensions(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut extensions: Vec<(String, String)> = Vec::new();
    for entry in s.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((key, value)) = entry.split_once('=') else {
            return Err(format!("expected key=value entries, got {entry:?}"));
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(format!(
                "extension keys must be letters only (RFC 7628), got {key:?}"
            ));
        }
        if key.eq_ignore_ascii_case("auth") {
            return Err("the key auth is reserved (RFC 7628)".to_string());
        }
        if value.chars().any(char::is_control) {
            return Err(format!("the value of {key} contains a control character"));
        }
        if extensions.iter().any(|(k, _)| k == key) {
            return Err(format!("the key {key} is given twice"));
        }
        extensions.push((key.to_string(), value.to_string()));
    }
    Ok(extensions)
}

fn refuse_sasl_settings(r: &mut Reader, protocol: SecurityProtocol, mechanism_valid: bool) {
    let instead = if protocol.uses_tls() {
        SecurityProtocol::SaslSsl
    } else {
        SecurityProtocol::SaslPlaintext
    };
    let problem =
        format!("only used with SASL; set {SECURITY_PROTOCOL} to {instead} (it is {protocol})");
    if mechanism_valid {
        r.fail(SASL_MECHANISM, problem.as_str());
    }
    for name in [SASL_USERNAME, SASL_PASSWORD]
        .into_iter()
        .chain(OAUTH_SETTINGS)
    {
        if r.is_set(name) {
            r.fail(name, problem.as_str());
        }
    }
}

fn refuse_tls_settings(r: &mut Reader, protocol: SecurityProtocol) {
    let instead = if protocol.uses_sasl() {
        SecurityProtocol::SaslSsl
    } else {
        SecurityProtocol::Ssl
    };
    for name in [SSL_CA_FILE, SSL_CERT_FILE, SSL_KEY_FILE] {
        if r.is_set(name) {
            r.fail(
                name,
                format!(
                    "only used with TLS; set {SECURITY_PROTOCOL} to {instead} (it is {protocol})"
                ),
            );
        }
    }
}

fn read_tls_files(r: &mut Reader) -> TlsFiles {
    let mut file = |name: &str, check: fn(&Path) -> Result<(), String>| {
        let path = PathBuf::from(r.set(name)?);
        if let Err(problem) = check(&path) {
            r.fail(name, problem);
        }
        Some(path)
    };
    let files = TlsFiles {
        ca_file: file(SSL_CA_FILE, check_certificates),
        cert_file: file(SSL_CERT_FILE, check_certificates),
        key_file: file(SSL_KEY_FILE, check_private_key),
    };
    match (&files.cert_file, &files.key_file) {
        (Some(_), None) => r.fail(
            SSL_KEY_FILE,
            format!("required when {SSL_CERT_FILE} is set"),
        ),
        (None, Some(_)) => r.fail(
            SSL_CERT_FILE,
            format!("required when {SSL_KEY_FILE} is set"),
        ),
        _ => {}
    }
    files
}

/// The file can be read and holds at least one PEM certificate.
fn check_certificates(path: &Path) -> Result<(), String> {
    let cannot_load =
        |err: pem::Error| format!("cannot load {}: {}", path.display(), pem_problem(err));
    let mut count = 0;
    for certificate in CertificateDer::pem_file_iter(path).map_err(cannot_load)? {
        certificate.map_err(cannot_load)?;
        count += 1;
    }
    if count == 0 {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(())
}

/// The file can be read and holds a PEM private key (PKCS#8, PKCS#1 or SEC1).
fn check_private_key(path: &Path) -> Result<(), String> {
    match PrivateKeyDer::from_pem_file(path) {
        Ok(_) => Ok(()),
        Err(pem::Error::NoItemsFound) => {
            Err(format!("{} holds no PEM private key", path.display()))
        }
        Err(err) => Err(format!(
            "cannot load {}: {}",
            path.display(),
            pem_problem(err)
        )),
    }
}

fn pem_problem(err: pem::Error) -> String {
    match err {
        pem::Error::Io(err) => err.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oauth_extensions() {
        assert_eq!(
            parse_oauth_extensions("traceId=abc, logicalCluster=lkc-1,"),
            Ok(vec![
                ("traceId".to_string(), "abc".to_string()),
                ("logicalCluster".to_string(), "lkc-1".to_string()),
            ])
        );
        assert_eq!(parse_oauth_extensions(""), Ok(vec![]));
        for bad in [
            "AUTH=x", "noequals", "=x", "my-key=x", "k1=x", "a=\u{1}", "a=1,a=2",
        ] {
            assert!(parse_oauth_extensions(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn protocols_and_mechanisms_parse_in_any_case() {
        assert_eq!("sasl_ssl".parse(), Ok(SecurityProtocol::SaslSsl));
        assert_eq!("scram-sha-512".parse(), Ok(SaslMechanism::ScramSha512));
        assert_eq!("OAuthBearer".parse(), Ok(SaslMechanism::OAuthBearer));
        assert!("TLS".parse::<SecurityProtocol>().is_err());
        assert!("GSSAPI".parse::<SaslMechanism>().is_err());
    }
}
