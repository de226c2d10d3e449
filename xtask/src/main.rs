//! Project automation, the one entry point for checks: `cargo xtask <command>`.
//!
//! - `ci`: every check CI runs, in order, stopping at the first failure;
//! - `tidy`: the crate graph and lint wiring match `docs/ARCHITECTURE.md`;
//! - `codegen [--check]`: writes (or checks) `docs/hooks.md` from the hook catalogue;
//! - `mcp-servers`: installs the MCP servers the tests run (npm and PyPI
//!   packages, pinned) into `target/mcp-servers`, when missing;
//! - `bench`: the project's benchmarks.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod codegen;
mod tidy;

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
        _ => Err("usage: cargo xtask <ci | tidy | codegen [--check] | mcp-servers | bench [--quick]>".to_owned()),
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
    run(
        cargo,
        &["test", "--workspace", "--all-targets", "--all-features", "--locked"],
        &[],
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
        let mut args = vec![
            "install",
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--prefix",
            dir_text.as_str(),
        ];
        args.extend(NPM_SERVERS);
        run("npm", &args, &[])?;
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

fn bench(args: &[&str]) -> Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let quick = args.contains(&"--quick");
    let mut cmd = vec!["bench", "--workspace", "--all-features", "--locked"];
    if quick {
        cmd.extend(["--", "--quick"]);
    }
    run(&cargo, &cmd, &[])
}
