//! `ballast token create|list|revoke`: personal access tokens made by an operator on the box,
//! for automation and agents that never log in through a browser (docs/auth.md). They work like
//! tokens made from the dashboard: the value is printed once, only its HMAC
//! (`AUTH_PAT_HASH_SECRET`) is stored, and each change is audited (method `CLI`). Needs the same
//! configuration as the service (`--config`) and write access to its database.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use ballast_config::{Config, RawConfig};
use ballast_runtime::{error_chain, format_rfc3339_ms, Clock, SystemClock};
use ballast_schema::{NewAuditEvent, NewToken, Store, StoreError};
use clap::Subcommand;
use serde_json::json;

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token for a user and print its value once
    Create {
        /// The user audit events will name (e.g. a service account: mcp-agent)
        #[arg(long)]
        user: String,
        /// What the token is for
        #[arg(long)]
        name: String,
        /// read or write
        #[arg(long, default_value = "read")]
        scope: String,
        /// Lifetime (30d, 12h); never expires when left out
        #[arg(long, value_parser = parse_lifetime)]
        expires_in: Option<Duration>,
        /// The service's env file (its BALLAST_DATA_DIR names the database)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// List every token (never a value)
    List {
        /// The service's env file (its BALLAST_DATA_DIR names the database)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Revoke a token by id: it stops working at once
    Revoke {
        /// The token's id (`ballast token list` shows it)
        id: String,
        /// The service's env file (its BALLAST_DATA_DIR names the database)
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

fn parse_lifetime(s: &str) -> Result<Duration, String> {
    match ballast_config::parse_duration(s)? {
        d if d.is_zero() => Err("must be above 0".into()),
        d => Ok(d),
    }
}

/// The owner of tokens made here: they belong to no login.
const CLI_OWNER: &str = "cli:";

fn open(file: Option<&Path>) -> Result<(Config, Store), String> {
    let raw =
        RawConfig::from_process_env(file).map_err(|e| format!("invalid configuration: {e}"))?;
    let config = Config::from_raw(&raw).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("invalid configuration: {e}"))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let db = config.data_dir.join("ballast.db");
    if !db.exists() {
        return Err(format!(
            "no database at {}: has `ballast run` ever started with this BALLAST_DATA_DIR?",
            db.display()
        ));
    }
    let store = Store::open(&db)
        .map_err(|e| format!("cannot open {}: {}", db.display(), error_chain(&e)))?;
    Ok((config, store))
}

/// A token to make: `owner` is the prefix of its owner (`cli:`, `demo:`) before the user.
pub struct Mint<'a> {
    pub owner: &'a str,
    pub user: &'a str,
    pub name: &'a str,
    pub scope: &'a str,
    pub expires_in: Option<Duration>,
    pub now: i64,
}

/// Makes a personal access token (only its HMAC is stored) and audits it: the token and its
/// value, which is shown once.
pub fn mint(
    config: &Config,
    store: &Store,
    m: &Mint<'_>,
) -> Result<(ballast_schema::ApiToken, String), String> {
    let user = m.user.trim().to_string();
    if user.is_empty() || user.chars().any(char::is_control) {
        return Err("--user must be a plain name".into());
    }
    if m.name.trim().is_empty() {
        return Err("--name must not be empty".into());
    }
    let scope = ballast_web::auth::Scope::parse(m.scope)
        .ok_or_else(|| format!("--scope must be read or write, got {:?}", m.scope))?;
    let runtime = ballast_web::auth::AuthRuntime::new(&config.auth);
    let value = ballast_web::auth::new_token_value().map_err(|e| e.details)?;
    let value_hmac = runtime
        .token_hmac(&value)
        .ok_or("AUTH_PAT_HASH_SECRET is not set")?;
    let expires_at_ms = m.expires_in.map(|d| m.now + d.as_millis() as i64);
    let token = store
        .create_token(
            &NewToken {
                owner: format!("{}{user}", m.owner),
                user_id: user.clone(),
                name: m.name.trim().to_string(),
                scope: scope.as_str().to_string(),
                value_hmac,
                expires_at_ms,
            },
            m.now,
        )
        .map_err(|e| error_chain(&e))?;
    audit(
        store,
        "tokens.create",
        &user,
        format!("token/{}", token.id),
        json!({"name": token.name, "scope": token.scope, "expiresAt": expires_at_ms.map(format_rfc3339_ms)}),
        m.now,
    );
    Ok((token, value))
}

fn operator() -> String {
    let uid = nix::unistd::getuid();
    let name = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("uid {uid}"));
    format!("cli:{name}")
}

fn audit(
    store: &Store,
    action: &str,
    user: &str,
    target: String,
    summary: serde_json::Value,
    now: i64,
) {
    let event = NewAuditEvent {
        at_ms: now,
        action: action.to_string(),
        method: "CLI".to_string(),
        user_id: Some(user.to_string()),
        requested_by: Some(operator()),
        status: 200,
        target: Some(target),
        summary,
        ..NewAuditEvent::default()
    };
    if let Err(e) = store.insert_audit(&event) {
        eprintln!(
            "ballast: warning: the audit event was lost: {}",
            error_chain(&e)
        );
    }
}

pub fn run(command: TokenCommand) -> ExitCode {
    match execute(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ballast: {message}");
            ExitCode::from(2)
        }
    }
}

fn execute(command: TokenCommand) -> Result<(), String> {
    let now = SystemClock.now_ms();
    match command {
        TokenCommand::Create {
            user,
            name,
            scope,
            expires_in,
            config,
        } => {
            let (config, store) = open(config.as_deref())?;
            if !config.auth.pat_enabled {
                return Err("personal access tokens are disabled: set AUTH_PAT_ENABLED=true and AUTH_PAT_HASH_SECRET".into());
            }
            let (token, value) = mint(
                &config,
                &store,
                &Mint {
                    owner: CLI_OWNER,
                    user: &user,
                    name: &name,
                    scope: &scope,
                    expires_in,
                    now,
                },
            )?;
            let user = token.user_id.clone();
            let expires_at_ms = token.expires_at_ms;
            eprintln!(
                "token {} for {user} ({}){}: shown once, keep it safe",
                token.id,
                token.scope,
                expires_at_ms
                    .map(|at| format!(", expires {}", format_rfc3339_ms(at)))
                    .unwrap_or_default()
            );
            println!("{value}");
            Ok(())
        }
        TokenCommand::List { config } => {
            let (_, store) = open(config.as_deref())?;
            let tokens = store.all_tokens().map_err(|e| error_chain(&e))?;
            println!(
                "{:32}  {:20}  {:24}  {:5}  {:8}  expires",
                "id", "user", "name", "scope", "status"
            );
            for t in tokens {
                let status = if t.revoked_at_ms.is_some() {
                    "revoked"
                } else if t.expires_at_ms.is_some_and(|at| now >= at) {
                    "expired"
                } else {
                    "active"
                };
                println!(
                    "{:32}  {:20}  {:24}  {:5}  {:8}  {}",
                    t.id,
                    t.user_id,
                    t.name,
                    t.scope,
                    status,
                    t.expires_at_ms
                        .map(format_rfc3339_ms)
                        .unwrap_or_else(|| "never".into())
                );
            }
            Ok(())
        }
        TokenCommand::Revoke { id, config } => {
            let (_, store) = open(config.as_deref())?;
            let token = store
                .token(&id)
                .map_err(|e| error_chain(&e))?
                .ok_or_else(|| format!("no token {id}"))?;
            let revoked = match store.revoke_token(&id, &token.owner, now) {
                Ok(t) => t,
                Err(StoreError::NotFound(_)) => return Err(format!("no token {id}")),
                Err(e) => return Err(error_chain(&e)),
            };
            audit(
                &store,
                "tokens.revoke",
                &revoked.user_id,
                format!("token/{id}"),
                json!({"name": revoked.name}),
                now,
            );
            eprintln!("token {id} ({}) revoked", revoked.name);
            Ok(())
        }
    }
}
