//! `auth_logins`, `sessions`, `api_tokens`: authentication state shared by every web process
//! (docs/auth.md). The store never sees a usable secret: callers hash the login state, the
//! session cookie and the token value before they get here.

use rusqlite::{params, OptionalExtension, Row};
use serde::Serialize;

use crate::util::{json_col, json_text, random_hex_token, require_non_empty};
use crate::{Store, StoreError};

/// A login under way at a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    /// SHA-256 (hex) of the `state` sent to the provider.
    pub state_hash: String,
    /// SHA-256 (hex) of the login cookie given to the browser that started it.
    pub browser_hash: String,
    pub provider: String,
    pub nonce: String,
    pub pkce_verifier: String,
    /// Where to send the browser after the login (a local path).
    pub next_path: String,
    pub expires_at_ms: i64,
}

/// A new login session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSession {
    /// SHA-256 (hex) of the cookie value.
    pub cookie_hash: String,
    pub provider: String,
    pub subject: String,
    pub user_id: String,
    pub name: Option<String>,
    pub email: Option<String>,
    pub groups: Vec<String>,
    pub roles: Vec<String>,
    /// `read` or `write`
    pub scope: String,
    pub refresh_token: Option<String>,
    pub access_expires_at_ms: Option<i64>,
    pub expires_at_ms: i64,
}

/// One row of `sessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// 32 hex digits: the public id of the session (never the cookie).
    pub id: String,
    pub provider: String,
    pub subject: String,
    pub user_id: String,
    pub name: Option<String>,
    pub email: Option<String>,
    pub groups: Vec<String>,
    pub roles: Vec<String>,
    pub scope: String,
    /// The provider's refresh token: a secret, never serialised.
    #[serde(skip)]
    pub refresh_token: Option<String>,
    pub access_expires_at_ms: Option<i64>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub last_seen_at_ms: i64,
}

/// A new personal access token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    /// `provider:subject` of the person who makes it.
    pub owner: String,
    pub user_id: String,
    pub name: String,
    /// `read` or `write`
    pub scope: String,
    /// HMAC-SHA-256 (hex) of the value.
    pub value_hmac: String,
    pub expires_at_ms: Option<i64>,
}

/// One row of `api_tokens` (without its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiToken {
    pub id: String,
    #[serde(skip)]
    pub owner: String,
    pub user_id: String,
    pub name: String,
    pub scope: String,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub last_used_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
}

/// How often a token's `last_used_at_ms` is written at most: a busy client does not turn every
/// read into a write.
pub const TOKEN_LAST_USED_RESOLUTION_MS: i64 = 60_000;

const SESSION_COLUMNS: &str = "id, provider, subject, user_id, name, email, groups, roles, scope, \
     refresh_token, access_expires_at_ms, created_at_ms, expires_at_ms, last_seen_at_ms";

fn session_from_row(row: &Row<'_>) -> rusqlite::Result<Session> {
    let strings = |idx: usize| -> rusqlite::Result<Vec<String>> {
        let v = json_col(row, idx)?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    };
    Ok(Session {
        id: row.get(0)?,
        provider: row.get(1)?,
        subject: row.get(2)?,
        user_id: row.get(3)?,
        name: row.get(4)?,
        email: row.get(5)?,
        groups: strings(6)?,
        roles: strings(7)?,
        scope: row.get(8)?,
        refresh_token: row.get(9)?,
        access_expires_at_ms: row.get(10)?,
        created_at_ms: row.get(11)?,
        expires_at_ms: row.get(12)?,
        last_seen_at_ms: row.get(13)?,
    })
}

const TOKEN_COLUMNS: &str = "id, owner, user_id, name, scope, created_at_ms, expires_at_ms, \
     last_used_at_ms, revoked_at_ms";

fn token_from_row(row: &Row<'_>) -> rusqlite::Result<ApiToken> {
    Ok(ApiToken {
        id: row.get(0)?,
        owner: row.get(1)?,
        user_id: row.get(2)?,
        name: row.get(3)?,
        scope: row.get(4)?,
        created_at_ms: row.get(5)?,
        expires_at_ms: row.get(6)?,
        last_used_at_ms: row.get(7)?,
        revoked_at_ms: row.get(8)?,
    })
}

fn strings_json(v: &[String]) -> String {
    json_text(&serde_json::Value::from(v.to_vec()))
}

impl Store {
    /// Records a login started at a provider; forgets logins that expired before `now_ms`.
    pub fn create_login(&self, login: &Login, now_ms: i64) -> Result<(), StoreError> {
        require_non_empty("login provider", &login.provider)?;
        self.write(|tx| {
            tx.prepare_cached("DELETE FROM auth_logins WHERE expires_at_ms <= ?1")?
                .execute([now_ms])?;
            tx.prepare_cached(
                "INSERT INTO auth_logins (state_hash, browser_hash, provider, nonce, pkce_verifier,
                    next_path, created_at_ms, expires_at_ms)
                 VALUES (?1, ?8, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                login.state_hash,
                login.provider,
                login.nonce,
                login.pkce_verifier,
                login.next_path,
                now_ms,
                login.expires_at_ms,
                login.browser_hash,
            ])?;
            Ok(())
        })
    }

    /// Takes the login with this state: it is deleted, so a state is used once. Fails with
    /// [`StoreError::NotFound`] for an unknown (or already used) state and
    /// [`StoreError::Conflict`] for one that expired at `now_ms`.
    pub fn take_login(&self, state_hash: &str, now_ms: i64) -> Result<Login, StoreError> {
        self.write(|tx| {
            let login = tx
                .prepare_cached(
                    "SELECT state_hash, provider, nonce, pkce_verifier, next_path, expires_at_ms,
                        browser_hash
                     FROM auth_logins WHERE state_hash = ?1",
                )?
                .query_row([state_hash], |row| {
                    Ok(Login {
                        state_hash: row.get(0)?,
                        browser_hash: row.get(6)?,
                        provider: row.get(1)?,
                        nonce: row.get(2)?,
                        pkce_verifier: row.get(3)?,
                        next_path: row.get(4)?,
                        expires_at_ms: row.get(5)?,
                    })
                })
                .optional()?;
            let Some(login) = login else {
                return Err(StoreError::NotFound(
                    "login state (unknown, or already used)".into(),
                ));
            };
            tx.prepare_cached("DELETE FROM auth_logins WHERE state_hash = ?1")?
                .execute([state_hash])?;
            if now_ms >= login.expires_at_ms {
                return Ok(Err(StoreError::Conflict("the login took too long".into())));
            }
            Ok(Ok(login))
        })?
    }

    /// Starts a session at `now_ms`.
    pub fn create_session(&self, s: &NewSession, now_ms: i64) -> Result<Session, StoreError> {
        require_non_empty("session user", &s.user_id)?;
        let id = random_hex_token()?;
        self.write(|tx| {
            tx.prepare_cached("DELETE FROM sessions WHERE expires_at_ms <= ?1")?
                .execute([now_ms])?;
            tx.prepare_cached(
                "INSERT INTO sessions (id, cookie_hash, provider, subject, user_id, name, email,
                    groups, roles, scope, refresh_token, access_expires_at_ms, created_at_ms,
                    expires_at_ms, last_seen_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?13)",
            )?
            .execute(params![
                id,
                s.cookie_hash,
                s.provider,
                s.subject,
                s.user_id,
                s.name,
                s.email,
                strings_json(&s.groups),
                strings_json(&s.roles),
                s.scope,
                s.refresh_token,
                s.access_expires_at_ms,
                now_ms,
                s.expires_at_ms,
            ])?;
            Ok(())
        })?;
        self.session(&id)?
            .ok_or_else(|| StoreError::NotFound(format!("session {id}")))
    }

    /// A session by its id, expired or not.
    pub fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], session_from_row).optional()?)
    }

    /// The live session whose cookie hashes to `cookie_hash`: none when unknown or expired at
    /// `now_ms`.
    pub fn session_by_cookie(
        &self,
        cookie_hash: &str,
        now_ms: i64,
    ) -> Result<Option<Session>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions WHERE cookie_hash = ?1 AND expires_at_ms > ?2"
        ))?;
        Ok(stmt
            .query_row(params![cookie_hash, now_ms], session_from_row)
            .optional()?)
    }

    /// After a refresh at the provider: the new refresh token (when the provider rotated it),
    /// access-token expiry and session expiry.
    pub fn renew_session(
        &self,
        id: &str,
        refresh_token: Option<&str>,
        access_expires_at_ms: Option<i64>,
        expires_at_ms: i64,
        now_ms: i64,
    ) -> Result<Session, StoreError> {
        let changed = self.write(|tx| {
            Ok(tx
                .prepare_cached(
                    "UPDATE sessions SET refresh_token = COALESCE(?2, refresh_token),
                        access_expires_at_ms = ?3, expires_at_ms = ?4, last_seen_at_ms = ?5
                     WHERE id = ?1 AND expires_at_ms > ?5",
                )?
                .execute(params![
                    id,
                    refresh_token,
                    access_expires_at_ms,
                    expires_at_ms,
                    now_ms
                ])?)
        })?;
        if changed == 0 {
            return Err(StoreError::NotFound(format!("session {id}")));
        }
        self.session(id)?
            .ok_or_else(|| StoreError::NotFound(format!("session {id}")))
    }

    /// Ends a session; true when it existed.
    pub fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx
                .prepare_cached("DELETE FROM sessions WHERE id = ?1")?
                .execute([id])?
                > 0)
        })
    }

    /// Stores a new personal access token.
    pub fn create_token(&self, t: &NewToken, now_ms: i64) -> Result<ApiToken, StoreError> {
        require_non_empty("token name", &t.name)?;
        require_non_empty("token owner", &t.owner)?;
        let id = random_hex_token()?;
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO api_tokens (id, owner, user_id, name, scope, value_hmac,
                    created_at_ms, expires_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                id,
                t.owner,
                t.user_id,
                t.name,
                t.scope,
                t.value_hmac,
                now_ms,
                t.expires_at_ms
            ])?;
            Ok(())
        })?;
        self.token(&id)?
            .ok_or_else(|| StoreError::NotFound(format!("token {id}")))
    }

    /// A token by id, in whatever state.
    pub fn token(&self, id: &str) -> Result<Option<ApiToken>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE id = ?1"
        ))?;
        Ok(stmt.query_row([id], token_from_row).optional()?)
    }

    /// The tokens `owner` made, newest first, revoked ones included.
    pub fn tokens_of(&self, owner: &str) -> Result<Vec<ApiToken>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE owner = ?1
             ORDER BY created_at_ms DESC, id"
        ))?;
        let rows = stmt.query_map([owner], token_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Every token, newest first (the operator's `ballast token list`).
    pub fn all_tokens(&self) -> Result<Vec<ApiToken>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at_ms DESC, id"
        ))?;
        let rows = stmt.query_map([], token_from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The token whose value has this HMAC, in whatever state (the caller checks revocation
    /// and expiry against its clock).
    pub fn token_by_hmac(&self, value_hmac: &str) -> Result<Option<ApiToken>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE value_hmac = ?1"
        ))?;
        Ok(stmt.query_row([value_hmac], token_from_row).optional()?)
    }

    /// Records a use of the token at `now_ms`, at most once per
    /// [`TOKEN_LAST_USED_RESOLUTION_MS`].
    pub fn mark_token_used(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "UPDATE api_tokens SET last_used_at_ms = ?2
                 WHERE id = ?1 AND (last_used_at_ms IS NULL OR last_used_at_ms <= ?2 - ?3)",
            )?
            .execute(params![id, now_ms, TOKEN_LAST_USED_RESOLUTION_MS])?;
            Ok(())
        })
    }

    /// Revokes `owner`'s token `id` at `now_ms` (a revoked token stays listed). Fails with
    /// [`StoreError::NotFound`] when `owner` has no such token; revoking twice keeps the first
    /// time.
    pub fn revoke_token(&self, id: &str, owner: &str, now_ms: i64) -> Result<ApiToken, StoreError> {
        let changed = self.write(|tx| {
            Ok(tx
                .prepare_cached(
                    "UPDATE api_tokens SET revoked_at_ms = COALESCE(revoked_at_ms, ?3)
                     WHERE id = ?1 AND owner = ?2",
                )?
                .execute(params![id, owner, now_ms])?)
        })?;
        if changed == 0 {
            return Err(StoreError::NotFound(format!("token {id}")));
        }
        self.token(id)?
            .ok_or_else(|| StoreError::NotFound(format!("token {id}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("b.db");
        Store::migrate(&path).expect("migrate");
        let store = Store::open(&path).expect("open");
        (dir, store)
    }

    fn login(state: char, expires_at_ms: i64) -> Login {
        Login {
            state_hash: state.to_string().repeat(64),
            browser_hash: "b".repeat(64),
            provider: "corp".into(),
            nonce: "n".into(),
            pkce_verifier: "v".into(),
            next_path: "/ui".into(),
            expires_at_ms,
        }
    }

    #[test]
    fn a_login_state_is_taken_once_and_refused_after_it_expires() {
        let (_d, s) = store();
        s.create_login(&login('a', 1_000), 0).expect("create");
        s.create_login(&login('b', 1_000), 0).expect("create");
        assert_eq!(
            s.take_login(&"a".repeat(64), 10).expect("take").provider,
            "corp"
        );
        assert!(matches!(
            s.take_login(&"a".repeat(64), 10),
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            s.take_login(&"b".repeat(64), 1_000),
            Err(StoreError::Conflict(_))
        ));
        assert!(matches!(
            s.take_login(&"b".repeat(64), 10),
            Err(StoreError::NotFound(_))
        ));
    }

    fn new_session(cookie: char, expires_at_ms: i64) -> NewSession {
        NewSession {
            cookie_hash: cookie.to_string().repeat(64),
            provider: "corp".into(),
            subject: "sub-1".into(),
            user_id: "alice".into(),
            name: Some("Alice".into()),
            email: Some("alice@example.com".into()),
            groups: vec!["admins".into()],
            roles: vec![],
            scope: "write".into(),
            refresh_token: Some("rt".into()),
            access_expires_at_ms: Some(500),
            expires_at_ms,
        }
    }

    #[test]
    fn a_session_is_found_by_its_cookie_hash_until_it_expires_or_ends() {
        let (_d, s) = store();
        let created = s
            .create_session(&new_session('c', 1_000), 0)
            .expect("create");
        let found = s
            .session_by_cookie(&"c".repeat(64), 999)
            .expect("read")
            .expect("live");
        assert_eq!(found, created);
        assert_eq!(found.groups, ["admins"]);
        assert!(s
            .session_by_cookie(&"c".repeat(64), 1_000)
            .expect("read")
            .is_none());
        let renewed = s
            .renew_session(&created.id, None, Some(900), 5_000, 999)
            .expect("renew");
        assert_eq!(renewed.refresh_token.as_deref(), Some("rt"));
        assert!(s
            .session_by_cookie(&"c".repeat(64), 4_000)
            .expect("read")
            .is_some());
        assert!(s.delete_session(&created.id).expect("delete"));
        assert!(s
            .session_by_cookie(&"c".repeat(64), 10)
            .expect("read")
            .is_none());
        assert!(!serde_json::to_string(&renewed)
            .expect("json")
            .contains("rt\""));
    }

    #[test]
    fn tokens_are_listed_per_owner_and_revoked_only_by_their_owner() {
        let (_d, s) = store();
        let t = s
            .create_token(
                &NewToken {
                    owner: "corp:sub-1".into(),
                    user_id: "alice".into(),
                    name: "ci".into(),
                    scope: "read".into(),
                    value_hmac: "f".repeat(64),
                    expires_at_ms: None,
                },
                10,
            )
            .expect("create");
        assert_eq!(s.tokens_of("corp:sub-1").expect("list").len(), 1);
        assert!(s.tokens_of("corp:sub-2").expect("list").is_empty());
        assert_eq!(
            s.token_by_hmac(&"f".repeat(64)).expect("read"),
            Some(t.clone())
        );
        assert!(matches!(
            s.revoke_token(&t.id, "corp:sub-2", 20),
            Err(StoreError::NotFound(_))
        ));
        assert_eq!(
            s.revoke_token(&t.id, "corp:sub-1", 20)
                .expect("revoke")
                .revoked_at_ms,
            Some(20)
        );
        assert_eq!(
            s.revoke_token(&t.id, "corp:sub-1", 30)
                .expect("again")
                .revoked_at_ms,
            Some(20)
        );
        s.mark_token_used(&t.id, 100).expect("use");
        s.mark_token_used(&t.id, 200).expect("use");
        assert_eq!(
            s.token(&t.id)
                .expect("read")
                .and_then(|t| t.last_used_at_ms),
            Some(100)
        );
        s.mark_token_used(&t.id, 100 + TOKEN_LAST_USED_RESOLUTION_MS)
            .expect("use");
        assert_eq!(
            s.token(&t.id)
                .expect("read")
                .and_then(|t| t.last_used_at_ms),
            Some(100 + TOKEN_LAST_USED_RESOLUTION_MS)
        );
    }
}
