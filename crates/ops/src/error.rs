//! What an operation answers when it did not do what was asked: a kind every door maps to its
//! own words (REST: the HTTP status and the error envelope; MCP and chat: the tool error), a
//! short `error` and the `details` that say why.

use crate::pipeline::Unavailable;

/// Why an operation did not run or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The input breaks a rule, or the cluster refused the request as asked.
    BadInput,
    NotFound,
    /// The state does not allow it now (a roll in progress, a changed target, active members).
    Conflict,
    /// The caller may not do this.
    Forbidden,
    /// The cluster answered with an error that is not the caller's.
    Cluster,
    /// The cluster or the database cannot be reached or is busy; nothing was changed.
    Unavailable,
    /// A failure of ballast itself.
    Internal,
}

impl Kind {
    /// The HTTP status the REST door answers with (and MCP reports).
    pub fn status(self) -> u16 {
        match self {
            Kind::BadInput => 400,
            Kind::Forbidden => 403,
            Kind::NotFound => 404,
            Kind::Conflict => 409,
            Kind::Internal => 500,
            Kind::Cluster => 502,
            Kind::Unavailable => 503,
        }
    }
}

/// An operation's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub kind: Kind,
    /// What failed, short (`invalid request body`, `unknown topic or partition`).
    pub error: String,
    /// Why.
    pub details: String,
    /// When the caller may simply repeat the request (busy database or resource).
    pub retry_after_s: Option<u64>,
}

impl OpError {
    pub fn new(kind: Kind, error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError {
            kind,
            error: error.into(),
            details: details.into(),
            retry_after_s: None,
        }
    }

    pub fn bad_input(error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError::new(Kind::BadInput, error, details)
    }

    pub fn not_found(error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError::new(Kind::NotFound, error, details)
    }

    pub fn conflict(error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError::new(Kind::Conflict, error, details)
    }

    pub fn unavailable(error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError::new(Kind::Unavailable, error, details)
    }

    pub fn internal(error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError::new(Kind::Internal, error, details)
    }

    pub fn cluster(error: impl Into<String>, details: impl Into<String>) -> OpError {
        OpError::new(Kind::Cluster, error, details)
    }
}

impl From<Unavailable> for OpError {
    fn from(u: Unavailable) -> OpError {
        OpError {
            retry_after_s: Some(u.retry_after_s.max(1)),
            ..OpError::unavailable(u.error, u.details)
        }
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.error, self.details)
    }
}

impl std::error::Error for OpError {}
