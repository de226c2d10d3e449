//! Links the addon as napi-rs does and renders the hook glue from
//! `zidane-core`'s `hooks.txt` into `OUT_DIR/hooks.rs`.

#[path = "src/hookgen.rs"]
mod hookgen;

fn main() {
    napi_build::setup();
    let table = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../zidane-core/src/events/hooks.txt");
    println!("cargo:rerun-if-changed={}", table.display());
    println!("cargo:rerun-if-changed=src/hookgen.rs");
    let text = match std::fs::read_to_string(&table) {
        Ok(text) => text,
        Err(e) => panic!("cannot read {}: {e}", table.display()),
    };
    let hooks = match hookgen::parse(&text) {
        Ok(hooks) => hooks,
        Err(e) => panic!("{e}"),
    };
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("hooks.rs");
    if let Err(e) = std::fs::write(&out, hookgen::rust(&hooks)) {
        panic!("cannot write {}: {e}", out.display());
    }
}
