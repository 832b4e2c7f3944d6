//! `ballast-license`: offline licenses. A license is a JWT signed with Ed25519 (`alg` EdDSA) and
//! checked against the public keys compiled into this build; the state of a process
//! (`licensed`, `trial`, `expired`, `invalid`) follows from its sources and `now`.
//!
//! - [`token`]: issuing and verifying tokens, the claims, the 300 s leeway;
//! - [`keys`]: Ed25519 keys and PEM files, and the accepted key set ([`Verifier::release`] is the
//!   vendor key only; [`Verifier::for_this_build`] adds the development key in debug builds);
//! - [`status`]: the states, every source's verdict and the precedence between sources;
//! - [`trial`]: the demo trial, granted only on `ballast demo`'s simulated cluster;
//! - [`sources`]: reading `LICENSE_STRING`, `BALLAST_LICENSE_FILE` and the fetched token, and
//!   [`current`] for workers;
//! - [`fetch`]: the rules of auto-fetch (the HTTP call is the web process's).
//!
//! No function here reads the clock: `now` is a parameter. See `docs/license.md`.

pub mod fetch;
pub mod keys;
pub mod sources;
pub mod status;
pub mod token;
pub mod trial;

pub use keys::{KeyName, PublicKey, SigningKey, TrustedKey, Verifier};
pub use sources::{current, load_inputs, record_trial_start, Inputs, TOKEN_SETTING};
pub use status::{Loaded, Reason, Source, SourceStatus, State, Status};
pub use token::{issue, verify, Claims, Rejection, Validity, Verified, LEEWAY_SECS};
pub use trial::{Trial, DEMO_TRIAL_ENV};
