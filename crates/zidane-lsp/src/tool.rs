//! The `lsp` tool: definition, references, hover, document and workspace
//! symbols, each answered as paths, lines and short excerpts, bounded.

use std::path::Path;

use lsp_types::{Location, Position, TextDocumentIdentifier, TextDocumentPositionParams};
use serde_json::{Value, json};
use zidane_core::tool::{Durability, Tool, ToolContext, ToolFailure, ToolOutput};
use zidane_provider::BoxFuture;

use crate::error::LspError;
use crate::manager::Lsp;
use crate::uri;

/// The most lines an answer lists.
const MAX_ITEMS: usize = 50;
/// The most characters an answer holds.
const MAX_CHARS: usize = 8_000;
/// The most characters of an excerpt.
const EXCERPT: usize = 120;

const DESCRIPTION: &str = "Ask the language server about code by meaning. Operations: \
`definition` (where the symbol at path:line is defined), `references` (every use of it), \
`hover` (its type and docs), `document_symbols` (the outline of path), `workspace_symbols` \
(symbols matching `query` across the project). Give `path` and `line` (1-based) and either \
`symbol` (the name on that line) or `column` (1-based) for the first three.";

/// The `lsp` tool over an [`Lsp`].
pub struct LspTool {
    lsp: Lsp,
    schema: Value,
}

impl LspTool {
    /// The tool over `lsp`'s servers.
    pub fn new(lsp: Lsp) -> LspTool {
        let schema = json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": ["definition", "references", "hover", "document_symbols", "workspace_symbols"]},
                "path": {"type": "string", "description": "The file, relative to the working folder."},
                "line": {"type": "integer", "minimum": 1},
                "symbol": {"type": "string", "description": "The name on `line` to ask about."},
                "column": {"type": "integer", "minimum": 1},
                "query": {"type": "string", "description": "For workspace_symbols."}
            },
            "required": ["operation"]
        });
        LspTool { lsp, schema }
    }
}

impl Tool for LspTool {
    fn name(&self) -> &str {
        "lsp"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn durability(&self) -> Durability {
        Durability::Safe
    }

    fn execute<'a>(&'a self, input: Value, _cx: ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolFailure>> {
        Box::pin(async move {
            match self.lsp.ask(&input).await {
                Ok(text) => Ok(ToolOutput::text(bound(text))),
                Err(Ask::Input(message)) => Ok(ToolOutput::error(message)),
                Err(Ask::Server(e)) => Ok(ToolOutput::error(e.to_string())),
            }
        })
    }
}

/// Why a question got no answer.
enum Ask {
    Input(String),
    Server(LspError),
}

impl From<LspError> for Ask {
    fn from(e: LspError) -> Self {
        Ask::Server(e)
    }
}

impl Lsp {
    async fn ask(&self, input: &Value) -> Result<String, Ask> {
        let operation = input["operation"].as_str().unwrap_or("");
        let timeout = self.shared.options.request_timeout;
        if operation == "workspace_symbols" {
            return self.workspace_symbols(input["query"].as_str().unwrap_or("")).await;
        }
        let path = input["path"]
            .as_str()
            .ok_or_else(|| Ask::Input(format!("`{operation}` needs `path`")))?;
        let path = self.absolute(path);
        let (client, uri, text) = self.open(&path).await?;
        let document = TextDocumentIdentifier { uri };
        if operation == "document_symbols" {
            let params = lsp_types::DocumentSymbolParams {
                text_document: document,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let answer = client
                .request::<lsp_types::request::DocumentSymbolRequest>(params, timeout)
                .await?;
            return Ok(self.outline(&path, answer));
        }
        let position = position(input, &text)?;
        let at = TextDocumentPositionParams {
            text_document: document,
            position,
        };
        match operation {
            "definition" => {
                let params = lsp_types::GotoDefinitionParams {
                    text_document_position_params: at,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                };
                let answer = client
                    .request::<lsp_types::request::GotoDefinition>(params, timeout)
                    .await?;
                let locations = match answer {
                    None => Vec::new(),
                    Some(lsp_types::GotoDefinitionResponse::Scalar(l)) => vec![l],
                    Some(lsp_types::GotoDefinitionResponse::Array(ls)) => ls,
                    Some(lsp_types::GotoDefinitionResponse::Link(links)) => links
                        .into_iter()
                        .map(|l| Location::new(l.target_uri, l.target_selection_range))
                        .collect(),
                };
                Ok(self.locations("definition", &locations))
            }
            "references" => {
                let params = lsp_types::ReferenceParams {
                    text_document_position: at,
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                    context: lsp_types::ReferenceContext {
                        include_declaration: true,
                    },
                };
                let answer = client
                    .request::<lsp_types::request::References>(params, timeout)
                    .await?;
                Ok(self.locations("reference", &answer.unwrap_or_default()))
            }
            "hover" => {
                let params = lsp_types::HoverParams {
                    text_document_position_params: at,
                    work_done_progress_params: Default::default(),
                };
                let answer = client
                    .request::<lsp_types::request::HoverRequest>(params, timeout)
                    .await?;
                Ok(answer.map_or_else(|| "Nothing known at that position.".to_owned(), hover_text))
            }
            other => Err(Ask::Input(format!(
                "unknown operation `{other}`: use definition, references, hover, document_symbols or workspace_symbols"
            ))),
        }
    }

    async fn workspace_symbols(&self, query: &str) -> Result<String, Ask> {
        // The first server the folder calls for answers; its start opens
        // nothing, so a server that needs an open file gets none.
        let status = self.status();
        let Some(name) = status
            .iter()
            .find(|s| s.applies && matches!(s.state, crate::ServerState::Ready | crate::ServerState::Running { .. }))
            .map(|s| s.name.clone())
        else {
            return Err(Ask::Input("no language server serves this folder".into()));
        };
        let slot = self
            .slot_named(&name)
            .ok_or_else(|| Ask::Input("no language server serves this folder".into()))?;
        let client = self.client(slot).await?;
        let params = lsp_types::WorkspaceSymbolParams {
            query: query.to_owned(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let answer = client
            .request::<lsp_types::request::WorkspaceSymbolRequest>(params, self.shared.options.request_timeout)
            .await?;
        let mut lines = Vec::new();
        match answer {
            Some(lsp_types::WorkspaceSymbolResponse::Flat(symbols)) => {
                for s in symbols {
                    lines.push(format!("{} {:?} {}", self.place(&s.location), s.kind, s.name));
                }
            }
            Some(lsp_types::WorkspaceSymbolResponse::Nested(symbols)) => {
                for s in symbols {
                    let place = match &s.location {
                        lsp_types::OneOf::Left(l) => self.place(l),
                        lsp_types::OneOf::Right(w) => uri::to_path(&w.uri).map_or_else(String::new, |p| self.shown(&p)),
                    };
                    lines.push(format!("{place} {:?} {}", s.kind, s.name));
                }
            }
            None => {}
        }
        Ok(listing(&format!("symbols matching {query:?}"), lines))
    }

    fn locations(&self, what: &str, locations: &[Location]) -> String {
        let mut lines = Vec::new();
        for l in locations {
            let excerpt = uri::to_path(&l.uri)
                .and_then(|p| std::fs::read_to_string(p).ok())
                .and_then(|t| t.lines().nth(l.range.start.line as usize).map(excerpt))
                .unwrap_or_default();
            lines.push(format!("{}: {excerpt}", self.place(l)));
        }
        listing(&format!("{what}s"), lines)
    }

    fn place(&self, l: &Location) -> String {
        let path = uri::to_path(&l.uri).map_or_else(|| l.uri.as_str().to_owned(), |p| self.shown(&p));
        format!("{path}:{}:{}", l.range.start.line + 1, l.range.start.character + 1)
    }

    fn outline(&self, path: &Path, answer: Option<lsp_types::DocumentSymbolResponse>) -> String {
        let mut lines = Vec::new();
        match answer {
            Some(lsp_types::DocumentSymbolResponse::Nested(symbols)) => nested(&symbols, 0, &mut lines),
            Some(lsp_types::DocumentSymbolResponse::Flat(symbols)) => {
                for s in symbols {
                    lines.push(format!("{} {:?} {}", s.location.range.start.line + 1, s.kind, s.name));
                }
            }
            None => {}
        }
        listing(&format!("symbols of {}", self.shown(path)), lines)
    }
}

fn nested(symbols: &[lsp_types::DocumentSymbol], depth: usize, lines: &mut Vec<String>) {
    for s in symbols {
        lines.push(format!(
            "{}{} {:?} {}",
            "  ".repeat(depth),
            s.range.start.line + 1,
            s.kind,
            s.name
        ));
        if let Some(children) = &s.children {
            nested(children, depth + 1, lines);
        }
    }
}

/// The position `input` names in `text`.
fn position(input: &Value, text: &str) -> Result<Position, Ask> {
    let line = input["line"]
        .as_u64()
        .filter(|l| *l >= 1)
        .ok_or_else(|| Ask::Input("give `line` (1-based)".into()))?;
    let line_text = text
        .lines()
        .nth((line - 1) as usize)
        .ok_or_else(|| Ask::Input(format!("the file has no line {line}")))?;
    let column = match (input["symbol"].as_str(), input["column"].as_u64()) {
        (Some(symbol), _) if !symbol.is_empty() => {
            let at = find_word(line_text, symbol)
                .ok_or_else(|| Ask::Input(format!("`{symbol}` is not on line {line}: {}", excerpt(line_text))))?;
            line_text[..at].chars().count() as u32 + 1
        }
        (_, Some(column)) => column as u32,
        _ => return Err(Ask::Input("give `symbol` (the name on that line) or `column`".into())),
    };
    Ok(Position::new((line - 1) as u32, uri::utf16_column(line_text, column)))
}

/// The byte offset of `word` standing alone in `line` (else its first
/// occurrence).
fn find_word(line: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word)
        .find(|(at, _)| {
            let before = line[..*at].chars().next_back();
            let after = line[at + word.len()..].chars().next();
            !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
        })
        .map(|(at, _)| at)
        .or_else(|| line.find(word))
}

fn excerpt(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= EXCERPT {
        line.to_owned()
    } else {
        format!("{}…", line.chars().take(EXCERPT).collect::<String>())
    }
}

fn hover_text(hover: lsp_types::Hover) -> String {
    let parts = match hover.contents {
        lsp_types::HoverContents::Scalar(s) => vec![marked(s)],
        lsp_types::HoverContents::Array(a) => a.into_iter().map(marked).collect(),
        lsp_types::HoverContents::Markup(m) => vec![m.value],
    };
    parts.join("\n")
}

fn marked(s: lsp_types::MarkedString) -> String {
    match s {
        lsp_types::MarkedString::String(s) => s,
        lsp_types::MarkedString::LanguageString(l) => l.value,
    }
}

fn listing(what: &str, lines: Vec<String>) -> String {
    if lines.is_empty() {
        return format!("No {what} found.");
    }
    let total = lines.len();
    let mut out = format!("{total} {what}:\n");
    for line in lines.into_iter().take(MAX_ITEMS) {
        out.push_str(&line);
        out.push('\n');
    }
    if total > MAX_ITEMS {
        out.push_str(&format!("… and {} more\n", total - MAX_ITEMS));
    }
    out
}

fn bound(text: String) -> String {
    if text.len() <= MAX_CHARS {
        return text;
    }
    let mut end = MAX_CHARS;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… (cut at {MAX_CHARS} characters)", &text[..end])
}
