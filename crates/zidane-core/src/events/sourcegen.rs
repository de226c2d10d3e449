//! Renders `generated.rs` (the event types, their `…Init` structs, the
//! bubbled `child:*` aliases and the catalogue) from `hooks.txt` and
//! `fields.txt`. The test below rewrites the checked-in file when it is
//! stale and then fails, so a changed table shows up as a diff to commit.

use std::fmt::Write as _;
use std::path::Path;

struct Field {
    kind: String,
    name: String,
    ty: Option<String>,
}

impl Field {
    fn read_only(&self) -> bool {
        !matches!(self.kind.as_str(), "set" | "hide")
    }

    /// The type stored in the struct (and taken by the `…Init` struct).
    fn stored(&self) -> String {
        let ty = self.ty.clone().unwrap_or_default();
        match self.kind.as_str() {
            "str" => "String".to_owned(),
            "ostr" => "Option<String>".to_owned(),
            "oval" => format!("Option<{ty}>"),
            _ => ty,
        }
    }
}

struct Event {
    docs: Vec<String>,
    name: String,
    ty: String,
    emitter: String,
    planned: bool,
    fields: Vec<Field>,
}

struct ChildEvent {
    docs: Vec<String>,
    name: String,
    alias: String,
    inner: String,
    emitter: String,
    mutable: bool,
    planned: bool,
}

fn parse(table: &str) -> Result<(Vec<Event>, Vec<ChildEvent>), String> {
    let mut events = Vec::new();
    let mut children = Vec::new();
    let mut docs = Vec::new();
    let mut current: Option<Event> = None;
    let mut in_children = false;
    for (i, raw) in table.lines().enumerate() {
        let line = raw.trim();
        let at = || format!("hooks.txt:{}: {line}", i + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(doc) = line.strip_prefix("///") {
            docs.push(doc.strip_prefix(' ').unwrap_or(doc).to_owned());
            continue;
        }
        if let Some(event) = current.as_mut() {
            if line == "}" {
                events.extend(current.take());
                continue;
            }
            let line = line.strip_suffix(',').ok_or_else(at)?;
            let (kind, rest) = line.split_once(' ').ok_or_else(at)?;
            let (name, ty) = match rest.split_once(':') {
                Some((n, t)) => (n.trim().to_owned(), Some(t.trim().to_owned())),
                None => (rest.trim().to_owned(), None),
            };
            event.fields.push(Field {
                kind: kind.to_owned(),
                name,
                ty,
            });
            continue;
        }
        if line == ";" {
            in_children = true;
            continue;
        }
        let (name, rest) = line
            .strip_prefix('"')
            .and_then(|l| l.split_once("\" => "))
            .ok_or_else(at)?;
        if in_children {
            // `Alias = Child<Inner> by Emitter, mutable: bool[, planned];`
            let rest = rest.strip_suffix(';').ok_or_else(at)?;
            let (alias, rest) = rest.split_once(" = Child<").ok_or_else(at)?;
            let (inner, rest) = rest.split_once("> by ").ok_or_else(at)?;
            let mut parts = rest.split(", ");
            let emitter = parts.next().ok_or_else(at)?.to_owned();
            let mutable = parts.next().ok_or_else(at)? == "mutable: true";
            let planned = parts.next() == Some("planned");
            children.push(ChildEvent {
                docs: std::mem::take(&mut docs),
                name: name.to_owned(),
                alias: alias.to_owned(),
                inner: inner.to_owned(),
                emitter,
                mutable,
                planned,
            });
        } else {
            // `Type by Emitter[, planned] {`
            let rest = rest.strip_suffix(" {").ok_or_else(at)?;
            let (ty, rest) = rest.split_once(" by ").ok_or_else(at)?;
            let (emitter, planned) = match rest.split_once(", ") {
                Some((e, "planned")) => (e, true),
                Some(_) => return Err(at()),
                None => (rest, false),
            };
            current = Some(Event {
                docs: std::mem::take(&mut docs),
                name: name.to_owned(),
                ty: ty.to_owned(),
                emitter: emitter.to_owned(),
                planned,
                fields: Vec::new(),
            });
        }
    }
    if current.is_some() {
        return Err("hooks.txt: the last entry is not closed".into());
    }
    Ok((events, children))
}

fn field_docs(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(": "))
        .map(|(n, d)| (n.trim().to_owned(), d.trim().to_owned()))
        .collect()
}

fn emitter_crate(emitter: &str) -> &'static str {
    match emitter {
        "Loop" => "zidane-loop",
        "Agent" => "zidane-agent",
        "Mcp" => "zidane-mcp",
        "CacheTelemetry" => "zidane-cache-telemetry",
        _ => "observability and durable-runtime adapters",
    }
}

fn render(table: &str, fields: &str) -> Result<String, String> {
    let (events, children) = parse(table)?;
    let field_doc = field_docs(fields);
    let doc = |name: &str| -> Result<String, String> {
        field_doc
            .get(name)
            .cloned()
            .ok_or_else(|| format!("fields.txt has no doc for `{name}`"))
    };
    let mut out = String::new();
    out.push_str(
        "// Generated from `hooks.txt` and `fields.txt` by `cargo test -p zidane-core` (events::sourcegen); do not edit.\n",
    );
    for e in &events {
        render_event(&mut out, e, &doc)?;
    }
    render_tables(&mut out, &events, &children)?;
    Ok(out)
}

/// One event's struct, its `Init`, its constructor and getters.
fn render_event(out: &mut String, e: &Event, doc: &dyn Fn(&str) -> Result<String, String>) -> Result<(), String> {
    let (summary, more) = e.docs.split_first().ok_or_else(|| format!("`{}` has no doc", e.name))?;
    let _ = writeln!(out, "\n/// `{}`: {summary}", e.name);
    for line in more {
        let _ = writeln!(out, "///{}{line}", if line.is_empty() { "" } else { " " });
    }
    let _ = writeln!(out, "///\n/// Emitted by `{}`.", emitter_crate(&e.emitter));
    let params: Vec<&Field> = e.fields.iter().filter(|f| f.read_only()).collect();
    let derive = if params.is_empty() {
        "Debug, Clone, Default"
    } else {
        "Debug, Clone"
    };
    let _ = writeln!(out, "#[derive({derive})]\n#[non_exhaustive]\npub struct {} {{", e.ty);
    for f in &e.fields {
        match f.kind.as_str() {
            "set" => {
                let _ = writeln!(out, "    /// {}\n    pub {}: {},", doc(&f.name)?, f.name, f.stored());
            }
            _ => {
                let _ = writeln!(out, "    {}: {},", f.name, f.stored());
            }
        }
    }
    out.push_str("}\n");
    if !params.is_empty() {
        let _ = writeln!(
            out,
            "\n/// The read-only fields of [`{0}`], named, for [`{0}::new`].\n#[derive(Debug, Clone)]\npub struct {0}Init {{",
            e.ty
        );
        for f in &params {
            let _ = writeln!(out, "    /// {}\n    pub {}: {},", doc(&f.name)?, f.name, f.stored());
        }
        out.push_str("}\n");
    }
    let _ = writeln!(out, "\nimpl {} {{", e.ty);
    if params.is_empty() {
        out.push_str("    /// A new event; writable fields start at their defaults.\n    pub fn new() -> Self {\n        Self::default()\n    }\n");
    } else {
        let names: Vec<&str> = params.iter().map(|f| f.name.as_str()).collect();
        let _ = writeln!(
            out,
            "    /// Builds the event from its read-only fields; writable fields\n    /// start at their defaults.\n    pub fn new(init: {}Init) -> Self {{\n        let {}Init {{ {} }} = init;\n        {} {{",
            e.ty,
            e.ty,
            names.join(", "),
            e.ty
        );
        for f in &e.fields {
            if f.read_only() {
                let _ = writeln!(out, "            {},", f.name);
            } else {
                let _ = writeln!(out, "            {}: Default::default(),", f.name);
            }
        }
        out.push_str("        }\n    }\n");
    }
    for f in &params {
        let ty = f.ty.clone().unwrap_or_default();
        let (ret, body) = match f.kind.as_str() {
            "get" => (format!("&{ty}"), format!("&self.{}", f.name)),
            "val" => (ty, format!("self.{}", f.name)),
            "str" => ("&str".to_owned(), format!("&self.{}", f.name)),
            "ostr" => ("Option<&str>".to_owned(), format!("self.{}.as_deref()", f.name)),
            "oval" => (format!("Option<{ty}>"), format!("self.{}", f.name)),
            other => return Err(format!("`{}`: unknown field kind `{other}`", e.name)),
        };
        let _ = writeln!(
            out,
            "\n    /// {}\n    pub fn {}(&self) -> {ret} {{\n        {body}\n    }}",
            doc(&f.name)?,
            f.name
        );
    }
    out.push_str("}\n");
    let _ = writeln!(
        out,
        "\nimpl HookEvent for {} {{\n    const NAME: &'static str = {:?};\n}}",
        e.ty, e.name
    );
    Ok(())
}

/// The bubbled aliases, the forwarder, the catalogue and the hook specs.
fn render_tables(out: &mut String, events: &[Event], children: &[ChildEvent]) -> Result<(), String> {
    for c in children {
        let summary = c.docs.first().ok_or_else(|| format!("`{}` has no doc", c.name))?;
        let _ = writeln!(
            out,
            "\n/// `{}`: {summary}\npub type {} = Child<{}>;\n\nimpl Bubble for {} {{\n    const CHILD_NAME: &'static str = {:?};\n}}",
            c.name, c.alias, c.inner, c.inner, c.name
        );
    }
    out.push_str(
        "\n/// Installs, through `link`, a forwarder for each bubbled event the\n/// parent listens to (see [`install_bubbling`](crate::bubble::install_bubbling)).\npub(crate) fn forward_bubbled(link: &crate::bubble::BubbleLink<'_>) {\n",
    );
    for c in children {
        let _ = writeln!(out, "    link.forward::<{}>({});", c.inner, c.mutable);
    }
    out.push_str("}\n");
    out.push_str("\n/// Every hook of the vocabulary, in declaration order.\npub static CATALOGUE: &[HookInfo] = &[\n");
    for e in events {
        let mutable = e.fields.iter().any(|f| !f.read_only());
        let summary = e.docs.first().map(String::as_str).unwrap_or_default();
        let _ = writeln!(
            out,
            "    HookInfo {{\n        name: {:?},\n        rust_type: {:?},\n        emitter: Emitter::{},\n        mutable: {mutable},\n        emitted: {},\n        summary: {summary:?},\n        spec: HookSpec::of::<{}>(),\n    }},",
            e.name, e.ty, e.emitter, !e.planned, e.ty
        );
    }
    for c in children {
        let summary = c.docs.first().map(String::as_str).unwrap_or_default();
        let _ = writeln!(
            out,
            "    HookInfo {{\n        name: {:?},\n        rust_type: \"Child<{}>\",\n        emitter: Emitter::{},\n        mutable: {},\n        emitted: {},\n        summary: {summary:?},\n        spec: HookSpec::of::<{}>(),\n    }},",
            c.name, c.inner, c.emitter, c.mutable, !c.planned, c.alias
        );
    }
    out.push_str("];\n\n/// The catalogue as hook specs, for [`zidane_hooks::HookMap::install`].\npub static HOOK_SPECS: &[HookSpec] = &[\n");
    for e in events {
        let _ = writeln!(out, "    HookSpec::of::<{}>(),", e.ty);
    }
    for c in children {
        let _ = writeln!(out, "    HookSpec::of::<{}>(),", c.alias);
    }
    out.push_str("];\n");
    Ok(())
}

#[test]
fn generated_events_match_the_table() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/events");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let want = render(&read("hooks.txt"), &read("fields.txt")).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join("generated.rs");
    if read("generated.rs") != want {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        panic!(
            "{} was stale and has been rewritten from hooks.txt and fields.txt; rebuild and commit it",
            path.display()
        );
    }
}

#[test]
fn a_malformed_table_is_reported_with_its_line() {
    let err = render("/// Doc.\n\"a:b\" => AB by Loop {\n    str x\n}\n", "x: The x.\n").err();
    assert_eq!(err.as_deref(), Some("hooks.txt:3: str x"));
    let err = render("/// Doc.\n\"a:b\" => AB by Loop {\n    str y,\n}\n", "x: The x.\n").err();
    assert_eq!(err.as_deref(), Some("fields.txt has no doc for `y`"));
}
