//! The server's token: made on the first start from the system's random
//! source, kept in `$ZIDANE_HOME/serve-token` (mode 0600), compared in
//! constant time.

use std::io::Write;
use std::path::Path;

/// The token in `home`, made when there is none.
pub(crate) fn load_or_create(home: &Path) -> std::io::Result<String> {
    let path = home.join("serve-token");
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut bytes = [0u8; 32];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| std::io::Error::other("the system's random source failed"))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    zidane::tools::private_dir(home)?;
    write_private(&path, format!("{token}\n").as_bytes())?;
    Ok(token)
}

/// Writes `bytes` to `path`, readable by its owner only (an existing
/// file open to others narrowed first).
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    zidane::tools::tighten(path, 0o600)?;
    let mut file = zidane::tools::private_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.write_all(bytes)
}

/// Whether `given` is `token`, compared in time that does not depend on
/// where they differ.
pub(crate) fn matches(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
