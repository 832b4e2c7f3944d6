//! Ed25519 keys: generation, PEM files, and the set of public keys a build accepts.
//!
//! Private keys are PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, v1 as OpenSSL and
//! `ballast license keygen` write it, or v2 with the public key); public keys are
//! SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`), the format `openssl pkey -pubout`
//! writes. `jsonwebtoken` (RustCrypto's Ed25519 underneath) reads private keys
//! (`EncodingKey::from_ed_der`), signs and verifies (`DecodingKey::from_ed_der`); what it cannot
//! do stays here: making a key (a random seed in a PKCS#8 v1 document), PEM in and out, and the
//! fixed SubjectPublicKeyInfo prefix of an Ed25519 public key. (Its `use_pem` feature is off: it
//! would bring nine more crates into the binary, `time` among them, to parse what the few lines
//! below parse, and its errors do not say which of these refusals applies.)

use std::fmt;

use base64::Engine;
use jsonwebtoken::crypto::CryptoProvider;
use jsonwebtoken::jwk::EllipticCurve;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};

/// The vendor's public key: the only key a release build accepts.
const VENDOR_PUB: &str = include_str!("../keys/vendor.pub");
/// The committed development key (test-only; its private half is `keys/dev.pem`). Debug builds
/// accept it so tests and `cargo run` can issue licenses; release builds do not.
const DEV_PUB: &str = include_str!("../keys/dev.pub");

/// DER prefix of an Ed25519 SubjectPublicKeyInfo: SEQUENCE { SEQUENCE { OID 1.3.101.112 },
/// BIT STRING (0 unused bits) } followed by the 32 key bytes.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// DER prefix of an Ed25519 PKCS#8 v1 private key (RFC 8410 section 7): SEQUENCE { INTEGER 0,
/// SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32 bytes) } } before the seed.
const PKCS8_V1_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum KeyError {
    #[error("not a PEM {0} block")]
    NotPem(&'static str),
    #[error("the PEM block is not valid base64")]
    Base64,
    #[error("not an Ed25519 public key")]
    NotEd25519Public,
    #[error("not an Ed25519 private key in PKCS#8 form")]
    NotEd25519Private,
    #[error("the system random source failed")]
    Random,
}

/// An Ed25519 public key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey([u8; 32]);

impl PublicKey {
    pub fn from_bytes(bytes: [u8; 32]) -> PublicKey {
        PublicKey(bytes)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Parses a `PUBLIC KEY` PEM block (SubjectPublicKeyInfo).
    pub fn from_pem(pem: &str) -> Result<PublicKey, KeyError> {
        let der = pem_decode(pem, "PUBLIC KEY")?;
        let key = der
            .strip_prefix(&SPKI_PREFIX[..])
            .ok_or(KeyError::NotEd25519Public)?;
        let bytes: [u8; 32] = key.try_into().map_err(|_| KeyError::NotEd25519Public)?;
        Ok(PublicKey(bytes))
    }

    pub fn to_pem(&self) -> String {
        let mut der = SPKI_PREFIX.to_vec();
        der.extend_from_slice(&self.0);
        pem_encode(&der, "PUBLIC KEY")
    }

    /// Whether `signature` is this key's signature of `message`.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        self.verifies_encoded(message, &enc(signature))
    }

    /// Whether `signature` (base64url, as a JWS carries it) is this key's signature of `message`.
    pub(crate) fn verifies_encoded(&self, message: &[u8], signature: &str) -> bool {
        let key = DecodingKey::from_ed_der(&self.0);
        jsonwebtoken::crypto::verify(signature, message, &key, Algorithm::EdDSA).unwrap_or(false)
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", enc(&self.0))
    }
}

/// An Ed25519 private key. Its `Debug` shows the public half only.
pub struct SigningKey {
    /// The PKCS#8 document it was read from or generated as (what `jsonwebtoken` signs with and
    /// what [`SigningKey::to_pem`] writes).
    pkcs8: Vec<u8>,
    public: PublicKey,
}

impl SigningKey {
    /// A new random key, held as a PKCS#8 v1 document (RFC 8410), the form OpenSSL writes and
    /// reads.
    pub fn generate() -> Result<SigningKey, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|_| KeyError::Random)?;
        let mut der = PKCS8_V1_PREFIX.to_vec();
        der.extend_from_slice(&seed);
        SigningKey::from_pkcs8(&EncodingKey::from_ed_der(&der))
    }

    /// Takes the key when the signer `jsonwebtoken` uses reads it: its public half is derived by
    /// the same parse, so signing with a `SigningKey` cannot fail afterwards.
    fn from_pkcs8(key: &EncodingKey) -> Result<SigningKey, KeyError> {
        let provider = CryptoProvider::try_get_default().ok_or(KeyError::NotEd25519Private)?;
        let public = (provider.key_utils.ed_pub_components_from_private_key)(
            key.as_bytes(),
            &EllipticCurve::Ed25519,
        )
        .map_err(|_| KeyError::NotEd25519Private)?;
        let public =
            <[u8; 32]>::try_from(public.as_slice()).map_err(|_| KeyError::NotEd25519Private)?;
        Ok(SigningKey {
            pkcs8: key.as_bytes().to_vec(),
            public: PublicKey(public),
        })
    }

    /// Parses a `PRIVATE KEY` PEM block (PKCS#8 v1 or v2).
    pub fn from_pem(pem: &str) -> Result<SigningKey, KeyError> {
        let der = pem_decode(pem, "PRIVATE KEY")?;
        SigningKey::from_pkcs8(&EncodingKey::from_ed_der(&der))
    }

    pub fn to_pem(&self) -> String {
        pem_encode(&self.pkcs8, "PRIVATE KEY")
    }

    pub fn public_key(&self) -> PublicKey {
        self.public
    }

    /// The key as `jsonwebtoken` signs with it.
    pub(crate) fn encoding_key(&self) -> EncodingKey {
        EncodingKey::from_ed_der(&self.pkcs8)
    }

    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        let signature = jsonwebtoken::crypto::sign(message, &self.encoding_key(), Algorithm::EdDSA)
            .expect("the key was read by this signer when the SigningKey was made");
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(signature)
            .expect("jsonwebtoken writes base64url")
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public_key())
            .finish_non_exhaustive()
    }
}

/// Which key signed a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyName {
    /// The vendor key, compiled into every build.
    Vendor,
    /// The committed development key, accepted by debug builds only.
    Development,
    /// A key a test or tool put into its own [`Verifier`].
    Custom,
}

impl KeyName {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyName::Vendor => "vendor",
            KeyName::Development => "development",
            KeyName::Custom => "custom",
        }
    }
}

/// A public key a [`Verifier`] accepts, with its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedKey {
    pub name: KeyName,
    pub key: PublicKey,
}

/// The public keys whose signatures are accepted. The keys are chosen at build time:
/// [`Verifier::release`] holds the vendor key only; [`Verifier::for_this_build`] adds the
/// development key when the build has debug assertions (tests, `cargo run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verifier {
    keys: Vec<TrustedKey>,
}

impl Verifier {
    /// The key set of a release build: the vendor key and nothing else.
    pub fn release() -> Verifier {
        Verifier {
            keys: vendor_key()
                .map(|key| TrustedKey {
                    name: KeyName::Vendor,
                    key,
                })
                .into_iter()
                .collect(),
        }
    }

    /// The key set this binary uses: [`Verifier::release`], plus the development key in a build
    /// with debug assertions. A release build (`cargo build --release`) compiles the second
    /// branch out, so its key set is exactly `Verifier::release()`.
    pub fn for_this_build() -> Verifier {
        #[allow(unused_mut)]
        let mut verifier = Verifier::release();
        #[cfg(debug_assertions)]
        if let Some(key) = development_key() {
            verifier.keys.push(TrustedKey {
                name: KeyName::Development,
                key,
            });
        }
        verifier
    }

    /// A verifier over the given keys (tests, tools).
    pub fn with_keys(keys: Vec<TrustedKey>) -> Verifier {
        Verifier { keys }
    }

    pub fn keys(&self) -> &[TrustedKey] {
        &self.keys
    }
}

/// The vendor public key compiled into this binary.
pub fn vendor_key() -> Option<PublicKey> {
    PublicKey::from_pem(VENDOR_PUB).ok()
}

/// The committed development public key (known to every build, accepted by debug builds only;
/// `ballast license inspect` names it when it sees it).
pub fn development_key() -> Option<PublicKey> {
    PublicKey::from_pem(DEV_PUB).ok()
}

/// Where the committed development private key lives in the source tree (for tests and
/// `cargo run`; it is never compiled into a binary).
pub fn development_private_key_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("keys/dev.pem")
}

fn enc(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn pem_encode(der: &[u8], label: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The DER in the first `label` block of `pem` (a file may hold notes or other blocks around it).
fn pem_decode(pem: &str, label: &'static str) -> Result<Vec<u8>, KeyError> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin).ok_or(KeyError::NotPem(label))? + begin.len();
    let stop = pem[start..].find(&end).ok_or(KeyError::NotPem(label))? + start;
    let body: String = pem[start..stop]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|_| KeyError::Base64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_in_keys_parse_and_differ() {
        let vendor = vendor_key().expect("keys/vendor.pub is an Ed25519 public key");
        let dev = development_key().expect("keys/dev.pub is an Ed25519 public key");
        assert_ne!(vendor, dev);
    }

    #[test]
    fn committed_dev_private_key_matches_dev_public_key() {
        let pem = std::fs::read_to_string(development_private_key_path()).expect("keys/dev.pem");
        let key = SigningKey::from_pem(&pem).expect("dev.pem is a PKCS#8 Ed25519 key");
        assert_eq!(Some(key.public_key()), development_key());
    }

    #[test]
    fn release_key_set_is_the_vendor_key_only() {
        let release = Verifier::release();
        assert_eq!(release.keys().len(), 1);
        assert_eq!(release.keys()[0].name, KeyName::Vendor);
        assert_eq!(Some(release.keys()[0].key), vendor_key());
    }

    #[test]
    fn this_build_accepts_the_development_key_only_with_debug_assertions() {
        let this = Verifier::for_this_build();
        let has_dev = this.keys().iter().any(|k| k.name == KeyName::Development);
        assert_eq!(has_dev, cfg!(debug_assertions));
        if !cfg!(debug_assertions) {
            assert_eq!(this, Verifier::release());
        }
    }

    #[test]
    fn generated_keys_round_trip_through_pem() {
        let key = SigningKey::generate().expect("key");
        let again = SigningKey::from_pem(&key.to_pem()).expect("private pem");
        assert_eq!(key.public_key(), again.public_key());
        let public = PublicKey::from_pem(&key.public_key().to_pem()).expect("public pem");
        assert_eq!(public, key.public_key());
        let sig = key.sign(b"message");
        assert!(public.verifies(b"message", &sig));
        assert!(!public.verifies(b"messagf", &sig));
    }

    #[test]
    fn generated_private_keys_are_pkcs8_v1_as_openssl_writes_them() {
        let key = SigningKey::generate().expect("key");
        assert_eq!(key.pkcs8.len(), 48);
        assert_eq!(key.pkcs8[..16], PKCS8_V1_PREFIX);
    }

    #[test]
    fn openssl_style_pkcs8_v1_private_keys_are_read() {
        // RFC 8410 section 10.3: an Ed25519 private key in PKCS#8 v1 (no public key inside).
        let pem = "-----BEGIN PRIVATE KEY-----\n\
                   MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
                   -----END PRIVATE KEY-----\n";
        let key = SigningKey::from_pem(pem).expect("v1 key");
        // RFC 8410 section 10.1: the matching public key.
        let public = PublicKey::from_pem(
            "-----BEGIN PUBLIC KEY-----\n\
             MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n\
             -----END PUBLIC KEY-----\n",
        )
        .expect("public key");
        assert_eq!(key.public_key(), public);
    }

    #[test]
    fn keys_of_other_kinds_are_refused() {
        assert_eq!(
            PublicKey::from_pem("not a key"),
            Err(KeyError::NotPem("PUBLIC KEY"))
        );
        // An X25519 SubjectPublicKeyInfo (OID 1.3.101.110) is not an Ed25519 key.
        let x25519 = "-----BEGIN PUBLIC KEY-----\n\
                      MCowBQYDK2VuAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n\
                      -----END PUBLIC KEY-----\n";
        assert_eq!(PublicKey::from_pem(x25519), Err(KeyError::NotEd25519Public));
        assert!(SigningKey::from_pem(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        )
        .is_err());
    }

    #[test]
    fn every_key_refusal_says_its_reason_in_the_same_words() {
        let public = SigningKey::generate().expect("key").public_key().to_pem();
        let private = SigningKey::generate().expect("key").to_pem();
        // A block of the other kind is not the block asked for.
        assert_eq!(
            SigningKey::from_pem(&public).map(|k| k.public_key()),
            Err(KeyError::NotPem("PRIVATE KEY"))
        );
        assert_eq!(
            PublicKey::from_pem(&private),
            Err(KeyError::NotPem("PUBLIC KEY"))
        );
        // A block whose body is not base64.
        let garbled = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2Vw*yEA\n-----END PUBLIC KEY-----\n";
        assert_eq!(PublicKey::from_pem(garbled), Err(KeyError::Base64));
        let garbled = "-----BEGIN PRIVATE KEY-----\nMC4C*QAw\n-----END PRIVATE KEY-----\n";
        assert_eq!(
            SigningKey::from_pem(garbled).map(|k| k.public_key()),
            Err(KeyError::Base64)
        );
        // An X25519 private key (RFC 8410 section 10.3's key with OID 1.3.101.110).
        let x25519 = "-----BEGIN PRIVATE KEY-----\n\
                      MC4CAQAwBQYDK2VuBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
                      -----END PRIVATE KEY-----\n";
        assert_eq!(
            SigningKey::from_pem(x25519).map(|k| k.public_key()),
            Err(KeyError::NotEd25519Private)
        );
        // An Ed25519 public key one byte short.
        let short = pem_encode(&[&SPKI_PREFIX[..], &[1u8; 31]].concat(), "PUBLIC KEY");
        assert_eq!(PublicKey::from_pem(&short), Err(KeyError::NotEd25519Public));
        assert_eq!(
            KeyError::NotPem("PUBLIC KEY").to_string(),
            "not a PEM PUBLIC KEY block"
        );
        assert_eq!(
            KeyError::Base64.to_string(),
            "the PEM block is not valid base64"
        );
        assert_eq!(
            KeyError::NotEd25519Public.to_string(),
            "not an Ed25519 public key"
        );
        assert_eq!(
            KeyError::NotEd25519Private.to_string(),
            "not an Ed25519 private key in PKCS#8 form"
        );
    }

    #[test]
    fn pem_blocks_are_found_among_other_text() {
        let key = SigningKey::generate().expect("key");
        let private = format!("a note\n{}trailing text\n", key.to_pem());
        let again = SigningKey::from_pem(&private).expect("private pem");
        assert_eq!(again.public_key(), key.public_key());
        let both = format!("{}{}", key.public_key().to_pem(), key.to_pem());
        assert_eq!(
            SigningKey::from_pem(&both)
                .expect("the private block")
                .public_key(),
            key.public_key()
        );
        assert_eq!(PublicKey::from_pem(&both), Ok(key.public_key()));
    }

    #[test]
    fn pkcs8_v2_private_keys_are_read_when_their_public_key_matches() {
        // RFC 5958 OneAsymmetricKey v2: the seed, then [1] the public key.
        let key = SigningKey::generate().expect("key");
        let seed = &key.pkcs8[16..];
        let v2 = |public: &[u8; 32]| {
            let mut der = vec![
                0x30, 0x51, 0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
                0x04, 0x20,
            ];
            der.extend_from_slice(seed);
            der.extend_from_slice(&[0x81, 0x21, 0x00]);
            der.extend_from_slice(public);
            pem_encode(&der, "PRIVATE KEY")
        };
        let read = SigningKey::from_pem(&v2(key.public_key().as_bytes())).expect("v2 key");
        assert_eq!(read.public_key(), key.public_key());
        assert_eq!(read.sign(b"m"), key.sign(b"m"));
        let other = SigningKey::generate().expect("key").public_key();
        assert!(SigningKey::from_pem(&v2(other.as_bytes())).is_err());
    }

    #[test]
    fn jsonwebtoken_has_exactly_one_crypto_backend() {
        // With both of its backends enabled (a feature another crate could turn on) it has no
        // default provider: keys could not be read and verifying would panic.
        assert!(CryptoProvider::try_get_default().is_some());
    }

    #[test]
    fn signing_key_debug_shows_no_private_material() {
        let key = SigningKey::generate().expect("key");
        let shown = format!("{key:?}");
        let b64 = base64::engine::general_purpose::STANDARD.encode(&key.pkcs8);
        assert!(!shown.contains(&b64[..20]), "{shown}");
        assert!(shown.contains("PublicKey("));
    }
}
