//! Logins to a real `ballast run` through the real OpenID provider on loopback (`crate::oidc`),
//! without a browser: the four people's claims through both clients become the identity the
//! docs promise (docs/auth.md, Claims), `ALLOWED_GROUPS` reads whichever claim carries a
//! person's groups, a session refreshes through the provider's refresh token, and a provider
//! that rotated its signing key still lets people in. (The Chromium login is
//! `browser/login.rs`.)
//!
//! Skips (passing, with a message) when node or oidc-provider is missing; `scripts/test`
//! installs them.

use serde_json::Value;

use crate::oidc::{Agent, OidcProvider, Reply};
use crate::support::{free_port, Service};

/// ballast with the providers `corp` (client `ballast-corp`) and `partner` (`ballast-partner`)
/// at one OpenID provider.
struct Setup {
    idp: OidcProvider,
    _service: Service,
    public: String,
}

impl Setup {
    fn start(extra: &[(&str, &str)]) -> Option<Setup> {
        let port = free_port();
        let (idp, env) = OidcProvider::for_ballast(port, extra)?;
        let public = format!("http://127.0.0.1:{port}");
        let service = Service::start_on(port, &env);
        Some(Setup {
            idp,
            _service: service,
            public,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.public)
    }

    /// Starts a login at ballast for `provider`, signs in at the provider as `login` and
    /// returns ballast's answer to the callback.
    fn log_in(&self, agent: &mut Agent, provider: &str, login: &str) -> Reply {
        let start = self.url(&format!("/api/v1/auth/login/{provider}?next=%2Fui"));
        let back = self.idp.authorize(agent, &start, login);
        assert!(
            back.starts_with(&self.url(&format!("/api/v1/auth/callback/{provider}?"))),
            "{login}: the provider sent the person to {back}"
        );
        agent.get(&back)
    }

    /// `/api/v1/auth/me` with the agent's cookies: status and body.
    fn me(&self, agent: &mut Agent) -> (u16, Value) {
        let reply = agent.get(&self.url("/api/v1/auth/me"));
        let body = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        (reply.status, body)
    }
}

/// The callback let the person in: a redirect to where the login started and the session
/// cookie, HttpOnly and SameSite=Lax, not Secure over http.
fn assert_let_in(reply: &Reply, setup: &Setup, who: &str) {
    assert_eq!(reply.status, 303, "{who}: {}", reply.body);
    assert_eq!(reply.location.as_deref(), Some(setup.url("/ui").as_str()));
    let cookie = reply
        .set_cookies
        .iter()
        .find(|c| c.starts_with("ballast_session="))
        .unwrap_or_else(|| panic!("{who}: no session cookie in {:?}", reply.set_cookies));
    let attributes: Vec<String> = cookie
        .split(';')
        .skip(1)
        .map(|a| a.trim().to_ascii_lowercase())
        .collect();
    for wanted in ["httponly", "samesite=lax", "path=/"] {
        assert!(attributes.iter().any(|a| a == wanted), "{who}: {cookie}");
    }
    assert!(!attributes.iter().any(|a| a == "secure"), "{who}: {cookie}");
}

/// A person of the test provider and the identity ballast should make of their claims.
struct Person {
    login: &'static str,
    provider: &'static str,
    user_id: &'static str,
    email: &'static str,
    name: &'static str,
    groups: &'static [&'static str],
    /// One of the roles, when they have role-shaped claims.
    role: Option<&'static str>,
}

#[test]
fn each_persons_claims_from_a_real_provider_become_user_email_name_and_groups_through_both_clients()
{
    let Some(setup) = Setup::start(&[]) else {
        return;
    };
    let people = [
        // groups from `groups`
        Person {
            login: "alice",
            provider: "corp",
            user_id: "alice",
            email: "alice@example.com",
            name: "Alice Example",
            groups: &["kafka-admins", "staff"],
            role: None,
        },
        // groups from `roles`, the first non-empty after `groups`
        Person {
            login: "bob",
            provider: "partner",
            user_id: "bob",
            email: "bob@other.org",
            name: "Bob Other",
            groups: &["viewer"],
            role: Some("viewer"),
        },
        // no preferred_username: upn names her and is her email; given_name her name; `role`
        Person {
            login: "carol",
            provider: "corp",
            user_id: "carol@example.com",
            email: "carol@example.com",
            name: "Carol",
            groups: &["operator"],
            role: Some("operator"),
        },
        // groups from `group`
        Person {
            login: "dave",
            provider: "partner",
            user_id: "dave",
            email: "dave@example.com",
            name: "Dave Contractor",
            groups: &["contractors"],
            role: None,
        },
    ];
    for Person {
        login,
        provider,
        user_id,
        email,
        name,
        groups,
        role,
    } in people
    {
        let mut agent = Agent::new();
        let reply = setup.log_in(&mut agent, provider, login);
        assert_let_in(&reply, &setup, login);
        let (status, me) = setup.me(&mut agent);
        assert_eq!(status, 200, "{login}: {me}");
        let data = &me["data"];
        assert_eq!(data["userId"], user_id, "{login}: {me}");
        assert_eq!(data["email"], email, "{login}: {me}");
        assert_eq!(data["name"], name, "{login}: {me}");
        assert_eq!(data["provider"], provider, "{login}: {me}");
        assert_eq!(data["via"], "session", "{login}: {me}");
        assert_eq!(data["groups"], serde_json::json!(groups), "{login}: {me}");
        if let Some(role) = role {
            assert!(
                data["roles"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|r| r == role)),
                "{login}: {me}"
            );
        }
    }
}

#[test]
fn allowed_groups_let_in_only_members_whichever_claim_carries_their_groups() {
    let Some(setup) = Setup::start(&[("ALLOWED_GROUPS", "kafka-admins,operator")]) else {
        return;
    };
    for (login, allowed) in [
        ("alice", true), // groups: kafka-admins
        ("carol", true), // role: operator
        ("bob", false),  // roles: viewer
        ("dave", false), // group: contractors
    ] {
        let mut agent = Agent::new();
        let reply = setup.log_in(&mut agent, "corp", login);
        if allowed {
            assert_let_in(&reply, &setup, login);
            assert_eq!(setup.me(&mut agent).0, 200, "{login}");
        } else {
            assert_eq!(reply.status, 403, "{login}: {}", reply.body);
            assert!(
                reply.body.contains("not in an allowed group"),
                "{login}: {}",
                reply.body
            );
            assert!(
                !reply
                    .set_cookies
                    .iter()
                    .any(|c| c.starts_with("ballast_session=")),
                "{login}: {:?}",
                reply.set_cookies
            );
            assert_eq!(setup.me(&mut agent).0, 401, "{login}");
        }
    }
}

#[test]
fn a_session_refreshes_through_the_real_providers_refresh_token_and_a_rotated_key_still_logs_in() {
    let Some(mut setup) = Setup::start(&[]) else {
        return;
    };
    let mut agent = Agent::new();
    assert_let_in(&setup.log_in(&mut agent, "corp", "alice"), &setup, "alice");
    let refresh = setup.url("/api/v1/auth/refresh");

    // The refresh reaches the provider's token endpoint with ballast-corp's refresh token.
    let before = setup.idp.grants().len();
    let reply = agent.post_from(&refresh, &setup.public);
    assert_eq!(reply.status, 200, "{}", reply.body);
    let grants = setup.idp.grants();
    assert_eq!(
        grants[before..],
        [("refresh_token".to_string(), "ballast-corp".to_string())],
        "{grants:?}"
    );
    assert_eq!(setup.me(&mut agent).0, 200);

    // The provider restarts with a new signing key and forgets its tokens: the refresh is
    // refused and the session ends; a new login is verified against the new key.
    setup.idp.restart();
    let reply = agent.post_from(&refresh, &setup.public);
    assert_eq!(reply.status, 401, "{}", reply.body);
    assert_eq!(
        setup.me(&mut agent).0,
        401,
        "a refused refresh ends the session"
    );
    let reply = setup.log_in(&mut agent, "corp", "alice");
    assert_let_in(&reply, &setup, "alice after the key rotation");
    let (status, me) = setup.me(&mut agent);
    assert_eq!(
        (status, &me["data"]["userId"]),
        (200, &serde_json::json!("alice"))
    );

    // Logout ends the session at ballast.
    let reply = agent.post_from(&setup.url("/api/v1/auth/logout"), &setup.public);
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(setup.me(&mut agent).0, 401);
}
