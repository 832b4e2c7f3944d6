//! The web process, the operations crate and the dashboard are layered: a module that another
//! imports never imports it back, directly or through others. A circle of modules is where a rule starts to
//! live in two places (an adapter reaching back into what it adapts), so this test fails on one
//! and names it, file by file.
//!
//! What counts as an import: a `use crate::…` tree, any `crate::a::b` path in the code, and
//! `super::…` paths, each resolved to the module file that defines it; comments and `#[cfg(test)]`
//! modules are left out. The crate root (`lib.rs`) is left out of the circles: it declares every
//! module, holds `AppState` and composes the router from them, and a module's `use crate::X` of
//! one of the root's own items counts as an import of the root, which imports nothing back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path (`["auth", "routes"]`), `[]` for the crate root.
type Module = Vec<String>;

fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let rel = file.strip_prefix(src).unwrap_or(&file).with_extension("");
            let mut parts: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                parts.pop();
            }
            (parts, file)
        })
        .collect()
}

/// The text of a source file without comments, strings' contents and its test module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a `use` tree names: `a::{b, c::{d, e}}` gives `a::b`, `a::c::d`, `a::c::e`.
fn use_tree(prefix: &[String], tree: &str, out: &mut Vec<Module>) {
    let tree = tree.trim();
    let mut depth = 0;
    let mut items = Vec::new();
    let mut start = 0;
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&tree[start..]);
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        match item.find('{') {
            Some(open) if item.ends_with('}') => {
                let mut p = prefix.to_vec();
                p.extend(segments(&item[..open]));
                use_tree(&p, &item[open + 1..item.len() - 1], out);
            }
            _ => {
                let name = item.split(" as ").next().unwrap_or(item);
                let mut p = prefix.to_vec();
                p.extend(segments(name));
                out.push(p);
            }
        }
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "self")
        .map(str::to_string)
        .collect()
}

/// A path that starts at `at` (after `crate::` or `super::`): its identifier characters and `::`.
fn path_at(text: &str, at: usize) -> &str {
    let rest = &text[at..];
    let end = rest
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == ':'))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].trim_end_matches(':')
}

/// The modules `module` (in `file`) imports, resolved to the longest module path that exists.
fn imports(module: &Module, file: &Path, all: &BTreeMap<Module, PathBuf>) -> BTreeSet<Module> {
    let text = code(&std::fs::read_to_string(file).unwrap_or_default());
    let mut paths: Vec<Module> = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("use crate::") {
        let tail = &rest[at + "use crate::".len()..];
        let end = tail.find(';').unwrap_or(tail.len());
        let tree = &tail[..end];
        let tree = tree
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or(tree);
        use_tree(&[], tree, &mut paths);
        rest = &tail[end..];
    }
    for (at, _) in text.match_indices("crate::") {
        paths.push(segments(path_at(&text, at + "crate::".len())));
    }
    let is_dir_module = file
        .file_name()
        .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
    let parent: Module = if is_dir_module {
        module.clone()
    } else {
        module[..module.len().saturating_sub(1)].to_vec()
    };
    for (at, _) in text.match_indices("super::") {
        if at >= 2 && &text[at - 2..at] == "::" {
            continue;
        }
        let mut base = if is_dir_module {
            parent[..parent.len().saturating_sub(1)].to_vec()
        } else {
            parent.clone()
        };
        let mut path = path_at(&text, at + "super::".len());
        while let Some(more) = path.strip_prefix("super::") {
            base.pop();
            path = more;
        }
        base.extend(segments(path));
        paths.push(base);
    }
    paths
        .into_iter()
        .map(|p| {
            (0..=p.len())
                .rev()
                .map(|n| p[..n].to_vec())
                .find(|m| all.contains_key(m))
                .unwrap_or_default()
        })
        .filter(|m| m != module)
        .collect()
}

/// A circle of modules, if there is one: each imports the next, the last the first.
fn circle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        m: &Module,
        edges: &BTreeMap<Module, BTreeSet<Module>>,
        marks: &mut BTreeMap<Module, Mark>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        match marks.get(m) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|s| s == m).unwrap_or(0);
                return Some(stack[from..].to_vec());
            }
            None => {}
        }
        marks.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(found) = visit(next, edges, marks, stack) {
                return Some(found);
            }
        }
        stack.pop();
        marks.insert(m.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for m in edges.keys() {
        let mut stack = Vec::new();
        if let Some(found) = visit(m, edges, &mut marks, &mut stack) {
            return Some(found);
        }
    }
    None
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate root".into()
    } else {
        m.join("::")
    }
}

fn assert_layered(src: &Path) {
    let all = modules(src);
    assert!(all.len() > 5, "no sources under {}", src.display());
    let edges: BTreeMap<Module, BTreeSet<Module>> = all
        .iter()
        .map(|(m, file)| (m.clone(), imports(m, file, &all)))
        .collect();
    if let Some(found) = circle(&edges) {
        let names: Vec<String> = found.iter().map(name).collect();
        panic!(
            "{}: these modules import each other in a circle: {} -> {}",
            src.display(),
            names.join(" -> "),
            names[0]
        );
    }
}

#[test]
fn webs_modules_import_each_other_in_one_direction_only() {
    assert_layered(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
}

#[test]
fn the_operations_modules_import_each_other_in_one_direction_only() {
    assert_layered(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/ops/src"));
}

#[test]
fn the_dashboards_modules_import_each_other_in_one_direction_only() {
    assert_layered(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/ui/src"));
}

#[test]
fn a_circle_of_two_modules_is_found_and_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("b")).expect("dirs");
    for (file, text) in [
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\nmod f;\n"),
        ("a.rs", "use crate::b::{x, y::Z};\n"),
        ("b/mod.rs", "pub mod y;\npub fn x() {}\n"),
        ("b/y.rs", "pub struct Z;\nfn f() { super::super::a::g() }\n"),
        ("c.rs", "// crate::a is only named in a comment\n"),
        ("d.rs", "use crate::{c, e};\n"),
        ("e.rs", "#[cfg(test)]\nmod tests { use crate::d; }\n"),
        ("f.rs", ""),
    ] {
        std::fs::write(src.join(file), text).expect("write");
    }
    let result = std::panic::catch_unwind(|| assert_layered(src));
    let message = result
        .err()
        .and_then(|e| e.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        message.contains("a -> b::y -> a") || message.contains("b::y -> a -> b::y"),
        "{message}"
    );
}
