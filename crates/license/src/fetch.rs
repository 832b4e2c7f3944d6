//! The rules of auto-fetch (the HTTP call itself is made by the web process): the request body,
//! reading the token out of the answer, and whether a fetched token replaces the stored one.

use serde_json::{json, Value};

use crate::keys::Verifier;
use crate::status::{Candidate, Loaded, Source, Verdict};
use crate::token::{verify, Rejection};
use crate::trial::TrialFacts;

/// The JSON body of `POST {LICENSE_URL}/api/license/fetch`.
pub fn request_body(subscription_id: &str) -> Value {
    json!({ "subscription_id": subscription_id })
}

/// The token in a license server's answer: a JSON object with the token in `token`, `license`,
/// `license_string` or `jwt` (at the top level or under `data`), or a JSON string, or the bare
/// token as text.
pub fn token_from_response(body: &[u8]) -> Option<String> {
    const FIELDS: [&str; 4] = ["token", "license", "license_string", "jwt"];
    let pick = |v: &Value| {
        FIELDS
            .iter()
            .find_map(|f| v.get(f).and_then(Value::as_str).map(str::to_string))
    };
    let token = match serde_json::from_slice::<Value>(body) {
        Ok(Value::String(s)) => Some(s),
        Ok(v @ Value::Object(_)) => pick(&v).or_else(|| v.get("data").and_then(pick)),
        Ok(_) => None,
        Err(_) => std::str::from_utf8(body).ok().map(str::to_string),
    }?;
    let token = token.trim();
    (!token.is_empty() && !token.contains(char::is_whitespace)).then(|| token.to_string())
}

/// What to do with a fetched token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Store it: it is valid and at least as good as the stored one.
    Store,
    /// Keep the stored token: the fetched one is the same, or worse at this moment (a renewal
    /// that is not valid yet while the stored license still runs).
    Keep,
    /// It does not verify: never stored.
    Reject(Rejection),
}

/// Whether `fetched` replaces `stored` at `now_ms`. An invalid fetched token never replaces
/// anything; a valid one replaces the stored token unless the stored one ranks higher now.
pub fn decide(fetched: &str, stored: Option<&str>, verifier: &Verifier, now_ms: i64) -> Decision {
    let fetched = fetched.trim();
    let new = match verify(fetched, verifier) {
        Ok(v) => v,
        Err(r) => return Decision::Reject(r),
    };
    if stored.map(str::trim) == Some(fetched) {
        return Decision::Keep;
    }
    let Some(old) = stored.and_then(|s| verify(s, verifier).ok()) else {
        return Decision::Store;
    };
    // Store when the new token ranks at least as high now (licensed > expired > not yet valid,
    // then the later expiry): a renewal that is not valid yet waits while the stored one runs.
    if standing(new, now_ms) >= standing(old, now_ms) {
        Decision::Store
    } else {
        Decision::Keep
    }
}

fn standing(v: crate::token::Verified, now_ms: i64) -> (u8, i64) {
    let status = Loaded {
        candidates: vec![Candidate {
            source: Source::Fetched,
            verdict: Verdict::Verified(v),
        }],
        trial: TrialFacts::default(),
    }
    .status(now_ms);
    crate::status::rank(&status.best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{KeyName, SigningKey, TrustedKey};
    use crate::token::{issue, Claims};

    const NOW: i64 = 1_800_000_000_000;
    const S: i64 = NOW / 1000;

    fn setup() -> (SigningKey, Verifier) {
        let key = SigningKey::generate().expect("key");
        let v = Verifier::with_keys(vec![TrustedKey {
            name: KeyName::Custom,
            key: key.public_key(),
        }]);
        (key, v)
    }

    fn token(key: &SigningKey, nbf: i64, exp: i64) -> String {
        issue(
            &Claims {
                sub: "ACME".into(),
                lic: format!("lic-{exp}"),
                iat: nbf,
                nbf,
                exp,
                notes: None,
            },
            key,
        )
    }

    #[test]
    fn the_request_body_carries_the_subscription_id() {
        assert_eq!(request_body("sub-42"), json!({"subscription_id": "sub-42"}));
    }

    #[test]
    fn tokens_are_read_from_the_usual_answer_shapes() {
        for body in [
            r#"{"token": "a.b.c"}"#,
            r#"{"license": "a.b.c"}"#,
            r#"{"data": {"license_string": "a.b.c"}}"#,
            r#"{"success": true, "data": {"jwt": "a.b.c"}}"#,
            r#""a.b.c""#,
            "a.b.c\n",
        ] {
            assert_eq!(
                token_from_response(body.as_bytes()).as_deref(),
                Some("a.b.c"),
                "{body}"
            );
        }
        for body in [r#"{"error": "no"}"#, "", "[1]", "not a token"] {
            assert_eq!(token_from_response(body.as_bytes()), None, "{body}");
        }
    }

    #[test]
    fn an_invalid_fetched_token_never_replaces_a_valid_one() {
        let (key, v) = setup();
        let stored = token(&key, S - 10, S + 1000);
        let (other, _) = setup();
        let forged = token(&other, S - 10, S + 100_000);
        assert_eq!(
            decide(&forged, Some(&stored), &v, NOW),
            Decision::Reject(Rejection::Signature)
        );
        assert!(matches!(
            decide("garbage", None, &v, NOW),
            Decision::Reject(_)
        ));
    }

    #[test]
    fn a_renewal_replaces_an_expired_or_shorter_license() {
        let (key, v) = setup();
        let renewed = token(&key, S - 10, S + 100_000);
        let expired = token(&key, S - 10_000, S - 1_000);
        assert_eq!(decide(&renewed, Some(&expired), &v, NOW), Decision::Store);
        let shorter = token(&key, S - 10, S + 1_000);
        assert_eq!(decide(&renewed, Some(&shorter), &v, NOW), Decision::Store);
        assert_eq!(decide(&renewed, None, &v, NOW), Decision::Store);
        assert_eq!(decide(&renewed, Some("garbage"), &v, NOW), Decision::Store);
    }

    #[test]
    fn the_same_token_or_a_worse_one_keeps_the_stored_license() {
        let (key, v) = setup();
        let current = token(&key, S - 10, S + 1_000);
        assert_eq!(decide(&current, Some(&current), &v, NOW), Decision::Keep);
        let not_yet = token(&key, S + 600, S + 100_000);
        assert_eq!(decide(&not_yet, Some(&current), &v, NOW), Decision::Keep);
        let older = token(&key, S - 10_000, S - 1_000);
        assert_eq!(decide(&older, Some(&current), &v, NOW), Decision::Keep);
    }
}
