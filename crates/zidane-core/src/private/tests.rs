use super::*;
use std::os::unix::fs::PermissionsExt;

#[allow(clippy::unwrap_used)]
fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn new_files_and_folders_are_private_and_open_ones_are_narrowed() {
    let tmp = tempfile_dir();
    let dir = tmp.join("a/b");
    assert_eq!(private_dir(&dir).unwrap(), None);
    assert_eq!((mode(&tmp.join("a")), mode(&dir)), (0o700, 0o700));
    let file = dir.join("f.db");
    assert_eq!(private_file(&file).unwrap(), None);
    assert_eq!(mode(&file), 0o600);

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&file, "kept").unwrap();
    let narrowed = private_file(&file).unwrap().unwrap();
    assert_eq!((narrowed.was, narrowed.now, mode(&file)), (0o644, 0o600, 0o600));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept", "never truncated");
    assert!(narrowed.to_string().contains("(mode 644); it is now 600"), "{narrowed}");

    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let narrowed = private_dir(&dir).unwrap().unwrap();
    assert_eq!((narrowed.was, mode(&dir)), (0o755, 0o700));
    assert_eq!(private_dir(&dir).unwrap(), None, "private already");
    std::fs::remove_dir_all(tmp).unwrap();
}

#[allow(clippy::unwrap_used)]
fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zidane-private-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
