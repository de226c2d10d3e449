//! npm packages built from this checkout, in the shape native programs and
//! addons ship on npm: one package per platform carrying the native file
//! (npm installs only the one whose `os` and `cpu` match the machine), and
//! a package that names them all as optional dependencies and is what
//! people install.
//!
//! - `cargo xtask npm-pack-cli [--profile NAME | --binary PATH]`:
//!   `@zidane-rs/cli` and this machine's platform package from a build of
//!   this checkout (the `dist` profile unless told, or a program already
//!   built), into `target/npm/`;
//! - `cargo xtask npm-pack-cli --from-dist DIR`: every platform's package
//!   from the release archives in DIR, as the release workflow publishes
//!   them.
//!
//! [`Package`] and [`pack`] know nothing of the program: a package of
//! another native file (an addon's `.node`) is another manifest and file
//! list.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

use crate::archives;
use crate::{Result, root};

/// The npm scope of the project's packages.
pub(crate) const SCOPE: &str = "@zidane-rs";

/// A platform npm can tell apart (its `process.platform` and
/// `process.arch`), and the Rust target whose build it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Platform {
    /// npm's `os` (`process.platform`).
    pub(crate) os: &'static str,
    /// npm's `cpu` (`process.arch`).
    pub(crate) cpu: &'static str,
    /// The Rust target triple built for it.
    pub(crate) triple: &'static str,
}

impl Platform {
    /// `linux-x64`: the suffix of a platform package's name.
    pub(crate) fn key(&self) -> String {
        format!("{}-{}", self.os, self.cpu)
    }

    /// The name of a native program on this platform.
    pub(crate) fn exe(&self, name: &str) -> String {
        if self.os == "win32" {
            format!("{name}.exe")
        } else {
            name.to_owned()
        }
    }

    /// Words for people: `Linux x64`.
    fn title(&self) -> String {
        let os = match self.os {
            "linux" => "Linux",
            "darwin" => "macOS",
            "win32" => "Windows",
            other => other,
        };
        format!("{os} {}", self.cpu)
    }
}

/// The platforms the packages are published for. Linux gets the static
/// musl builds, which run on any distribution (glibc or musl alike).
pub(crate) const PLATFORMS: &[Platform] = &[
    Platform {
        os: "linux",
        cpu: "x64",
        triple: "x86_64-unknown-linux-musl",
    },
    Platform {
        os: "linux",
        cpu: "arm64",
        triple: "aarch64-unknown-linux-musl",
    },
    Platform {
        os: "darwin",
        cpu: "x64",
        triple: "x86_64-apple-darwin",
    },
    Platform {
        os: "darwin",
        cpu: "arm64",
        triple: "aarch64-apple-darwin",
    },
    Platform {
        os: "win32",
        cpu: "x64",
        triple: "x86_64-pc-windows-msvc",
    },
];

/// This machine's platform, in npm's words.
pub(crate) fn host() -> Result<&'static Platform> {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    PLATFORMS
        .iter()
        .find(|p| p.os == os && p.cpu == cpu)
        .ok_or_else(|| format!("npm: no package is made for {os}-{cpu}"))
}

/// What goes into a file of a package.
#[derive(Debug, Clone)]
pub(crate) enum Content {
    /// A file of this checkout or of a build, copied with its mode (an
    /// executable stays executable in the tarball).
    Copy(PathBuf),
    /// A native program, copied and made executable whatever mode it had
    /// (an archive's or a build's).
    Program(PathBuf),
    /// Text written as it is.
    Text(String),
}

/// A package to pack: its `package.json` and its files, by path inside the
/// package.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) manifest: Value,
    pub(crate) files: Vec<(String, Content)>,
}

impl Package {
    fn name(&self) -> &str {
        self.manifest["name"].as_str().unwrap_or_default()
    }
}

/// The fields every package of the project carries.
pub(crate) fn manifest(name: &str, version: &str, description: &str) -> Map<String, Value> {
    let value = json!({
        "name": name,
        "version": version,
        "description": description,
        "license": "MIT OR Apache-2.0",
        "homepage": "https://github.com/zidane-rs/zidane-rs",
        "repository": {"type": "git", "url": "git+https://github.com/zidane-rs/zidane-rs.git"},
        "publishConfig": {"access": "public"},
    });
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The licence files, which every package carries.
fn licences(root: &Path) -> Vec<(String, Content)> {
    ["LICENSE-MIT", "LICENSE-APACHE"]
        .iter()
        .map(|f| ((*f).to_owned(), Content::Copy(root.join(f))))
        .collect()
}

/// Writes `package` into `work/<name>` (emptied first) and packs it into
/// `out` with `npm pack`; returns the tarball's path.
pub(crate) fn pack(package: &Package, work: &Path, out: &Path) -> Result<PathBuf> {
    let stage = work.join(package.name().replace('/', "+"));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir_all(&stage).map_err(|e| format!("npm: {}: {e}", stage.display()))?;
    std::fs::create_dir_all(out).map_err(|e| format!("npm: {}: {e}", out.display()))?;
    let text = serde_json::to_string_pretty(&package.manifest).map_err(|e| e.to_string())?;
    write(&stage.join("package.json"), text.as_bytes())?;
    for (path, content) in &package.files {
        let dest = stage.join(path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("npm: {}: {e}", parent.display()))?;
        }
        match content {
            Content::Copy(src) => {
                std::fs::copy(src, &dest).map_err(|e| format!("npm: copying {}: {e}", src.display()))?;
            }
            Content::Program(src) => {
                std::fs::copy(src, &dest).map_err(|e| format!("npm: copying {}: {e}", src.display()))?;
                executable(&dest)?;
            }
            Content::Text(text) => write(&dest, text.as_bytes())?,
        }
    }
    let output = Command::new("npm")
        .arg("pack")
        .arg(&stage)
        .arg("--pack-destination")
        .arg(out)
        .args(["--json", "--loglevel=error"])
        .output()
        .map_err(|e| format!("could not start `npm pack`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`npm pack {}` failed: {}",
            stage.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let listed: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("npm pack --json: {e}"))?;
    let file = listed[0]["filename"]
        .as_str()
        .ok_or_else(|| format!("npm pack named no tarball: {listed}"))?;
    let tarball = out.join(file);
    println!("npm: packed {}", tarball.display());
    Ok(tarball)
}

#[cfg(unix)]
fn executable(path: &Path) -> Result {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("npm: {}: {e}", path.display()))
}

#[cfg(not(unix))]
fn executable(_path: &Path) -> Result {
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result {
    std::fs::write(path, bytes).map_err(|e| format!("npm: {}: {e}", path.display()))
}

/// `@zidane-rs/cli`: the `zidane` command (a launcher that runs the
/// platform package's program) and the platform packages as optional
/// dependencies.
pub(crate) fn cli_package(root: &Path, version: &str) -> Package {
    let mut manifest = manifest(
        &format!("{SCOPE}/cli"),
        version,
        "zidane, a coding agent for the terminal, editors (ACP), scripts and CI",
    );
    manifest.insert("bin".to_owned(), json!({"zidane": "bin/zidane.js"}));
    manifest.insert("engines".to_owned(), json!({"node": ">=16"}));
    let optional: Map<String, Value> = PLATFORMS
        .iter()
        .map(|p| (cli_platform_name(p), Value::String(version.to_owned())))
        .collect();
    manifest.insert("optionalDependencies".to_owned(), Value::Object(optional));
    let mut files = vec![
        (
            "bin/zidane.js".to_owned(),
            Content::Copy(root.join("npm/cli/bin/zidane.js")),
        ),
        ("README.md".to_owned(), Content::Copy(root.join("README.md"))),
    ];
    files.extend(licences(root));
    Package {
        manifest: Value::Object(manifest),
        files,
    }
}

/// `@zidane-rs/cli-linux-x64` and the like.
pub(crate) fn cli_platform_name(platform: &Platform) -> String {
    format!("{SCOPE}/cli-{}", platform.key())
}

/// The platform package carrying `binary` (the program built for
/// `platform`) as `bin/zidane`.
pub(crate) fn cli_platform_package(root: &Path, version: &str, platform: &Platform, binary: &Path) -> Package {
    let name = cli_platform_name(platform);
    let mut manifest = manifest(
        &name,
        version,
        &format!("The zidane program for {} (installed by {SCOPE}/cli)", platform.title()),
    );
    manifest.insert("os".to_owned(), json!([platform.os]));
    manifest.insert("cpu".to_owned(), json!([platform.cpu]));
    // Package managers that can keep packages zipped must unpack this one:
    // the program runs from its own file.
    manifest.insert("preferUnplugged".to_owned(), json!(true));
    let readme = format!(
        "# {name}\n\nThe `zidane` program for {}, built for `{}`. Install [`{SCOPE}/cli`](https://www.npmjs.com/package/{SCOPE}/cli), which depends on this package where it fits.\n",
        platform.title(),
        platform.triple
    );
    let mut files = vec![
        (
            format!("bin/{}", platform.exe("zidane")),
            Content::Program(binary.to_owned()),
        ),
        ("README.md".to_owned(), Content::Text(readme)),
    ];
    files.extend(licences(root));
    Package {
        manifest: Value::Object(manifest),
        files,
    }
}

/// Packs the platform packages of `binaries` and `@zidane-rs/cli` into
/// `out` (staging them in `work`); returns the tarballs, platform packages
/// first (the order `npm install` and `npm publish` take them in).
pub(crate) fn pack_cli(
    root: &Path,
    work: &Path,
    out: &Path,
    version: &str,
    binaries: &[(&Platform, PathBuf)],
) -> Result<Vec<PathBuf>> {
    let mut tarballs = Vec::new();
    for (platform, binary) in binaries {
        let package = cli_platform_package(root, version, platform, binary);
        tarballs.push(pack(&package, work, out)?);
    }
    tarballs.push(pack(&cli_package(root, version), work, out)?);
    Ok(tarballs)
}

/// `cargo xtask npm-pack-cli [--profile NAME | --binary PATH | --from-dist DIR]`.
pub(crate) fn pack_cli_command(args: &[&str]) -> Result {
    let root = root();
    let target = archives::target_dir();
    let version = archives::program_version(&root)?;
    let out = target.join("npm");
    let work = target.join("npm-stage");
    let binaries: Vec<(&Platform, PathBuf)> = match args {
        ["--from-dist", dir] => from_archives(Path::new(dir), &work)?,
        [] => vec![(host()?, build_program(&target, "dist")?)],
        ["--profile", profile] => vec![(host()?, build_program(&target, profile)?)],
        ["--binary", path] => vec![(host()?, PathBuf::from(path))],
        _ => {
            return Err(
                "usage: cargo xtask npm-pack-cli [--profile NAME | --binary PATH | --from-dist DIR]".to_owned(),
            );
        }
    };
    let tarballs = pack_cli(&root, &work, &out, &version, &binaries)?;
    println!("npm-pack-cli: {} tarballs in {}", tarballs.len(), out.display());
    Ok(())
}

/// Builds the program with `profile` for this machine's target, named as
/// `dist build` names it (so either reuses the other's build), and returns
/// its path.
fn build_program(target: &Path, profile: &str) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let triple = archives::host_triple()?;
    let args = [
        "build",
        "--profile",
        profile,
        "--target",
        &triple,
        "--package",
        "zidane-cli",
        "--locked",
    ];
    println!("\n$ cargo {}", args.join(" "));
    let mut cmd = Command::new(&cargo);
    cmd.args(args).current_dir(root());
    // As from a shell, where `dist build` runs: without what `cargo run`
    // set for this program (a build script that reads CARGO_MANIFEST_DIR
    // would run again, and everything above it be built again).
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_")
            || matches!(
                key.as_ref(),
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            )
        {
            cmd.env_remove(key.as_ref());
        }
    }
    let status = cmd.status().map_err(|e| format!("could not start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("`cargo {}` failed ({status})", args.join(" ")));
    }
    let dir = if profile == "dev" || profile == "test" {
        "debug"
    } else {
        profile
    };
    let binary = target
        .join(&triple)
        .join(dir)
        .join(format!("zidane{}", std::env::consts::EXE_SUFFIX));
    if binary.exists() {
        Ok(binary)
    } else {
        Err(format!("npm-pack-cli: the build left no {}", binary.display()))
    }
}

/// The program of every platform, taken out of the release archives in
/// `dir` (`zidane-cli-<triple>.tar.xz`, `.zip` on Windows).
fn from_archives(dir: &Path, work: &Path) -> Result<Vec<(&'static Platform, PathBuf)>> {
    let mut binaries = Vec::new();
    for platform in PLATFORMS {
        let archive = dir.join(archives::archive_name(platform.triple));
        if !archive.exists() {
            return Err(format!("npm-pack-cli: no {} in {}", archive.display(), dir.display()));
        }
        let into = work.join("archives").join(platform.triple);
        let _ = std::fs::remove_dir_all(&into);
        std::fs::create_dir_all(&into).map_err(|e| format!("npm-pack-cli: {}: {e}", into.display()))?;
        let inside = archives::binary_in_archive(platform.triple);
        let archive_text = archive.display().to_string();
        let into_text = into.display().to_string();
        if archive_text.ends_with(".zip") {
            crate::run("unzip", &["-q", "-o", &archive_text, &inside, "-d", &into_text], &[])?;
        } else {
            crate::run("tar", &["-xJf", &archive_text, "-C", &into_text, &inside], &[])?;
        }
        binaries.push((platform, into.join(inside)));
    }
    Ok(binaries)
}

#[cfg(test)]
mod tests;
