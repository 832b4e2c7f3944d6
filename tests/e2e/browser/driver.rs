//! Headless Chromium driven over WebDriver: Debian's `chromedriver` (package `chromium-driver`,
//! the same version as `chromium`) and the `fantoccini` client. What WebDriver has no command
//! for goes through chromedriver's DevTools passthrough (`goog/cdp/execute`): a URL's cookies
//! with their HttpOnly and SameSite flags, `prefers-color-scheme`, a script run before each page
//! (fast timers) and the viewport's height (whole-page screenshots).

use std::fmt::Display;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::wd::{TimeoutConfiguration, WebDriverCompatibleCommand};
use fantoccini::{key::Key, Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};
use tokio::time::timeout;
use url::Url;

/// How long one command or one page load may take.
const STEP: Duration = Duration::from_secs(20);

/// `BALLAST_<var>`, else the first of `names` on `PATH`.
fn find(var: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(format!("BALLAST_{var}")) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// Chromium and its WebDriver server, or None after saying that `test` is skipped and why.
pub fn find_chromium(test: &str) -> Option<(PathBuf, PathBuf)> {
    let names = ["chromium", "chromium-browser", "google-chrome", "chrome"];
    let chromium = find("CHROMIUM", &names);
    let driver = find("CHROMEDRIVER", &["chromedriver"]);
    if chromium.is_none() || driver.is_none() {
        eprintln!(
            "SKIPPED {test}: no chromium or chromedriver on PATH (Debian: apt-get install chromium chromium-driver; scripts/test installs them), or set BALLAST_CHROMIUM and BALLAST_CHROMEDRIVER"
        );
    }
    Some((chromium?, driver?))
}

/// A chromedriver command outside the W3C set: POST `session/<id>/<path>` with `body`.
#[derive(Debug)]
struct Goog(&'static str, Value);

impl WebDriverCompatibleCommand for Goog {
    fn endpoint(&self, base: &Url, session: Option<&str>) -> Result<Url, url::ParseError> {
        base.join(&format!("session/{}/{}", session.unwrap_or(""), self.0))
    }

    fn method_and_body(&self, _: &Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.1.to_string()))
    }
}

/// One headless Chromium with a fresh profile, through its own chromedriver (in its own process
/// group, killed with it).
pub struct Browser {
    runtime: tokio::runtime::Runtime,
    client: Client,
    driver: Child,
    errors: Vec<String>,
    _profile: tempfile::TempDir,
}

/// Chromium's flags besides the profile.
const FLAGS: &str = "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --no-default-browser-check --disable-background-networking --disable-component-update \
    --disable-sync --disable-extensions --disable-dev-shm-usage --hide-scrollbars --mute-audio \
    --window-size=1440,900";

impl Browser {
    pub fn start((chromium, driver): &(PathBuf, PathBuf)) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let port = crate::support::free_port();
        let driver = Command::new(driver)
            .arg(format!("--port={port}"))
            // Cargo's LD_LIBRARY_PATH holds libraries built for our tests, not for Chromium.
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start chromedriver");
        let mut args: Vec<String> = FLAGS.split_whitespace().map(String::from).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let Value::Object(capabilities) = json!({
            "browserName": "chrome",
            // `data-confirm` forms ask before submitting: say yes, as an operator would.
            "unhandledPromptBehavior": "accept",
            "goog:loggingPrefs": { "browser": "ALL" },
            "goog:chromeOptions": { "binary": chromium, "args": args },
        }) else {
            unreachable!("an object")
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + STEP;
        let client = loop {
            let mut builder = ClientBuilder::new(HttpConnector::new());
            builder.capabilities(capabilities.clone());
            match runtime.block_on(builder.connect(&url)) {
                Ok(client) => break client,
                // chromedriver may not listen yet
                Err(_) if Instant::now() < deadline => sleep(Duration::from_millis(100)),
                Err(e) => panic!("chromedriver at {url}: {e}"),
            }
        };
        let mut browser = Browser {
            runtime,
            client,
            driver,
            errors: Vec::new(),
            _profile: profile,
        };
        let timeouts = TimeoutConfiguration::new(Some(STEP), Some(STEP), Some(Duration::ZERO));
        browser.run("timeouts", async |c| c.update_timeouts(timeouts).await);
        browser.viewport(900);
        browser
    }

    /// One WebDriver exchange, given at most two steps.
    fn attempt<T, E: Display>(
        &self,
        work: impl AsyncFnOnce(&Client) -> Result<T, E>,
    ) -> Result<T, String> {
        let exchange = async { timeout(STEP * 2, work(&self.client)).await };
        let answer = self.runtime.block_on(exchange);
        answer
            .map_err(|_| format!("no answer in {:?}", STEP * 2))?
            .map_err(|e| e.to_string())
    }

    fn run<T, E: Display>(&self, what: &str, work: impl AsyncFnOnce(&Client) -> Result<T, E>) -> T {
        self.attempt(work).unwrap_or_else(|e| panic!("{what}: {e}"))
    }

    /// A DevTools command through chromedriver; its result.
    fn cdp(&mut self, cmd: &str, params: Value) -> Value {
        let command = Goog("goog/cdp/execute", json!({ "cmd": cmd, "params": params }));
        self.run(cmd, async |c| c.issue_cmd(command).await)
    }

    fn viewport(&mut self, height: u64) {
        let metrics =
            json!({ "width": 1440, "height": height, "deviceScaleFactor": 1, "mobile": false });
        self.cdp("Emulation.setDeviceMetricsOverride", metrics);
    }

    /// From the next page on, every `setInterval` of a page fires at least every `max_ms`
    /// (the dashboard's live refreshes of 3–15 s then happen within the test's patience). The
    /// pages' own code is unchanged; only the timer it asks for is shortened.
    pub fn fast_timers(&mut self, max_ms: u64) {
        let source = format!(
            "(() => {{ const si = window.setInterval; window.setInterval = (f, ms, ...a) => si(f, Math.min(ms || 0, {max_ms}), ...a); }})()"
        );
        let script = json!({ "source": source });
        self.cdp("Page.addScriptToEvaluateOnNewDocument", script);
    }

    /// Emulates `prefers-color-scheme`.
    pub fn color_scheme(&mut self, scheme: &str) {
        let media = json!({ "features": [{ "name": "prefers-color-scheme", "value": scheme }] });
        self.cdp("Emulation.setEmulatedMedia", media);
    }

    /// Opens `url` and waits for its load event.
    pub fn goto(&mut self, url: &str) {
        self.run(url, async |c| c.goto(url).await);
    }

    /// Evaluates `expression` in the page and returns its value (a promise's, once settled).
    pub fn eval(&mut self, expression: &str) -> Value {
        let script = format!("return ({expression}\n);");
        self.run(expression, async |c| c.execute(&script, vec![]).await)
    }

    /// A string `expression` evaluates to (empty when it is none).
    fn string(&mut self, expression: &str) -> String {
        let value = self.eval(expression);
        value.as_str().unwrap_or_default().to_string()
    }

    /// Runs `action` on `el`, the first element matching `selector`; panics when there is none.
    fn on_element(&mut self, selector: &str, action: &str) {
        let script = format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; {action}; return true; }})()",
            json!(selector)
        );
        let done = self.eval(&script) == json!(true);
        assert!(done, "no element {selector} on {} ({action})", self.url());
    }

    /// Clicks the element `selector` (a form's submit button: the form is posted, a
    /// `data-confirm` dialog accepted) and waits for the page it leads to.
    pub fn click_and_wait(&mut self, selector: &str) {
        self.eval("window.__ballast_old_page = true");
        // After the script has answered: a confirm dialog must not hold up the answer.
        self.on_element(selector, "setTimeout(() => el.click())");
        let loaded =
            "return window.__ballast_old_page === undefined && document.readyState === 'complete'";
        let deadline = Instant::now() + STEP;
        // While the page changes, the script may fail: try again.
        while self.attempt(async |c| c.execute(loaded, vec![]).await) != Ok(json!(true)) {
            assert!(Instant::now() < deadline, "{selector}: no new page");
            sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the element `selector` without waiting for a navigation.
    pub fn click(&mut self, selector: &str) {
        self.on_element(selector, "el.click()");
    }

    /// Sets a form field's value.
    pub fn fill(&mut self, selector: &str, value: &str) {
        self.on_element(selector, &format!("el.value = {}", json!(value)));
    }

    /// Gives the keyboard focus to the element `selector`.
    pub fn focus(&mut self, selector: &str) {
        let focus = "el.focus(); if (document.activeElement !== el) return false";
        self.on_element(selector, focus);
    }

    /// Presses Tab, as a keyboard user moving to the next control.
    pub fn press_tab(&mut self) {
        let value = char::from(Key::Tab);
        let tab = KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value })
            .then(KeyAction::Up { value });
        self.run("pressing Tab", async |c| c.perform_actions(tab).await);
    }

    pub fn url(&mut self) -> String {
        self.string("location.href")
    }

    /// The visible text of the page.
    pub fn text(&mut self) -> String {
        self.string("document.body.innerText")
    }

    /// The text of the first element matching `selector` (empty when none).
    pub fn text_of(&mut self, selector: &str) -> String {
        let script = format!("document.querySelector({})?.innerText", json!(selector));
        self.string(&script)
    }

    /// How many elements match `selector`.
    pub fn count(&mut self, selector: &str) -> u64 {
        let script = format!("document.querySelectorAll({}).length", json!(selector));
        self.eval(&script).as_u64().unwrap_or(0)
    }

    /// Polls `condition` (a JavaScript expression) until it is true.
    pub fn wait_for(&mut self, condition: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.eval(condition) != json!(true) {
            assert!(
                Instant::now() < deadline,
                "timed out after {timeout:?} waiting for {condition} on {}",
                self.url()
            );
            sleep(Duration::from_millis(100));
        }
    }

    /// The cookies the browser would send to `url` (`Network.getCookies`): name, value,
    /// httpOnly, secure, sameSite ("Lax", "Strict", "None" or absent), path, expires.
    pub fn cookies(&mut self, url: &str) -> Vec<Value> {
        let answer = self.cdp("Network.getCookies", json!({ "urls": [url] }));
        answer["cookies"].as_array().cloned().unwrap_or_default()
    }

    /// The HTTP status of the page's own document (the last answer of its redirects).
    pub fn status(&mut self) -> u64 {
        let status = self.eval("performance.getEntriesByType('navigation')[0].responseStatus");
        status.as_u64().unwrap_or(0)
    }

    /// The exceptions and console errors the pages raised so far ("exception: …", "console: …"),
    /// from chromedriver's log of the browser.
    pub fn errors(&mut self) -> Vec<String> {
        let command = Goog("se/log", json!({ "type": "browser" }));
        let entries = self.run("the browser's log", async |c| c.issue_cmd(command).await);
        for entry in entries.as_array().into_iter().flatten() {
            let message = entry["message"].as_str().unwrap_or_default();
            if entry["level"] == "SEVERE" {
                let uncaught = entry["source"] == "javascript" && message.contains(" Uncaught ");
                let kind = if uncaught { "exception" } else { "console" };
                self.errors.push(format!("{kind}: {message}"));
            }
        }
        self.errors.clone()
    }

    /// A PNG of the whole page (up to 8000 px tall) at `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let height = self.eval("Math.ceil(document.documentElement.scrollHeight)");
        self.viewport(height.as_u64().unwrap_or(900).clamp(600, 8000));
        let png = self.run("screenshot", async |c| c.screenshot().await);
        self.viewport(900);
        std::fs::write(path, png).expect("write screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.attempt(async |c| c.clone().close().await);
        // The whole group: chromedriver, and Chromium with its helpers if it is still running.
        // SAFETY: killpg on the process group we created for this child.
        unsafe {
            libc::killpg(self.driver.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.driver.wait();
    }
}
