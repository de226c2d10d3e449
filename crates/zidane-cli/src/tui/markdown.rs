//! The answer as rendered Markdown, line by line as it streams: each
//! finished line is styled and goes to the scrollback; a fenced code block
//! is highlighted line by line; a table waits for its last row and is laid
//! out in columns (or as one row per line when it is too wide).

use std::sync::OnceLock;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

use super::screen::{Hue, Paint, width};

/// Syntax definitions and the themes (for a dark background, for a light
/// one), loaded on the first code block.
fn syntaxes() -> &'static (SyntaxSet, Theme, Theme) {
    static LOADED: OnceLock<(SyntaxSet, Theme, Theme)> = OnceLock::new();
    LOADED.get_or_init(|| {
        let set = SyntaxSet::load_defaults_newlines();
        let mut themes = ThemeSet::load_defaults().themes;
        let dark = themes.remove("base16-ocean.dark").unwrap_or_default();
        let light = themes.remove("InspiredGitHub").unwrap_or_default();
        (set, dark, light)
    })
}

struct Fence {
    marker: String,
    highlighter: Option<HighlightLines<'static>>,
}

/// A streamed answer, rendered as its lines end.
pub(crate) struct Markdown {
    paint: Paint,
    cols: usize,
    partial: String,
    fence: Option<Fence>,
    table: Vec<String>,
}

impl Markdown {
    pub(crate) fn new(paint: Paint, cols: usize) -> Markdown {
        Markdown {
            paint,
            cols,
            partial: String::new(),
            fence: None,
            table: Vec::new(),
        }
    }

    pub(crate) fn set_width(&mut self, cols: usize) {
        self.cols = cols;
    }

    /// Takes a piece of the answer; returns the lines it finished.
    pub(crate) fn push(&mut self, delta: &str) -> Vec<String> {
        self.partial.push_str(delta);
        let mut out = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            self.line(line.trim_end_matches(['\n', '\r']), &mut out);
        }
        out
    }

    /// The unfinished line, as typed so far.
    pub(crate) fn partial(&self) -> &str {
        &self.partial
    }

    /// Whether a table is being held back.
    pub(crate) fn holding(&self) -> usize {
        self.table.len()
    }

    /// The end of the answer: what is left, rendered.
    pub(crate) fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut out);
        }
        self.flush_table(&mut out);
        self.fence = None;
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<String>) {
        if let Some(fence) = &mut self.fence {
            if line.trim_start().starts_with(fence.marker.as_str()) && line.trim().len() <= fence.marker.len() + 1 {
                self.fence = None;
                out.push(self.paint.dim("  └"));
                return;
            }
            let shown = match (&mut fence.highlighter, self.paint.color) {
                (Some(h), true) => highlight(h, line, &self.paint),
                _ => line.to_owned(),
            };
            out.push(format!("{} {shown}", self.paint.dim("  │")));
            return;
        }
        let trimmed = line.trim_start();
        if let Some(marker) = ["```", "~~~"].iter().find(|m| trimmed.starts_with(**m)) {
            self.flush_table(out);
            let lang = trimmed.trim_start_matches(['`', '~']).trim();
            let highlighter = self.paint.color.then(|| {
                let (set, dark, light) = syntaxes();
                let theme = if self.paint.light { light } else { dark };
                let syntax = set
                    .find_syntax_by_token(lang)
                    .unwrap_or_else(|| set.find_syntax_plain_text());
                HighlightLines::new(syntax, theme)
            });
            self.fence = Some(Fence {
                marker: (*marker).to_owned(),
                highlighter,
            });
            out.push(self.paint.dim(&format!("  ┌ {lang}")));
            return;
        }
        if trimmed.starts_with('|') {
            self.table.push(trimmed.to_owned());
            return;
        }
        self.flush_table(out);
        out.push(self.inline(line));
    }

    /// One line of Markdown outside a code block.
    fn inline(&self, line: &str) -> String {
        let indent = &line[..line.len() - line.trim_start().len()];
        let text = line.trim_start();
        if text.is_empty() {
            return String::new();
        }
        let p = &self.paint;
        let mut out = String::from(indent);
        let mut styles: Vec<&'static str> = Vec::new();
        let mut links: Vec<String> = Vec::new();
        let mut heading = false;
        let mut lists: Vec<Option<u64>> = Vec::new();
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
        let on = |styles: &[&str]| -> String {
            if p.color && !styles.is_empty() {
                format!("\x1b[{}m", styles.join(";"))
            } else {
                String::new()
            }
        };
        let reset = if p.color { "\x1b[0m" } else { "" };
        for event in Parser::new_ext(text, options) {
            match event {
                Event::Start(Tag::Heading { .. }) => {
                    heading = true;
                    styles.extend(["1", "36"]);
                    out.push_str(&on(&styles));
                }
                Event::End(TagEnd::Heading(_)) => {
                    heading = false;
                    styles.clear();
                    out.push_str(reset);
                }
                Event::Start(Tag::Emphasis) => {
                    styles.push("3");
                    out.push_str(&on(&styles));
                }
                Event::Start(Tag::Strong) => {
                    styles.push("1");
                    out.push_str(&on(&styles));
                }
                Event::Start(Tag::Strikethrough) => {
                    styles.push("9");
                    out.push_str(&on(&styles));
                }
                Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough) => {
                    styles.pop();
                    out.push_str(reset);
                    out.push_str(&on(&styles));
                }
                Event::Start(Tag::Link { dest_url, .. }) => {
                    links.push(dest_url.to_string());
                    styles.push("4");
                    out.push_str(&on(&styles));
                }
                Event::End(TagEnd::Link) => {
                    styles.pop();
                    out.push_str(reset);
                    if let Some(url) = links.pop() {
                        out.push_str(&p.dim(&format!(" ({url})")));
                    }
                    out.push_str(&on(&styles));
                }
                Event::Start(Tag::List(start)) => lists.push(start),
                Event::End(TagEnd::List(_)) => {
                    lists.pop();
                }
                Event::Start(Tag::Item) => match lists.last_mut() {
                    Some(Some(n)) => {
                        out.push_str(&format!("{n}. "));
                        *n += 1;
                    }
                    _ => out.push_str(&p.hue(Hue::Cyan, "• ")),
                },
                Event::Start(Tag::BlockQuote(_)) => out.push_str(&p.dim("│ ")),
                Event::TaskListMarker(done) => out.push_str(if done { "[x] " } else { "[ ] " }),
                Event::Code(code) => {
                    out.push_str(&p.hue(Hue::Yellow, &code));
                    out.push_str(&on(&styles));
                }
                Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => out.push_str(&t),
                Event::SoftBreak | Event::HardBreak => out.push(' '),
                Event::Rule => out.push_str(&p.dim(&"─".repeat(self.cols.clamp(3, 60)))),
                _ => {}
            }
        }
        if heading || !styles.is_empty() {
            out.push_str(reset);
        }
        out
    }

    /// A held table, laid out in columns when it fits the width.
    fn flush_table(&mut self, out: &mut Vec<String>) {
        if self.table.is_empty() {
            return;
        }
        let rows: Vec<Vec<String>> = std::mem::take(&mut self.table)
            .iter()
            .filter(|row| !row.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')))
            .map(|row| {
                row.trim()
                    .trim_matches('|')
                    .split('|')
                    .map(|cell| self.inline(cell.trim()))
                    .collect()
            })
            .collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in &rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(width(cell));
            }
        }
        let total: usize = widths.iter().sum::<usize>() + 3 * columns.saturating_sub(1) + 2;
        for (n, row) in rows.iter().enumerate() {
            let line = if total <= self.cols {
                let cells: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(i, cell)| {
                        let pad = " ".repeat(widths[i].saturating_sub(width(cell)));
                        if n == 0 {
                            format!("{}{pad}", self.paint.bold(cell))
                        } else {
                            format!("{cell}{pad}")
                        }
                    })
                    .collect();
                format!("  {}", cells.join(&self.paint.dim(" │ ")))
            } else {
                // Too wide for the terminal: one row per line.
                format!("  {}", row.join(&self.paint.dim(" · ")))
            };
            out.push(line);
            if n == 0 && total <= self.cols {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(self.paint.dim(&format!("  {}", rule.join("─┼─"))));
            }
        }
    }
}

fn highlight(h: &mut HighlightLines<'static>, line: &str, paint: &Paint) -> String {
    let (set, _, _) = syntaxes();
    let with_newline = format!("{line}\n");
    match h.highlight_line(&with_newline, set) {
        Ok(ranges) => ranges
            .iter()
            .map(|(style, text)| {
                let c = style.foreground;
                paint.rgb((c.r, c.g, c.b), text.trim_end_matches('\n'))
            })
            .collect(),
        Err(_) => line.to_owned(),
    }
}

#[cfg(test)]
mod tests;
