//! A real OpenID provider on loopback for the login tests: `tests/oidc/provider.mjs`, the npm
//! package `oidc-provider` (installed by `scripts/test` with `npm ci`), run by node. It knows four
//! people (`alice`, `bob`, `carol`, `dave`; any password) whose claims exercise the mapping rules:
//!
//! | login | email | preferred_username | groups-like claim | other |
//! |-------|-------|--------------------|-------------------|-------|
//! | alice | alice@example.com | alice | `groups` ["kafka-admins","staff"] | name "Alice Example" |
//! | bob   | bob@other.org | bob | `roles` ["viewer"] | |
//! | carol | — | — | `role` "operator" | upn carol@example.com, unique_name EXAMPLE\carol, given_name Carol |
//! | dave  | dave@example.com | dave | `group` "contractors" | |
//!
//! Every claim is in the ID token (and the same in userinfo). PKCE S256 is required; a refresh
//! token comes with every code exchange. Its login is oidc-provider's development login form,
//! then a consent page: [`OidcProvider::authorize`] walks them without a browser, as `Agent`.
//! Any other login is sent back to the client with `error=access_denied`.
//! [`OidcProvider::restart`] keeps the issuer and changes the signing key (key rotation).
//!
//! Skips (passing, with a `SKIPPED` message) only when node or the installed package is missing;
//! `scripts/test` installs the package.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use reqwest::blocking::Client;
use reqwest::Url;
use serde_json::Value;

/// `tests/oidc/` of the workspace.
fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("tests")
        .join("oidc")
}

/// node: `BALLAST_NODE`, else `node` on `PATH`.
fn find_node() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BALLAST_NODE") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
}

/// The running provider, stopped when dropped.
pub struct OidcProvider {
    node: PathBuf,
    clients: Vec<String>,
    child: Option<Child>,
    issuer: String,
    // Held open: the provider runs with `--exit-with-stdin`, so it ends with the test process
    // even when that is killed and never runs `Drop`.
    stdin: Option<ChildStdin>,
    log: tempfile::NamedTempFile,
}

impl OidcProvider {
    /// Starts the provider with these clients (`client id`, `secret`, `redirect URI`) on a free
    /// port of 127.0.0.1 and waits until it listens. None, after printing why (`SKIPPED`), when
    /// node or `tests/oidc/node_modules` is missing: the caller returns, passing.
    pub fn start(clients: &[(&str, &str, &str)]) -> Option<OidcProvider> {
        let Some(node) = find_node() else {
            eprintln!(
                "SKIPPED OpenID provider test: no node on PATH (or set BALLAST_NODE); scripts/test needs it"
            );
            return None;
        };
        if !fixture_dir()
            .join("node_modules")
            .join("oidc-provider")
            .is_dir()
        {
            eprintln!(
                "SKIPPED OpenID provider test: oidc-provider is not installed; run `npm ci --prefix tests/oidc` (scripts/test does)"
            );
            return None;
        }
        let mut provider = OidcProvider {
            node,
            clients: clients
                .iter()
                .map(|(id, secret, redirect)| format!("{id}:{secret}:{redirect}"))
                .collect(),
            child: None,
            issuer: String::new(),
            stdin: None,
            log: tempfile::NamedTempFile::new().expect("provider log file"),
        };
        provider.launch(0);
        Some(provider)
    }

    /// Stops the provider and starts it again on the same port (so with the same issuer):
    /// with a new signing key (a new `kid`), its sessions, codes and tokens forgotten. A
    /// provider that rotated its keys, as a client sees it.
    pub fn restart(&mut self) {
        let port = self
            .issuer
            .rsplit(':')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .expect("the issuer's port");
        self.stop();
        self.launch(port);
    }

    fn launch(&mut self, port: u16) {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.log.path())
            .expect("provider log file");
        let mut command = Command::new(&self.node);
        command.arg(fixture_dir().join("provider.mjs")).args([
            "--port",
            &port.to_string(),
            "--exit-with-stdin",
        ]);
        for client in &self.clients {
            command.arg("--client").arg(client);
        }
        let mut child = command
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("start node tests/oidc/provider.mjs");
        self.stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("provider stdout");
        self.child = Some(child);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        match line.trim_end().strip_prefix("issuer=") {
            Some(issuer) => self.issuer = issuer.to_string(),
            None => panic!(
                "the OpenID provider did not start (stdout {line:?}); its log:\n{}",
                self.log()
            ),
        }
    }

    fn stop(&mut self) {
        self.stdin = None;
        if let Some(mut child) = self.child.take() {
            crate::support::terminate(&mut child, Duration::from_secs(5));
        }
    }

    /// The provider with ballast's two clients for a ballast at `http://127.0.0.1:{port}`, and
    /// the settings that make them ballast's providers `corp` ("Corp SSO", client
    /// `ballast-corp`, secret `corp-secret`) and `partner` ("Partner", `ballast-partner`,
    /// `partner-secret`), with `BALLAST_PUBLIC_URL`, followed by `extra`.
    pub fn for_ballast(
        port: u16,
        extra: &[(&str, &str)],
    ) -> Option<(OidcProvider, Vec<(String, String)>)> {
        let public = format!("http://127.0.0.1:{port}");
        let corp = format!("{public}/api/v1/auth/callback/corp");
        let partner = format!("{public}/api/v1/auth/callback/partner");
        let idp = OidcProvider::start(&[
            ("ballast-corp", "corp-secret", &corp),
            ("ballast-partner", "partner-secret", &partner),
        ])?;
        let issuer = idp.issuer();
        let settings = [
            ("AUTH_PROVIDERS", "corp,partner"),
            ("AUTH_CORP_ISSUER", issuer),
            ("AUTH_CORP_CLIENT_ID", "ballast-corp"),
            ("AUTH_CORP_CLIENT_SECRET", "corp-secret"),
            ("AUTH_CORP_DISPLAY_NAME", "Corp SSO"),
            ("AUTH_PARTNER_ISSUER", issuer),
            ("AUTH_PARTNER_CLIENT_ID", "ballast-partner"),
            ("AUTH_PARTNER_CLIENT_SECRET", "partner-secret"),
            ("AUTH_PARTNER_DISPLAY_NAME", "Partner"),
            ("BALLAST_PUBLIC_URL", &public),
        ]
        .iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Some((idp, settings))
    }

    /// `http://127.0.0.1:PORT`, as in its discovery document.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// What the provider wrote on stderr so far (its warnings and errors).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// The token grants the provider answered, in order: (`grant_type`, client id); e.g.
    /// `("refresh_token", "ballast-corp")` once ballast refreshed a session at the provider.
    pub fn grants(&self) -> Vec<(String, String)> {
        self.log()
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("provider.mjs: grant ")?;
                let (grant, client) = rest.split_once(" client=")?;
                Some((grant.to_string(), client.to_string()))
            })
            .collect()
    }

    fn on_issuer(&self, url: &str) -> bool {
        url.strip_prefix(&self.issuer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?']))
    }

    /// The provider's authorization URL for `client_id` and `redirect_uri`: code flow, scopes
    /// `openid profile email`, state `state-1`, nonce `nonce-1`, and the PKCE challenge
    /// [`PKCE_CHALLENGE`] unless `pkce` is false.
    pub fn authorization_url(&self, client_id: &str, redirect_uri: &str, pkce: bool) -> String {
        let mut url = Url::parse(&format!("{}/auth", self.issuer)).expect("issuer URL");
        url.query_pairs_mut()
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("response_type", "code")
            .append_pair("scope", "openid profile email")
            .append_pair("state", "state-1")
            .append_pair("nonce", "nonce-1");
        if pkce {
            url.query_pairs_mut()
                .append_pair("code_challenge", PKCE_CHALLENGE)
                .append_pair("code_challenge_method", "S256");
        }
        url.into()
    }

    /// Follows `start` (a client's login URL that sends the person to the provider, or the
    /// provider's authorization URL itself) with `agent`'s cookies: signs in as `login` on the
    /// provider's form, consents, and returns the URL the provider sends the person back to
    /// (the client's redirect URI with `code`, `state` and `iss`, or with `error`) without
    /// opening it.
    pub fn authorize(&self, agent: &mut Agent, start: &str, login: &str) -> String {
        let mut url = start.to_string();
        let mut seen_issuer = false;
        for _ in 0..20 {
            let on_issuer = self.on_issuer(&url);
            if seen_issuer && !on_issuer {
                return url;
            }
            seen_issuer |= on_issuer;
            let reply = agent.get(&url);
            if let Some(location) = reply.location {
                url = location;
                continue;
            }
            assert!(
                on_issuer && reply.status == 200,
                "{url} answered {} without a redirect:\n{}\nprovider log:\n{}",
                reply.status,
                reply.body,
                self.log()
            );
            let action = form_action(&reply.body)
                .unwrap_or_else(|| panic!("no form on {url}:\n{}", reply.body));
            let fields: Vec<(&str, &str)> = if reply.body.contains(r#"name="prompt" value="login""#)
            {
                vec![
                    ("prompt", "login"),
                    ("login", login),
                    ("password", "any password"),
                ]
            } else if reply.body.contains(r#"name="prompt" value="consent""#) {
                vec![("prompt", "consent")]
            } else {
                panic!(
                    "{url}: neither the login form nor the consent page:\n{}",
                    reply.body
                )
            };
            let answer = agent.post_form(&action, &fields);
            url = answer.location.unwrap_or_else(|| {
                panic!(
                    "posting {fields:?} to {action} answered {} without a redirect:\n{}",
                    answer.status, answer.body
                )
            });
        }
        panic!("more than 20 steps from {start}; last at {url}")
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The `action` of the page's first form, HTML entities undone.
fn form_action(html: &str) -> Option<String> {
    let form = &html[html.find("<form")?..];
    let start = form.find("action=\"")? + "action=\"".len();
    let end = start + form[start..].find('"')?;
    Some(
        form[start..end]
            .replace("&#x2F;", "/")
            .replace("&#47;", "/")
            .replace("&#39;", "'")
            .replace("&quot;", "\"")
            .replace("&amp;", "&"),
    )
}

/// One HTTP answer, redirects not followed.
pub struct Reply {
    pub status: u16,
    /// `Location`, made absolute.
    pub location: Option<String>,
    /// Every `Set-Cookie` header as sent.
    pub set_cookies: Vec<String>,
    pub body: String,
}

/// A browser without a browser: one cookie jar for all of 127.0.0.1 (cookies do not tell
/// ports apart, so the provider and ballast share it, as in a real browser), no redirects
/// followed. For the flows that do not need Chromium.
pub struct Agent {
    http: Client,
    cookies: BTreeMap<String, String>,
}

impl Default for Agent {
    fn default() -> Self {
        Self::new()
    }
}

impl Agent {
    pub fn new() -> Agent {
        Agent {
            http: Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(15))
                .build()
                .expect("http client"),
            cookies: BTreeMap::new(),
        }
    }

    /// The cookie `name` as the jar holds it.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.cookies.get(name).map(String::as_str)
    }

    pub fn get(&mut self, url: &str) -> Reply {
        let request = self.http.get(url);
        self.send(url, request)
    }

    pub fn post_form(&mut self, url: &str, fields: &[(&str, &str)]) -> Reply {
        let request = self.http.post(url).form(fields);
        self.send(url, request)
    }

    /// An empty POST sent as a page of `origin` would send it (`Origin` header).
    pub fn post_from(&mut self, url: &str, origin: &str) -> Reply {
        let request = self.http.post(url).header(reqwest::header::ORIGIN, origin);
        self.send(url, request)
    }

    fn send(&mut self, url: &str, mut request: reqwest::blocking::RequestBuilder) -> Reply {
        if !self.cookies.is_empty() {
            let header: Vec<String> = self
                .cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            request = request.header(reqwest::header::COOKIE, header.join("; "));
        }
        let response = request
            .send()
            .unwrap_or_else(|e| panic!("request to {url}: {e}"));
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| Url::parse(url).ok()?.join(l).ok())
            .map(String::from);
        let set_cookies: Vec<String> = response
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        for cookie in &set_cookies {
            self.keep(cookie);
        }
        let body = response.text().unwrap_or_default();
        Reply {
            status,
            location,
            set_cookies,
            body,
        }
    }

    fn keep(&mut self, set_cookie: &str) {
        let mut parts = set_cookie.split(';');
        let Some((name, value)) = parts.next().and_then(|p| p.trim().split_once('=')) else {
            return;
        };
        let gone = parts.any(|attr| {
            let attr = attr.trim().to_ascii_lowercase();
            attr == "max-age=0" || attr.starts_with("max-age=-") || attr.contains("1970")
        });
        if gone {
            self.cookies.remove(name);
        } else {
            self.cookies.insert(name.to_string(), value.to_string());
        }
    }
}

/// The claims of a JWT (its payload), unverified: the provider's own tokens, read by the test.
pub fn jwt_claims(token: &str) -> Value {
    jwt_part(token, 1)
}

/// The header of a JWT (`alg`, `kid`).
pub fn jwt_header(token: &str) -> Value {
    jwt_part(token, 0)
}

fn jwt_part(token: &str, index: usize) -> Value {
    let payload = token.split('.').nth(index).expect("a JWT has three parts");
    let standard: String = payload
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    let padded = format!("{standard}{}", "=".repeat((4 - standard.len() % 4) % 4));
    let bytes = crate::browser::cdp::base64_decode(&padded).expect("base64url payload");
    serde_json::from_slice(&bytes).expect("a JSON part")
}

/// PKCE's S256 pair from RFC 7636, appendix B: the provider must compute this challenge.
pub const PKCE_VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const PKCE_CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

#[cfg(test)]
mod tests {
    use super::*;

    // Nothing listens there: the tests stop at the redirect and read the code from its URL.
    const CLIENTS: [(&str, &str, &str); 2] = [
        (
            "ballast-corp",
            "corp-secret",
            "http://127.0.0.1:9/api/v1/auth/callback/corp",
        ),
        (
            "ballast-partner",
            "partner-secret",
            "http://127.0.0.1:9/api/v1/auth/callback/partner",
        ),
    ];

    fn get_json(url: &str) -> Value {
        reqwest::blocking::get(url)
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    fn query(url: &str) -> BTreeMap<String, String> {
        Url::parse(url)
            .expect("callback URL")
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    #[test]
    fn the_test_provider_publishes_discovery_and_keys_and_requires_pkce_s256() {
        let Some(idp) = OidcProvider::start(&CLIENTS) else {
            return;
        };
        let issuer = idp.issuer();
        assert!(issuer.starts_with("http://127.0.0.1:"), "{issuer}");
        let discovery = get_json(&format!("{issuer}/.well-known/openid-configuration"));
        assert_eq!(discovery["issuer"], issuer);
        assert!(
            discovery["code_challenge_methods_supported"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m == "S256")),
            "{discovery}"
        );
        for grant in ["authorization_code", "refresh_token"] {
            assert!(
                discovery["grant_types_supported"]
                    .as_array()
                    .is_some_and(|g| g.iter().any(|g| g == grant)),
                "{grant}: {discovery}"
            );
        }
        assert_eq!(discovery["userinfo_endpoint"], format!("{issuer}/me"));
        let jwks_uri = discovery["jwks_uri"].as_str().expect("jwks_uri");
        let jwks = get_json(jwks_uri);
        let keys = jwks["keys"].as_array().expect("keys");
        assert_eq!(keys.len(), 1, "{jwks}");
        assert_eq!(keys[0]["kty"], "RSA");
        assert_eq!(keys[0]["alg"], "RS256");
        assert!(keys[0]["kid"].as_str().is_some_and(|k| !k.is_empty()));
        assert!(keys[0].get("d").is_none(), "no private part published");

        // An authorization request without a code challenge is sent back with an error.
        let mut agent = Agent::new();
        let reply = agent.get(&idp.authorization_url(CLIENTS[0].0, CLIENTS[0].2, false));
        assert!(
            !reply.set_cookies.iter().any(|c| c.starts_with("_session=")),
            "no provider session from a refused request: {:?}",
            reply.set_cookies
        );
        let back = reply.location.expect("a redirect back to the client");
        assert!(back.starts_with(CLIENTS[0].2), "{back}");
        let q = query(&back);
        assert_eq!(q.get("error").map(String::as_str), Some("invalid_request"));
        assert!(
            q.get("error_description")
                .is_some_and(|d| d.contains("requires PKCE")),
            "{q:?}"
        );
    }

    /// A code exchange at the token endpoint (client_secret_basic).
    fn exchange(issuer: &str, client: (&str, &str, &str), form: &[(&str, &str)]) -> (u16, Value) {
        let response = Client::new()
            .post(format!("{issuer}/token"))
            .basic_auth(client.0, Some(client.1))
            .form(form)
            .send()
            .expect("token endpoint");
        let status = response.status().as_u16();
        (status, response.json().expect("token answer"))
    }

    #[test]
    fn the_test_provider_signs_each_person_in_with_their_claims_in_the_id_token_and_userinfo() {
        let Some(idp) = OidcProvider::start(&CLIENTS) else {
            return;
        };
        let issuer = idp.issuer().to_string();
        let people: [(&str, usize, Value, &[&str]); 4] = [
            (
                "alice",
                0,
                serde_json::json!({
                    "email": "alice@example.com", "preferred_username": "alice",
                    "name": "Alice Example", "groups": ["kafka-admins", "staff"],
                }),
                &["roles", "role", "group", "upn"],
            ),
            (
                "bob",
                1,
                serde_json::json!({ "email": "bob@other.org", "roles": ["viewer"] }),
                &["groups", "role", "group"],
            ),
            (
                "carol",
                0,
                serde_json::json!({
                    "upn": "carol@example.com", "unique_name": "EXAMPLE\\carol",
                    "given_name": "Carol", "role": "operator",
                }),
                &["email", "preferred_username", "groups", "roles", "group"],
            ),
            (
                "dave",
                1,
                serde_json::json!({ "email": "dave@example.com", "group": "contractors" }),
                &["groups", "roles", "role"],
            ),
        ];
        for (login, client_index, expected, absent) in people {
            let client = CLIENTS[client_index];
            let mut agent = Agent::new();
            let back = idp.authorize(
                &mut agent,
                &idp.authorization_url(client.0, client.2, true),
                login,
            );
            assert!(back.starts_with(client.2), "{login}: {back}");
            assert!(
                agent.cookie("_session").is_some(),
                "the provider's session cookie"
            );
            let q = query(&back);
            assert_eq!(q.get("state").map(String::as_str), Some("state-1"), "{q:?}");
            assert_eq!(q.get("iss"), Some(&issuer), "{q:?}");
            let code = q
                .get("code")
                .unwrap_or_else(|| panic!("{login}: no code in {back}"));

            // The wrong verifier is refused; the right one gets the tokens.
            let (status, refused) = exchange(
                &issuer,
                client,
                &[
                    ("grant_type", "authorization_code"),
                    ("code", code),
                    ("redirect_uri", client.2),
                    (
                        "code_verifier",
                        "wrong-verifier-wrong-verifier-wrong-verifier-0",
                    ),
                ],
            );
            assert_eq!(
                (status, &refused["error"]),
                (400, &serde_json::json!("invalid_grant"))
            );
            // A fresh code: the provider's session and grant let the person straight back.
            let tokens = tokens_for(&idp, &mut agent, client, login);
            let id = jwt_claims(tokens["id_token"].as_str().expect("id_token"));
            assert_eq!(id["iss"], issuer.as_str());
            assert_eq!(id["aud"], client.0);
            assert_eq!(id["sub"], login);
            assert_eq!(id["nonce"], "nonce-1");
            let userinfo: Value = Client::new()
                .get(format!("{issuer}/me"))
                .bearer_auth(tokens["access_token"].as_str().expect("access_token"))
                .send()
                .and_then(|r| r.json())
                .expect("userinfo");
            assert_eq!(userinfo["sub"], login);
            for (claim, value) in expected.as_object().expect("claims") {
                assert_eq!(&id[claim], value, "{login}: ID token {claim}: {id}");
                assert_eq!(
                    &userinfo[claim], value,
                    "{login}: userinfo {claim}: {userinfo}"
                );
            }
            for claim in absent {
                assert!(id.get(claim).is_none(), "{login}: {claim} in {id}");
            }

            // The refresh token works once, for new tokens with the same person.
            let refresh = tokens["refresh_token"].as_str().expect("a refresh token");
            let (status, renewed) = exchange(
                &issuer,
                client,
                &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
            );
            assert_eq!(status, 200, "{login}: {renewed}");
            let again = jwt_claims(renewed["id_token"].as_str().expect("renewed id_token"));
            assert_eq!(again["sub"], login);
            let grants = idp.grants();
            assert_eq!(
                grants.last(),
                Some(&("refresh_token".to_string(), client.0.to_string())),
                "{grants:?}"
            );
        }

        // Another client's secret is refused.
        let (status, refused) = exchange(
            &issuer,
            (CLIENTS[0].0, CLIENTS[1].1, CLIENTS[0].2),
            &[("grant_type", "refresh_token"), ("refresh_token", "x")],
        );
        assert_eq!(
            (status, &refused["error"]),
            (401, &serde_json::json!("invalid_client"))
        );
    }

    #[test]
    fn the_test_provider_takes_the_client_secret_in_http_basic_or_in_the_form() {
        let client = CLIENTS[0];
        let Some(idp) = OidcProvider::start(&[client]) else {
            return;
        };
        let issuer = idp.issuer().to_string();
        let mut agent = Agent::new();
        for basic in [true, false] {
            let back = idp.authorize(
                &mut agent,
                &idp.authorization_url(client.0, client.2, true),
                "dave",
            );
            let q = query(&back);
            let code = q.get("code").expect("a code");
            let mut form = vec![
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", client.2),
                ("code_verifier", PKCE_VERIFIER),
            ];
            let request = Client::new().post(format!("{issuer}/token"));
            let request = if basic {
                request.basic_auth(client.0, Some(client.1))
            } else {
                form.extend([("client_id", client.0), ("client_secret", client.1)]);
                request
            };
            let response = request.form(&form).send().expect("token endpoint");
            assert_eq!(response.status().as_u16(), 200, "basic: {basic}");
            let tokens: Value = response.json().expect("tokens");
            let id = jwt_claims(tokens["id_token"].as_str().expect("id_token"));
            assert_eq!(id["sub"], "dave");
            assert_eq!(id["group"], "contractors");
        }
    }

    /// A code exchange with the RFC 7636 verifier; the tokens.
    fn tokens_for(
        idp: &OidcProvider,
        agent: &mut Agent,
        client: (&str, &str, &str),
        login: &str,
    ) -> Value {
        let back = idp.authorize(
            agent,
            &idp.authorization_url(client.0, client.2, true),
            login,
        );
        let q = query(&back);
        let code = q.get("code").unwrap_or_else(|| panic!("no code: {back}"));
        let (status, tokens) = exchange(
            idp.issuer(),
            client,
            &[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", client.2),
                ("code_verifier", PKCE_VERIFIER),
            ],
        );
        assert_eq!(status, 200, "{tokens}");
        tokens
    }

    #[test]
    fn the_test_provider_sends_an_unknown_login_back_to_the_client_as_access_denied() {
        let client = CLIENTS[0];
        let Some(idp) = OidcProvider::start(&[client]) else {
            return;
        };
        let back = idp.authorize(
            &mut Agent::new(),
            &idp.authorization_url(client.0, client.2, true),
            "mallory",
        );
        let q = query(&back);
        assert!(back.starts_with(client.2), "{back}");
        assert_eq!(
            q.get("error").map(String::as_str),
            Some("access_denied"),
            "{back}"
        );
        assert_eq!(
            q.get("state").map(String::as_str),
            Some("state-1"),
            "{back}"
        );
        assert!(!q.contains_key("code"), "{back}");
        // A known person still gets in afterwards.
        let tokens = tokens_for(&idp, &mut Agent::new(), client, "bob");
        assert_eq!(
            jwt_claims(tokens["id_token"].as_str().expect("id_token"))["sub"],
            "bob"
        );
    }

    #[test]
    fn the_test_provider_restarted_keeps_its_issuer_and_signs_with_a_new_key() {
        let client = CLIENTS[0];
        let Some(mut idp) = OidcProvider::start(&[client]) else {
            return;
        };
        let issuer = idp.issuer().to_string();
        let kid = |idp: &OidcProvider| {
            get_json(&format!("{}/jwks", idp.issuer()))["keys"][0]["kid"]
                .as_str()
                .expect("kid")
                .to_string()
        };
        let first = kid(&idp);
        let tokens = tokens_for(&idp, &mut Agent::new(), client, "alice");
        assert_eq!(
            jwt_header(tokens["id_token"].as_str().expect("id_token"))["kid"],
            first
        );
        idp.restart();
        assert_eq!(idp.issuer(), issuer);
        let second = kid(&idp);
        assert_ne!(first, second);
        let tokens = tokens_for(&idp, &mut Agent::new(), client, "alice");
        let header = jwt_header(tokens["id_token"].as_str().expect("id_token"));
        assert_eq!(header["kid"], second);
        assert_eq!(header["alg"], "RS256");
    }
}
