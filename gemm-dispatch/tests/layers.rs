//! The runtime's modules form layers: each imports only modules of its own layer or the layers
//! below, and no module imports one that imports it back (directly or through others).
//!
//! | rank | layer |
//! |---|---|
//! | 4 | `api` |
//! | 3 | `batch` |
//! | 2 | `backends` |
//! | 1 | `plan` |
//! | 0 | `ops`, `error`, `call_log` |
//!
//! The test reads `src/` as text: every `crate::...` and `super::...` path in code (comments and
//! `#[cfg(test)]` modules aside) is an edge from the file's module to the deepest module the path
//! names. `lib.rs` only declares and re-exports, and is not a node.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rank(module: &str) -> Option<u32> {
    match module.split("::").next()? {
        "api" => Some(4),
        "batch" => Some(3),
        "backends" => Some(2),
        "plan" => Some(1),
        "ops" | "error" | "call_log" => Some(0),
        _ => None,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `api/parallel/device.rs` -> `api::parallel::device`; `backends/mod.rs` -> `backends`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without comments and without its `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = match text.find("\n#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a file names that starts with `crate::` or `super::`, with `use a::{b, c::d}`
/// groups expanded, in absolute form (without `crate::`).
fn paths(module: &str, code: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let rest: String = bytes[i..bytes.len().min(i + 8)].iter().collect();
        let starts = (rest.starts_with("crate::") || rest.starts_with("super::"))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == '_' || bytes[i - 1] == ':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && ident(bytes[j]) {
            j += 1;
        }
        let head: String = bytes[i..j].iter().collect();
        let head = head.trim_end_matches(':').to_string();
        let mut full = vec![head.clone()];
        if j < bytes.len() && bytes[j] == '{' {
            let end = (j..bytes.len()).find(|&k| bytes[k] == '}').unwrap_or(bytes.len());
            let inner: String = bytes[j + 1..end].iter().collect();
            full = inner
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| format!("{head}::{}", s.split_whitespace().next().unwrap_or("")))
                .collect();
            j = end;
        }
        for p in full {
            let abs = if let Some(r) = p.strip_prefix("crate::") {
                r.to_string()
            } else {
                let mut base: Vec<&str> = module.split("::").collect();
                let mut r = p.as_str();
                while let Some(x) = r.strip_prefix("super::") {
                    base.pop();
                    r = x;
                }
                if base.is_empty() {
                    r.to_string()
                } else {
                    format!("{}::{r}", base.join("::"))
                }
            };
            out.push(abs);
        }
        i = j.max(i + 1);
    }
    out
}

/// The deepest module of `modules` that `path` lies in.
fn resolve(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().map(|n| parts[..n].join("::")).find(|m| modules.contains(m))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).filter(|m| m != "lib").collect();
    let mut edges = BTreeMap::new();
    for f in &files {
        let m = module_of(&src, f);
        if m == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let to: BTreeSet<String> = paths(&m, &code(&text))
            .iter()
            .filter_map(|p| resolve(p, &modules))
            .filter(|t| *t != m && !m.starts_with(&format!("{t}::")))
            .collect();
        edges.insert(m, to);
    }
    edges
}

#[test]
fn the_parser_sees_what_a_file_imports() {
    let code = code(
        "use crate::plan::{choice, kernel_plan::KernelPlan}; // crate::api::x\nuse super::{split, Reduce};\nlet x = crate::backends::hip::as_hip(&d);",
    );
    let p = paths("api::parallel::device", &code);
    assert_eq!(
        p,
        [
            "plan::choice",
            "plan::kernel_plan::KernelPlan",
            "api::parallel::split",
            "api::parallel::Reduce",
            "backends::hip::as_hip"
        ]
    );
}

#[test]
fn every_module_is_in_a_layer_and_imports_only_downward() {
    let g = graph();
    assert!(g.len() > 20, "the runtime's modules were not found: {g:?}");
    let mut bad = Vec::new();
    for (from, tos) in &g {
        let rf = rank(from).unwrap_or_else(|| panic!("module {from} is in no layer"));
        for to in tos {
            let rt = rank(to).unwrap_or_else(|| panic!("module {to} is in no layer"));
            if rt > rf {
                bad.push(format!("{from} (layer {rf}) imports {to} (layer {rt})"));
            }
        }
    }
    assert!(bad.is_empty(), "imports running back up:\n{}", bad.join("\n"));
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let g = graph();
    // Depth-first search for a cycle; report the first one found as a path.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for t in g.get(n).into_iter().flatten() {
            match state.get(t.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == t).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(t.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(t, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, &g, &mut state, &mut Vec::new()) {
                panic!("import circle: {}", c.join(" -> "));
            }
        }
    }
}
