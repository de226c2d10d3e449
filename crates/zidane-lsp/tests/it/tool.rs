//! The `lsp` tool against pyright.

use serde_json::json;
use zidane_core::tool::{Tool, ToolContext};
use zidane_lsp::LspTool;
use zidane_provider::{AbortController, ToolResultContent};

use crate::support::{folder, lsp, pyright};

async fn call(tool: &LspTool, input: serde_json::Value) -> (String, bool) {
    let cx = ToolContext::detached("lsp", "call", AbortController::new().signal());
    let out = tool.execute(input, cx).await.unwrap();
    match out.content {
        ToolResultContent::Text(t) => (t, out.is_error),
        ToolResultContent::Parts(_) => panic!("parts"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_definition_hover_and_symbols_across_files() {
    let dir = folder(&[
        ("pyproject.toml", "[project]\nname = \"demo\"\n"),
        (
            "shapes.py",
            "def area(width: int, height: int) -> int:\n    \"\"\"The area.\"\"\"\n    return width * height\n",
        ),
        ("main.py", "from shapes import area\n\nprint(area(2, 3))\n"),
        ("other.py", "import shapes\n\nbig = shapes.area(10, 10)\n"),
    ]);
    let lsp = lsp(dir.path(), pyright());
    let tool = LspTool::new(lsp.clone());

    let (text, _) = call(
        &tool,
        json!({"operation": "definition", "path": "main.py", "line": 3, "symbol": "area"}),
    )
    .await;
    assert!(
        text.contains("shapes.py:1:5: def area(width: int, height: int) -> int:"),
        "{text}"
    );

    let (text, _) = call(
        &tool,
        json!({"operation": "hover", "path": "main.py", "line": 3, "symbol": "area"}),
    )
    .await;
    assert!(
        text.contains("def area(") && text.contains("width: int") && text.contains(") -> int"),
        "{text}"
    );
    assert!(text.contains("The area."), "{text}");

    let (text, _) = call(&tool, json!({"operation": "document_symbols", "path": "shapes.py"})).await;
    assert!(text.contains("1 Function area"), "{text}");

    let (text, is_error) = call(
        &tool,
        json!({"operation": "references", "path": "shapes.py", "line": 1, "symbol": "area"}),
    )
    .await;
    assert!(!is_error, "{text}");
    for place in [
        "shapes.py:1:5: def area",
        "main.py:1:20: from shapes import area",
        "main.py:3:7: print(area(2, 3))",
        "other.py:3:14: big = shapes.area(10, 10)",
    ] {
        assert!(text.contains(place), "{place} in {text}");
    }

    let (text, _) = call(&tool, json!({"operation": "workspace_symbols", "query": "area"})).await;
    assert!(text.contains("shapes.py:1:5 Function area"), "{text}");

    let (text, is_error) = call(
        &tool,
        json!({"operation": "definition", "path": "main.py", "line": 3, "symbol": "nowhere"}),
    )
    .await;
    assert!(is_error);
    assert!(text.contains("`nowhere` is not on line 3"), "{text}");
    lsp.shutdown().await;
}
