//! Structural checks: the internal crate graph, lint wiring, and no
//! placeholder macros in library code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::Result;

/// The internal edges each crate may have (normal and build dependencies on
/// other workspace crates). Mirrors the crate graph in `docs/ARCHITECTURE.md`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("zidane-bench", &[]),
    ("zidane-hooks", &[]),
    ("zidane-provider", &[]),
    ("zidane-loop", &["zidane-hooks", "zidane-provider"]),
    (
        "zidane-cache-telemetry",
        &["zidane-loop", "zidane-hooks", "zidane-provider"],
    ),
    (
        "zidane-run-summary",
        &["zidane-loop", "zidane-hooks", "zidane-provider"],
    ),
    ("zidane-mcp", &["zidane-loop", "zidane-hooks", "zidane-provider"]),
    (
        "zidane-agent",
        &[
            "zidane-hooks",
            "zidane-provider",
            "zidane-loop",
            "zidane-cache-telemetry",
            "zidane-run-summary",
            "zidane-mcp",
        ],
    ),
    (
        "zidane-tools",
        &["zidane-agent", "zidane-loop", "zidane-provider", "zidane-hooks"],
    ),
    (
        "zidane",
        &[
            "zidane-tools",
            "zidane-hooks",
            "zidane-provider",
            "zidane-loop",
            "zidane-cache-telemetry",
            "zidane-run-summary",
            "zidane-mcp",
            "zidane-agent",
        ],
    ),
    ("zidane-cli", &["zidane"]),
    ("xtask", &["zidane-loop"]),
];

pub(crate) fn run(root: &Path) -> Result {
    let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let meta: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("cargo metadata output: {e}"))?;
    let packages = meta["packages"].as_array().ok_or("cargo metadata: no packages")?;
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();

    let mut problems = Vec::new();
    for pkg in packages {
        let name = pkg["name"].as_str().unwrap_or_default();
        let Some(may) = allowed.get(name) else {
            problems.push(format!(
                "{name}: not in the crate graph (add it to xtask/src/tidy.rs and docs/ARCHITECTURE.md)"
            ));
            continue;
        };
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let is_dev = dep["kind"].as_str() == Some("dev");
            if members.contains(dep_name) && !is_dev && !may.contains(&dep_name) {
                problems.push(format!("{name} -> {dep_name}: edge not allowed by the crate graph"));
            }
        }
        let manifest = pkg["manifest_path"].as_str().unwrap_or_default();
        let text = std::fs::read_to_string(manifest).map_err(|e| format!("{manifest}: {e}"))?;
        if !has_workspace_lints(&text) {
            problems.push(format!("{name}: missing `[lints] workspace = true` in {manifest}"));
        }
        if name != "xtask" {
            let src = Path::new(manifest).parent().map(|d| d.join("src")).unwrap_or_default();
            scan_placeholders(&src, &mut problems)?;
        }
    }
    if problems.is_empty() {
        println!("tidy: {} crates, graph and lints as documented", packages.len());
        Ok(())
    } else {
        Err(format!(
            "tidy found {} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}

fn has_workspace_lints(manifest: &str) -> bool {
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

/// Library code must not ship placeholders; unit-test files are exempt.
fn scan_placeholders(dir: &Path, problems: &mut Vec<String>) -> Result {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            scan_placeholders(&path, problems)?;
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "tests.rs") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            for (i, line) in text.lines().enumerate() {
                for bad in ["todo!(", "unimplemented!(", "dbg!("] {
                    if line.contains(bad) && !line.trim_start().starts_with("//") {
                        problems.push(format!("{}:{}: `{bad}..)` in library code", path.display(), i + 1));
                    }
                }
            }
        }
    }
    Ok(())
}
