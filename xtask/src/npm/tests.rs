use super::*;

#[test]
fn each_platform_package_is_an_optional_dependency_of_the_cli() {
    let root = Path::new("/r");
    let cli = cli_package(root, "1.2.3");
    let optional = cli.manifest["optionalDependencies"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = optional.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "@zidane-rs/cli-linux-x64",
            "@zidane-rs/cli-linux-arm64",
            "@zidane-rs/cli-darwin-x64",
            "@zidane-rs/cli-darwin-arm64",
            "@zidane-rs/cli-win32-x64",
        ]
    );
    assert!(optional.values().all(|v| v == "1.2.3"));
    assert_eq!(cli.manifest["bin"], json!({"zidane": "bin/zidane.js"}));
}

#[test]
fn a_platform_package_is_limited_to_its_os_and_cpu() {
    let windows = PLATFORMS.iter().find(|p| p.os == "win32").unwrap();
    let package = cli_platform_package(Path::new("/r"), "1.2.3", windows, Path::new("/b/zidane.exe"));
    assert_eq!(package.manifest["name"], json!("@zidane-rs/cli-win32-x64"));
    assert_eq!(package.manifest["os"], json!(["win32"]));
    assert_eq!(package.manifest["cpu"], json!(["x64"]));
    assert_eq!(package.files[0].0, "bin/zidane.exe");
    // No `bin`: the command is the main package's launcher.
    assert!(package.manifest.get("bin").is_none());
}

#[test]
fn every_npm_platform_is_a_release_target() {
    for platform in PLATFORMS {
        assert!(
            archives::TARGETS.contains(&platform.triple),
            "{} is not built by the release",
            platform.triple
        );
    }
}
