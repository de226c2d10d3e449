//! Files and folders only their owner may read: what the agent keeps on
//! disk (conversations, tool output, MCP OAuth tokens) is created `0600`
//! (files) and `0700` (folders), and an existing one open to others is
//! narrowed when it is opened, with a [`Tightened`] a host can show.
//! Elsewhere than on Unix these do what the plain calls do.

use std::fmt;
use std::path::{Path, PathBuf};

/// A file or folder whose mode was narrowed to its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tightened {
    /// What was narrowed.
    pub path: PathBuf,
    /// Its permission bits before (`0o644`).
    pub was: u32,
    /// Its permission bits now (`0o600`).
    pub now: u32,
}

impl fmt::Display for Tightened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} was open to other users of this machine (mode {:o}); it is now {:o}",
            self.path.display(),
            self.was,
            self.now
        )
    }
}

/// The mode of a private file.
pub const FILE_MODE: u32 = 0o600;
/// The mode of a private folder.
pub const DIR_MODE: u32 = 0o700;

/// Creates `dir` and the folders above it that are missing, each `0700`;
/// when `dir` exists and others may use it, narrows it to `0700` (the
/// folders above an existing one are left as they are).
pub fn private_dir(dir: &Path) -> std::io::Result<Option<Tightened>> {
    if dir.is_dir() {
        return tighten(dir, DIR_MODE);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)?;
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)?;
    Ok(None)
}

/// Creates the empty file `path` `0600` when it is missing; when it
/// exists and others may read it, narrows it to `0600`. Never truncates.
pub fn private_file(path: &Path) -> std::io::Result<Option<Tightened>> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    match options.open(path) {
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => tighten(path, FILE_MODE),
        Err(e) => Err(e),
    }
}

/// Options that create a file `0600` (a file that exists keeps its mode).
pub fn private_options() -> std::fs::OpenOptions {
    #[allow(unused_mut)]
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// Narrows `path` to `mode` when its group or others have any right;
/// `None`: it was private already, or it does not exist.
pub fn tighten(path: &Path, mode: u32) -> std::io::Result<Option<Tightened>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let was = meta.permissions().mode() & 0o7777;
        if was & 0o077 == 0 {
            return Ok(None);
        }
        let now = was & 0o700 | mode & 0o700;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(now))?;
        Ok(Some(Tightened {
            path: path.to_path_buf(),
            was,
            now,
        }))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(None)
    }
}

#[cfg(all(test, unix))]
mod tests;
