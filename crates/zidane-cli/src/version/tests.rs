use std::path::Path;

use super::Route;

#[test]
fn each_install_route_is_told_apart_by_where_the_program_is() {
    let npm = Path::new("/usr/lib/node_modules/@zidane-rs/cli-linux-x64/bin/zidane");
    assert_eq!(Route::of(npm, None, None), Route::Npm);
    let brew = Path::new("/opt/homebrew/Cellar/zidane/0.1.0/bin/zidane");
    assert_eq!(Route::of(brew, None, None), Route::Homebrew);
    let script = Path::new("/home/ada/.local/bin/zidane");
    assert_eq!(
        Route::of(script, Some(Path::new("/home/ada/.local/bin")), None),
        Route::Script { windows: cfg!(windows) }
    );
    let cargo = Path::new("/home/ada/.cargo/bin/zidane");
    assert_eq!(
        Route::of(cargo, None, Some(Path::new("/home/ada/.cargo/bin"))),
        Route::Cargo
    );
    let built = Path::new("/home/ada/src/zidane-rs/target/dist/zidane");
    assert_eq!(
        Route::of(
            built,
            Some(Path::new("/home/ada/.local/bin")),
            Some(Path::new("/home/ada/.cargo/bin"))
        ),
        Route::Checkout
    );
}

#[test]
fn each_route_names_its_update_command() {
    assert!(Route::Npm.advice().contains("npm install -g @zidane-rs/cli@latest"));
    assert!(Route::Homebrew.advice().contains("brew upgrade zidane"));
    assert!(
        Route::Script { windows: false }
            .advice()
            .contains("zidane-cli-installer.sh | sh")
    );
    assert!(
        Route::Script { windows: true }
            .advice()
            .contains("zidane-cli-installer.ps1 | iex")
    );
    assert!(Route::Cargo.advice().contains("cargo binstall"));
    assert!(
        Route::Checkout
            .advice()
            .contains("cargo install --path crates/zidane-cli")
    );
}
