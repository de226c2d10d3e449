//! Structural checks, each a pure function over what `cargo metadata`,
//! `cargo tree` and the sources say, so each is unit-tested on fixtures:
//!
//! - the internal crate graph matches the edge table of
//!   `docs/ARCHITECTURE.md` (the one place it is written);
//! - every declared internal edge is used by the crate's code;
//! - only the facade re-exports another workspace crate;
//! - external dependencies are declared once, in `[workspace.dependencies]`;
//! - `zidane-provider` without `http` pulls no hyper, rustls or tokio;
//! - `rmcp` sits behind a feature of the agent, on by default in the facade;
//! - lint wiring, and no placeholder macros in library code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::Result;

/// The crate that may re-export other workspace crates.
const FACADE: &str = "zidane";

/// The Node addon: napi-rs's macros expand `unsafe` N-API glue into it, so
/// it carries the workspace's lints itself, all but `unsafe_code`.
const NODE_ADDON: &str = "zidane-node";

/// The most lines a hand-written function (outside tests) may span, in
/// every crate.
const FUNCTION_LIMIT: usize = 100;

/// The most lines a hand-written source file may have, in every crate.
const FILE_LIMIT: usize = 1000;

/// Crates `zidane-provider` must not pull without its `http` feature.
const HTTP_STACK: &[&str] = &["hyper", "hyper-util", "hyper-rustls", "rustls", "tokio"];

pub(crate) fn run(root: &Path) -> Result {
    let meta = cargo_json(root, &["metadata", "--format-version", "1", "--no-deps", "--locked"])?;
    let packages = meta["packages"].as_array().ok_or("cargo metadata: no packages")?;
    let doc = read(&root.join("docs/ARCHITECTURE.md"))?;
    let table = edge_table(&doc)?;

    let mut problems = Vec::new();
    let members: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    for pkg in packages {
        let name = pkg["name"].as_str().unwrap_or_default();
        let manifest_path = PathBuf::from(pkg["manifest_path"].as_str().unwrap_or_default());
        let manifest = read(&manifest_path)?;
        let dir = manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
        let sources = read_sources(&dir.join("src"))?;
        let edges = internal_edges(pkg, &members);

        problems.extend(check_edges(name, &edges, &table));
        problems.extend(check_edges_used(name, &edges, &sources));
        if name != FACADE {
            problems.extend(check_no_reexports(name, &members, &sources));
        }
        problems.extend(check_workspace_deps(name, &manifest));
        if name == NODE_ADDON {
            let workspace = read(&root.join("Cargo.toml"))?;
            problems.extend(check_addon_lints(name, &manifest, &workspace));
        } else if !has_workspace_lints(&manifest) {
            problems.push(format!(
                "{name}: missing `[lints] workspace = true` in {}",
                manifest_path.display()
            ));
        }
        if name != "xtask" {
            problems.extend(check_placeholders(&sources));
        }
        if name == "zidane-agent" || name == FACADE {
            problems.extend(check_mcp_feature(pkg));
        }
        let src = dir.join("src");
        problems.extend(check_function_length(name, &src, &sources, FUNCTION_LIMIT));
        problems.extend(check_file_length(name, &src, &sources, FILE_LIMIT));
        // Unit-test files are written by people too: the same length rule.
        problems.extend(check_file_length(name, &src, &read_test_files(&src)?, FILE_LIMIT));
        problems.extend(check_import_cycles(name, &src, &sources));
        problems.extend(check_inline_tests(name, &src, &sources));
    }
    let readme = read(&root.join("README.md"))?;
    let facade_docs = read(&root.join("crates/zidane/src/lib.rs"))?;
    problems.extend(check_readme_crates(&members, &readme));
    if let Some(facade) = packages.iter().find(|p| p["name"] == FACADE) {
        problems.extend(check_features_documented(facade, &readme, &facade_docs));
    }
    let tree = cargo_text(
        root,
        &[
            "tree",
            "-p",
            "zidane-provider",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--locked",
        ],
    )?;
    problems.extend(check_provider_without_http(&tree));

    if problems.is_empty() {
        println!(
            "tidy: {} crates; graph, edges, re-exports, dependencies and lints as documented",
            packages.len()
        );
        Ok(())
    } else {
        Err(format!(
            "tidy found {} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn cargo_text(root: &Path, args: &[&str]) -> Result<String> {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(args)
        .current_dir(root)
        .output()
        .map_err(|e| format!("cargo {}: {e}", args[0]))?;
    if !output.status.success() {
        return Err(format!(
            "cargo {} failed: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

pub(crate) fn cargo_json(root: &Path, args: &[&str]) -> Result<Value> {
    serde_json::from_str(&cargo_text(root, args)?).map_err(|e| format!("cargo {} output: {e}", args[0]))
}

/// Each workspace crate's features one at a time: `(crate, None)` for no
/// feature at all, `(crate, Some(feature))` for one alone. Crates without
/// features are left out (`--all-features` covers them).
pub(crate) fn feature_builds(metadata: &Value) -> Vec<(String, Option<String>)> {
    let mut builds = Vec::new();
    for pkg in metadata["packages"].as_array().into_iter().flatten() {
        let (Some(name), Some(features)) = (pkg["name"].as_str(), pkg["features"].as_object()) else {
            continue;
        };
        let own: Vec<&String> = features.keys().filter(|f| *f != "default").collect();
        if own.is_empty() {
            continue;
        }
        builds.push((name.to_owned(), None));
        builds.extend(own.into_iter().map(|f| (name.to_owned(), Some(f.clone()))));
    }
    builds
}

/// Functions of a crate longer than `limit` lines, outside tests.
pub(crate) fn check_function_length(
    name: &str,
    src: &Path,
    sources: &[(PathBuf, String)],
    limit: usize,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in sources {
        if path.file_name().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        for (function, line, length) in crate::shape::long_functions(text, limit) {
            let shown = path.strip_prefix(src).unwrap_or(path).display();
            problems.push(format!(
                "{name}: `{function}` ({shown}:{line}) is {length} lines; split it (the limit is {limit})"
            ));
        }
    }
    problems
}

/// Whether `text` is a generated file (its first line says so): the
/// length rules are for what people write.
fn generated(text: &str) -> bool {
    text.lines()
        .next()
        .is_some_and(|l| l.starts_with("//") && l.contains("Generated") && l.contains("do not edit"))
}

/// Hand-written files of a crate longer than `limit` lines.
pub(crate) fn check_file_length(name: &str, src: &Path, sources: &[(PathBuf, String)], limit: usize) -> Vec<String> {
    sources
        .iter()
        .filter(|(_, text)| !generated(text))
        .filter_map(|(path, text)| {
            let lines = text.lines().count();
            (lines > limit).then(|| {
                let shown = path.strip_prefix(src).unwrap_or(path).display();
                format!("{name}: {shown} is {lines} lines; split it (the limit is {limit})")
            })
        })
        .collect()
}

/// Test modules written inline (`#[cfg(test)] mod tests { … }`): tests go
/// in a `tests.rs` beside the module, or in the crate's `tests/`.
pub(crate) fn check_inline_tests(name: &str, src: &Path, sources: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in sources {
        let blank = crate::shape::blank(text);
        let mut at = 0;
        while let Some(found) = blank[at..].find("#[cfg(test)]") {
            let start = at + found;
            at = start + 1;
            let after = blank[start + "#[cfg(test)]".len()..].trim_start();
            let Some(rest) = after.strip_prefix("mod ") else {
                continue;
            };
            let module: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if rest[module.len()..].trim_start().starts_with('{') {
                let shown = path.strip_prefix(src).unwrap_or(path).display();
                let line = blank[..start].matches('\n').count() + 1;
                problems.push(format!(
                    "{name}: {shown}:{line} writes `mod {module}` inline; move it to a `tests.rs` beside the module"
                ));
            }
        }
    }
    problems
}

/// Files of a crate that import each other in a cycle.
pub(crate) fn check_import_cycles(name: &str, src: &Path, sources: &[(PathBuf, String)]) -> Vec<String> {
    let files: Vec<(PathBuf, String)> = sources
        .iter()
        .filter(|(p, _)| p.file_name().is_none_or(|f| f != "tests.rs"))
        .map(|(p, t)| (p.strip_prefix(src).unwrap_or(p).to_path_buf(), t.clone()))
        .collect();
    let graph = crate::shape::imports(&files);
    crate::shape::cycles(&graph)
        .into_iter()
        .map(|cycle| {
            format!(
                "{name}: {} files import each other in a cycle: {}",
                cycle.len(),
                cycle.join(", ")
            )
        })
        .collect()
}

/// Workspace crates without a row in the README's crate table.
pub(crate) fn check_readme_crates(members: &BTreeSet<String>, readme: &str) -> Vec<String> {
    members
        .iter()
        .filter(|m| !readme.contains(&format!("| `{m}` |")))
        .map(|m| format!("{m}: no row in the README's crate table"))
        .collect()
}

/// Features of the facade that the README's feature list or the facade's
/// crate docs do not name.
pub(crate) fn check_features_documented(facade: &Value, readme: &str, facade_docs: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for feature in facade["features"].as_object().into_iter().flatten().map(|(f, _)| f) {
        if feature == "default" {
            continue;
        }
        if !readme.contains(&format!("- `{feature}`")) {
            problems.push(format!(
                "feature `{feature}` of the facade is not in the README's feature list"
            ));
        }
        if !facade_docs.contains(&format!("`{feature}`")) {
            problems.push(format!(
                "feature `{feature}` of the facade is not named in its crate docs"
            ));
        }
    }
    problems
}

/// A crate's normal and build dependencies on other workspace crates.
fn internal_edges(pkg: &Value, members: &BTreeSet<String>) -> Vec<String> {
    let mut edges: Vec<String> = pkg["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["kind"].as_str() != Some("dev"))
        .filter_map(|d| d["name"].as_str())
        .filter(|n| members.contains(*n))
        .map(str::to_owned)
        .collect();
    edges.sort();
    edges.dedup();
    edges
}

/// The edge table between the `crate-graph` markers of the architecture
/// document: `| \`crate\` | \`dep\`, \`dep\` |` rows (`nothing` for none).
pub(crate) fn edge_table(doc: &str) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let start = doc
        .find("<!-- crate-graph:start -->")
        .ok_or("docs/ARCHITECTURE.md: no `<!-- crate-graph:start -->` marker")?;
    let end = doc[start..]
        .find("<!-- crate-graph:end -->")
        .ok_or("docs/ARCHITECTURE.md: no `<!-- crate-graph:end -->` marker")?
        + start;
    let mut table = BTreeMap::new();
    for line in doc[start..end].lines() {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
        let [name, deps] = cells.as_slice() else { continue };
        let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) else {
            continue;
        };
        let deps: BTreeSet<String> = deps
            .split(',')
            .filter_map(|d| d.trim().strip_prefix('`').and_then(|d| d.strip_suffix('`')))
            .map(str::to_owned)
            .collect();
        table.insert(name.to_owned(), deps);
    }
    if table.is_empty() {
        return Err("docs/ARCHITECTURE.md: the crate-graph table has no rows".into());
    }
    Ok(table)
}

pub(crate) fn check_edges(name: &str, edges: &[String], table: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let Some(may) = table.get(name) else {
        return vec![format!(
            "{name}: not in the crate graph (add it to the table in docs/ARCHITECTURE.md)"
        )];
    };
    edges
        .iter()
        .filter(|dep| !may.contains(*dep))
        .map(|dep| format!("{name} -> {dep}: edge not allowed by the crate graph"))
        .collect()
}

/// `name` as code spells it (`zidane-core` → `zidane_core`).
fn ident(name: &str) -> String {
    name.replace('-', "_")
}

/// Library sources: every `.rs` file under `src`, path and text; unit-test
/// files (`tests.rs`, and anything under a `tests/` folder) are left out.
fn read_sources(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                if path.file_name().is_none_or(|n| n != "tests") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "tests.rs") {
                let text = read(&path)?;
                out.push((path, text));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The unit-test files under `src`: `tests.rs` files and what `tests/`
/// folders there hold.
fn read_test_files(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), false)];
    while let Some((dir, in_tests)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                let tests = in_tests || path.file_name().is_some_and(|n| n == "tests");
                stack.push((path, tests));
            } else if path.extension().is_some_and(|e| e == "rs")
                && (in_tests || path.file_name().is_some_and(|n| n == "tests.rs"))
            {
                let text = read(&path)?;
                out.push((path, text));
            }
        }
    }
    out.sort();
    Ok(out)
}

pub(crate) fn check_edges_used(name: &str, edges: &[String], sources: &[(PathBuf, String)]) -> Vec<String> {
    edges
        .iter()
        .filter(|dep| {
            let id = ident(dep);
            !sources
                .iter()
                .any(|(_, text)| text.contains(&format!("{id}::")) || text.contains(&format!("use {id}")))
        })
        .map(|dep| {
            format!(
                "{name} -> {dep}: declared but not used by the crate's code (remove it, or make it a dev-dependency)"
            )
        })
        .collect()
}

pub(crate) fn check_no_reexports(name: &str, members: &BTreeSet<String>, sources: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in sources {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let Some(rest) = line.strip_prefix("pub use ") else {
                continue;
            };
            let rest = rest.trim_start_matches("::");
            if let Some(other) = members
                .iter()
                .filter(|m| m.as_str() != name)
                .find(|m| rest.starts_with(&format!("{}::", ident(m))) || rest.starts_with(&format!("{};", ident(m))))
            {
                problems.push(format!(
                    "{}:{}: `{name}` re-exports `{other}`; only the facade re-exports other crates",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    problems
}

/// In every dependency table of a member manifest, an external dependency
/// must inherit from `[workspace.dependencies]` (path dependencies on
/// members are inherited too, by the same rule).
pub(crate) fn check_workspace_deps(name: &str, manifest: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            let section = line.trim_matches(|c| c == '[' || c == ']');
            in_deps = ["dependencies", "dev-dependencies", "build-dependencies"]
                .iter()
                .any(|d| section == *d || section.ends_with(&format!(".{d}")));
            continue;
        }
        if !in_deps || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((dep, value)) = line.split_once('=') else {
            continue;
        };
        let dep = dep.trim();
        if dep.ends_with(".workspace") || value.replace(' ', "").contains("workspace=true") {
            continue;
        }
        problems.push(format!(
            "{name}: `{dep}` is declared in the member manifest; declare it once in [workspace.dependencies] and use `{dep}.workspace = true`"
        ));
    }
    problems
}

/// `cargo tree -p zidane-provider --no-default-features -e normal --prefix none`.
pub(crate) fn check_provider_without_http(tree: &str) -> Vec<String> {
    let pulled: BTreeSet<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
    HTTP_STACK
        .iter()
        .filter(|c| pulled.contains(*c))
        .map(|c| format!("zidane-provider without `http` pulls `{c}`"))
        .collect()
}

/// The agent reaches rmcp only through an optional `zidane-mcp` behind its
/// `mcp` feature; the facade turns that feature on by default.
pub(crate) fn check_mcp_feature(pkg: &Value) -> Vec<String> {
    let name = pkg["name"].as_str().unwrap_or_default();
    let mut problems = Vec::new();
    for dep in pkg["dependencies"].as_array().into_iter().flatten() {
        let dep_name = dep["name"].as_str().unwrap_or_default();
        if (dep_name == "zidane-mcp" || dep_name == "rmcp")
            && dep["kind"].as_str() != Some("dev")
            && dep["optional"].as_bool() != Some(true)
        {
            problems.push(format!(
                "{name} -> {dep_name}: must be optional, behind the `mcp` feature"
            ));
        }
    }
    let features = &pkg["features"];
    let mcp_feature: Vec<&str> = features["mcp"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !mcp_feature.contains(&"dep:zidane-mcp") {
        problems.push(format!("{name}: the `mcp` feature must enable `dep:zidane-mcp`"));
    }
    if name == FACADE {
        let default: Vec<&str> = features["default"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !default.contains(&"mcp") {
            problems.push(format!("{name}: `mcp` must be a default feature of the facade"));
        }
    }
    problems
}

pub(crate) fn has_workspace_lints(manifest: &str) -> bool {
    let mut in_lints = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_lints = line == "[lints]";
        } else if in_lints && line.replace(' ', "") == "workspace=true" {
            return true;
        }
    }
    false
}

/// The lines of the `[header]` table of a manifest, without spaces.
fn table_lines(manifest: &str, header: &str) -> Vec<String> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            lines.push(line.replace(' ', ""));
        }
    }
    lines
}

/// The addon's own lint tables hold every workspace lint but `unsafe_code`.
pub(crate) fn check_addon_lints(name: &str, manifest: &str, workspace: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for kind in ["rust", "clippy"] {
        let own = table_lines(manifest, &format!("[lints.{kind}]"));
        for lint in table_lines(workspace, &format!("[workspace.lints.{kind}]")) {
            if !lint.starts_with("unsafe_code") && !own.contains(&lint) {
                problems.push(format!("{name}: `[lints.{kind}]` lacks the workspace's `{lint}`"));
            }
        }
    }
    problems
}

/// Library code must not ship placeholders.
pub(crate) fn check_placeholders(sources: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in sources {
        for (i, line) in text.lines().enumerate() {
            for bad in ["todo!(", "unimplemented!(", "dbg!("] {
                if line.contains(bad) && !line.trim_start().starts_with("//") {
                    problems.push(format!("{}:{}: `{bad}..)` in library code", path.display(), i + 1));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests;
