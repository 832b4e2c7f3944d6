//! The licence as operations see it: whether a licensed operation may run now. The process that
//! runs operations gives its [`Context`] one source of that verdict (the web process: its
//! licence runtime, which the REST licence layer asks too, so every door gets the same answer);
//! a worker or a test may give a fixed one ([`Fixed`]).

use crate::context::Context;
pub use crate::context::{Licence, Refusal, Verdict, VerdictFuture};

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
