//! Personal access tokens of a person who logs in: `create_token` and `revoke_token`, through
//! the pipeline serialised per owner and audited (`tokens.create`, `tokens.revoke`). Only the
//! value's HMAC is stored; the value is minted by the door that holds the secret (`web::auth`)
//! once every rule here has passed, and answered once.

use ballast_runtime::format_rfc3339_ms;
use ballast_schema::{ApiToken, NewToken, StoreError};
use serde_json::{json, Value};

use crate::actor::{Actor, Scope};
use crate::context::Context;
use crate::error::OpError;
use crate::pipeline::{Done, NotDone, Resource};

/// The longest token name.
pub const MAX_TOKEN_NAME: usize = 100;

/// Whose tokens: the person behind a login session.
#[derive(Debug, Clone)]
pub struct Holder {
    /// The owner key tokens are filed under.
    pub owner: String,
    pub user_id: String,
    /// The person's own scope: a token never has more.
    pub scope: Scope,
}

/// What `create_token` is asked.
#[derive(Debug, Clone)]
pub struct TokenRequest {
    /// 1-100 printable characters.
    pub name: String,
    /// `read` or `write`.
    pub scope: String,
    /// RFC 3339, in the future; never expires when None.
    pub expires_at: Option<String>,
}

/// A token as the API shows it (never its value).
pub fn token_json(t: &ApiToken, now_ms: i64) -> Value {
    let status = if t.revoked_at_ms.is_some() {
        "revoked"
    } else if t.expires_at_ms.is_some_and(|at| now_ms >= at) {
        "expired"
    } else {
        "active"
    };
    json!({
        "id": t.id,
        "name": t.name,
        "scope": t.scope,
        "userId": t.user_id,
        "status": status,
        "createdAt": format_rfc3339_ms(t.created_at_ms),
        "expiresAt": t.expires_at_ms.map(format_rfc3339_ms),
        "lastUsedAt": t.last_used_at_ms.map(format_rfc3339_ms),
        "revokedAt": t.revoked_at_ms.map(format_rfc3339_ms),
    })
}

fn invalid(details: impl Into<String>) -> OpError {
    OpError::bad_input("invalid token", details)
}

fn disabled(details: &str) -> OpError {
    OpError::conflict("personal access tokens are disabled", details)
}

/// The operation `create_token`: checks the name, the scope (never above the holder's) and the
/// expiry, then `mint` makes the value and its HMAC (None: no secret configured, 409), and the
/// token is stored; audited `tokens.create`. Answers the token with its value, shown once.
pub async fn create_token(
    ctx: &Context,
    actor: &Actor,
    holder: &Holder,
    req: TokenRequest,
    mint: impl FnOnce() -> Result<(String, Option<String>), OpError>,
) -> Result<Value, OpError> {
    let now = ctx.clock.now_ms();
    let name = req.name.trim().to_string();
    if name.is_empty()
        || name.chars().count() > MAX_TOKEN_NAME
        || name.chars().any(char::is_control)
    {
        return Err(invalid(format!(
            "name: 1 to {MAX_TOKEN_NAME} printable characters"
        )));
    }
    let scope = Scope::parse(&req.scope)
        .ok_or_else(|| invalid(format!("scope: read or write, got {:?}", req.scope)))?;
    if scope > holder.scope {
        return Err(invalid(format!(
            "scope: {} has the {} scope and cannot make a {} token",
            holder.user_id,
            holder.scope.as_str(),
            scope.as_str()
        )));
    }
    let expires_at_ms = match req.expires_at.as_deref() {
        None => None,
        Some(text) => {
            let at = humantime::parse_rfc3339(text)
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64)
                .ok_or_else(|| {
                    invalid(format!(
                        "expiresAt: an RFC 3339 UTC time such as 2030-01-31T00:00:00Z, got {text:?}"
                    ))
                })?;
            if at <= now {
                return Err(invalid("expiresAt: must be in the future"));
            }
            Some(at)
        }
    };
    if !ctx.config.auth.pat_enabled {
        return Err(disabled(
            "set AUTH_PAT_ENABLED=true and AUTH_PAT_HASH_SECRET",
        ));
    }
    let (value, hmac) = mint()?;
    let Some(value_hmac) = hmac else {
        return Err(disabled("AUTH_PAT_HASH_SECRET is not set"));
    };
    let new = NewToken {
        owner: holder.owner.clone(),
        user_id: holder.user_id.clone(),
        name,
        scope: scope.as_str().to_string(),
        value_hmac,
        expires_at_ms,
    };
    let mut event = actor.event(
        now,
        "tokens.create",
        format!("tokens of {}", holder.user_id),
    );
    event.summary = json!({"name": new.name, "scope": new.scope, "expiresAt": new.expires_at_ms.map(format_rfc3339_ms)});
    let (token, recorded) = ctx
        .pipeline
        .run(
            [Resource::Setting(format!("tokens:{}", new.owner))],
            event,
            || async {
                let token = ctx
                    .db(move |s| s.create_token(&new, now))
                    .await
                    .map_err(NotDone::Refused)?;
                let after = json!({ "id": token.id, "name": token.name, "scope": token.scope });
                Ok(Done::new(token, None, Some(after)))
            },
        )
        .await?;
    let mut data = token_json(&token, now);
    data["token"] = json!(value);
    data["auditEventId"] = json!(recorded.event_id);
    Ok(data)
}

/// The operation `revoke_token`: `owner`'s token `token_id` stops working at once in every
/// process (404 for a token that is not theirs); audited `tokens.revoke`.
pub async fn revoke_token(
    ctx: &Context,
    actor: &Actor,
    owner: String,
    token_id: String,
) -> Result<Value, OpError> {
    let now = ctx.clock.now_ms();
    let event = actor.event(now, "tokens.revoke", format!("token/{token_id}"));
    let (token, _) = ctx
        .pipeline
        .run(
            [Resource::Setting(format!("tokens:{owner}"))],
            event,
            || async {
                let id = token_id.clone();
                let token = ctx
                    .db(move |s| match s.revoke_token(&id, &owner, now) {
                        Err(StoreError::NotFound(_)) => Ok(None),
                        other => other.map(Some),
                    })
                    .await
                    .map_err(NotDone::Refused)?
                    .ok_or_else(|| {
                        NotDone::Refused(OpError::not_found(
                            "no such token",
                            format!("you have no token {token_id}"),
                        ))
                    })?;
                Ok(Done::new(
                    token,
                    Some(json!({ "revoked": false })),
                    Some(json!({ "revoked": true })),
                ))
            },
        )
        .await?;
    Ok(token_json(&token, now))
}
