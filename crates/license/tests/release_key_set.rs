//! What a release build accepts, proven on `Verifier::release()`: the exact key set a build
//! without debug assertions uses (`Verifier::for_this_build()` is `Verifier::release()` there; a
//! unit test in `keys.rs` checks that). These tests pass in debug and release builds alike.

use ballast_license::keys::{development_private_key_path, vendor_key};
use ballast_license::token::Decoded;
use ballast_license::{issue, verify, Claims, KeyName, Rejection, SigningKey, Verifier};
use base64::Engine;

/// A token the vendor key signed, valid 2020-01-01 to 2020-01-31: long expired, so committing it
/// grants nothing. Made once with the vendor's private key, which is not in this repository.
const VENDOR_SAMPLE: &str = include_str!("../keys/vendor-expired-sample.jwt");

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn claims() -> Claims {
    Claims {
        sub: "ACME".into(),
        lic: "lic-1".into(),
        iat: 1_800_000_000,
        nbf: 1_800_000_000,
        exp: 4_000_000_000,
        notes: None,
    }
}

fn dev_key() -> SigningKey {
    let pem = std::fs::read_to_string(development_private_key_path()).expect("keys/dev.pem");
    SigningKey::from_pem(&pem).expect("dev key")
}

#[test]
fn release_build_verifies_a_vendor_signature() {
    let v = verify(VENDOR_SAMPLE, &Verifier::release()).expect("vendor signature");
    assert_eq!(v.key, KeyName::Vendor);
    assert_eq!(v.claims.lic, "fixture-expired-0001");
    assert!(vendor_key().is_some());
}

#[test]
fn release_build_rejects_a_token_signed_with_the_development_key() {
    let token = issue(&claims(), &dev_key());
    assert_eq!(
        verify(&token, &Verifier::release()),
        Err(Rejection::Signature)
    );
}

#[test]
fn release_build_rejects_a_token_signed_by_any_other_key() {
    for _ in 0..3 {
        let token = issue(&claims(), &SigningKey::generate().expect("key"));
        assert_eq!(
            verify(&token, &Verifier::release()),
            Err(Rejection::Signature)
        );
    }
}

#[test]
fn release_build_rejects_a_tampered_payload() {
    let (header, rest) = VENDOR_SAMPLE.trim().split_once('.').expect("header");
    let (_, signature) = rest.split_once('.').expect("signature");
    let mut forged: serde_json::Value = Decoded::parse(VENDOR_SAMPLE.trim())
        .expect("sample")
        .payload
        .expect("json payload");
    forged["exp"] = serde_json::json!(4_000_000_000i64);
    let payload = b64(&serde_json::to_vec(&forged).expect("json"));
    let tampered = format!("{header}.{payload}.{signature}");
    assert_eq!(
        verify(&tampered, &Verifier::release()),
        Err(Rejection::Signature)
    );
    // A changed header breaks the signature too.
    let header = b64(br#"{"alg":"EdDSA","typ":"JWT","kid":"x"}"#);
    let tampered = format!("{header}.{rest}");
    assert_eq!(
        verify(&tampered, &Verifier::release()),
        Err(Rejection::Signature)
    );
}

#[test]
fn release_build_rejects_every_algorithm_but_eddsa() {
    let payload = b64(&serde_json::to_vec(&claims()).expect("json"));
    let vendor = vendor_key().expect("vendor key");
    for alg in ["HS256", "HS512", "RS256", "ES256", "PS256", "none"] {
        let header = b64(format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#).as_bytes());
        let input = format!("{header}.{payload}");
        // HMAC keyed with the vendor public key: the classic algorithm-confusion forgery.
        let mac = ring::hmac::sign(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, vendor.as_bytes()),
            input.as_bytes(),
        );
        for token in [
            format!("{input}.{}", b64(mac.as_ref())),
            format!("{input}."),
        ] {
            assert!(
                matches!(
                    verify(&token, &Verifier::release()),
                    Err(Rejection::Algorithm(_) | Rejection::Malformed(_))
                ),
                "{alg}"
            );
        }
        assert_eq!(
            verify(
                &format!("{input}.{}", b64(mac.as_ref())),
                &Verifier::release()
            ),
            Err(Rejection::Algorithm(alg.into()))
        );
    }
}
