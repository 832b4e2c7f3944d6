//! The licence as operations see it: whether a licensed operation may run now. The process that
//! runs operations gives its [`Context`] one source of that verdict (the web process: its
//! licence runtime, which the REST licence layer asks too, so every door gets the same answer);
//! a worker or a test may give a fixed one ([`Fixed`]).

use std::future::Future;
use std::pin::Pin;

use crate::context::Context;
use crate::error::OpError;

/// Why management is refused now (monitoring mode): the code every door gives
/// (`LICENSE_INVALID`, `LICENSE_EXPIRED`) and the licence's own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

/// Management allowed (`Ok`), or refused and why.
pub type Verdict = Result<(), Refusal>;

/// A future of a verdict; `Err` when the licence could not be read (a busy database).
pub type VerdictFuture<'a> = Pin<Box<dyn Future<Output = Result<Verdict, OpError>> + Send + 'a>>;

/// The source of the licence verdict an operation context carries.
pub trait Licence: Send + Sync {
    /// Whether a licensed operation may run now.
    fn verdict<'a>(&'a self, ctx: &'a Context) -> VerdictFuture<'a>;
}

/// A verdict that never changes: for workers and tests.
#[derive(Debug, Clone)]
pub struct Fixed(pub Verdict);

impl Fixed {
    /// Management allowed.
    pub fn licensed() -> Fixed {
        Fixed(Ok(()))
    }

    /// Monitoring mode: no licence.
    pub fn unlicensed() -> Fixed {
        Fixed(Err(Refusal {
            code: "LICENSE_INVALID",
            message: "no license: monitoring mode".into(),
        }))
    }
}

impl Licence for Fixed {
    fn verdict<'a>(&'a self, _ctx: &'a Context) -> VerdictFuture<'a> {
        let verdict = self.0.clone();
        Box::pin(async move { Ok(verdict) })
    }
}
