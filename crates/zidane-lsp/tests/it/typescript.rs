//! typescript-language-server (with the `typescript` beside it): a second
//! language, a server that only publishes.

use serde_json::json;
use zidane_core::tool::{Tool, ToolContext};
use zidane_lsp::LspTool;
use zidane_provider::{AbortController, ToolResultContent};

use crate::support::{edit, folder, installed_bus, lsp, typescript};

const TSCONFIG: &str = r#"{"compilerOptions": {"strict": true, "target": "es2022", "module": "es2022", "moduleResolution": "bundler", "noEmit": true}}"#;

const GOOD: &str = "export function total(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n\nexport const count: number = total([1, 2]);\n";
const TYPE_ERROR: &str = "export function total(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0);\n}\n\nexport const count: number = total([1, 2]);\nexport const label: number = \"not a number\";\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_reports_the_type_error_an_edit_introduces_and_then_that_it_is_fixed() {
    let dir = folder(&[("tsconfig.json", TSCONFIG), ("app.ts", GOOD)]);
    let lsp = lsp(dir.path(), typescript());
    let bus = installed_bus(&lsp);

    let (text, meta) = edit(&bus, dir.path(), "c1", "app.ts", TYPE_ERROR).await;
    assert!(
        text.starts_with("Wrote app.ts\n\n<diagnostics server=\"typescript-language-server\" file=\"app.ts\">"),
        "{text}"
    );
    assert!(
        text.contains("app.ts:6:14 error (new) Type 'string' is not assignable to type 'number'."),
        "{text}"
    );
    assert_eq!(meta["errors"], 1, "{meta}");
    assert_eq!(meta["new"], 1);

    let (text, meta) = edit(&bus, dir.path(), "c2", "app.ts", GOOD).await;
    assert!(
        text.contains("No errors or warnings now: this edit fixed 1 problem."),
        "{text}"
    );
    assert_eq!(meta["fixed"], 1, "{meta}");
    assert_eq!((lsp.counts().reported, lsp.counts().fixed), (1, 1));

    // A clean edit of a clean file: the server says nothing, and its
    // silence is taken as clean well before the settle time (60 s here).
    let started = std::time::Instant::now();
    let (text, meta) = edit(&bus, dir.path(), "c3", "app.ts", &format!("{GOOD}// done\n")).await;
    assert_eq!(text, "Wrote app.ts");
    assert_eq!(meta["errors"], 0, "{meta}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    lsp.shutdown().await;
}

async fn call(tool: &LspTool, input: serde_json::Value) -> String {
    let cx = ToolContext::detached("lsp", "call", AbortController::new().signal());
    let out = tool.execute(input, cx).await.unwrap();
    match out.content {
        ToolResultContent::Text(t) => {
            assert!(!out.is_error, "{t}");
            t
        }
        ToolResultContent::Parts(_) => panic!("parts"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_across_files_shows_in_the_references_and_a_missed_caller_in_its_diagnostics() {
    let dir = folder(&[
        ("tsconfig.json", TSCONFIG),
        (
            "shapes.ts",
            "export function area(width: number, height: number): number {\n  return width * height;\n}\n",
        ),
        (
            "main.ts",
            "import { area } from \"./shapes\";\n\nconsole.log(area(2, 3));\n",
        ),
        (
            "other.ts",
            "import * as shapes from \"./shapes\";\n\nexport const big = shapes.area(10, 10);\n",
        ),
    ]);
    let lsp = lsp(dir.path(), typescript());
    let tool = LspTool::new(lsp.clone());
    let bus = installed_bus(&lsp);

    let text = call(
        &tool,
        json!({"operation": "references", "path": "shapes.ts", "line": 1, "symbol": "area"}),
    )
    .await;
    for place in [
        "shapes.ts:1:17: export function area",
        "main.ts:1:10: import { area } from \"./shapes\";",
        "main.ts:3:13: console.log(area(2, 3));",
        "other.ts:3:27: export const big = shapes.area(10, 10);",
    ] {
        assert!(text.contains(place), "{place} in {text}");
    }

    // The rename: the definition and one caller; the other caller is missed.
    edit(
        &bus,
        dir.path(),
        "r1",
        "shapes.ts",
        "export function surface(width: number, height: number): number {\n  return width * height;\n}\n",
    )
    .await;
    let (text, _) = edit(
        &bus,
        dir.path(),
        "r2",
        "main.ts",
        "import { surface } from \"./shapes\";\n\nconsole.log(surface(2, 3));\n",
    )
    .await;
    // Its import of the old name was an error once `area` was gone.
    assert!(
        text.contains("No errors or warnings now: this edit fixed 1 problem."),
        "{text}"
    );

    let text = call(
        &tool,
        json!({"operation": "references", "path": "shapes.ts", "line": 1, "symbol": "surface"}),
    )
    .await;
    assert!(text.contains("main.ts:3:13: console.log(surface(2, 3));"), "{text}");
    assert!(!text.contains("other.ts"), "{text}");

    let (text, meta) = edit(
        &bus,
        dir.path(),
        "r3",
        "other.ts",
        "import * as shapes from \"./shapes\";\n\nexport const big = shapes.area(10, 10);\nexport const small = 1;\n",
    )
    .await;
    assert!(
        text.contains("other.ts:3:27 error Property 'area' does not exist on type"),
        "{text}"
    );
    assert_eq!(meta["errors"], 1, "{meta}");

    let text = call(
        &tool,
        json!({"operation": "hover", "path": "main.ts", "line": 3, "symbol": "surface"}),
    )
    .await;
    assert!(
        text.contains("surface(width: number, height: number): number"),
        "{text}"
    );
    lsp.shutdown().await;
}
