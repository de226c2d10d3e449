use super::*;

#[test]
fn languages_come_from_extensions() {
    assert_eq!(language_of(Path::new("a/b.py")), Some("python"));
    assert_eq!(language_of(Path::new("x.tsx")), Some("typescriptreact"));
    assert_eq!(language_of(Path::new("main.rs")), Some("rust"));
    assert_eq!(language_of(Path::new("README")), None);
    assert_eq!(language_of(Path::new("notes.md")), None);
}

#[test]
fn markers_and_loose_python_files_call_for_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let known = ServerConfig::known();
    let by = |name: &str| known.iter().find(|s| s.name == name).unwrap();
    assert!(!by("rust-analyzer").applies_to(dir.path()));
    assert!(!by("pyright").applies_to(dir.path()));
    std::fs::write(dir.path().join("script.py"), "print(1)\n").unwrap();
    assert!(
        by("pyright").applies_to(dir.path()),
        "a loose script is a Python project"
    );
    assert!(!by("gopls").applies_to(dir.path()));
    std::fs::write(dir.path().join("go.mod"), "module m\n").unwrap();
    assert!(by("gopls").applies_to(dir.path()));
}

#[test]
fn programs_are_found_on_the_path_or_as_paths() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("fake-ls");
    std::fs::write(&bin, "#!/bin/sh\n").unwrap();
    assert_eq!(
        find_program("fake-ls", Some(dir.path().as_os_str())),
        None,
        "not executable"
    );
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(find_program("fake-ls", Some(dir.path().as_os_str())), Some(bin.clone()));
    assert_eq!(find_program(bin.to_str().unwrap(), None), Some(bin));
    assert_eq!(find_program("fake-ls", None), None);
}
