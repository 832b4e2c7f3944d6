//! A small Chrome DevTools Protocol client over `--remote-debugging-pipe`: Chromium reads
//! commands from fd 3 and writes answers and events to fd 4, each JSON message ended by a NUL
//! byte. No WebDriver, no websocket, no extra crate: two pipes and serde_json.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The Chromium binary: `BALLAST_CHROMIUM`, else the first of Debian's and the usual names on
/// `PATH`. None when there is none (the browser tests then skip and say why).
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BALLAST_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// A pipe whose ends sit above fd 9 (so moving them to 3 and 4 in the child cannot clobber one
/// with the other), close-on-exec.
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    let high = |fd: RawFd| {
        // SAFETY: fd is an open descriptor we own; F_DUPFD_CLOEXEC returns a new one or -1.
        let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
        assert!(new >= 10, "fcntl: {}", std::io::Error::last_os_error());
        // SAFETY: fd is open and ours; closing it once.
        unsafe { libc::close(fd) };
        // SAFETY: `new` is a fresh open descriptor nothing else owns.
        unsafe { OwnedFd::from_raw_fd(new) }
    };
    (high(fds[0]), high(fds[1]))
}

/// A headless Chromium driven over the pipe, in its own process group (killed with it).
pub struct Browser {
    child: Child,
    commands: std::fs::File,
    events: Receiver<Value>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
    /// Exceptions and console errors the pages raised.
    pub errors: Vec<String>,
}

/// How long one command or one page load may take.
const STEP: Duration = Duration::from_secs(20);

impl Browser {
    /// Starts Chromium with a fresh profile and opens one page (a tab) at about:blank.
    pub fn start(binary: &Path) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let (cmd_read, cmd_write) = pipe();
        let (out_read, out_write) = pipe();
        let (child_in, child_out) = {
            use std::os::fd::AsRawFd;
            (cmd_read.as_raw_fd(), out_write.as_raw_fd())
        };
        let mut command = Command::new(binary);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-pipe",
                "--window-size=1440,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            // Cargo's LD_LIBRARY_PATH holds libraries built for our tests, not for Chromium.
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        // SAFETY: between fork and exec only async-signal-safe calls (dup2) on descriptors that
        // are open in the child.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(child_in, 3) < 0 || libc::dup2(child_out, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start chromium");
        drop(cmd_read);
        drop(out_write);
        let (tx, events) = channel();
        let reader = std::fs::File::from(out_read);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            loop {
                let mut buf = Vec::new();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands: std::fs::File::from(cmd_write),
            events,
            next_id: 0,
            session: String::new(),
            _profile: profile,
            errors: Vec::new(),
        };
        let target = browser.call("Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].as_str().expect("target id").to_string();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            browser.page_call(domain, json!({}));
        }
        browser.viewport(900);
        browser
    }

    fn send(&mut self, method: &str, params: Value, session: bool) -> u64 {
        self.next_id += 1;
        let mut message = json!({ "id": self.next_id, "method": method, "params": params });
        if session {
            message["sessionId"] = json!(self.session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands.write_all(&bytes).expect("write to chromium");
        self.next_id
    }

    /// Waits for the answer to command `id`, handling events meanwhile (dialogs are accepted,
    /// errors recorded). `until_event`: also return when that event arrives (its params).
    fn pump(&mut self, id: Option<u64>, until_event: Option<&str>) -> Value {
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.events.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "chromium did not answer in {STEP:?} (waiting for {id:?} {until_event:?})"
                    )
                }
                Err(RecvTimeoutError::Disconnected) => panic!("chromium closed its pipe"),
            };
            if let (Some(want), Some(got)) = (id, message["id"].as_u64()) {
                if want == got {
                    if let Some(e) = message.get("error") {
                        panic!("chromium refused command {want}: {e}");
                    }
                    return message["result"].clone();
                }
                continue;
            }
            let method = message["method"].as_str().unwrap_or_default().to_string();
            self.event(&method, &message["params"]);
            if until_event == Some(method.as_str()) {
                return message["params"].clone();
            }
        }
    }

    fn event(&mut self, method: &str, params: &Value) {
        match method {
            // `data-confirm` forms ask before submitting: say yes, as an operator would.
            "Page.javascriptDialogOpening" => {
                self.send(
                    "Page.handleJavaScriptDialog",
                    json!({ "accept": true }),
                    true,
                );
            }
            "Runtime.exceptionThrown" => self.errors.push(format!(
                "exception: {}",
                params["exceptionDetails"]["exception"]["description"]
            )),
            "Log.entryAdded" if params["entry"]["level"] == "error" => self.errors.push(format!(
                "console: {} ({})",
                params["entry"]["text"], params["entry"]["url"]
            )),
            _ => {}
        }
    }

    /// Handles whatever arrived meanwhile, so a later wait sees only new events.
    fn drain(&mut self) {
        while let Ok(message) = self.events.try_recv() {
            if message.get("id").is_none() {
                let method = message["method"].as_str().unwrap_or_default().to_string();
                self.event(&method, &message["params"]);
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params, false);
        self.pump(Some(id), None)
    }

    fn page_call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params, true);
        self.pump(Some(id), None)
    }

    fn viewport(&mut self, height: u64) {
        self.page_call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1440, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
    }

    /// From the next page on, every `setInterval` of a page fires at least every `max_ms`
    /// (the dashboard's live refreshes of 3–15 s then happen within the test's patience). The
    /// pages' own code is unchanged; only the timer it asks for is shortened.
    pub fn fast_timers(&mut self, max_ms: u64) {
        let source = format!(
            "(() => {{ const si = window.setInterval; window.setInterval = (f, ms, ...a) => si(f, Math.min(ms || 0, {max_ms}), ...a); }})()"
        );
        self.page_call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": source }),
        );
    }

    /// Gives the keyboard focus to the element `selector`.
    pub fn focus(&mut self, selector: &str) {
        let found = self.eval(&format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; el.focus(); return document.activeElement === el; }})()",
            json!(selector)
        ));
        assert_eq!(
            found,
            json!(true),
            "cannot focus {selector} on {}",
            self.url()
        );
    }

    /// Emulates `prefers-color-scheme`.
    pub fn color_scheme(&mut self, scheme: &str) {
        self.page_call(
            "Emulation.setEmulatedMedia",
            json!({ "features": [{ "name": "prefers-color-scheme", "value": scheme }] }),
        );
    }

    /// Opens `url` and waits for its load event.
    pub fn goto(&mut self, url: &str) {
        self.drain();
        let answer = self.page_call("Page.navigate", json!({ "url": url }));
        if let Some(error) = answer.get("errorText").and_then(Value::as_str) {
            panic!("navigating to {url}: {error}");
        }
        self.pump(None, Some("Page.loadEventFired"));
    }

    /// Evaluates `expression` in the page and returns its value.
    pub fn eval(&mut self, expression: &str) -> Value {
        let answer = self.page_call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(e) = answer.get("exceptionDetails") {
            panic!("evaluating {expression}: {e}");
        }
        answer["result"]["value"].clone()
    }

    /// Clicks the element `selector` (a form's submit button: the form is posted, a
    /// `data-confirm` dialog accepted) and waits for the page it leads to.
    pub fn click_and_wait(&mut self, selector: &str) {
        self.drain();
        let found = self.eval(&format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; el.click(); return true; }})()",
            json!(selector)
        ));
        assert_eq!(
            found,
            json!(true),
            "no element {selector} on {}",
            self.url()
        );
        self.pump(None, Some("Page.loadEventFired"));
    }

    /// Clicks the element `selector` without waiting for a navigation.
    pub fn click(&mut self, selector: &str) {
        let found = self.eval(&format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; el.click(); return true; }})()",
            json!(selector)
        ));
        assert_eq!(
            found,
            json!(true),
            "no element {selector} on {}",
            self.url()
        );
    }

    /// Sets a form field's value.
    pub fn fill(&mut self, selector: &str, value: &str) {
        let found = self.eval(&format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; el.value = {}; return true; }})()",
            json!(selector),
            json!(value)
        ));
        assert_eq!(found, json!(true), "no field {selector} on {}", self.url());
    }

    /// Presses Tab, as a keyboard user moving to the next control.
    pub fn press_tab(&mut self) {
        for kind in ["rawKeyDown", "keyUp"] {
            self.page_call(
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9 }),
            );
        }
    }

    pub fn url(&mut self) -> String {
        self.eval("location.href")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The visible text of the page.
    pub fn text(&mut self) -> String {
        self.eval("document.body.innerText")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The text of the first element matching `selector` (empty when none).
    pub fn text_of(&mut self, selector: &str) -> String {
        self.eval(&format!(
            "(() => {{ const el = document.querySelector({}); return el ? el.innerText : ''; }})()",
            json!(selector)
        ))
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// How many elements match `selector`.
    pub fn count(&mut self, selector: &str) -> u64 {
        self.eval(&format!(
            "document.querySelectorAll({}).length",
            json!(selector)
        ))
        .as_u64()
        .unwrap_or(0)
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
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The cookies the browser would send to `url` (`Network.getCookies`): name, value,
    /// httpOnly, secure, sameSite ("Lax", "Strict", "None" or absent), path, expires.
    pub fn cookies(&mut self, url: &str) -> Vec<Value> {
        let answer = self.page_call("Network.getCookies", json!({ "urls": [url] }));
        answer["cookies"].as_array().cloned().unwrap_or_default()
    }

    /// The HTTP status of the page's own document (the last answer of its redirects).
    pub fn status(&mut self) -> u64 {
        self.eval("performance.getEntriesByType('navigation')[0].responseStatus")
            .as_u64()
            .unwrap_or(0)
    }

    /// A PNG of the whole page (up to 8000 px tall) at `path`.
    pub fn screenshot(&mut self, path: &Path) {
        let height = self
            .eval("Math.ceil(document.documentElement.scrollHeight)")
            .as_u64()
            .unwrap_or(900)
            .clamp(600, 8000);
        self.viewport(height);
        let shot = self.page_call(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": false }),
        );
        self.viewport(900);
        let data = shot["data"].as_str().expect("screenshot data");
        let bytes = base64_decode(data).expect("screenshot is base64");
        std::fs::write(path, bytes).expect("write screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The whole group: Chromium's renderer and utility processes go with it.
        // SAFETY: killpg on the process group we created for this child.
        unsafe {
            libc::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Standard base64 (with padding) to bytes.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let clean: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    for chunk in clean.chunks(4) {
        let pad = chunk.iter().filter(|c| **c == b'=').count();
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            let v = if *c == b'=' { 0 } else { value(*c)? };
            n |= v << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad.min(2)]);
    }
    Some(out)
}

#[test]
fn base64_decodes_what_chromium_sends() {
    assert_eq!(base64_decode("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
    assert_eq!(base64_decode("aGk=").as_deref(), Some(&b"hi"[..]));
    assert_eq!(base64_decode("YWJj").as_deref(), Some(&b"abc"[..]));
    assert_eq!(base64_decode("YQ==").as_deref(), Some(&b"a"[..]));
}
