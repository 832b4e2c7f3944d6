//! The routes the router serves, read from the code (shared by the OpenAPI and auth tests): a
//! route added later is found without anyone listing it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Served, but not part of the API description: the documentation pages themselves and the
/// dashboard (HTML for people).
pub const UNDOCUMENTED_PREFIXES: [&str; 2] = ["/docs", "/ui"];

/// The methods an OpenAPI path item can hold.
pub const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The routes the router serves, read from the code: every `.route("path", method(...)...)` call
/// in `web/src`, with the methods its method router names. A `.route(` whose path is not a string
/// literal, or a `.nest(`, fails the test: the routes must stay readable here.
pub fn served() -> BTreeSet<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read source");
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        // Nested routers are not read here: only under the undocumented prefixes (the dashboard).
        for call in [".nest(", ".nest_service("] {
            let mut rest = code.as_str();
            while let Some(at) = rest.find(call) {
                rest = &rest[at + call.len()..];
                let prefix = call_arguments(rest)
                    .trim_start()
                    .strip_prefix('"')
                    .and_then(|l| l.split('"').next());
                assert!(
                    prefix.is_some_and(|p| !documentable(p)),
                    "{}: a nested router this test cannot read: {}",
                    file.display(),
                    rest.lines().next().unwrap_or_default()
                );
            }
        }
        let mut rest = code.as_str();
        while let Some(at) = rest.find(".route(") {
            rest = &rest[at + ".route(".len()..];
            let args = call_arguments(rest);
            let trimmed = args.trim_start();
            let Some(literal) = trimmed.strip_prefix('"') else {
                panic!(
                    "{}: a route path that is not a string literal: {}",
                    file.display(),
                    trimmed.lines().next().unwrap_or_default()
                );
            };
            let end = literal.find('"').expect("closing quote");
            let path = &literal[..end];
            let methods_expr = &literal[end + 1..];
            let methods = method_names(methods_expr);
            assert!(
                !methods.is_empty(),
                "{}: no method for {path}",
                file.display()
            );
            for method in methods {
                out.insert((method, path.to_string()));
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text up to the `)` that closes a call whose `(` was just read.
fn call_arguments(text: &str) -> &str {
    let mut depth = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..i];
                }
            }
            _ => {}
        }
    }
    text
}

/// `get(a).delete(b)` → GET, DELETE: the axum method-router functions and methods named.
fn method_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for method in METHODS {
        // `get(handler)` and `get_service(service)` alike
        for call in [format!("{method}("), format!("{method}_service(")] {
            let mut from = 0;
            while let Some(at) = expr[from..].find(&call) {
                let start = from + at;
                let before = expr[..start].chars().next_back();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    out.push(method.to_ascii_uppercase());
                }
                from = start + call.len();
            }
        }
    }
    out
}

pub fn documentable(path: &str) -> bool {
    !UNDOCUMENTED_PREFIXES
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}/")))
}
