//! A small WebDriver client: starts Debian's `chromedriver` with a headless
//! `chromium` and sends it the few commands the browser test needs (open a
//! page, find and click elements, type, run a script, take a screenshot).

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http;

/// The browser and its driver, as Debian installs them.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// See [`CHROMIUM`].
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The key WebDriver names element references by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process with one browser session, ended when dropped.
pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: PathBuf,
}

/// An element of the page.
pub struct Element<'a> {
    browser: &'a Browser,
    id: String,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a fresh profile in
    /// `profile`, with everything that would reach for the network turned off.
    ///
    /// # Panics
    /// When chromium or chromedriver is missing or does not start.
    pub fn start(profile: &Path) -> Browser {
        for exe in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(exe).exists(),
                "{exe} is missing: install it with `apt-get install -y chromium chromium-driver`"
            );
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let deadline = Instant::now() + Duration::from_secs(30);
        while http::request(addr, "GET", "/status", None).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::fs::remove_dir_all(profile);
        std::fs::create_dir_all(profile).expect("profile dir");
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=900,1000",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
        }}});
        let mut browser = Browser {
            driver,
            addr,
            session: String::new(),
            _profile: profile.to_path_buf(),
        };
        let answer = browser.command("POST", "/session", Some(capabilities));
        browser.session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        browser
    }

    /// Sends one command and returns its `value`.
    fn command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string());
        let response = http::request(self.addr, method, path, body.as_deref().map(str::as_bytes))
            .unwrap_or_else(|e| panic!("webdriver {method} {path}: {e}"));
        let answer = response.json();
        assert!(
            response.status == 200,
            "webdriver {method} {path}: {} {answer}",
            response.status
        );
        answer["value"].clone()
    }

    fn session_command(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.command(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Opens `url`.
    pub fn goto(&self, url: &str) {
        self.session_command("POST", "/url", Some(json!({ "url": url })));
    }

    /// The element `css` selects.
    ///
    /// # Panics
    /// When there is none.
    pub fn find(&self, css: &str) -> Element<'_> {
        let found = self.session_command(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        Element {
            browser: self,
            id: found[ELEMENT]
                .as_str()
                .unwrap_or_else(|| panic!("no element {css}: {found}"))
                .to_string(),
        }
    }

    /// Runs `script` (a function body) in the page and returns its result.
    pub fn run(&self, script: &str) -> Value {
        self.session_command(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// Waits until `script` returns true, for at most `timeout`.
    ///
    /// # Panics
    /// When it does not.
    pub fn wait_for(&self, script: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.run(script) != Value::Bool(true) {
            assert!(Instant::now() < deadline, "timed out waiting for: {script}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Saves a PNG screenshot of the window to `path`.
    pub fn screenshot(&self, path: &Path) {
        let data = self.session_command("GET", "/screenshot", None);
        let png = decode_base64(data.as_str().expect("base64 text"));
        std::fs::write(path, png).expect("write the screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = http::request(self.addr, "DELETE", &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Element<'_> {
    fn command(&self, method: &str, what: &str, body: Option<Value>) -> Value {
        self.browser
            .session_command(method, &format!("/element/{}{what}", self.id), body)
    }

    /// Clicks it.
    pub fn click(&self) {
        self.command("POST", "/click", Some(json!({})));
    }

    /// Empties an input.
    pub fn clear(&self) {
        self.command("POST", "/clear", Some(json!({})));
    }

    /// Types `text` into it.
    pub fn send_keys(&self, text: &str) {
        self.command("POST", "/value", Some(json!({ "text": text })));
    }

    /// Its visible text.
    pub fn text(&self) -> String {
        self.command("GET", "/text", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// Standard base64 (as WebDriver sends screenshots) to bytes.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (k, &d) in chunk.iter().enumerate() {
            n |= u32::from(d) << (18 - 6 * k);
        }
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_decodes() {
        assert_eq!(super::decode_base64("TWFu"), b"Man");
        assert_eq!(super::decode_base64("TWE="), b"Ma");
        assert_eq!(super::decode_base64("TQ=="), b"M");
    }
}
