//! License tokens: compact JWS (RFC 7515) with `alg` EdDSA (RFC 8037), carrying the claims
//! `sub`, `lic`, `iat`, `nbf`, `exp` and optional `notes`.
//!
//! Verification is strict and offline: exactly three base64url parts without padding; a header
//! whose `alg` is `"EdDSA"` (anything else, `none` and `HS256` included, is refused before any
//! key is tried) and that names no critical extension; a signature made by one of the verifier's
//! keys (keys named in the header are never used); then the claims. Time is checked separately
//! ([`Claims::validity`]) because it changes while a process runs.
//!
//! `jsonwebtoken` writes tokens ([`issue`]) and checks signatures (`crypto::verify`), always as
//! EdDSA whatever the header says. The shape, header and claims checks around it are ours: they
//! say in words what is wrong, and `ballast license inspect` shows the parts of a token no key
//! verifies. Its `decode` is not used: its errors do not say which part is wrong (a bad header and
//! a bad payload are the same error), it refuses some headers these rules accept (a `kid` that is
//! not a string, `b64`), and its time checks read the system clock where ours take `now`; with
//! those off, what it adds is the signature check called here directly.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::keys::{KeyName, PublicKey, SigningKey, Verifier};

/// Clock-skew leeway on `nbf` and `exp`, in seconds (the spec's constant).
pub const LEEWAY_SECS: i64 = 300;

/// The claims of a license.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Customer the license was issued to.
    pub sub: String,
    /// License identifier.
    pub lic: String,
    /// Issued at, unix seconds.
    pub iat: i64,
    /// Not before, unix seconds.
    pub nbf: i64,
    /// Expiry, unix seconds.
    pub exp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// Where a token stands at a given time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    Valid,
    /// `now` is more than the leeway before `nbf`.
    NotYetValid,
    /// `now` is more than the leeway past `exp`.
    Expired,
}

impl Claims {
    /// Valid from `nbf - leeway` through `exp + leeway` (both inclusive).
    pub fn validity(&self, now_ms: i64) -> Validity {
        if now_ms > self.exp.saturating_add(LEEWAY_SECS).saturating_mul(1000) {
            Validity::Expired
        } else if now_ms < self.nbf.saturating_sub(LEEWAY_SECS).saturating_mul(1000) {
            Validity::NotYetValid
        } else {
            Validity::Valid
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.sub.trim().is_empty() {
            return Err("sub is empty".into());
        }
        if self.lic.trim().is_empty() {
            return Err("lic is empty".into());
        }
        if self.exp <= self.nbf {
            return Err("exp is not after nbf".into());
        }
        if self.iat > self.exp {
            return Err("iat is after exp".into());
        }
        Ok(())
    }
}

/// A token whose signature and claims were accepted (time not yet considered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub claims: Claims,
    /// The key that signed it.
    pub key: KeyName,
}

/// Why a token was refused. The messages quote no part of the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("not a license token: {0}")]
    Malformed(String),
    #[error("algorithm {0} is not accepted: license tokens are signed with EdDSA (Ed25519)")]
    Algorithm(String),
    #[error("the signature does not match any key this build accepts")]
    Signature,
    #[error("the token's claims are invalid: {0}")]
    Claims(String),
}

/// The parts of a token, decoded but not verified (for `ballast license inspect`).
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub header: Value,
    /// The payload as JSON when it is JSON.
    pub payload: Option<Value>,
    signing_input: String,
    /// The signature part as the token carries it (base64url).
    signature: String,
}

impl Decoded {
    /// Splits and decodes `token` without checking anything but its shape.
    pub fn parse(token: &str) -> Result<Decoded, Rejection> {
        let malformed = |m: &str| Rejection::Malformed(m.to_string());
        let mut parts = token.split('.');
        let (Some(h), Some(p), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed("expected three dot-separated parts"));
        };
        if h.is_empty() || p.is_empty() || s.is_empty() {
            return Err(malformed("a part is empty"));
        }
        let header = b64(h).ok_or_else(|| malformed("the header is not base64url"))?;
        let header: Value =
            serde_json::from_slice(&header).map_err(|_| malformed("the header is not JSON"))?;
        if !header.is_object() {
            return Err(malformed("the header is not a JSON object"));
        }
        let payload = b64(p).ok_or_else(|| malformed("the payload is not base64url"))?;
        b64(s).ok_or_else(|| malformed("the signature is not base64url"))?;
        Ok(Decoded {
            header,
            payload: serde_json::from_slice(&payload).ok(),
            signing_input: format!("{h}.{p}"),
            signature: s.to_string(),
        })
    }

    /// The header's `alg`, if it is a string.
    pub fn alg(&self) -> Option<&str> {
        self.header.get("alg").and_then(Value::as_str)
    }

    fn check_header(&self) -> Result<(), Rejection> {
        match self.header.get("alg") {
            Some(Value::String(alg)) if alg == "EdDSA" => {}
            Some(Value::String(alg)) => return Err(Rejection::Algorithm(alg.clone())),
            Some(other) => return Err(Rejection::Algorithm(other.to_string())),
            None => return Err(Rejection::Algorithm("(none given)".into())),
        }
        if self.header.get("crit").is_some() {
            return Err(Rejection::Malformed(
                "the header names critical extensions".into(),
            ));
        }
        match self.header.get("typ") {
            None => Ok(()),
            Some(Value::String(t)) if t.eq_ignore_ascii_case("JWT") => Ok(()),
            Some(_) => Err(Rejection::Malformed("typ is not JWT".into())),
        }
    }

    /// Checks the header and the signature against `verifier`: the name of the signing key.
    pub fn check_signature(&self, verifier: &Verifier) -> Result<KeyName, Rejection> {
        self.check_header()?;
        verifier
            .keys()
            .iter()
            .find(|k| self.signed_by(&k.key))
            .map(|k| k.name)
            .ok_or(Rejection::Signature)
    }

    /// Whether `key` made the signature (whatever this build accepts), checked as EdDSA.
    pub fn signed_by(&self, key: &PublicKey) -> bool {
        key.verifies_encoded(self.signing_input.as_bytes(), &self.signature)
    }

    /// The claims, when the payload holds valid ones.
    pub fn claims(&self) -> Result<Claims, Rejection> {
        let payload = self
            .payload
            .clone()
            .ok_or_else(|| Rejection::Claims("the payload is not JSON".into()))?;
        let claims: Claims =
            serde_json::from_value(payload).map_err(|e| Rejection::Claims(e.to_string()))?;
        claims.check().map_err(Rejection::Claims)?;
        Ok(claims)
    }
}

/// Verifies `token` against `verifier`: shape, header, signature, then claims.
pub fn verify(token: &str, verifier: &Verifier) -> Result<Verified, Rejection> {
    let decoded = Decoded::parse(token.trim())?;
    let key = decoded.check_signature(verifier)?;
    let claims = decoded.claims()?;
    Ok(Verified { claims, key })
}

/// Signs `claims` with `key`: a compact JWS with header `{"typ":"JWT","alg":"EdDSA"}`.
pub fn issue(claims: &Claims, key: &SigningKey) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA),
        claims,
        &key.encoding_key(),
    )
    // Claims of strings and integers always serialize, and the key was read by this signer
    // when the SigningKey was made.
    .expect("an EdDSA token from a SigningKey")
}

#[cfg(test)]
fn enc(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Strict base64url without padding.
fn b64(part: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{PublicKey, TrustedKey};

    fn key() -> SigningKey {
        SigningKey::generate().expect("key")
    }

    fn trusting(key: &SigningKey) -> Verifier {
        Verifier::with_keys(vec![TrustedKey {
            name: KeyName::Custom,
            key: key.public_key(),
        }])
    }

    fn claims() -> Claims {
        Claims {
            sub: "ACME Corp".into(),
            lic: "lic-0001".into(),
            iat: 1_800_000_000,
            nbf: 1_800_000_000,
            exp: 1_800_000_000 + 30 * 86_400,
            notes: Some("production cluster".into()),
        }
    }

    /// A token with the given header and payload JSON, signed by `key`.
    fn raw_token(header: &str, payload: &str, key: &SigningKey) -> String {
        let input = format!("{}.{}", enc(header.as_bytes()), enc(payload.as_bytes()));
        format!("{input}.{}", enc(&key.sign(input.as_bytes())))
    }

    #[test]
    fn an_issued_token_verifies_with_its_claims_and_key() {
        let k = key();
        let token = issue(&claims(), &k);
        let v = verify(&token, &trusting(&k)).expect("valid");
        assert_eq!(v.claims, claims());
        assert_eq!(v.key, KeyName::Custom);
    }

    #[test]
    fn rfc_8037_ed25519_jws_example_verifies() {
        // RFC 8037 appendix A.1 (key) and A.4 (JWS): our verification agrees with the standard.
        let x = b64("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo").expect("x");
        let public = PublicKey::from_bytes(x.try_into().expect("32 bytes"));
        let jws = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg";
        let decoded = Decoded::parse(jws).expect("shape");
        let verifier = Verifier::with_keys(vec![TrustedKey {
            name: KeyName::Custom,
            key: public,
        }]);
        assert_eq!(decoded.check_signature(&verifier), Ok(KeyName::Custom));
        // Its payload is text, not claims: the signature is fine, the token is no license.
        assert!(matches!(verify(jws, &verifier), Err(Rejection::Claims(_))));
    }

    #[test]
    fn a_token_signed_by_another_key_is_refused() {
        let token = issue(&claims(), &key());
        assert_eq!(verify(&token, &trusting(&key())), Err(Rejection::Signature));
    }

    #[test]
    fn a_tampered_payload_is_refused() {
        let k = key();
        let token = issue(&claims(), &k);
        let parts: Vec<&str> = token.split('.').collect();
        let mut forged = claims();
        forged.exp += 365 * 86_400;
        let payload = enc(&serde_json::to_vec(&forged).expect("json"));
        let tampered = format!("{}.{payload}.{}", parts[0], parts[2]);
        assert_eq!(verify(&tampered, &trusting(&k)), Err(Rejection::Signature));
    }

    #[test]
    fn a_tampered_signature_is_refused() {
        let k = key();
        let token = issue(&claims(), &k);
        let (input, sig) = token.rsplit_once('.').expect("parts");
        let mut bytes = b64(sig).expect("sig");
        bytes[0] ^= 1;
        let tampered = format!("{input}.{}", enc(&bytes));
        assert_eq!(verify(&tampered, &trusting(&k)), Err(Rejection::Signature));
    }

    #[test]
    fn algorithms_other_than_eddsa_are_refused_before_any_key_is_tried() {
        let k = key();
        let payload = serde_json::to_string(&claims()).expect("json");
        for alg in ["HS256", "RS256", "ES256", "none", "eddsa", "Ed25519"] {
            let token = raw_token(&format!(r#"{{"alg":"{alg}"}}"#), &payload, &k);
            assert_eq!(
                verify(&token, &trusting(&k)),
                Err(Rejection::Algorithm(alg.into())),
                "{alg}"
            );
        }
        let token = raw_token(r#"{"typ":"JWT"}"#, &payload, &k);
        assert!(matches!(
            verify(&token, &trusting(&k)),
            Err(Rejection::Algorithm(_))
        ));
    }

    #[test]
    fn an_unsigned_alg_none_token_is_refused() {
        let payload = serde_json::to_string(&claims()).expect("json");
        let token = format!("{}.{}.", enc(br#"{"alg":"none"}"#), enc(payload.as_bytes()));
        assert!(verify(&token, &trusting(&key())).is_err());
    }

    #[test]
    fn an_hs256_token_keyed_with_the_public_key_is_refused() {
        // The classic confusion: HMAC with the verifier's public key as the secret.
        let k = key();
        let payload = serde_json::to_string(&claims()).expect("json");
        let input = format!(
            "{}.{}",
            enc(br#"{"alg":"HS256","typ":"JWT"}"#),
            enc(payload.as_bytes())
        );
        let mac = ring::hmac::sign(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, k.public_key().as_bytes()),
            input.as_bytes(),
        );
        let token = format!("{input}.{}", enc(mac.as_ref()));
        assert_eq!(
            verify(&token, &trusting(&k)),
            Err(Rejection::Algorithm("HS256".into()))
        );
    }

    #[test]
    fn critical_header_extensions_and_other_types_are_refused() {
        let k = key();
        let payload = serde_json::to_string(&claims()).expect("json");
        let crit = raw_token(r#"{"alg":"EdDSA","crit":["exp"]}"#, &payload, &k);
        assert!(matches!(
            verify(&crit, &trusting(&k)),
            Err(Rejection::Malformed(_))
        ));
        let typ = raw_token(r#"{"alg":"EdDSA","typ":"JWE"}"#, &payload, &k);
        assert!(matches!(
            verify(&typ, &trusting(&k)),
            Err(Rejection::Malformed(_))
        ));
    }

    #[test]
    fn malformed_tokens_are_refused_without_quoting_them() {
        let v = trusting(&key());
        for bad in [
            "",
            "abc",
            "a.b",
            "a.b.c.d",
            "..",
            "eyJhbGciOiJFZERTQSJ9.e30=.AAAA",
            "!!!.e30.AAAA",
        ] {
            match verify(bad, &v) {
                Err(Rejection::Malformed(m)) => {
                    if !bad.is_empty() {
                        assert!(!m.contains(bad), "{m}");
                    }
                }
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn claims_must_be_present_typed_and_consistent() {
        let k = key();
        let v = trusting(&k);
        let cases = [
            r#"{"lic":"l","iat":1,"nbf":1,"exp":2}"#,
            r#"{"sub":"s","iat":1,"nbf":1,"exp":2}"#,
            r#"{"sub":"s","lic":"l","nbf":1,"exp":2}"#,
            r#"{"sub":"s","lic":"l","iat":1,"exp":2}"#,
            r#"{"sub":"s","lic":"l","iat":1,"nbf":1}"#,
            r#"{"sub":"s","lic":"l","iat":1,"nbf":1,"exp":"2"}"#,
            r#"{"sub":"s","lic":"l","iat":1,"nbf":1,"exp":2.5}"#,
            r#"{"sub":"","lic":"l","iat":1,"nbf":1,"exp":2}"#,
            r#"{"sub":"s","lic":"l","iat":1,"nbf":5,"exp":5}"#,
            r#"{"sub":"s","lic":"l","iat":9,"nbf":1,"exp":5}"#,
            r#"[1,2,3]"#,
        ];
        for payload in cases {
            let token = raw_token(r#"{"alg":"EdDSA"}"#, payload, &k);
            assert!(
                matches!(verify(&token, &v), Err(Rejection::Claims(_))),
                "{payload}"
            );
        }
        let ok = raw_token(
            r#"{"alg":"EdDSA"}"#,
            r#"{"sub":"s","lic":"l","iat":1,"nbf":1,"exp":2,"iss":"other claims are ignored"}"#,
            &k,
        );
        assert!(verify(&ok, &v).is_ok());
    }

    #[test]
    fn every_refusal_says_its_reason_in_the_same_words() {
        let k = key();
        let v = trusting(&k);
        let payload = serde_json::to_string(&claims()).expect("json");
        let p = enc(payload.as_bytes());
        let sig = enc(&[0u8; 64]);
        let malformed = |m: &str| Err(Rejection::Malformed(m.into()));
        let cases: Vec<(String, Result<Verified, Rejection>)> = vec![
            (
                "a.b".into(),
                malformed("expected three dot-separated parts"),
            ),
            (format!("{p}..{sig}"), malformed("a part is empty")),
            (
                format!("!!!.{p}.{sig}"),
                malformed("the header is not base64url"),
            ),
            (
                format!("{}.{p}.{sig}", enc(b"not json")),
                malformed("the header is not JSON"),
            ),
            (
                format!("{}.{p}.{sig}", enc(b"[\"EdDSA\"]")),
                malformed("the header is not a JSON object"),
            ),
            (
                format!("{}.e30=.{sig}", enc(br#"{"alg":"EdDSA"}"#)),
                malformed("the payload is not base64url"),
            ),
            (
                format!("{}.{p}.{sig}=", enc(br#"{"alg":"EdDSA"}"#)),
                malformed("the signature is not base64url"),
            ),
            (
                raw_token(r#"{"alg":"EdDSA","crit":["exp"]}"#, &payload, &k),
                malformed("the header names critical extensions"),
            ),
            (
                raw_token(r#"{"alg":"EdDSA","typ":"JOSE"}"#, &payload, &k),
                malformed("typ is not JWT"),
            ),
            (
                raw_token(r#"{"alg":5}"#, &payload, &k),
                Err(Rejection::Algorithm("5".into())),
            ),
            (
                raw_token(r#"{"typ":"JWT"}"#, &payload, &k),
                Err(Rejection::Algorithm("(none given)".into())),
            ),
            (
                // A signature of the wrong length is no signature of any key.
                format!("{}.{p}.{}", enc(br#"{"alg":"EdDSA"}"#), enc(&[7u8; 63])),
                Err(Rejection::Signature),
            ),
            (
                raw_token(r#"{"alg":"EdDSA"}"#, "not json", &k),
                Err(Rejection::Claims("the payload is not JSON".into())),
            ),
            (
                raw_token(
                    r#"{"alg":"EdDSA"}"#,
                    r#"{"lic":"l","iat":1,"nbf":1,"exp":2}"#,
                    &k,
                ),
                Err(Rejection::Claims("missing field `sub`".into())),
            ),
            (
                raw_token(
                    r#"{"alg":"EdDSA"}"#,
                    r#"{"sub":"s","lic":"l","iat":1,"nbf":1,"exp":"2"}"#,
                    &k,
                ),
                Err(Rejection::Claims(
                    "invalid type: string \"2\", expected i64".into(),
                )),
            ),
            (
                raw_token(
                    r#"{"alg":"EdDSA"}"#,
                    r#"{"sub":" ","lic":"l","iat":1,"nbf":1,"exp":2}"#,
                    &k,
                ),
                Err(Rejection::Claims("sub is empty".into())),
            ),
            (
                raw_token(
                    r#"{"alg":"EdDSA"}"#,
                    r#"{"sub":"s","lic":"","iat":1,"nbf":1,"exp":2}"#,
                    &k,
                ),
                Err(Rejection::Claims("lic is empty".into())),
            ),
            (
                raw_token(
                    r#"{"alg":"EdDSA"}"#,
                    r#"{"sub":"s","lic":"l","iat":1,"nbf":5,"exp":5}"#,
                    &k,
                ),
                Err(Rejection::Claims("exp is not after nbf".into())),
            ),
            (
                raw_token(
                    r#"{"alg":"EdDSA"}"#,
                    r#"{"sub":"s","lic":"l","iat":9,"nbf":1,"exp":5}"#,
                    &k,
                ),
                Err(Rejection::Claims("iat is after exp".into())),
            ),
        ];
        for (token, expected) in cases {
            assert_eq!(verify(&token, &v), expected, "{token}");
        }
        assert_eq!(
            Rejection::Algorithm("HS256".into()).to_string(),
            "algorithm HS256 is not accepted: license tokens are signed with EdDSA (Ed25519)"
        );
        assert_eq!(
            Rejection::Signature.to_string(),
            "the signature does not match any key this build accepts"
        );
        assert_eq!(
            Rejection::Malformed("a part is empty".into()).to_string(),
            "not a license token: a part is empty"
        );
        assert_eq!(
            Rejection::Claims("sub is empty".into()).to_string(),
            "the token's claims are invalid: sub is empty"
        );
    }

    #[test]
    fn issued_tokens_carry_the_eddsa_jwt_header_and_typ_is_read_in_any_case() {
        let k = key();
        let token = issue(&claims(), &k);
        let decoded = Decoded::parse(&token).expect("shape");
        assert_eq!(
            decoded.header,
            serde_json::json!({"alg": "EdDSA", "typ": "JWT"})
        );
        assert_eq!(decoded.alg(), Some("EdDSA"));
        assert_eq!(
            decoded.payload,
            Some(serde_json::to_value(claims()).expect("json"))
        );
        assert!(decoded.signed_by(&k.public_key()));
        assert!(!decoded.signed_by(&key().public_key()));
        let payload = serde_json::to_string(&claims()).expect("json");
        let lower = raw_token(r#"{"alg":"EdDSA","typ":"jwt"}"#, &payload, &k);
        assert_eq!(
            verify(&lower, &trusting(&k)).map(|v| v.claims),
            Ok(claims())
        );
    }

    #[test]
    fn keys_named_in_the_header_are_never_used() {
        // A token signed by an attacker's key that names that key in the header (jwk, kid, jku)
        // is checked against the verifier's keys only.
        let attacker = key();
        let x = enc(attacker.public_key().as_bytes());
        let header = format!(
            r#"{{"alg":"EdDSA","kid":"attacker","jku":"https://example.invalid/jwks","jwk":{{"kty":"OKP","crv":"Ed25519","x":"{x}"}}}}"#
        );
        let payload = serde_json::to_string(&claims()).expect("json");
        let token = raw_token(&header, &payload, &attacker);
        assert_eq!(verify(&token, &trusting(&key())), Err(Rejection::Signature));
        assert!(verify(&token, &trusting(&attacker)).is_ok());
    }

    #[test]
    fn validity_allows_300_seconds_of_clock_skew_on_both_ends() {
        let c = claims();
        let ms = |s: i64| s * 1000;
        assert_eq!(c.validity(ms(c.nbf - 300)), Validity::Valid);
        assert_eq!(c.validity(ms(c.nbf - 300) - 1), Validity::NotYetValid);
        assert_eq!(c.validity(ms(c.exp)), Validity::Valid);
        assert_eq!(c.validity(ms(c.exp + 300)), Validity::Valid);
        assert_eq!(c.validity(ms(c.exp + 300) + 1), Validity::Expired);
    }
}
