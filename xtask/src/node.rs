//! The Node package `@zidane-rs/agent` (`crates/zidane-node`):
//!
//! - `cargo xtask node-test`: builds the addon (one `cargo build` of one
//!   crate), type-checks the reference's examples and the package's
//!   signatures with `tsc --noEmit` (TypeScript and Node's types from npm,
//!   pinned, installed once into `target/node-tools`), then runs the
//!   package's `node --test` suites against the addon;
//! - `cargo xtask npm-pack [--profile NAME]`: the package for this machine
//!   (linux-x64, glibc) into `target/npm/zidane-rs-agent-VERSION.tgz`, then
//!   installed with `npm install` into an empty folder and run there against
//!   a loopback model, with no Rust toolchain on the `PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::archives::target_dir;
use crate::npm::{Content, Package, pack};
use crate::{Result, root, run};

/// TypeScript and Node 20's types, pinned.
const NODE_TOOLS: &[&str] = &["typescript@5.9.3", "@types/node@20.19.9"];

/// The crate's folder.
fn crate_dir() -> PathBuf {
    root().join("crates/zidane-node")
}

/// The addon a build of `profile` leaves.
fn addon(profile: &str) -> PathBuf {
    let folder = if profile == "dev" { "debug" } else { profile };
    target_dir().join(folder).join("libzidane_node.so")
}

fn build(profile: &str) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    run(
        &cargo,
        &["build", "-p", "zidane-node", "--profile", profile, "--locked"],
        &[],
    )?;
    let file = addon(profile);
    if file.exists() {
        Ok(file)
    } else {
        Err(format!("node: the build left no {}", file.display()))
    }
}

/// `cargo xtask node-test`.
pub(crate) fn test() -> Result {
    let file = build("dev")?;
    typecheck()?;
    let file = file.display().to_string();
    run(
        "node",
        &["--test", "--test-concurrency=1", "crates/zidane-node/tests/"],
        &[("ZIDANE_NODE_ADDON", file.as_str())],
    )
}

fn node_tools() -> Result<PathBuf> {
    let dir = target_dir().join("node-tools");
    if dir.join("node_modules/.bin/tsc").exists() && dir.join("node_modules/@types/node").exists() {
        println!("node-test: TypeScript present in {}", dir.display());
    } else {
        crate::npm_install(&dir, NODE_TOOLS, &[])?;
    }
    Ok(dir)
}

/// The reference's examples (every `ts` block importing from `zidane`, and
/// the collector's, which uses an `agent` and a `prompt` it declares), with
/// the import paths changed to the package's.
pub(crate) fn reference_examples(reference: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut open: Option<(&str, Vec<&str>)> = None;
    for line in reference.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(fence) = ["```ts", "~~~ts"].into_iter().find(|f| trimmed == *f) {
                    open = Some((&fence[..3], Vec::new()));
                }
            }
            Some((fence, body)) => {
                if trimmed == *fence {
                    blocks.push(body.join("\n"));
                    open = None;
                } else {
                    body.push(line);
                }
            }
        }
    }
    let mut out = Vec::new();
    for mut block in blocks {
        // An example shown as a fenced block inside the block.
        if let Some((_, inner)) = block.split_once("~~~ts\n") {
            block = inner.split("\n~~~").next().unwrap_or_default().to_owned();
        }
        if block.contains("from 'zidane") {
            out.push(retarget(&block));
        } else if block.contains("createRunSummaryCollector({") {
            out.push(format!(
                "import {{ createRunSummaryCollector, type Agent }} from '@zidane-rs/agent'\ndeclare const agent: Agent\ndeclare const prompt: string\n{block}\nexport {{}}\n"
            ));
        }
    }
    out
}

/// The first `ts` block of the README's TypeScript section.
pub(crate) fn readme_quick_start(readme: &str) -> Option<String> {
    let section = readme.split("\n## From TypeScript").nth(1)?;
    let block = section.split("\n```ts\n").nth(1)?;
    Some(format!("{}\n", block.split("\n```").next()?))
}

/// `from 'zidane…'` → `from '@zidane-rs/agent'`.
fn retarget(block: &str) -> String {
    block
        .lines()
        .map(|line| match line.find("from 'zidane") {
            Some(at) => format!("{}from '@zidane-rs/agent'", &line[..at]),
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn typecheck() -> Result {
    let tools = node_tools()?;
    let reference_path = root().join("../shared/spec/zidane-agent-reference.md");
    let reference = std::fs::read_to_string(&reference_path)
        .map_err(|e| format!("node-test: cannot read {}: {e}", reference_path.display()))?;
    let examples = reference_examples(&reference);
    if examples.len() < 3 {
        return Err(format!(
            "node-test: found {} examples in the reference, expected 3",
            examples.len()
        ));
    }
    let check = tools.join("check");
    let _ = std::fs::remove_dir_all(&check);
    std::fs::create_dir_all(&check).map_err(|e| format!("node-test: {}: {e}", check.display()))?;
    let mut files = Vec::new();
    for (i, example) in examples.iter().enumerate() {
        let name = format!("reference-example-{}.mts", i + 1);
        std::fs::write(check.join(&name), example).map_err(|e| format!("node-test: {name}: {e}"))?;
        files.push(name);
    }
    let readme = std::fs::read_to_string(root().join("README.md")).map_err(|e| format!("node-test: README.md: {e}"))?;
    let quick_start = readme_quick_start(&readme).ok_or("node-test: README.md has no TypeScript quick start")?;
    std::fs::write(check.join("readme-quick-start.mts"), quick_start).map_err(|e| format!("node-test: {e}"))?;
    files.push("readme-quick-start.mts".to_owned());
    std::fs::copy(crate_dir().join("tests/types/shapes.ts"), check.join("shapes.mts"))
        .map_err(|e| format!("node-test: shapes.ts: {e}"))?;
    files.push("shapes.mts".to_owned());
    let config = serde_json::json!({
        "compilerOptions": {
            "target": "ES2022",
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "lib": ["ES2022", "ESNext.Disposable"],
            "strict": true,
            "noEmit": true,
            "typeRoots": [tools.join("node_modules/@types")],
            "types": ["node"],
            "paths": { "@zidane-rs/agent": [crate_dir().join("npm/index.d.ts")] },
        },
        "files": files,
    });
    std::fs::write(check.join("tsconfig.json"), config.to_string()).map_err(|e| format!("node-test: tsconfig: {e}"))?;
    let tsc = tools.join("node_modules/.bin/tsc").display().to_string();
    let project = check.join("tsconfig.json").display().to_string();
    run(&tsc, &["--noEmit", "-p", &project], &[])
}

/// `cargo xtask npm-pack [--profile NAME]`.
pub(crate) fn pack_command(args: &[&str]) -> Result {
    let profile = match args {
        [] => "release",
        ["--profile", name] => name,
        _ => return Err("usage: cargo xtask npm-pack [--profile NAME]".to_owned()),
    };
    let tarball = pack_agent(profile)?;
    check_install(&tarball)
}

fn pack_agent(profile: &str) -> Result<PathBuf> {
    let file = build(profile)?;
    let dir = crate_dir().join("npm");
    let text = std::fs::read_to_string(dir.join("package.json")).map_err(|e| format!("npm-pack: package.json: {e}"))?;
    let mut manifest: Value = serde_json::from_str(&text).map_err(|e| format!("npm-pack: package.json: {e}"))?;
    let version = crate::archives::program_version(&root())?;
    manifest["version"] = Value::String(version);
    let mut files: Vec<(String, Content)> = ["index.js", "index.d.ts", "hooks.js", "hooks.d.ts", "README.md"]
        .iter()
        .map(|f| ((*f).to_owned(), Content::Copy(dir.join(f))))
        .collect();
    files.push(("zidane-agent.linux-x64-gnu.node".to_owned(), Content::Copy(file)));
    for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
        files.push((licence.to_owned(), Content::Copy(root().join(licence))));
    }
    let out = target_dir().join("npm");
    pack(&Package { manifest, files }, &out.join("stage"), &out)
}

/// Installs `tarball` into an empty folder and runs an agent from there
/// against a loopback model, with only Node on the `PATH`.
fn check_install(tarball: &Path) -> Result {
    let dir = target_dir().join("npm/install-check");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("npm-pack: {}: {e}", dir.display()))?;
    std::fs::write(
        dir.join("package.json"),
        "{\"name\":\"install-check\",\"private\":true}",
    )
    .map_err(|e| format!("npm-pack: {e}"))?;
    let tarball_text = tarball.display().to_string();
    crate::npm_install(&dir, &[tarball_text.as_str()], &[])?;
    let node = which_node()?;
    let node_dir = node.parent().map(Path::to_path_buf).unwrap_or_default();
    let script = crate_dir().join("tests/fixtures/installed.mjs");
    let output = Command::new(&node)
        .arg(&script)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", &node_dir)
        .env("HOME", &dir)
        .output()
        .map_err(|e| format!("npm-pack: could not start node: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && stdout.contains("installed package answered: pong") {
        println!("npm-pack: {} installs and runs without Rust", tarball.display());
        Ok(())
    } else {
        Err(format!(
            "npm-pack: the installed package failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

fn which_node() -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|p| p.join("node"))
        .find(|p| p.is_file())
        .ok_or_else(|| "npm-pack: no `node` on the PATH".to_owned())
}

#[cfg(test)]
mod tests;
