//! Who makes a change, as the audit log records it.

use ballast_schema::NewAuditEvent;
use serde::Serialize;
use serde_json::Value;

/// The acting side of a change: the door's method (`PUT`, `POST`, `DELETE` over HTTP; `MCP`,
/// `CHAT` for agents; `HEALER`), the acting user, and who asked when another identity runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub method: String,
    pub user: String,
    /// Who asked for the change when another identity runs it (MCP: the requester; the
    /// approver is `user`); `None`: the user asked.
    pub requested_by: Option<String>,
}

impl Actor {
    /// Who asked for the change: the requester when another identity runs it, else the user.
    pub fn requester(&self) -> String {
        self.requested_by
            .clone()
            .unwrap_or_else(|| self.user.clone())
    }

    /// An event of `action` on `target` by this actor, status 200, at `now_ms`.
    pub fn event(&self, now_ms: i64, action: &str, target: impl Into<String>) -> NewAuditEvent {
        NewAuditEvent {
            at_ms: now_ms,
            action: action.to_string(),
            method: self.method.clone(),
            user_id: Some(self.user.clone()),
            requested_by: Some(self.requester()),
            status: 200,
            target: Some(target.into()),
            summary: Value::Object(Default::default()),
            ..NewAuditEvent::default()
        }
    }
}

/// What an identity may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Read,
    Write,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            _ => None,
        }
    }
}
