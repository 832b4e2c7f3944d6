//! Logging in to the dashboard in headless Chromium through a real OpenID provider on loopback
//! (`crate::oidc`, oidc-provider under node): the login page, the provider's login form and
//! consent page, the callback, the session cookie, `/api/v1/auth/me`, logout; and a person the
//! domain filter refuses. Screenshots `30-…` to `35-…` in `target/ui-screenshots/`.
//!
//! Skips (passing, with a message) when no Chromium or no node/oidc-provider is installed;
//! `scripts/test` installs them.

use std::time::Duration;

use serde_json::{json, Value};

use super::cdp::{self, Browser};
use super::{screenshot_dir, Demo};
use crate::oidc::OidcProvider;
use crate::support::{free_port, wait_for};

/// A demo with two login providers (`corp`, `partner`) at one OpenID provider, plus `extra`
/// settings; the provider (kept alive by the caller) and the demo. None when a tool is missing.
fn demo_with_login(extra: &[(&str, &str)]) -> Option<(Browser, OidcProvider, Demo)> {
    let Some(chromium) = cdp::find_chromium() else {
        eprintln!(
            "SKIPPED browser login test: no chromium on PATH (Debian: apt-get install chromium; scripts/test installs it), or set BALLAST_CHROMIUM"
        );
        return None;
    };
    let port = free_port();
    let (idp, env) = OidcProvider::for_ballast(port, extra)?;
    let demo = Demo::start_with(port, &env);
    let http = reqwest::blocking::Client::new();
    wait_for(Duration::from_secs(30), "the demo's login page", || {
        let r = http.get(demo.url("/ui/login")).send().ok()?;
        r.status().is_success().then_some(())
    });
    Some((Browser::start(&chromium), idp, demo))
}

/// `fetch(path)` from the page, with its cookies: the status and the JSON body.
fn fetch_json(b: &mut Browser, path: &str) -> (u64, Value) {
    let answer = b.eval(&format!(
        "fetch({}).then(async r => ({{ status: r.status, body: await r.json().catch(() => null) }}))",
        json!(path)
    ));
    (
        answer["status"].as_u64().unwrap_or(0),
        answer["body"].clone(),
    )
}

/// The cookie `name` the browser sends to `url`, checked HttpOnly (out of page scripts' reach)
/// and SameSite=Lax (not sent on cross-site subrequests and posts).
fn http_only_lax_cookie(b: &mut Browser, url: &str, name: &str) -> Value {
    let cookies = b.cookies(url);
    let cookie = cookies
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no cookie {name} for {url}: {cookies:#?}"))
        .clone();
    assert_eq!(cookie["httpOnly"], true, "{cookie}");
    assert_eq!(cookie["sameSite"], "Lax", "{cookie}");
    cookie
}

/// From the login page, through the provider's form and consent page as `login`; returns at
/// the page the callback leads to.
fn log_in_as(b: &mut Browser, idp: &OidcProvider, login: &str, shots: Option<(&str, &str)>) {
    b.click_and_wait(r#"a[href^="/api/v1/auth/login/corp"]"#);
    sign_in_at_provider(b, idp, login, shots);
}

/// On the provider's login form: signs in as `login` (any password), consents, and returns at
/// the page the provider sends the person back to. `shots`: screenshot names of the form and
/// of the consent page.
fn sign_in_at_provider(
    b: &mut Browser,
    idp: &OidcProvider,
    login: &str,
    shots: Option<(&str, &str)>,
) {
    let url = b.url();
    assert!(
        url.starts_with(&format!("{}/interaction/", idp.issuer())),
        "the provider's login form, not {url}:\n{}",
        b.text()
    );
    b.fill("input[name=login]", login);
    b.fill("input[name=password]", "any password");
    if let Some((form, _)) = shots {
        b.screenshot(&screenshot_dir().join(format!("{form}.png")));
    }
    b.click_and_wait("button.login-submit");
    // The consent page: the client asks for openid, profile and email.
    let text = b.text();
    assert!(
        b.url().starts_with(idp.issuer()) && text.contains("Continue"),
        "the provider's consent page, not {}:\n{text}",
        b.url()
    );
    if let Some((_, consent)) = shots {
        b.screenshot(&screenshot_dir().join(format!("{consent}.png")));
    }
    b.click_and_wait("button.login-submit");
}

#[test]
fn a_person_logs_in_through_a_real_openid_provider_in_chromium_and_logs_out() {
    let Some((mut b, idp, demo)) = demo_with_login(&[]) else {
        return;
    };
    // Without a session the dashboard sends the person to the login page, listing providers.
    b.goto(&demo.url("/ui"));
    assert_eq!(b.url(), demo.url("/ui/login?next=%2Fui"));
    let providers = b.eval(
        "Array.from(document.querySelectorAll('a.provider')).map(a => [a.getAttribute('href'), a.innerText.trim()])",
    );
    let listed = providers.as_array().cloned().unwrap_or_default();
    let expected = [("corp", "Corp SSO"), ("partner", "Partner")];
    assert_eq!(listed.len(), expected.len(), "{providers}");
    for (link, (name, display)) in listed.iter().zip(expected) {
        let href = link[0].as_str().unwrap_or_default();
        assert!(
            href.starts_with(&format!("/api/v1/auth/login/{name}?next=")) && link[1] == display,
            "{providers}"
        );
    }
    b.screenshot(&screenshot_dir().join("30-login.png"));

    log_in_as(
        &mut b,
        &idp,
        "alice",
        Some(("31-provider-login-form", "32-provider-consent")),
    );
    assert_eq!(b.url(), demo.url("/ui"), "back where the person started");
    assert_eq!(b.text_of(".user-name").trim(), "alice");
    b.screenshot(&screenshot_dir().join("33-logged-in-overview.png"));

    let (status, me) = fetch_json(&mut b, "/api/v1/auth/me");
    assert_eq!(status, 200, "{me}");
    let data = &me["data"];
    assert_eq!(data["userId"], "alice", "{me}");
    assert_eq!(data["email"], "alice@example.com", "{me}");
    assert!(
        data["groups"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g == "kafka-admins")),
        "{me}"
    );
    assert_eq!(data["via"], "session", "{me}");

    // The session cookie is out of the page scripts' reach and not sent on cross-site requests.
    let session = http_only_lax_cookie(&mut b, &demo.url("/"), "ballast_session");
    assert_eq!(
        b.eval("document.cookie.includes('ballast_session')"),
        json!(false)
    );

    // Logout ends the session: the login page, and the API no longer knows the person.
    b.click_and_wait(r#"form[action="/ui/logout"] button"#);
    assert!(
        b.url().starts_with(&demo.url("/ui/login")),
        "after logout: {}",
        b.url()
    );
    let (status, me) = fetch_json(&mut b, "/api/v1/auth/me");
    assert_eq!(status, 401, "{me}");
    // The old cookie value, if the browser still had it, is dead on the server too.
    let stale = session["value"].as_str().unwrap_or_default().to_string();
    let answer = reqwest::blocking::Client::new()
        .get(demo.url("/api/v1/auth/me"))
        .header("Cookie", format!("ballast_session={stale}"))
        .send()
        .expect("me with the old cookie");
    assert_eq!(answer.status().as_u16(), 401);

    let exceptions: Vec<&String> = b
        .errors
        .iter()
        .filter(|e| e.starts_with("exception"))
        .collect();
    assert!(
        exceptions.is_empty(),
        "the pages raised exceptions: {exceptions:#?}"
    );
}

#[test]
fn a_person_whose_email_domain_is_not_allowed_is_refused_with_a_clear_page_in_chromium() {
    let Some((mut b, idp, demo)) = demo_with_login(&[("ALLOWED_DOMAINS", "example.com")]) else {
        return;
    };
    b.goto(&demo.url("/ui/login"));
    log_in_as(&mut b, &idp, "bob", None);
    let url = b.url();
    assert!(
        url.starts_with(&demo.url("/api/v1/auth/callback/corp")),
        "the callback's own page, not {url}"
    );
    assert_eq!(b.status(), 403, "{url}");
    let text = b.text();
    assert!(text.contains("not allowed"), "{text}");
    b.screenshot(&screenshot_dir().join("35-login-refused-domain.png"));
    assert!(
        !b.cookies(&demo.url("/"))
            .iter()
            .any(|c| c["name"] == "ballast_session"),
        "no session for a refused person"
    );
    let (status, me) = fetch_json(&mut b, "/api/v1/auth/me");
    assert_eq!(status, 401, "{me}");
}

/// The fixture itself, without ballast: the provider's development login form and consent page
/// work in Chromium and send the person back to the client's redirect URI with a code (here a
/// plain listener on loopback that answers every request with a page).
#[test]
fn the_test_providers_login_form_and_consent_page_lead_back_to_the_client_in_chromium() {
    let Some(chromium) = cdp::find_chromium() else {
        eprintln!("SKIPPED browser test: no chromium on PATH (scripts/test installs it)");
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let redirect = format!(
        "http://127.0.0.1:{}/callback",
        listener.local_addr().expect("local addr").port()
    );
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<h1>client callback</h1>",
            );
        }
    });
    let Some(idp) = OidcProvider::start(&[("ballast-corp", "corp-secret", &redirect)]) else {
        return;
    };
    let mut b = Browser::start(&chromium);
    b.goto(&idp.authorization_url("ballast-corp", &redirect, true));
    sign_in_at_provider(
        &mut b,
        &idp,
        "alice",
        Some((
            "29-fixture-provider-login-form",
            "29b-fixture-provider-consent",
        )),
    );
    let back = b.url();
    assert!(back.starts_with(&format!("{redirect}?")), "{back}");
    let query: std::collections::BTreeMap<String, String> = reqwest::Url::parse(&back)
        .expect("callback URL")
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    assert!(query.get("code").is_some_and(|c| !c.is_empty()), "{back}");
    assert_eq!(query.get("state").map(String::as_str), Some("state-1"));
    assert_eq!(query.get("iss").map(String::as_str), Some(idp.issuer()));
    assert_eq!(b.text_of("h1"), "client callback");
    assert_eq!(b.status(), 200);
    // The provider's own session cookie, as Chromium keeps it (the helpers the ballast tests
    // use to read `ballast_session`).
    http_only_lax_cookie(&mut b, &format!("{}/", idp.issuer()), "_session");
}
