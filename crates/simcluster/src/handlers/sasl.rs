//! SaslHandshake (v0: raw tokens follow; v1: SaslAuthenticate follows) and SaslAuthenticate.

use std::io::Cursor;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use rsasl::mechname::Mechname;
use rsasl::prelude::{SASLServer, Session, State};

use super::{sb, Conn, Ctx, Reply};
use crate::security::{Principal, ScramSession, ScramStep, MECHANISMS};
use crate::state::err;
use crate::Shared;

pub struct SaslState {
    mechanism: String,
    session: Mechanism,
}

enum Mechanism {
    /// PLAIN and OAUTHBEARER through rsasl.
    Rsasl(Box<Session<Principal>>),
    /// SCRAM with Kafka's nonce rule.
    Scram(ScramSession),
}

enum Outcome {
    Continue(Vec<u8>),
    Done(Vec<u8>, String),
}

fn step(state: &mut SaslState, input: &[u8]) -> Result<Outcome, String> {
    let mut out = Cursor::new(Vec::new());
    let session = match &mut state.session {
        Mechanism::Scram(scram) => {
            return match scram.step(input) {
                Ok(ScramStep::Challenge(c)) => Ok(Outcome::Continue(c)),
                Ok(ScramStep::Done(last, principal)) => Ok(Outcome::Done(last, principal)),
                Err(message) => Err(message),
            }
        }
        Mechanism::Rsasl(session) => session,
    };
    let failed = || {
        format!(
            "Authentication failed during authentication due to invalid credentials with SASL mechanism {}",
            state.mechanism
        )
    };
    match session.step(Some(input), &mut out) {
        Ok(State::Running) => Ok(Outcome::Continue(out.into_inner())),
        Ok(State::Finished(_)) => match session.validation() {
            Some(Ok(principal)) => Ok(Outcome::Done(out.into_inner(), principal)),
            Some(Err(message)) => Err(message),
            None => Err(failed()),
        },
        Err(e) => {
            tracing::debug!(mechanism = %state.mechanism, error = %e, "sasl step failed");
            Err(failed())
        }
    }
}

fn start(shared: &Shared, mechanism: &str) -> Option<SaslState> {
    let server = shared.sasl.as_ref()?;
    let session = match ScramSession::new(server, mechanism) {
        Some(scram) => Mechanism::Scram(scram),
        None => {
            let mech = Mechname::parse(mechanism.as_bytes()).ok()?;
            let session = SASLServer::<Principal>::new(server.config.clone())
                .start_suggested(mech)
                .ok()?;
            Mechanism::Rsasl(Box::new(session))
        }
    };
    Some(SaslState {
        mechanism: mechanism.to_string(),
        session,
    })
}

pub fn handshake(ctx: &Ctx, conn: &mut Conn, req: SaslHandshakeRequest) -> SaslHandshakeResponse {
    let mut resp = SaslHandshakeResponse::default();
    if !conn.sasl_required {
        resp.error_code = err::ILLEGAL_SASL_STATE;
        return resp;
    }
    resp.mechanisms = MECHANISMS.iter().map(|m| sb(*m)).collect();
    if conn.authenticated || conn.sasl.is_some() {
        resp.error_code = err::ILLEGAL_SASL_STATE;
        conn.close_after_reply = true;
        return resp;
    }
    let mechanism = req.mechanism.to_string();
    if !MECHANISMS.contains(&mechanism.as_str()) {
        resp.error_code = err::UNSUPPORTED_SASL_MECHANISM;
        conn.close_after_reply = true;
        return resp;
    }
    match start(ctx.shared, &mechanism) {
        Some(state) => {
            conn.sasl = Some(state);
            conn.raw_sasl = ctx.version == 0;
        }
        None => {
            resp.error_code = err::UNSUPPORTED_SASL_MECHANISM;
            conn.close_after_reply = true;
        }
    }
    resp
}

pub fn authenticate(
    ctx: &Ctx,
    conn: &mut Conn,
    req: SaslAuthenticateRequest,
) -> SaslAuthenticateResponse {
    let mut resp = SaslAuthenticateResponse::default();
    let Some(state) = conn.sasl.as_mut() else {
        resp.error_code = err::ILLEGAL_SASL_STATE;
        resp.error_message = Some(sb("SaslAuthenticate before a SaslHandshake"));
        conn.close_after_reply = true;
        return resp;
    };
    match step(state, &req.auth_bytes) {
        Ok(Outcome::Continue(out)) => resp.auth_bytes = Bytes::from(out),
        Ok(Outcome::Done(out, principal)) => {
            tracing::debug!(broker = ctx.broker, principal = %principal, "sasl authenticated");
            resp.auth_bytes = Bytes::from(out);
            conn.authenticated = true;
            conn.principal = Some(principal);
            conn.sasl = None;
        }
        Err(message) => {
            tracing::info!(broker = ctx.broker, peer = %conn.peer, "sasl authentication failed");
            resp.error_code = err::SASL_AUTHENTICATION_FAILED;
            resp.error_message = Some(sb(message));
            conn.sasl = None;
            conn.close_after_reply = true;
        }
    }
    resp
}

/// A raw SASL token after SaslHandshake v0; failure closes the connection.
pub fn raw_token(_shared: &Shared, conn: &mut Conn, frame: Bytes) -> Reply {
    let Some(state) = conn.sasl.as_mut() else {
        return Reply::Close;
    };
    match step(state, &frame) {
        Ok(Outcome::Continue(out)) => Reply::Frame(BytesMut::from(&out[..])),
        Ok(Outcome::Done(out, principal)) => {
            conn.authenticated = true;
            conn.principal = Some(principal);
            conn.sasl = None;
            conn.raw_sasl = false;
            Reply::Frame(BytesMut::from(&out[..]))
        }
        Err(_) => Reply::Close,
    }
}
