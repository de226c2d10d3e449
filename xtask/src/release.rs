//! The release. On a version tag, `dist` (cargo-dist) builds the `dist`
//! profile for every target, packs each build with the README and the
//! licences, and attaches the archives, their SHA-256 checksums, the
//! installer scripts and the Homebrew formula to a GitHub release
//! (`.github/workflows/release.yml`, generated from `dist-workspace.toml`);
//! `publish-npm.yml` then publishes the npm packages made from the same
//! archives ([`crate::npm`]).
//!
//! That workflow cannot run here. `cargo xtask release-check` checks what
//! can be, against the debug build instead of a release build:
//!
//! - the `dist` configuration names every target and installer, and the
//!   two workflows parse and are wired as `dist` generates them;
//! - the `cargo binstall` metadata resolves to each release archive and
//!   the program inside it;
//! - the installer script `dist` generates (kept in `xtask/release/`, as
//!   `release-refresh` last wrote it) picks this machine's archive from a
//!   loopback server, checks its checksum, installs into `~/.local/bin` or
//!   a given folder, and refuses an archive whose checksum differs; the
//!   installed program answers `--version`;
//! - `npm install -g` of the npm tarballs puts a `zidane` on the prefix's
//!   `PATH` that answers a prompt from the loopback model.
//!
//! `cargo xtask release-refresh` (with `dist` installed) regenerates the
//! workflow and the kept installer.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use yaml_rust2::{Yaml, YamlLoader};

use crate::archives::{
    APP, BIN, REPO, TARGETS, archive_name, binary_in_archive, host_triple, program_version, target_dir,
};
use crate::{Result, npm, root};

/// The installer script as `dist` generates it, kept to test.
const INSTALLER: &str = "xtask/release/zidane-cli-installer.sh";

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `cargo xtask release-check [--binary PATH]`: against the debug build,
/// or against the program at PATH (a `dist` build, to see it as a release
/// installs it).
pub(crate) fn check(binary: Option<&str>) -> Result {
    let root = root();
    let version = program_version(&root)?;
    let dist_version = check_files(&root, &version)?;
    println!(
        "release-check: dist {dist_version} configuration, release and npm workflows, binstall metadata and the kept installer name all {} targets",
        TARGETS.len()
    );
    // The debug build is this checkout's: its `--version` names the
    // commit and the profile.
    let (binary, names) = match binary {
        Some(path) => (
            Path::new(path)
                .canonicalize()
                .map_err(|e| format!("release-check: {path}: {e}"))?,
            Vec::new(),
        ),
        None => (debug_program()?, vec![head_commit(&root)?, "debug".to_owned()]),
    };
    let work = target_dir().join("release-check");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let work = work.canonicalize().map_err(|e| format!("{}: {e}", work.display()))?;
    check_installer(&root, &work, &binary, &version, &names)?;
    check_npm(&root, &work, &binary, &version)?;
    println!("\nrelease-check: the installer and the npm package install the program, which runs");
    Ok(())
}

/// The checks of the files alone; returns the pinned `dist` version.
fn check_files(root: &Path, version: &str) -> Result<String> {
    let dist_version =
        check_dist_config(&read(&root.join("dist-workspace.toml"))?).map_err(|problems| problems.join("\n  "))?;
    let mut problems = Vec::new();
    problems.extend(check_release_workflow(
        &read(&root.join(".github/workflows/release.yml"))?,
        &dist_version,
    ));
    problems.extend(check_publish_workflow(&read(
        &root.join(".github/workflows/publish-npm.yml"),
    )?));
    problems.extend(check_binstall(
        &read(&root.join("crates/zidane-cli/Cargo.toml"))?,
        version,
    ));
    problems.extend(check_kept_installer(&read(&root.join(INSTALLER))?, &dist_version));
    if problems.is_empty() {
        Ok(dist_version)
    } else {
        Err(format!(
            "release-check found {} problem(s) (after changing the dist configuration, run `cargo xtask release-refresh`):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ))
    }
}

/// `dist-workspace.toml`: every target, the installers, the publish jobs
/// and `~/.local/bin`; returns the pinned `dist` version.
pub(crate) fn check_dist_config(text: &str) -> std::result::Result<String, Vec<String>> {
    let table: toml::Table = text.parse().map_err(|e| vec![format!("dist-workspace.toml: {e}")])?;
    let Some(dist) = table.get("dist").and_then(toml::Value::as_table) else {
        return Err(vec!["dist-workspace.toml: no [dist] table".to_owned()]);
    };
    let list = |key: &str| -> BTreeSet<String> {
        dist.get(key)
            .and_then(toml::Value::as_array)
            .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    let mut problems = Vec::new();
    let targets = list("targets");
    for missing in TARGETS.iter().filter(|t| !targets.contains(**t)) {
        problems.push(format!("dist-workspace.toml: target {missing} is not built"));
    }
    for extra in targets.iter().filter(|t| !TARGETS.contains(&t.as_str())) {
        problems.push(format!(
            "dist-workspace.toml: target {extra} is built but not checked (add it to release::TARGETS)"
        ));
    }
    for (key, wanted) in [
        ("installers", &["shell", "powershell", "homebrew"][..]),
        ("publish-jobs", &["homebrew", "./publish-npm"][..]),
        ("install-path", &["~/.local/bin"][..]),
    ] {
        let have = list(key);
        for w in wanted.iter().filter(|w| !have.contains(**w)) {
            problems.push(format!("dist-workspace.toml: {key} lacks {w}"));
        }
    }
    // A build of the workspace would link (and optimize across crates) every
    // binary in it, for nothing.
    if dist.get("precise-builds").and_then(toml::Value::as_bool) != Some(true) {
        problems.push("dist-workspace.toml: precise-builds is not true".to_owned());
    }
    let pinned = dist.get("cargo-dist-version").and_then(toml::Value::as_str);
    match (pinned, problems.is_empty()) {
        (Some(version), true) => Ok(version.to_owned()),
        (None, _) => {
            problems.push("dist-workspace.toml: no cargo-dist-version".to_owned());
            Err(problems)
        }
        (Some(_), false) => Err(problems),
    }
}

fn yaml(name: &str, text: &str) -> std::result::Result<Yaml, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| format!("{name}: not YAML: {e}"))?;
    docs.into_iter().next().ok_or_else(|| format!("{name}: empty"))
}

/// The jobs of the release workflow as `dist` wires them, their targets
/// from the plan (`dist plan` reads them from `dist-workspace.toml`), the
/// pinned `dist` installed, and the npm job called.
pub(crate) fn check_release_workflow(text: &str, dist_version: &str) -> Vec<String> {
    let name = "release.yml";
    let doc = match yaml(name, text) {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    let mut problems = Vec::new();
    if !text.starts_with("# This file was autogenerated by dist") {
        problems.push(format!("{name}: not the workflow `dist generate` writes"));
    }
    if doc["on"]["push"]["tags"].as_vec().is_none_or(Vec::is_empty) {
        problems.push(format!("{name}: does not run on a version tag"));
    }
    let jobs = &doc["jobs"];
    for job in [
        "plan",
        "build-local-artifacts",
        "build-global-artifacts",
        "host",
        "publish-homebrew-formula",
        "custom-publish-npm",
        "announce",
    ] {
        if jobs[job].is_badvalue() {
            problems.push(format!("{name}: no job {job}"));
        }
    }
    if jobs["build-local-artifacts"]["strategy"]["matrix"].as_str()
        != Some("${{ fromJson(needs.plan.outputs.val).ci.github.artifacts_matrix }}")
    {
        problems.push(format!("{name}: the builds do not take their targets from the plan"));
    }
    let install = format!("cargo-dist/releases/download/v{dist_version}/");
    let installs_pinned = jobs["plan"]["steps"].as_vec().is_some_and(|steps| {
        steps
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains(&install)))
    });
    if !installs_pinned {
        problems.push(format!(
            "{name}: the plan does not install dist {dist_version} (run `dist generate`)"
        ));
    }
    if !jobs["custom-publish-npm"]["uses"]
        .as_str()
        .is_some_and(|u| u.ends_with(".github/workflows/publish-npm.yml"))
    {
        problems.push(format!("{name}: the npm job does not call publish-npm.yml"));
    }
    problems
}

/// The npm workflow: called with the plan, packs every platform from the
/// release archives and publishes.
pub(crate) fn check_publish_workflow(text: &str) -> Vec<String> {
    let name = "publish-npm.yml";
    let doc = match yaml(name, text) {
        Ok(doc) => doc,
        Err(problem) => return vec![problem],
    };
    let mut problems = Vec::new();
    if doc["on"]["workflow_call"]["inputs"]["plan"].is_badvalue() {
        problems.push(format!("{name}: not a workflow called with the plan"));
    }
    let runs: Vec<&str> = doc["jobs"]
        .as_hash()
        .into_iter()
        .flat_map(|jobs| jobs.values())
        .filter_map(|job| job["steps"].as_vec())
        .flatten()
        .filter_map(|step| step["run"].as_str())
        .collect();
    for wanted in ["cargo xtask npm-pack-cli --from-dist", "npm publish"] {
        if !runs.iter().any(|r| r.contains(wanted)) {
            problems.push(format!("{name}: no step runs `{wanted}`"));
        }
    }
    problems
}

/// Fills a `cargo binstall` template (`{ name }` or `{name}`).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = template.to_owned();
    for (key, value) in values {
        text = text
            .replace(&format!("{{ {key} }}"), value)
            .replace(&format!("{{{key}}}"), value);
    }
    text
}

/// `[package.metadata.binstall]` of the program: for every target, the URL
/// of its release archive and the program's path inside.
pub(crate) fn check_binstall(manifest: &str, version: &str) -> Vec<String> {
    let table: toml::Table = match manifest.parse() {
        Ok(table) => table,
        Err(e) => return vec![format!("zidane-cli's Cargo.toml: {e}")],
    };
    let meta = &table
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("binstall"));
    let Some(meta) = meta.and_then(toml::Value::as_table) else {
        return vec!["zidane-cli's Cargo.toml: no [package.metadata.binstall]".to_owned()];
    };
    let field = |triple: &str, key: &str| -> Option<String> {
        meta.get("overrides")
            .and_then(|o| o.get(triple))
            .and_then(|o| o.get(key))
            .or_else(|| meta.get(key))
            .and_then(toml::Value::as_str)
            .map(str::to_owned)
    };
    let mut problems = Vec::new();
    for triple in TARGETS {
        let (Some(url), Some(dir), Some(fmt)) = (
            field(triple, "pkg-url"),
            field(triple, "bin-dir"),
            field(triple, "pkg-fmt"),
        ) else {
            problems.push(format!("binstall: {triple} lacks pkg-url, bin-dir or pkg-fmt"));
            continue;
        };
        let suffix = match fmt.as_str() {
            "txz" => ".tar.xz",
            "zip" => ".zip",
            "tgz" => ".tar.gz",
            other => other,
        };
        let exe = if triple.contains("windows") { ".exe" } else { "" };
        let values = [
            ("repo", REPO),
            ("name", APP),
            ("version", version),
            ("target", triple),
            ("archive-suffix", suffix),
            ("archive-format", fmt.as_str()),
            ("bin", BIN),
            ("binary-ext", exe),
        ];
        let want_url = format!("{REPO}/releases/download/v{version}/{}", archive_name(triple));
        let got_url = fill(&url, &values);
        if got_url != want_url {
            problems.push(format!("binstall: {triple}: {got_url}, not {want_url}"));
        }
        let got_dir = fill(&dir, &values);
        if got_dir != binary_in_archive(triple) {
            problems.push(format!(
                "binstall: {triple}: the program is at {}, not {got_dir}",
                binary_in_archive(triple)
            ));
        }
    }
    problems
}

/// The kept installer is `dist`'s for the pinned version and checks the
/// SHA-256 of every target's archive.
pub(crate) fn check_kept_installer(text: &str, dist_version: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let provider = format!(r#""provider":{{"source":"cargo-dist","version":"{dist_version}"}}"#);
    if !text.contains(&provider) {
        problems.push(format!("{INSTALLER}: not generated by dist {dist_version}"));
    }
    for triple in TARGETS {
        let archive = archive_name(triple);
        match case_of(text, &archive) {
            Err(problem) => problems.push(problem),
            Ok(case) if !case.contains(r#"_checksum_style="sha256""#) => {
                problems.push(format!("{INSTALLER}: no SHA-256 for {archive}"));
            }
            Ok(_) => {}
        }
    }
    problems
}

/// Where the installer's `case` for `archive` starts and ends.
fn case_span(installer: &str, archive: &str) -> Result<(usize, usize)> {
    let label = format!("\"{archive}\")");
    let start = installer
        .find(&label)
        .ok_or_else(|| format!("{INSTALLER}: no case for {archive}"))?;
    let len = installer[start..]
        .find(";;")
        .ok_or_else(|| format!("{INSTALLER}: the case for {archive} does not end"))?;
    Ok((start, start + len))
}

fn case_of<'a>(installer: &'a str, archive: &str) -> Result<&'a str> {
    case_span(installer, archive).map(|(start, end)| &installer[start..end])
}

/// The installer with the SHA-256 it expects of `archive` set to `sha256`:
/// the one value a release's installer holds that differs here, where the
/// archive is the debug build's.
pub(crate) fn with_checksum(installer: &str, archive: &str, sha256: &str) -> Result<String> {
    let (start, end) = case_span(installer, archive)?;
    let key = "_checksum_value=\"";
    let at = installer[start..end]
        .find(key)
        .map(|i| start + i + key.len())
        .ok_or_else(|| format!("{INSTALLER}: no checksum for {archive}"))?;
    let close = installer[at..end]
        .find('"')
        .map(|i| at + i)
        .ok_or_else(|| format!("{INSTALLER}: the checksum for {archive} does not end"))?;
    Ok(format!("{}{sha256}{}", &installer[..at], &installer[close..]))
}

/// The short hash of the checkout's `HEAD`, as the program's build script
/// gives it.
fn head_commit(root: &Path) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["log", "-1", "--format=%h", "--abbrev=9"])
        .output()
        .map_err(|e| format!("could not start git: {e}"))?;
    let hash = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() && !hash.is_empty() {
        Ok(hash)
    } else {
        Err("release-check: git names no HEAD commit".to_owned())
    }
}

/// The debug build of the program as the test step leaves it (the same
/// command builds nothing after `cargo xtask ci`'s tests).
fn debug_program() -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    crate::run(
        &cargo,
        &[
            "test",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--locked",
            "--no-run",
        ],
        &[],
    )?;
    let binary = target_dir()
        .join("debug")
        .join(format!("{BIN}{}", std::env::consts::EXE_SUFFIX));
    if binary.exists() {
        Ok(binary)
    } else {
        Err(format!("release-check: no {}", binary.display()))
    }
}

fn sha256(path: &Path) -> Result<String> {
    let out = Command::new("sha256sum")
        .arg("-b")
        .arg(path)
        .output()
        .map_err(|e| format!("could not start sha256sum: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .filter(|_| out.status.success())
        .map(str::to_owned)
        .ok_or_else(|| format!("sha256sum {} failed", path.display()))
}

/// Packs `binary` in the release's layout for `triple` into `out` (with
/// its `.sha256` beside it, as a release has); `extra` adds a file, to make
/// an archive that is not the one the installer expects.
fn pack_archive(
    root: &Path,
    work: &Path,
    out: &Path,
    triple: &str,
    binary: &Path,
    extra: Option<&str>,
) -> Result<PathBuf> {
    let stage = work.join("stage");
    let folder = format!("{APP}-{triple}");
    let _ = std::fs::remove_dir_all(&stage);
    let inside = stage.join(&folder);
    std::fs::create_dir_all(&inside).map_err(|e| format!("{}: {e}", inside.display()))?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (from, to) in [
        (binary.to_owned(), BIN),
        (root.join("README.md"), "README.md"),
        (root.join("LICENSE-MIT"), "LICENSE-MIT"),
        (root.join("LICENSE-APACHE"), "LICENSE-APACHE"),
    ] {
        std::fs::copy(&from, inside.join(to)).map_err(|e| format!("copying {}: {e}", from.display()))?;
    }
    if let Some(name) = extra {
        std::fs::write(inside.join(name), "not part of the release\n").map_err(|e| e.to_string())?;
    }
    let archive = out.join(archive_name(triple));
    let archive_text = archive.display().to_string();
    let stage_text = stage.display().to_string();
    // The fastest xz level: the layout is the release's, the size is not.
    crate::run(
        "tar",
        &["-C", &stage_text, "-cJf", &archive_text, &folder],
        &[("XZ_OPT", "-0")],
    )?;
    let sum = sha256(&archive)?;
    let line = format!("{sum} *{}\n", archive_name(triple));
    std::fs::write(out.join(format!("{}.sha256", archive_name(triple))), line).map_err(|e| e.to_string())?;
    Ok(archive)
}

/// A loopback HTTP server of the files under a folder, noting each path
/// asked for.
struct FileServer {
    url: String,
    asked: Arc<Mutex<Vec<String>>>,
}

impl FileServer {
    fn start(dir: PathBuf) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("loopback server: {e}"))?;
        let addr = listener.local_addr().map_err(|e| format!("loopback server: {e}"))?;
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let noted = Arc::clone(&asked);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let _ = serve_file(stream, &dir, &noted);
            }
        });
        Ok(Self {
            url: format!("http://{addr}"),
            asked,
        })
    }

    /// The paths asked for since the last call.
    fn take_asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .map(|mut a| std::mem::take(&mut *a))
            .unwrap_or_default()
    }
}

fn serve_file(mut stream: TcpStream, dir: &Path, asked: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? <= 2 {
            break;
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
    if let Ok(mut asked) = asked.lock() {
        asked.push(path.clone());
    }
    let file = Some(dir.join(path.trim_start_matches('/')))
        .filter(|p| !path.contains("..") && p.is_file())
        .and_then(|p| std::fs::read(p).ok());
    match file {
        Some(body) => {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            )?;
            stream.write_all(&body)
        }
        None => stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"),
    }
}

/// Runs the installer script with `sh`, as `curl … | sh` does, in a clean
/// environment apart from `env`.
fn run_installer(script: &Path, env: &[(&str, &Path)], download: &str) -> Result<Output> {
    let mut cmd = Command::new("sh");
    cmd.arg(script).stdin(Stdio::null());
    for var in [
        "XDG_BIN_HOME",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
        "CARGO_HOME",
        "CARGO_DIST_FORCE_INSTALL_DIR",
        "INSTALLER_DOWNLOAD_URL",
        "INSTALLER_NO_MODIFY_PATH",
        "ZIDANE_CLI_INSTALL_DIR",
        "ZIDANE_CLI_NO_MODIFY_PATH",
        "ZIDANE_CLI_UNMANAGED_INSTALL",
        "ZIDANE_CLI_GITHUB_BASE_URL",
        "ZIDANE_CLI_GHE_BASE_URL",
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("ZIDANE_CLI_DOWNLOAD_URL", download);
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd.output().map_err(|e| format!("could not start sh: {e}"))
}

fn shown(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `program --version`, trimmed.
fn version_of(program: &Path) -> Result<String> {
    let out = Command::new(program)
        .arg("--version")
        .output()
        .map_err(|e| format!("could not start {}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(format!("{} --version failed:\n{}", program.display(), shown(&out)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The installed file is the build, and its `--version` is the build's:
/// the version, and the `names` (the commit and the profile).
fn same_program(installed: &Path, binary: &Path, version: &str, names: &[String]) -> Result {
    let same = std::fs::read(installed)
        .ok()
        .zip(std::fs::read(binary).ok())
        .is_some_and(|(a, b)| a == b);
    if !same {
        return Err(format!(
            "installer: {} is not the build it was given",
            installed.display()
        ));
    }
    let answered = version_of(installed)?;
    let built = version_of(binary)?;
    if answered != built
        || !answered.starts_with(&format!("{BIN} {version}"))
        || names.iter().any(|n| !answered.contains(n.as_str()))
    {
        return Err(format!(
            "installer: the installed program answers `{answered}` to --version, the build `{built}` (it must name {version}, {})",
            names.join(", ")
        ));
    }
    println!("installer: {} --version: {answered}", installed.display());
    Ok(())
}

/// The installer against an archive of the debug build: into the default
/// `~/.local/bin`, into a given folder, and refusing a different archive.
fn check_installer(root: &Path, work: &Path, binary: &Path, version: &str, names: &[String]) -> Result {
    println!("\n$ release-check: the installer script");
    let triple = host_triple()?;
    let archive = archive_name(&triple);
    let served = work.join("served");
    let release = pack_archive(root, work, &served.join("release"), &triple, binary, None)?;
    pack_archive(root, work, &served.join("tampered"), &triple, binary, Some("extra"))?;
    let sum = sha256(&release)?;
    let kept = read(&root.join(INSTALLER))?;
    let script = served.join("release").join(format!("{APP}-installer.sh"));
    std::fs::write(&script, with_checksum(&kept, &archive, &sum)?).map_err(|e| e.to_string())?;
    let server = FileServer::start(served)?;

    // As a person runs it: into ~/.local/bin, with a receipt.
    let home = work.join("home");
    let out = run_installer(&script, &[("HOME", &home)], &format!("{}/release", server.url))?;
    if !out.status.success() {
        return Err(format!("installer: failed into ~/.local/bin:\n{}", shown(&out)));
    }
    let asked = server.take_asked();
    if asked != [format!("/release/{archive}")] {
        return Err(format!("installer: asked for {asked:?}, not this machine's {archive}"));
    }
    same_program(&home.join(".local/bin").join(BIN), binary, version, names)?;
    let receipt = home.join(format!(".config/{APP}/{APP}-receipt.json"));
    if !read(&receipt)?.contains(&format!(r#""install_prefix":"{}""#, home.join(".local/bin").display())) {
        return Err(format!("installer: {} does not name ~/.local/bin", receipt.display()));
    }

    // Into a given folder, leaving the shell's profile alone.
    let prefix = work.join("prefix");
    let home2 = work.join("home2");
    let out = run_installer(
        &script,
        &[
            ("HOME", &home2),
            ("ZIDANE_CLI_INSTALL_DIR", &prefix),
            ("ZIDANE_CLI_NO_MODIFY_PATH", Path::new("1")),
        ],
        &format!("{}/release", server.url),
    )?;
    if !out.status.success() {
        return Err(format!("installer: failed into {}:\n{}", prefix.display(), shown(&out)));
    }
    same_program(&prefix.join(BIN), binary, version, names)?;
    if home2.join(".profile").exists() {
        return Err("installer: changed the profile though told not to".to_owned());
    }

    // An archive that is not the one the installer was made for.
    let refused = work.join("refused");
    let out = run_installer(
        &script,
        &[
            ("HOME", &home2),
            ("ZIDANE_CLI_INSTALL_DIR", &refused),
            ("ZIDANE_CLI_NO_MODIFY_PATH", Path::new("1")),
        ],
        &format!("{}/tampered", server.url),
    )?;
    let text = shown(&out);
    if out.status.success() || !text.contains("checksum mismatch") || refused.join(BIN).exists() {
        return Err(format!(
            "installer: an archive with another checksum was not refused ({}):\n{text}",
            out.status
        ));
    }
    println!("installer: refused an archive whose SHA-256 differs, installed nothing");
    Ok(())
}

/// What the loopback model answers.
const ANSWER: &str = "Hello from the loopback model.";

/// The loopback model (`zidane-bench`'s), on a runtime that lives as long
/// as the returned value; counts the requests it answers.
fn loopback_model(asked: Arc<AtomicUsize>) -> Result<(tokio::runtime::Runtime, String)> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_io()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    let url = runtime
        .block_on(zidane_bench::loopback::scripted_server(move |path, _body| {
            if path.ends_with("/v1/messages") {
                asked.fetch_add(1, Ordering::SeqCst);
            }
            zidane_bench::loopback::answer_sse(ANSWER, 12)
        }))
        .map_err(|e| format!("loopback model: {e}"))?;
    Ok((runtime, url))
}

/// `npm install -g` of the CLI's tarballs (this machine's platform package
/// carrying the debug build) into a fresh prefix, then `zidane -p` from
/// that prefix's `PATH` against the loopback model.
fn check_npm(root: &Path, work: &Path, binary: &Path, version: &str) -> Result {
    println!("\n$ release-check: the npm package");
    let host = npm::host()?;
    let tarballs = npm::pack_cli(
        root,
        &work.join("npm-stage"),
        &work.join("npm"),
        version,
        &[(host, binary.to_owned())],
    )?;
    let asked = Arc::new(AtomicUsize::new(0));
    let (_runtime, url) = loopback_model(Arc::clone(&asked))?;
    let prefix = work.join("npm-prefix");
    let cache = work.join("npm-cache");
    let start = Instant::now();
    let mut install = Command::new("npm");
    install
        .args(["install", "--global", "--prefix"])
        .arg(&prefix)
        .arg("--cache")
        .arg(&cache)
        .args(["--offline", "--no-audit", "--no-fund", "--loglevel=error"])
        .args(&tarballs);
    let out = install.output().map_err(|e| format!("could not start npm: {e}"))?;
    if !out.status.success() {
        return Err(format!("npm install -g failed:\n{}", shown(&out)));
    }
    let installed = start.elapsed();
    let path = format!(
        "{}:{}",
        prefix.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = work.join("npm-home");
    let folder = work.join("npm-work");
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    let zidane = |args: &[&str]| -> Result<Output> {
        let mut cmd = Command::new(BIN);
        for var in [
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "ZIDANE_PROVIDER",
            "ZIDANE_MODEL",
            "ZIDANE_PROFILE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("PATH", &path)
            .env("ZIDANE_HOME", &home)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .current_dir(&folder)
            .stdin(Stdio::null())
            .args(args)
            .output()
            .map_err(|e| format!("`zidane` is not on the npm prefix's PATH: {e}"))
    };
    let out = zidane(&["-p", "--base-url", &url, "Say hello."])?;
    let answered = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !stdout.contains(ANSWER) || asked.load(Ordering::SeqCst) != 1 {
        return Err(format!(
            "npm: the installed zidane did not answer from the loopback model ({}):\n{}",
            out.status,
            shown(&out)
        ));
    }
    let through = zidane(&["--version"])?;
    let built = version_of(binary)?;
    if String::from_utf8_lossy(&through.stdout).trim() != built {
        return Err(format!(
            "npm: `zidane --version` is not the build's `{built}`:\n{}",
            shown(&through)
        ));
    }
    // The launcher passes the program's exit code on.
    let refused = zidane(&["--no-such-flag"])?;
    if refused.status.code() != Some(2) {
        return Err(format!(
            "npm: an unknown flag ended with {} through the launcher, not exit code 2",
            refused.status
        ));
    }
    let size = |p: &PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    println!(
        "npm: {} ({:.1} MB) installed in {}; first answer {} after `npm install -g` started",
        tarballs
            .iter()
            .filter_map(|t| t.file_name().map(|f| f.to_string_lossy().into_owned()))
            .collect::<Vec<_>>()
            .join(" + "),
        tarballs.iter().map(size).sum::<u64>() as f64 / 1e6,
        seconds(installed),
        seconds(answered)
    );
    Ok(())
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// `cargo xtask release-refresh`: the release workflow and the kept
/// installer, from `dist` (which must be installed:
/// `cargo install cargo-dist --locked`). The installer comes from a build of
/// placeholder archives (`--artifacts=lies`) whose manifest feeds the
/// global build, as the real builds' manifests do in the workflow, so it
/// holds a checksum for every archive.
pub(crate) fn refresh() -> Result {
    let root = root();
    crate::run("dist", &["generate"], &[])?;
    let distrib = target_dir().join("distrib");
    let _ = std::fs::remove_dir_all(&distrib);
    println!("\n$ dist build --artifacts=lies --output-format=json");
    let lies = Command::new("dist")
        .args(["build", "--artifacts=lies", "--output-format=json"])
        .current_dir(&root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not start dist: {e}"))?;
    if !lies.status.success() {
        return Err("`dist build --artifacts=lies` failed".to_owned());
    }
    std::fs::write(distrib.join("lies-dist-manifest.json"), &lies.stdout).map_err(|e| e.to_string())?;
    crate::run("dist", &["build", "--artifacts=global"], &[])?;
    let script = distrib.join(format!("{APP}-installer.sh"));
    std::fs::copy(&script, root.join(INSTALLER)).map_err(|e| format!("copying {}: {e}", script.display()))?;
    println!("release-refresh: wrote .github/workflows/release.yml and {INSTALLER}");
    Ok(())
}

#[cfg(test)]
mod tests;
