//! `ballast license keygen|issue|inspect`: the vendor's tooling for license tokens
//! (contract: shared/contracts/cli.md; design: docs/license.md).
//!
//! Exit codes: 0 done (for `inspect`: this build accepts the token now); 1 `inspect` of a token
//! this build does not accept now, or a file that could not be written; 2 a usage problem (an
//! existing output file, an unreadable or wrong key, a validity of 0 days).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ballast_license::keys::{development_key, vendor_key};
use ballast_license::token::{Decoded, Validity};
use ballast_license::{issue, Claims, KeyName, Rejection, SigningKey, Verifier};
use ballast_runtime::{Clock, SystemClock};
use clap::Subcommand;
use serde_json::{json, Value};

use crate::{EXIT_CONFIG, EXIT_FAILURE};

#[derive(Subcommand)]
pub enum LicenseCommand {
    /// Write an Ed25519 key pair: PREFIX (private key, PKCS#8 PEM, mode 0600) and PREFIX.pub
    Keygen {
        /// The path of the private key; the public key is written to PREFIX.pub (neither is overwritten)
        #[arg(long, value_name = "PREFIX")]
        out: PathBuf,
    },
    /// Print one signed license token on stdout
    Issue {
        /// The private key (PKCS#8 PEM) to sign with
        #[arg(long, value_name = "PRIVATE")]
        key: PathBuf,
        /// Customer the license is issued to (`sub`)
        #[arg(long, value_name = "S")]
        sub: String,
        /// License identifier (`lic`)
        #[arg(long, value_name = "L")]
        lic: String,
        /// Validity in days from now (`exp`; `iat` and `nbf` are now)
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=36_500))]
        days: u32,
        /// Free text carried in the license (`notes`)
        #[arg(long, value_name = "T")]
        notes: Option<String>,
    },
    /// Print a token's claims and whether this build accepts it, and why not
    Inspect {
        /// The token; `-` reads it from standard input
        token: String,
        /// Print one JSON document instead of lines
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: LicenseCommand) -> ExitCode {
    match command {
        LicenseCommand::Keygen { out } => keygen(&out),
        LicenseCommand::Issue {
            key,
            sub,
            lic,
            days,
            notes,
        } => issue_cmd(&key, sub, lic, days, notes),
        LicenseCommand::Inspect { token, json } => inspect(&token, json),
    }
}

fn keygen(prefix: &Path) -> ExitCode {
    let private = prefix.to_path_buf();
    let mut public = prefix.as_os_str().to_owned();
    public.push(".pub");
    let public = PathBuf::from(public);
    for path in [&private, &public] {
        if path.exists() {
            eprintln!(
                "ballast: {} exists; keygen never overwrites a key",
                path.display()
            );
            return ExitCode::from(EXIT_CONFIG);
        }
    }
    let key = match SigningKey::generate() {
        Ok(key) => key,
        Err(e) => {
            eprintln!("ballast: cannot generate a key: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    if let Err(e) = write_new(&private, key.to_pem().as_bytes(), 0o600) {
        eprintln!("ballast: cannot write {}: {e}", private.display());
        return ExitCode::from(EXIT_FAILURE);
    }
    if let Err(e) = write_new(&public, key.public_key().to_pem().as_bytes(), 0o644) {
        eprintln!("ballast: cannot write {}: {e}", public.display());
        let _ = std::fs::remove_file(&private);
        return ExitCode::from(EXIT_FAILURE);
    }
    eprintln!(
        "ballast: wrote {} (private key, keep it secret) and {} (public key)",
        private.display(),
        public.display()
    );
    ExitCode::SUCCESS
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn issue_cmd(key: &Path, sub: String, lic: String, days: u32, notes: Option<String>) -> ExitCode {
    if sub.trim().is_empty() || lic.trim().is_empty() {
        eprintln!("ballast: --sub and --lic must not be empty");
        return ExitCode::from(EXIT_CONFIG);
    }
    let pem = match std::fs::read_to_string(key) {
        Ok(pem) => pem,
        Err(e) => {
            eprintln!("ballast: cannot read {}: {e}", key.display());
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let key_pair = match SigningKey::from_pem(&pem) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("ballast: {}: {e}", key.display());
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let now = SystemClock.now_ms().div_euclid(1000);
    let claims = Claims {
        sub,
        lic,
        iat: now,
        nbf: now,
        exp: now + i64::from(days) * 86_400,
        notes: notes.filter(|n| !n.is_empty()),
    };
    let public = key_pair.public_key();
    if Some(public) == development_key() {
        eprintln!("ballast: warning: signed with the development key; only debug builds accept it");
    } else if Some(public) != vendor_key() {
        eprintln!("ballast: warning: signed with a key that is not the vendor key; ballast builds do not accept it");
    }
    println!("{}", issue(&claims, &key_pair));
    ExitCode::SUCCESS
}

/// What this build makes of a token.
struct Inspection {
    header: Option<Value>,
    claims: Option<Value>,
    signed_by: Option<&'static str>,
    state: &'static str,
    accepted: bool,
    message: String,
}

fn build_name() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

fn inspect_token(token: &str, verifier: &Verifier, now_ms: i64) -> Inspection {
    let decoded = match Decoded::parse(token.trim()) {
        Ok(d) => d,
        Err(e) => {
            return Inspection {
                header: None,
                claims: None,
                signed_by: None,
                state: "invalid",
                accepted: false,
                message: e.to_string(),
            }
        }
    };
    let mut out = Inspection {
        header: Some(decoded.header.clone()),
        claims: decoded.payload.clone(),
        signed_by: None,
        state: "invalid",
        accepted: false,
        message: String::new(),
    };
    if decoded.alg() == Some("EdDSA") {
        out.signed_by = Some(if vendor_key().is_some_and(|k| decoded.signed_by(&k)) {
            KeyName::Vendor.as_str()
        } else if development_key().is_some_and(|k| decoded.signed_by(&k)) {
            KeyName::Development.as_str()
        } else {
            "unknown"
        });
    }
    if let Err(rejection) = decoded.check_signature(verifier) {
        out.message = match (&rejection, out.signed_by) {
            (Rejection::Signature, Some("development")) => format!(
                "signed with the development key, which only debug builds accept (this is a {} build)",
                build_name()
            ),
            (Rejection::Signature, _) => {
                "the signature does not match the vendor key: signed by another key, or altered after signing"
                    .to_string()
            }
            _ => rejection.to_string(),
        };
        return out;
    }
    let claims = match decoded.claims() {
        Ok(c) => c,
        Err(e) => {
            out.message = e.to_string();
            return out;
        }
    };
    let (state, accepted, message) = match claims.validity(now_ms) {
        Validity::Valid => (
            "licensed",
            true,
            format!(
                "licensed to {} (license {}) until {}",
                claims.sub,
                claims.lic,
                ballast_license::status::iso_secs(claims.exp)
            ),
        ),
        Validity::Expired => (
            "expired",
            false,
            format!(
                "expired at {} (leeway {} s)",
                ballast_license::status::iso_secs(claims.exp),
                ballast_license::LEEWAY_SECS
            ),
        ),
        Validity::NotYetValid => (
            "invalid",
            false,
            format!(
                "not valid before {} (leeway {} s)",
                ballast_license::status::iso_secs(claims.nbf),
                ballast_license::LEEWAY_SECS
            ),
        ),
    };
    out.state = state;
    out.accepted = accepted;
    out.message = message;
    out
}

fn inspect(token: &str, as_json: bool) -> ExitCode {
    let token = if token == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("ballast: cannot read the token from standard input: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
        text
    } else {
        token.to_string()
    };
    let now = SystemClock.now_ms();
    let verifier = Verifier::for_this_build();
    let i = inspect_token(&token, &verifier, now);
    let accepted_keys: Vec<&str> = verifier.keys().iter().map(|k| k.name.as_str()).collect();
    if as_json {
        let doc = json!({
            "header": i.header,
            "claims": i.claims,
            "signed_by": i.signed_by,
            "build": build_name(),
            "accepted_keys": accepted_keys,
            "accepted": i.accepted,
            "state": i.state,
            "message": i.message,
        });
        println!("{doc}");
    } else {
        let field = |name: &str, value: String| println!("{name:<11} {value}");
        if let Some(h) = &i.header {
            field("header", h.to_string());
        }
        match &i.claims {
            Some(Value::Object(c)) => {
                for name in ["sub", "lic"] {
                    if let Some(v) = c.get(name) {
                        field(
                            name,
                            v.as_str().map_or_else(|| v.to_string(), str::to_string),
                        );
                    }
                }
                for name in ["iat", "nbf", "exp"] {
                    if let Some(v) = c.get(name) {
                        let shown = v.as_i64().map_or_else(
                            || v.to_string(),
                            |s| format!("{} ({s})", ballast_license::status::iso_secs(s)),
                        );
                        field(name, shown);
                    }
                }
                if let Some(v) = c.get("notes") {
                    field(
                        "notes",
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    );
                }
            }
            Some(other) => field("payload", other.to_string()),
            None if i.header.is_some() => field("payload", "(not JSON)".into()),
            None => {}
        }
        if let Some(s) = i.signed_by {
            field("signed by", format!("{s} key"));
        }
        field(
            "this build",
            format!("{} (accepts: {})", build_name(), accepted_keys.join(", ")),
        );
        field("state", i.state.to_string());
        field(
            "accepted",
            if i.accepted {
                format!("yes: {}", i.message)
            } else {
                format!("no: {}", i.message)
            },
        );
    }
    if i.accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_license::TrustedKey;

    #[test]
    fn inspect_names_the_development_key_when_a_build_refuses_it() {
        let pem = std::fs::read_to_string(ballast_license::keys::development_private_key_path())
            .expect("dev key");
        let dev = SigningKey::from_pem(&pem).expect("dev key");
        let claims = Claims {
            sub: "s".into(),
            lic: "l".into(),
            iat: 100,
            nbf: 100,
            exp: 1_000_000,
            notes: None,
        };
        let token = issue(&claims, &dev);
        let refused = inspect_token(&token, &Verifier::release(), 200_000);
        assert!(!refused.accepted);
        assert_eq!(refused.signed_by, Some("development"));
        assert!(
            refused.message.contains("only debug builds"),
            "{}",
            refused.message
        );
        let dev_only = Verifier::with_keys(vec![TrustedKey {
            name: KeyName::Development,
            key: dev.public_key(),
        }]);
        let ok = inspect_token(&token, &dev_only, 200_000);
        assert!(ok.accepted, "{}", ok.message);
        let expired = inspect_token(&token, &dev_only, 2_000_000_000);
        assert_eq!((expired.accepted, expired.state), (false, "expired"));
    }
}
