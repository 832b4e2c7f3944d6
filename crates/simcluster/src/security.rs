//! Listener security: TLS (rustls) and SASL (rsasl's server side for PLAIN, SCRAM-SHA-256 and
//! SCRAM-SHA-512; OAUTHBEARER accepts well-formed unsecured or signed JWTs without checking the
//! signature: this is a simulator).

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use rsasl::callback::{Context, Request, SessionCallback, SessionData};
use rsasl::mechanisms::oauthbearer::properties::{OAuthBearerError, OAuthBearerValidate};
use rsasl::mechanisms::scram::properties::ScramStoredPassword;
use rsasl::prelude::{SASLConfig, SessionError};
use rsasl::property::{AuthId, AuthzId, OAuthBearerKV, OAuthBearerToken, Password};
use rsasl::validate::{Validate, Validation, ValidationError};

use crate::error::SimError;

/// The security protocol of every broker listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecurityProtocol {
    #[default]
    Plaintext,
    Ssl,
    SaslPlaintext,
    SaslSsl,
}

impl SecurityProtocol {
    pub fn name(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "PLAINTEXT",
            SecurityProtocol::Ssl => "SSL",
            SecurityProtocol::SaslPlaintext => "SASL_PLAINTEXT",
            SecurityProtocol::SaslSsl => "SASL_SSL",
        }
    }

    pub fn uses_tls(self) -> bool {
        matches!(self, SecurityProtocol::Ssl | SecurityProtocol::SaslSsl)
    }

    pub fn uses_sasl(self) -> bool {
        matches!(
            self,
            SecurityProtocol::SaslPlaintext | SecurityProtocol::SaslSsl
        )
    }
}

impl std::str::FromStr for SecurityProtocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "PLAINTEXT" => Ok(SecurityProtocol::Plaintext),
            "SSL" => Ok(SecurityProtocol::Ssl),
            "SASL_PLAINTEXT" => Ok(SecurityProtocol::SaslPlaintext),
            "SASL_SSL" => Ok(SecurityProtocol::SaslSsl),
            other => Err(format!(
                "unknown security protocol {other:?}: expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"
            )),
        }
    }
}

/// A server certificate chain and its private key, PEM encoded.
#[derive(Clone)]
pub struct TlsIdentity {
    pub cert_pem: String,
    pub key_pem: String,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("cert_pem", &format!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

impl TlsIdentity {
    pub fn from_files(cert: &Path, key: &Path) -> Result<Self, SimError> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|source| SimError::Read {
                path: p.to_path_buf(),
                source,
            })
        };
        Ok(TlsIdentity {
            cert_pem: read(cert)?,
            key_pem: read(key)?,
        })
    }
}

/// Listener security of the whole cluster.
#[derive(Clone, Debug, Default)]
pub struct SecurityConfig {
    pub protocol: SecurityProtocol,
    /// Required for SSL and SASL_SSL.
    pub tls: Option<TlsIdentity>,
    /// (user, password) accepted for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512.
    pub users: Vec<(String, String)>,
}

/// SASL mechanisms the simulator offers.
pub const MECHANISMS: &[&str] = &["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"];

/// SCRAM iterations for the derived credentials.
pub const SCRAM_ITERATIONS: u32 = 4096;

#[derive(Clone)]
struct ScramCredential {
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
}

struct User {
    password: String,
    sha256: ScramCredential,
    sha512: ScramCredential,
}

/// The server side of SASL for a cluster: rsasl for PLAIN and OAUTHBEARER, and the users'
/// SCRAM credentials for [`ScramSession`].
pub struct SaslServer {
    pub config: Arc<SASLConfig>,
    users: Arc<BTreeMap<String, User>>,
}

fn derive(
    alg: ring::pbkdf2::Algorithm,
    hmac: ring::hmac::Algorithm,
    digest: &'static ring::digest::Algorithm,
    password: &str,
    salt: &[u8],
) -> ScramCredential {
    let mut salted = vec![0u8; digest.output_len()];
    let iterations = NonZeroU32::new(SCRAM_ITERATIONS).unwrap_or(NonZeroU32::MIN);
    ring::pbkdf2::derive(alg, iterations, salt, password.as_bytes(), &mut salted);
    let key = ring::hmac::Key::new(hmac, &salted);
    let client_key = ring::hmac::sign(&key, b"Client Key");
    let stored_key = ring::digest::digest(digest, client_key.as_ref());
    let server_key = ring::hmac::sign(&key, b"Server Key");
    ScramCredential {
        salt: salt.to_vec(),
        stored_key: stored_key.as_ref().to_vec(),
        server_key: server_key.as_ref().to_vec(),
    }
}

/// What a finished SASL exchange yields: the principal, or why it was refused.
pub struct Principal;

impl Validation for Principal {
    type Value = Result<String, String>;
}

struct Callback {
    users: Arc<BTreeMap<String, User>>,
}

impl Callback {
    fn outcome(&self, session: &SessionData, context: &Context) -> Result<String, String> {
        let mech = session.mechanism().mechanism.as_str();
        match mech {
            "PLAIN" => {
                let user = context.get_ref::<AuthId>().unwrap_or_default();
                let password = context.get_ref::<Password>().unwrap_or_default();
                let authz = context.get_ref::<AuthzId>();
                if authz.is_some_and(|a| !a.is_empty() && a != user) {
                    return Err(format!(
                        "Authentication failed: authorization id {} differs from user {user}",
                        authz.unwrap_or_default()
                    ));
                }
                match self.users.get(user) {
                    Some(u) if u.password.as_bytes() == password => Ok(user.to_string()),
                    _ => Err("Authentication failed: Invalid username or password".into()),
                }
            }
            "SCRAM-SHA-256" | "SCRAM-SHA-512" => {
                // Reaching validation means the client proof matched the stored key.
                let user = context.get_ref::<AuthId>().unwrap_or_default();
                if self.users.contains_key(user) {
                    Ok(user.to_string())
                } else {
                    Err(format!("Authentication failed during authentication due to invalid credentials with SASL mechanism {mech}"))
                }
            }
            "OAUTHBEARER" => {
                let token = context.get_ref::<OAuthBearerToken>().unwrap_or_default();
                let extensions = context.get_ref::<OAuthBearerKV>().unwrap_or_default();
                check_oauth(token, extensions, crate::util::wall_ms() / 1000)
            }
            other => Err(format!("Unsupported SASL mechanism {other}")),
        }
    }
}

impl SessionCallback for Callback {
    fn callback(
        &self,
        session: &SessionData,
        context: &Context,
        request: &mut Request,
    ) -> Result<(), SessionError> {
        if request.is::<ScramStoredPassword>() {
            let user = context.get_ref::<AuthId>().unwrap_or_default();
            if let Some(u) = self.users.get(user) {
                let cred = if session.mechanism().mechanism.as_str() == "SCRAM-SHA-512" {
                    &u.sha512
                } else {
                    &u.sha256
                };
                request.satisfy::<ScramStoredPassword>(&ScramStoredPassword::new(
                    SCRAM_ITERATIONS,
                    &cred.salt,
                    &cred.stored_key,
                    &cred.server_key,
                ))?;
            }
        } else if request.is::<OAuthBearerValidate>() {
            let token = context.get_ref::<OAuthBearerToken>().unwrap_or_default();
            let extensions = context.get_ref::<OAuthBearerKV>().unwrap_or_default();
            let verdict = check_oauth(token, extensions, crate::util::wall_ms() / 1000)
                .map(|_| ())
                .map_err(|_| OAuthBearerError::new("invalid_token", None, None));
            request.satisfy::<OAuthBearerValidate>(&verdict)?;
        }
        Ok(())
    }

    fn validate(
        &self,
        session: &SessionData,
        context: &Context,
        validate: &mut Validate<'_>,
    ) -> Result<(), ValidationError> {
        let outcome = self.outcome(session, context);
        validate.with::<Principal, _>(|| Ok(outcome))?;
        Ok(())
    }
}

/// OAUTHBEARER token check: a JWT (unsecured or signed; the signature is not verified) whose
/// `sub` is set and whose `exp` is in the future; extension keys must be alphabetic and not the
/// reserved `auth`.
pub fn check_oauth(
    token: &str,
    extensions: &[(&str, &str)],
    now_secs: i64,
) -> Result<String, String> {
    for (key, _) in extensions {
        if *key == "auth" {
            return Err("Extension name auth is invalid".into());
        }
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(format!("Extension name {key} is invalid"));
        }
    }
    let token = token.strip_prefix("Bearer ").unwrap_or(token).trim();
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return Err("The token is not a JWT (three dot-separated parts)".into());
    }
    let decode = |part: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part.trim_end_matches('='))
            .map_err(|_| "The token is not base64url encoded".to_string())
    };
    let header: serde_json::Value = serde_json::from_slice(&decode(parts[0])?)
        .map_err(|_| "The token header is not JSON".to_string())?;
    if header.get("alg").and_then(|a| a.as_str()).is_none() {
        return Err("The token header has no alg".into());
    }
    let claims: serde_json::Value = serde_json::from_slice(&decode(parts[1])?)
        .map_err(|_| "The token claims are not JSON".to_string())?;
    let sub = claims
        .get("sub")
        .and_then(|s| s.as_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "The token has no sub claim".to_string())?;
    let exp = claims
        .get("exp")
        .and_then(|e| e.as_f64())
        .ok_or_else(|| "The token has no exp claim".to_string())?;
    if exp <= now_secs as f64 {
        return Err("The token has expired".into());
    }
    Ok(sub.to_string())
}

/// The SASL server for the given users.
pub fn sasl_server(users: &[(String, String)], cluster_id: &str) -> Result<SaslServer, SimError> {
    let mut map = BTreeMap::new();
    for (name, password) in users {
        let h = crate::util::fnv1a(&[cluster_id.as_bytes(), name.as_bytes()]);
        let mut salt = h.to_be_bytes().to_vec();
        salt.extend_from_slice(&crate::util::mix64(h).to_be_bytes());
        map.insert(
            name.clone(),
            User {
                password: password.clone(),
                sha256: derive(
                    ring::pbkdf2::PBKDF2_HMAC_SHA256,
                    ring::hmac::HMAC_SHA256,
                    &ring::digest::SHA256,
                    password,
                    &salt,
                ),
                sha512: derive(
                    ring::pbkdf2::PBKDF2_HMAC_SHA512,
                    ring::hmac::HMAC_SHA512,
                    &ring::digest::SHA512,
                    password,
                    &salt,
                ),
            },
        );
    }
    let users = Arc::new(map);
    let config = SASLConfig::builder()
        .with_defaults()
        .with_callback(Callback {
            users: users.clone(),
        })
        .map_err(|e| SimError::Security(format!("sasl: {e}")))?;
    Ok(SaslServer { config, users })
}

/// A SCRAM-SHA-256/512 server exchange (RFC 5802) with Kafka's tolerance: the client-final
/// nonce must end with the server-first nonce (librdkafka repeats the client nonce there, which
/// Kafka accepts and rsasl's server does not).
pub struct ScramSession {
    sha512: bool,
    users: Arc<BTreeMap<String, User>>,
    state: ScramState,
}

enum ScramState {
    First,
    Final {
        gs2_header: String,
        client_first_bare: String,
        server_first: String,
        nonce: String,
        user: String,
        cred: ScramCredential,
    },
    Done,
}

/// What one SCRAM step yields.
pub enum ScramStep {
    Challenge(Vec<u8>),
    Done(Vec<u8>, String),
}

fn scram_name(raw: &str) -> Option<String> {
    // saslname: "=2C" is ',' and "=3D" is '='; any other '=' is invalid.
    let mut out = String::new();
    let mut rest = raw;
    while let Some(i) = rest.find('=') {
        out.push_str(&rest[..i]);
        match rest.get(i..i + 3) {
            Some("=2C") => out.push(','),
            Some("=3D") => out.push('='),
            _ => return None,
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}

impl ScramSession {
    pub fn new(server: &SaslServer, mechanism: &str) -> Option<ScramSession> {
        let sha512 = match mechanism {
            "SCRAM-SHA-256" => false,
            "SCRAM-SHA-512" => true,
            _ => return None,
        };
        Some(ScramSession {
            sha512,
            users: server.users.clone(),
            state: ScramState::First,
        })
    }

    fn mechanism(&self) -> &'static str {
        if self.sha512 {
            "SCRAM-SHA-512"
        } else {
            "SCRAM-SHA-256"
        }
    }

    fn failed(&self) -> String {
        format!(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
            self.mechanism()
        )
    }

    pub fn step(&mut self, input: &[u8]) -> Result<ScramStep, String> {
        let text = std::str::from_utf8(input).map_err(|_| self.failed())?;
        match std::mem::replace(&mut self.state, ScramState::Done) {
            ScramState::First => self.client_first(text),
            ScramState::Final {
                gs2_header,
                client_first_bare,
                server_first,
                nonce,
                user,
                cred,
            } => {
                let ok = self.client_final(
                    text,
                    &gs2_header,
                    &client_first_bare,
                    &server_first,
                    &nonce,
                    &cred,
                );
                match ok {
                    Some(server_final) => Ok(ScramStep::Done(server_final.into_bytes(), user)),
                    None => Err(self.failed()),
                }
            }
            ScramState::Done => Err("SCRAM exchange already finished".into()),
        }
    }

    fn client_first(&mut self, text: &str) -> Result<ScramStep, String> {
        let malformed = || "Invalid SCRAM client first message".to_string();
        // gs2-header: "n," or "y," (no channel binding), optional "a=authzid", ",".
        let (cb, rest) = text.split_once(',').ok_or_else(malformed)?;
        if cb != "n" && cb != "y" {
            return Err("SCRAM channel binding is not supported".into());
        }
        let (authzid, bare) = rest.split_once(',').ok_or_else(malformed)?;
        let gs2_header = format!("{cb},{authzid},");
        let mut user = None;
        let mut cnonce = None;
        for attr in bare.split(',') {
            match attr.split_once('=') {
                Some(("n", v)) => user = scram_name(v),
                Some(("r", v)) => cnonce = Some(v.to_string()),
                Some(("tokenauth", _)) => {
                    return Err("Delegation token authentication is not simulated".into())
                }
                Some(("m", _)) => return Err(malformed()),
                _ => {}
            }
        }
        let (Some(user), Some(cnonce)) = (user, cnonce) else {
            return Err(malformed());
        };
        if cnonce.is_empty() {
            return Err(malformed());
        }
        if let Some(a) = authzid.strip_prefix("a=") {
            if scram_name(a).as_deref() != Some(user.as_str()) {
                return Err("Authentication failed: Client requested an authorization id that is different from username".into());
            }
        }
        let Some(u) = self.users.get(&user) else {
            return Err(self.failed());
        };
        let cred = if self.sha512 {
            u.sha512.clone()
        } else {
            u.sha256.clone()
        };
        let snonce = server_nonce();
        let nonce = format!("{cnonce}{snonce}");
        let salt = base64::engine::general_purpose::STANDARD.encode(&cred.salt);
        let server_first = format!("r={nonce},s={salt},i={SCRAM_ITERATIONS}");
        self.state = ScramState::Final {
            gs2_header,
            client_first_bare: bare.to_string(),
            server_first: server_first.clone(),
            nonce,
            user,
            cred,
        };
        Ok(ScramStep::Challenge(server_first.into_bytes()))
    }

    fn client_final(
        &self,
        text: &str,
        gs2_header: &str,
        client_first_bare: &str,
        server_first: &str,
        nonce: &str,
        cred: &ScramCredential,
    ) -> Option<String> {
        let (without_proof, proof) = text.rsplit_once(",p=")?;
        let mut channel = None;
        let mut final_nonce = None;
        for attr in without_proof.split(',') {
            match attr.split_once('=') {
                Some(("c", v)) => channel = Some(v),
                Some(("r", v)) => final_nonce = Some(v),
                _ => {}
            }
        }
        let b64 = base64::engine::general_purpose::STANDARD;
        if channel? != b64.encode(gs2_header) || !final_nonce?.ends_with(nonce) {
            return None;
        }
        let proof = b64.decode(proof).ok()?;
        let auth_message = format!("{client_first_bare},{server_first},{without_proof}");
        let (hmac, digest) = if self.sha512 {
            (ring::hmac::HMAC_SHA512, &ring::digest::SHA512)
        } else {
            (ring::hmac::HMAC_SHA256, &ring::digest::SHA256)
        };
        let signature = ring::hmac::sign(
            &ring::hmac::Key::new(hmac, &cred.stored_key),
            auth_message.as_bytes(),
        );
        if proof.len() != signature.as_ref().len() {
            return None;
        }
        let client_key: Vec<u8> = proof
            .iter()
            .zip(signature.as_ref())
            .map(|(a, b)| a ^ b)
            .collect();
        if ring::digest::digest(digest, &client_key).as_ref() != cred.stored_key.as_slice() {
            return None;
        }
        let server_signature = ring::hmac::sign(
            &ring::hmac::Key::new(hmac, &cred.server_key),
            auth_message.as_bytes(),
        );
        Some(format!("v={}", b64.encode(server_signature.as_ref())))
    }
}

/// 24 random alphanumeric characters.
fn server_nonce() -> String {
    use ring::rand::SecureRandom;
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; 24];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        let seed = crate::util::mix64(crate::util::wall_ms() as u64);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (crate::util::mix64(seed ^ i as u64) & 0xff) as u8;
        }
    }
    bytes
        .iter()
        .map(|b| CHARS[*b as usize % CHARS.len()] as char)
        .collect()
}

/// The rustls server configuration for a certificate chain and key.
pub fn tls_config(identity: &TlsIdentity) -> Result<Arc<rustls::ServerConfig>, SimError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| SimError::Security(format!("tls certificate: {e}")))?;
    if certs.is_empty() {
        return Err(SimError::Security(
            "tls certificate: no certificate in the PEM".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes())
        .map_err(|e| SimError::Security(format!("tls key: {e}")))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| SimError::Security(format!("tls: {e}")))?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(|e| SimError::Security(format!("tls: {e}")))?;
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let e = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.", e(r#"{"alg":"none"}"#), e(claims))
    }

    #[test]
    fn oauth_tokens_need_a_subject_and_a_future_expiry() {
        let ok = jwt(r#"{"sub":"alice","exp":2000}"#);
        assert_eq!(check_oauth(&ok, &[], 1000), Ok("alice".into()));
        assert_eq!(
            check_oauth(&format!("Bearer {ok}"), &[], 1000),
            Ok("alice".into())
        );
        assert!(check_oauth(&ok, &[], 3000).is_err());
        assert!(check_oauth(&jwt(r#"{"exp":2000}"#), &[], 1000).is_err());
        assert!(check_oauth("not-a-jwt", &[], 1000).is_err());
        assert!(check_oauth(&ok, &[("auth", "x")], 1000).is_err());
        assert!(check_oauth(&ok, &[("traceId", "x")], 1000).is_ok());
    }
}
