use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use zidane_core::events::{ToolBefore, ToolBeforeInit, ToolCounts, ToolTransform, ToolTransformInit};
use zidane_hooks::HookBus;
use zidane_lsp::{Lsp, LspOptions, ServerConfig};
use zidane_provider::ToolResultContent;

pub(crate) fn servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/lsp-servers")
}

fn installed(path: PathBuf) -> String {
    assert!(
        path.exists(),
        "{} is missing: the language-server tests run real servers that `cargo xtask lsp-servers` installs into \
         target/lsp-servers (it needs Node with npm and Python 3 with venv; `cargo xtask ci` runs it first)",
        path.display()
    );
    path.display().to_string()
}

pub(crate) fn pyright() -> ServerConfig {
    let bin = installed(servers_dir().join("node_modules/.bin/pyright-langserver"));
    ServerConfig::new("pyright", bin, ["--stdio"], ["python"])
}

pub(crate) fn pylsp() -> ServerConfig {
    let bin = installed(servers_dir().join("venv/bin/pylsp"));
    ServerConfig::new("pylsp", bin, Vec::<String>::new(), ["python"])
}

pub(crate) fn typescript() -> ServerConfig {
    let bin = installed(servers_dir().join("node_modules/.bin/typescript-language-server"));
    // As it is known (its languages, its silence when a file stays clean).
    let mut server = ServerConfig::known()
        .into_iter()
        .find(|s| s.name == "typescript-language-server")
        .unwrap();
    server.command = bin;
    server
}

/// A folder holding `files`.
pub(crate) fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    // Not a hidden folder: pyright leaves those out of the project.
    let dir = tempfile::Builder::new().prefix("lsp-test").tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

pub(crate) fn lsp(root: &Path, server: ServerConfig) -> Lsp {
    Lsp::new(LspOptions {
        root: Some(root.to_path_buf()),
        servers: vec![server],
        request_timeout: Duration::from_secs(60),
        settle: Duration::from_secs(60),
        ..Default::default()
    })
}

/// One edit as the agent makes it: `tool:before`, the file written, then
/// `tool:transform`; what the model reads and the metadata.
pub(crate) async fn edit(bus: &HookBus, root: &Path, call: &str, path: &str, text: &str) -> (String, Value) {
    let input = json!({"path": path, "content": text});
    let prior = std::fs::read_to_string(root.join(path)).ok();
    let mut before = ToolBefore::new(ToolBeforeInit {
        name: "write_file".into(),
        call_id: call.into(),
        run_id: "r".into(),
        turn_id: "t".into(),
        coercions: Vec::new(),
        prior_content: prior,
        run_tool_counts: ToolCounts::default(),
        unknown: false,
    });
    before.input = input.clone();
    bus.emit(&mut before).await.unwrap();
    std::fs::write(root.join(path), text).unwrap();
    let mut transform = ToolTransform::new(ToolTransformInit {
        name: "write_file".into(),
        call_id: call.into(),
        input,
        run_id: "r".into(),
        turn_id: "t".into(),
        coercions: Vec::new(),
        is_error: false,
        output_bytes: 5,
    });
    transform.result = ToolResultContent::Text(format!("Wrote {path}"));
    bus.emit(&mut transform).await.unwrap();
    let text = match &transform.result {
        ToolResultContent::Text(t) => t.clone(),
        ToolResultContent::Parts(_) => panic!("parts"),
    };
    let metadata = transform.metadata.get("diagnostics").cloned().unwrap_or(Value::Null);
    (text, metadata)
}

pub(crate) fn installed_bus(lsp: &Lsp) -> Arc<HookBus> {
    let bus = Arc::new(HookBus::new());
    let _handles = lsp.install(&bus);
    bus
}
