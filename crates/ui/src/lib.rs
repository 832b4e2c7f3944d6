//! The `/ui` dashboard: server-rendered HTML (askama templates in `templates/`), a stylesheet,
//! a small script and an icon embedded in the binary (`assets/`), so it works with no internet
//! access. The web process mounts it with [`routes`], giving it a [`Host`].
//!
//! Every page gets its data, and every button does its work, through the app's own API called
//! in-process ([`api::Api`]): licensing, validation, 409 reasons and audit come out exactly as over
//! HTTP. Forms post to `/ui/...` handlers that call the API and redirect back with a one-time
//! flash message (post/redirect/get); a refusal is shown with the API's own words. Live parts are
//! progressive enhancement: `data-refresh` pages re-fetch themselves, the message tail reads the
//! API's server-sent events; without the script every page still works.

mod api;
mod assets;
mod fmt;
mod host;
mod human;
mod pages;
mod svg;
mod url;

use std::convert::Infallible;
use std::sync::Arc;

use askama::Template;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

pub use api::{Api, Problem};
pub use host::{AuditEvent, BoxFuture, Host, Maintenance, Settings, Viewer};

/// The state of every dashboard route: the process serving it.
pub type HostRef = Arc<dyn Host>;

/// Every `/ui` route but the login pages and logout (the web process's, merged beside these),
/// served over `host`.
pub fn routes<S>(host: HostRef) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    use pages::*;
    Router::new()
        .route("/ui", get(overview::page))
        .route("/ui/", get(overview::page))
        .route("/ui/assets/{file}", get(assets::serve))
        .route("/ui/proposals", get(proposals::list))
        .route("/ui/proposals/generate", post(proposals::generate))
        .route("/ui/proposals/{id}", get(proposals::page))
        .route("/ui/proposals/{id}/apply", post(proposals::apply))
        .route("/ui/reassignments", get(reassignments::list))
        .route("/ui/reassignments/throttle", post(reassignments::throttle))
        .route("/ui/reassignments/{id}", get(reassignments::page))
        .route("/ui/reassignments/{id}/cancel", post(reassignments::cancel))
        .route("/ui/brokers", get(brokers::list))
        .route("/ui/brokers/elect", post(brokers::elect))
        .route(
            "/ui/brokers/refresh-metadata",
            post(brokers::refresh_metadata),
        )
        .route("/ui/brokers/{id}", get(brokers::page))
        .route("/ui/brokers/{id}/maintenance", post(brokers::maintenance))
        .route("/ui/history", get(brokers::history))
        .route("/ui/topics", get(topics::list))
        .route("/ui/topics/create", post(topic_change::create))
        .route(
            "/ui/topics/{topic}/partitions",
            post(topic_change::partitions),
        )
        .route(
            "/ui/topics/{topic}/replication-factor",
            post(topic_change::replication_factor),
        )
        .route("/ui/topics/{topic}/delete", post(topic_change::delete))
        .route("/ui/topics/{topic}", get(topics::page))
        .route("/ui/topics/{topic}/messages", get(topics::messages))
        .route("/ui/topics/{topic}/config", post(topics::config))
        .route("/ui/topics/{topic}/elect", post(topics::elect))
        .route(
            "/ui/topics/{topic}/redistribute",
            post(topics::redistribute),
        )
        .route("/ui/groups", get(groups::list))
        .route("/ui/groups/{group}", get(groups::page))
        .route("/ui/groups/{group}/reset", post(groups::reset))
        .route("/ui/groups/{group}/delete", post(groups::delete))
        .route("/ui/acls", get(security::acls).post(security::acl_change))
        .route(
            "/ui/quotas",
            get(security::quotas).post(security::quota_change),
        )
        .route("/ui/audit", get(audit::list))
        .route("/ui/audit/{id}", get(audit::page))
        .route("/ui/audit/{id}/revert", post(audit::revert))
        .route("/ui/healing", get(system::healing))
        .route("/ui/agents", get(agents::page))
        .route("/ui/agents/{broker}/upgrade", post(agents::upgrade))
        .route("/ui/rolling-restarts", post(agents::start))
        .route("/ui/rolling-restarts/{id}/{action}", post(agents::act))
        .route("/ui/license", get(system::license))
        .route("/ui/notices", get(system::notices))
        .route(
            "/ui/what-if",
            get(simulate::what_if).post(simulate::what_if_run),
        )
        .route(
            "/ui/blast-radius",
            get(simulate::blast_radius).post(simulate::blast_radius_run),
        )
        .route("/ui/tokens", get(tokens::page).post(tokens::create))
        .route("/ui/tokens/{id}/revoke", post(tokens::revoke))
        .route("/ui/{*rest}", get(not_found).post(not_found))
        .with_state(host)
}

// ------------------------------------------------------------------------------ the layout

/// One entry of the side navigation.
pub struct NavItem {
    pub href: &'static str,
    pub label: &'static str,
    pub current: bool,
}

const NAV: [(&str, &str, &str); 15] = [
    ("overview", "/ui", "Overview"),
    ("proposal", "/ui/proposals/current", "Proposal"),
    ("reassignments", "/ui/reassignments", "Reassignments"),
    ("brokers", "/ui/brokers", "Brokers"),
    ("history", "/ui/history", "Load history"),
    ("topics", "/ui/topics", "Topics"),
    ("groups", "/ui/groups", "Consumer groups"),
    ("acls", "/ui/acls", "ACLs"),
    ("quotas", "/ui/quotas", "Quotas"),
    ("audit", "/ui/audit", "Audit log"),
    ("what-if", "/ui/what-if", "What-if"),
    ("blast-radius", "/ui/blast-radius", "Blast radius"),
    ("healing", "/ui/healing", "Self-healing"),
    ("agents", "/ui/agents", "Agents"),
    ("license", "/ui/license", "License"),
];

/// A one-time message shown at the top of the next page (after a form's redirect).
#[derive(Debug, Clone, PartialEq)]
pub struct Flash {
    /// `ok`, `error` or `info`: the CSS class.
    pub kind: &'static str,
    pub message: String,
    pub hint: String,
}

impl Flash {
    pub fn ok(message: impl Into<String>) -> Flash {
        Flash {
            kind: "ok",
            message: message.into(),
            hint: String::new(),
        }
    }

    pub fn problem(p: &Problem) -> Flash {
        Flash {
            kind: "error",
            message: p.message(),
            hint: p.hint().to_string(),
        }
    }
}

/// What the frame of every page shows.
pub struct Layout {
    pub title: String,
    pub nav: Vec<NavItem>,
    pub flash: Option<Flash>,
    /// Seconds between live refreshes of the page's `data-live` parts (the script's).
    pub refresh: Option<u32>,
    pub license_state: String,
    pub version: &'static str,
    /// The logged-in person (none when authentication is off).
    pub user: Option<UserBadge>,
    /// Whether the chat assistant is enabled: the header's Ask button and the chat panel.
    pub chat: bool,
}

/// The header's user menu.
pub struct UserBadge {
    pub user_id: String,
    pub scope: &'static str,
    /// Name and email, as a tooltip.
    pub title: String,
}

impl Layout {
    /// Whether management actions can be taken: the license state is `licensed` or `trial`
    /// (anything else, including a state that could not be read, is monitoring mode, where the
    /// API refuses them with 403).
    pub fn manages(&self) -> bool {
        matches!(self.license_state.as_str(), "licensed" | "trial")
    }
}

/// What a dashboard handler gets: the in-process API, the flash left by the previous request,
/// and the process serving it.
pub struct Ctx {
    pub api: Api,
    pub host: HostRef,
    pub flash: Option<Flash>,
}

impl Ctx {
    /// Whether a form post comes from a page of ballast's own origin ([`Host::same_origin`]:
    /// `BALLAST_PUBLIC_URL`).
    pub fn same_origin(&self, headers: &HeaderMap) -> bool {
        self.host.same_origin(headers)
    }
}

impl FromRequestParts<HostRef> for Ctx {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        host: &HostRef,
    ) -> Result<Self, Self::Rejection> {
        Ok(Ctx {
            api: Api::new(host.as_ref(), parts),
            host: host.clone(),
            flash: read_flash(host.as_ref(), &parts.headers),
        })
    }
}

impl Ctx {
    /// The frame for a page titled `title` under navigation entry `nav`.
    pub async fn layout(&self, title: impl Into<String>, nav: &str) -> Layout {
        let license_state = match self.api.get("/api/v1/license").await {
            Ok(l) => human::s(&l, "state"),
            Err(_) => "unknown".to_string(),
        };
        Layout {
            title: title.into(),
            nav: NAV
                .iter()
                .map(|(key, href, label)| NavItem {
                    href,
                    label,
                    current: *key == nav,
                })
                .collect(),
            flash: self.flash.clone(),
            refresh: None,
            license_state,
            version: self.host.settings().version,
            chat: self.host.settings().chat,
            user: self
                .api
                .identity()
                .filter(|i| i.session)
                .map(|i| UserBadge {
                    user_id: i.user_id.clone(),
                    scope: i.scope,
                    title: [i.name.as_deref(), i.email.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" · "),
                }),
        }
    }

    /// The balance threshold in percent (`BALLAST_BALANCE_THRESHOLD`): bars turn amber beyond it
    /// and red beyond twice it (the trigger).
    pub fn threshold(&self) -> f64 {
        self.host.settings().threshold_percent
    }

    /// A page for a failed primary API call, with the API's status.
    pub async fn problem_page(&self, title: &str, nav: &str, problem: &Problem) -> Response {
        let layout = self.layout(title, nav).await;
        let status = StatusCode::from_u16(problem.status)
            .ok()
            .filter(|s| s.is_client_error() || s.is_server_error())
            .unwrap_or(StatusCode::BAD_GATEWAY);
        render(
            status,
            &ErrorPage {
                layout,
                message: problem.message(),
                hint: problem.hint().to_string(),
            },
        )
    }

    /// A page for bad input of a dashboard form or query (400).
    pub async fn bad_request(
        &self,
        title: &str,
        nav: &str,
        message: impl Into<String>,
    ) -> Response {
        let layout = self.layout(title, nav).await;
        render(
            StatusCode::BAD_REQUEST,
            &ErrorPage {
                layout,
                message: message.into(),
                hint: "Correct the value and try again.".to_string(),
            },
        )
    }
}

#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub layout: Layout,
    pub message: String,
    pub hint: String,
}

async fn not_found(ctx: Ctx, uri: axum::http::Uri) -> Response {
    let p = Problem::new(
        404,
        "no such page",
        format!("nothing is served at {}", uri.path()),
    );
    ctx.problem_page("Not found", "", &p).await
}

// -------------------------------------------------------------------------------- responses

/// The page's security headers: scripts, styles and images only from this origin (no inline
/// script or style), no framing, forms only to this origin.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

/// The flash cookie: set by a form's redirect, shown and cleared by the next page.
const FLASH_COOKIE: &str = "ballast_flash";

/// Renders a template as an HTML response; a template error is a plain 500 (never a panic).
pub fn render<T: Template>(status: StatusCode, page: &T) -> Response {
    match page.render() {
        Ok(html) => html_response(status, html, true),
        Err(e) => html_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "<!doctype html><title>error</title><p>the page could not be rendered: {}</p>",
                svg::esc(&e.to_string())
            ),
            false,
        ),
    }
}

fn html_response(status: StatusCode, html: String, clear_flash: bool) -> Response {
    let mut response = (status, html).into_response();
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if clear_flash {
        h.insert(
            header::SET_COOKIE,
            HeaderValue::from_static(
                "ballast_flash=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict",
            ),
        );
    }
    response
}

/// 303 to `to` (a path this module built, never one from input) with a flash for the next page.
pub fn redirect(to: &str, flash: &Flash) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let h = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(to) {
        h.insert(header::LOCATION, location);
    } else {
        h.insert(header::LOCATION, HeaderValue::from_static("/ui"));
    }
    let value = format!(
        "{FLASH_COOKIE}={}; Path=/ui; Max-Age=120; HttpOnly; SameSite=Strict",
        encode_flash(flash)
    );
    if let Ok(cookie) = HeaderValue::from_str(&value) {
        h.insert(header::SET_COOKIE, cookie);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `kind*message*hint`, each part percent-encoded (so `*` only separates them and the value is
/// cookie-safe), the texts cut so the cookie stays small.
fn encode_flash(flash: &Flash) -> String {
    format!(
        "{}*{}*{}",
        flash.kind,
        crate::url::enc(&fmt::clip(&flash.message, 700)),
        crate::url::enc(&fmt::clip(&flash.hint, 300))
    )
}

fn decode_flash(value: &str) -> Option<Flash> {
    let mut parts = value.splitn(3, '*');
    let kind = match parts.next()? {
        "ok" => "ok",
        "error" => "error",
        _ => "info",
    };
    Some(Flash {
        kind,
        message: percent_decode(parts.next()?)?,
        hint: percent_decode(parts.next().unwrap_or_default())?,
    })
}

fn read_flash(host: &dyn Host, headers: &HeaderMap) -> Option<Flash> {
    host.cookie(headers, FLASH_COOKIE)
        .and_then(|value| decode_flash(&value))
}

/// Decodes `%XX` escapes (and `+` as a space); `None` for invalid escapes or UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// A form body as name/value pairs (a malformed body reads as no fields: every handler treats
/// missing fields as bad input and says so).
pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn parse(body: &[u8]) -> Form {
        Form(serde_urlencoded::from_bytes(body).unwrap_or_default())
    }

    /// The first value of `name`, trimmed; `""` when absent.
    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.trim())
    }

    /// A checkbox: present with any value but `false`/`off`.
    pub fn checked(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|(k, v)| k == name && !matches!(v.as_str(), "false" | "off" | "0"))
    }
}

/// A query string as name/value pairs, read like a [`Form`].
pub fn query_form(raw: Option<&str>) -> Form {
    Form::parse(raw.unwrap_or_default().as_bytes())
}

/// The refusal of a cross-site form post.
pub async fn cross_site(ctx: &Ctx) -> Response {
    let p = Problem::new(
        403,
        "cross-site form post refused",
        "the form was not sent from a ballast page of this address",
    );
    ctx.problem_page("Refused", "", &p).await
}

// ------------------------------------------------------------------------ shared view parts

/// A table cell: text (escaped by the template), an optional link, CSS class, and optional
/// trusted SVG from [`svg`].
pub struct Cell {
    pub text: String,
    pub href: Option<String>,
    pub class: &'static str,
    /// A second, smaller line.
    pub sub: Option<String>,
    pub svg: Option<String>,
}

impl Cell {
    pub fn t(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            href: None,
            class: "",
            sub: None,
            svg: None,
        }
    }

    /// A numeric cell (right-aligned).
    pub fn n(text: impl Into<String>) -> Cell {
        Cell {
            class: "num",
            ..Cell::t(text)
        }
    }

    pub fn link(mut self, href: impl Into<String>) -> Cell {
        self.href = Some(href.into());
        self
    }

    pub fn class(mut self, class: &'static str) -> Cell {
        self.class = class;
        self
    }

    /// A second, smaller line under the text (the name the templates use; not subtraction).
    #[allow(clippy::should_implement_trait)]
    pub fn sub(mut self, sub: impl Into<String>) -> Cell {
        self.sub = Some(sub.into());
        self
    }

    pub fn svg(mut self, svg: String) -> Cell {
        self.svg = Some(svg);
        self
    }
}

/// A table: a caption, column heads, rows, and what to say when there are none.
pub struct Table {
    pub caption: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    pub empty: String,
}

impl Table {
    pub fn new(caption: impl Into<String>, head: &[&str]) -> Table {
        Table {
            caption: caption.into(),
            head: head.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            empty: "Nothing to show.".to_string(),
        }
    }

    pub fn empty(mut self, text: impl Into<String>) -> Table {
        self.empty = text.into();
        self
    }

    /// Adds a row; a cell with nothing in it says `—` (no blank cells: a reader cannot tell an
    /// empty value from a missing one).
    pub fn row(&mut self, mut cells: Vec<Cell>) {
        for c in &mut cells {
            if c.text.trim().is_empty() && c.svg.is_none() && c.sub.is_none() {
                c.text = fmt::UNKNOWN.to_string();
                // Nothing is neither bad nor good: no state colour on an empty value.
                if matches!(c.class, "bad" | "warn" | "ok") {
                    c.class = "";
                }
            }
        }
        self.rows.push(cells);
    }
}

/// A key/value pair of a facts list.
pub struct Fact {
    pub key: String,
    pub value: String,
    pub class: &'static str,
    pub href: Option<String>,
}

/// A fact; an empty value says `—`.
pub fn fact(key: impl Into<String>, value: impl Into<String>) -> Fact {
    let value: String = value.into();
    Fact {
        key: key.into(),
        value: if value.trim().is_empty() {
            fmt::UNKNOWN.to_string()
        } else {
            value
        },
        class: "",
        href: None,
    }
}

impl Fact {
    pub fn class(mut self, class: &'static str) -> Fact {
        self.class = class;
        self
    }

    pub fn link(mut self, href: impl Into<String>) -> Fact {
        self.href = Some(href.into());
        self
    }
}

/// A part of a page that could not be loaded, said in place of it.
pub struct Notice {
    pub message: String,
    pub hint: String,
}

impl From<&Problem> for Notice {
    fn from(p: &Problem) -> Notice {
        Notice {
            message: p.message(),
            hint: p.hint().to_string(),
        }
    }
}

impl Notice {
    /// The API's problem said in a form's words: each field name the API used (`brokerId`)
    /// becomes the label the form shows for it (“One broker”), whole names only.
    pub fn in_form_words(p: &Problem, labels: &[(&str, &str)]) -> Notice {
        let n = Notice::from(p);
        Notice {
            message: with_labels(&n.message, labels),
            hint: with_labels(&n.hint, labels),
        }
    }
}

/// `text` with every whole identifier found in `labels` replaced by its label in quotes.
fn with_labels(text: &str, labels: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match labels.iter().find(|(name, _)| *name == word.as_str()) {
            Some((_, label)) => {
                out.push('“');
                out.push_str(label);
                out.push('”');
            }
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_names_the_forms_labels_not_the_apis_fields() {
        let labels = [("brokerId", "One broker"), ("brokerIds", "Several brokers")];
        assert_eq!(
            with_labels(
                "brokerId: must be 1 or more; brokerIds: not a list",
                &labels
            ),
            "“One broker”: must be 1 or more; “Several brokers”: not a list"
        );
        // Whole names only: `brokerIdx` is not `brokerId`.
        assert_eq!(with_labels("brokerIdx", &labels), "brokerIdx");
    }

    #[test]
    fn a_flash_survives_its_cookie() {
        let flash = Flash {
            kind: "error",
            message: "409: proposal is not current — a; b=c | d".into(),
            hint: "é".into(),
        };
        let encoded = encode_flash(&flash);
        assert!(encoded
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b';' && b != b','));
        // A cookie value: it makes a header value, and reads back as the flash it was.
        assert!(HeaderValue::from_str(&format!("other=1; {FLASH_COOKIE}={encoded}")).is_ok());
        assert_eq!(decode_flash(&encoded), Some(flash));
    }

    #[test]
    fn forms_read_checkboxes_and_missing_fields() {
        let f = Form::parse(b"force=on&reason=disk+swap&x=%ZZ");
        assert!(f.checked("force"));
        assert!(!f.checked("drain"));
        assert_eq!(f.get("missing"), "");
        let f = Form::parse(b"reason=disk+swap&force=on");
        assert_eq!(f.get("reason"), "disk swap");
    }
}
