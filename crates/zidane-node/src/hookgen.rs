//! The hook vocabulary read from `zidane-core`'s `hooks.txt`, the table the
//! Rust hook types are generated from, rendered as the Rust glue between
//! each event type and a JavaScript payload (`build.rs`) and as the
//! TypeScript `AgentHooks` interface (`npm/hooks.d.ts`, checked by a test).
//!
//! Shared by `build.rs` (through `#[path]`) and the crate's tests.

#![allow(dead_code)]

use std::fmt::Write as _;

/// How a payload field is read and written (the table's field kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `set`: writable by handlers.
    Set,
    /// `hide`: written through methods.
    Hide,
    /// `get`: read through a getter returning a reference.
    Get,
    /// `val`: a `Copy` value.
    Val,
    /// `str`: a string.
    Str,
    /// `ostr`: an optional string.
    OStr,
    /// `oval`: an optional `Copy` value.
    OVal,
}

/// One payload field.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its kind.
    pub kind: Kind,
    /// Its snake_case name.
    pub name: String,
    /// Its Rust type, when the table gives one.
    pub ty: String,
}

/// One hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The spec name (`tool:gate`).
    pub name: String,
    /// The Rust type (`ToolGate`, or the alias of a `child:*` hook).
    pub rust: String,
    /// For a bubbled `child:*` hook, the child's own event type.
    pub inner: Option<String>,
    /// The summary line.
    pub doc: String,
    /// The fields (a `child:*` hook's are its inner event's).
    pub fields: Vec<Field>,
    /// Whether handlers' writes are read back.
    pub mutable: bool,
}

/// Parses `hooks.txt`.
pub fn parse(text: &str) -> Result<Vec<Hook>, String> {
    let mut hooks: Vec<Hook> = Vec::new();
    let mut doc = String::new();
    let mut open: Option<Hook> = None;
    let mut children = false;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(d) = line.strip_prefix("///") {
            if doc.is_empty() {
                doc = d.trim().to_owned();
            }
            continue;
        }
        if let Some(mut hook) = open.take() {
            if line == "}" {
                hook.mutable = hook.fields.iter().any(|f| matches!(f.kind, Kind::Set | Kind::Hide));
                hooks.push(hook);
            } else {
                hook.fields
                    .push(field(line).ok_or(format!("hooks.txt:{}: bad field `{line}`", n + 1))?);
                open = Some(hook);
            }
            continue;
        }
        if line == ";" {
            children = true;
            continue;
        }
        let (name, rest) = head(line).ok_or(format!("hooks.txt:{}: bad entry `{line}`", n + 1))?;
        let doc_line = std::mem::take(&mut doc);
        if children {
            hooks.push(child(&hooks, name, rest, doc_line).ok_or(format!("hooks.txt:{}: bad child `{line}`", n + 1))?);
        } else {
            let rust = rest.split_whitespace().next().unwrap_or_default().to_owned();
            let hook = Hook {
                name: name.to_owned(),
                rust,
                inner: None,
                doc: doc_line,
                fields: Vec::new(),
                mutable: false,
            };
            if line.ends_with("{ }") || line.ends_with("{}") {
                hooks.push(hook);
            } else {
                open = Some(hook);
            }
        }
    }
    Ok(hooks)
}

fn head(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix('"')?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.trim().strip_prefix("=>")?.trim();
    Some((name, rest))
}

fn field(line: &str) -> Option<Field> {
    let line = line.trim_end_matches(',');
    let (kind, rest) = line.split_once(' ')?;
    let kind = match kind {
        "set" => Kind::Set,
        "hide" => Kind::Hide,
        "get" => Kind::Get,
        "val" => Kind::Val,
        "str" => Kind::Str,
        "ostr" => Kind::OStr,
        "oval" => Kind::OVal,
        _ => return None,
    };
    let (name, ty) = match rest.split_once(':') {
        Some((name, ty)) => (name.trim(), ty.trim()),
        None => (rest.trim(), ""),
    };
    Some(Field {
        kind,
        name: name.to_owned(),
        ty: ty.to_owned(),
    })
}

fn child(hooks: &[Hook], name: &str, rest: &str, doc: String) -> Option<Hook> {
    // `Alias = Child<Inner> by Agent, mutable: bool[, planned];`
    let (alias, rest) = rest.split_once('=')?;
    let inner = rest.trim().strip_prefix("Child<")?.split_once('>')?.0.trim();
    let mutable = rest.contains("mutable: true");
    let own = hooks.iter().find(|h| h.rust == inner)?;
    Some(Hook {
        name: name.to_owned(),
        rust: alias.trim().to_owned(),
        inner: Some(inner.to_owned()),
        doc,
        fields: own.fields.clone(),
        mutable,
    })
}

/// `snake_case` → `camelCase`.
pub fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in name.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The one field whose object is the payload itself (`agent:done` carries
/// the stats, `cache:break` the info), as the reference's payloads are.
pub fn flattened(hook: &Hook) -> Option<&Field> {
    match hook.fields.as_slice() {
        [f] if f.kind == Kind::Get && (f.name == "stats" || f.name == "info") => Some(f),
        _ => None,
    }
}

/// The Rust glue: for each event type a payload writer and, for a mutable
/// one, a reader of the handler's answers; and `register`, which puts a
/// bridge handler on the bus under a spec name.
pub fn rust(hooks: &[Hook]) -> String {
    let mut out = String::from("// Generated by build.rs from zidane-core's hooks.txt; do not edit.\n\n");
    for hook in hooks.iter().filter(|h| h.inner.is_none()) {
        let ty = &hook.rust;
        let _ = writeln!(
            out,
            "#[allow(unused_variables, unused_mut, non_snake_case, clippy::all)]"
        );
        let _ = writeln!(out, "fn write_{ty}(ev: &{ty}, out: &mut Map<String, Value>) {{");
        if let Some(f) = flattened(hook) {
            let _ = writeln!(out, "    flatten(out, (&&Js(ev.{}())).js());", f.name);
        }
        for f in &hook.fields {
            if flattened(hook).is_some() {
                break;
            }
            let key = camel(&f.name);
            let n = &f.name;
            let expr = match f.kind {
                Kind::Hide => continue,
                Kind::Set if f.ty.contains("SharedError") => format!("error_value(&ev.{n})"),
                Kind::Set => format!("(&&Js(&ev.{n})).js()"),
                Kind::Str => format!("Value::from(ev.{n}())"),
                Kind::OStr => format!("ev.{n}().map(Value::from).unwrap_or(Value::Null)"),
                _ if f.ty.starts_with("Option<") && f.ty.contains("SharedError") => {
                    format!("ev.{n}().as_ref().map(error_value).unwrap_or(Value::Null)")
                }
                _ if f.ty.contains("SharedError") => format!("error_value(ev.{n}())"),
                Kind::Get => format!("(&&Js(ev.{n}())).js()"),
                Kind::Val | Kind::OVal => format!("(&&Js(&ev.{n}())).js()"),
            };
            let _ = writeln!(out, "    put(out, \"{key}\", {expr});");
        }
        out.push_str("}\n\n");
        if hook.mutable {
            let _ = writeln!(out, "#[allow(unused_variables, non_snake_case, clippy::all)]");
            let _ = writeln!(out, "fn read_{ty}(ev: &mut {ty}, answer: &Map<String, Value>) {{");
            for f in &hook.fields {
                let key = camel(&f.name);
                let n = &f.name;
                match f.kind {
                    Kind::Set => {
                        let _ = writeln!(
                            out,
                            "    if let Some(v) = answer.get(\"{key}\") {{ (&&Slot(RefCell::new(&mut ev.{n}))).take(v, \"{}.{key}\"); }}",
                            hook.name
                        );
                    }
                    Kind::Hide if n == "follow_up" => {
                        let _ = writeln!(
                            out,
                            "    if let Some(Value::String(s)) = answer.get(\"{key}\") {{ ev.follow_up(s.clone()); }}"
                        );
                    }
                    _ => {}
                }
            }
            out.push_str("}\n\n");
        }
    }
    out.push_str("/// Registers `bridge` on the hook named `name`; `None` for a name outside the vocabulary.\n");
    out.push_str(
        "pub(crate) fn register(bus: &HookBus, name: &str, bridge: Bridge) -> Option<HookHandle> {\n    match name {\n",
    );
    for hook in hooks {
        let (ty, inner) = match &hook.inner {
            Some(inner) => (hook.rust.clone(), inner.clone()),
            None => (hook.rust.clone(), hook.rust.clone()),
        };
        let child = hook.inner.is_some();
        let write = if child {
            format!(
                "|ev: &{ty}, out: &mut Map<String, Value>| {{ write_{inner}(ev, out); put(out, \"childId\", Value::from(ev.child_id())); put(out, \"depth\", Value::from(ev.depth())); }}"
            )
        } else {
            format!("write_{inner}")
        };
        let read = if hook.mutable {
            format!("Some(|ev: &mut {ty}, a: &Map<String, Value>| read_{inner}(ev, a))")
        } else {
            format!("None::<fn(&mut {ty}, &Map<String, Value>)>")
        };
        let _ = writeln!(
            out,
            "        \"{}\" => Some(on::<{ty}>(bus, bridge, {write}, {read})),",
            hook.name
        );
    }
    out.push_str("        _ => None,\n    }\n}\n");
    out
}

fn ts_type(f: &Field) -> String {
    let ty = f.ty.as_str();
    if matches!(f.kind, Kind::Str | Kind::OStr) {
        return "string".to_owned();
    }
    let inner = ty
        .strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .unwrap_or(ty);
    let base = match inner {
        _ if inner.contains("SharedError") => "Error",
        _ if inner.starts_with("Vec<String>") => "string[]",
        _ if inner.starts_with("Vec<") => "unknown[]",
        _ if inner.starts_with("BTreeMap<String, String>") => "Record<string, string>",
        "(u32, u32)" => "[number, number]",
        "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "f64" => "number",
        "bool" => "boolean",
        "String" => "string",
        _ if inner.contains("ToolResultContent") => "string | ToolResultContent[]",
        _ => "any",
    };
    base.to_owned()
}

/// The TypeScript `AgentHooks` interface and the list of names.
pub fn dts(hooks: &[Hook]) -> String {
    let mut out = String::from(
        "// Generated from zidane-core's hooks.txt (the Rust hook vocabulary's table) by the\n// zidane-node crate's tests; do not edit.\n\nimport type { ToolResultContent } from './index'\n\n/** Event map of the agent hook bus: each key a hook name, each value the handler. */\nexport interface AgentHooks {\n",
    );
    for hook in hooks {
        let _ = writeln!(out, "  /** {} */", hook.doc.replace("*/", "*\\/"));
        let mut props = Vec::new();
        if let Some(f) = flattened(hook) {
            let _ = f;
            props.push("[key: string]: any".to_owned());
        } else {
            for f in &hook.fields {
                if f.kind == Kind::Hide {
                    if f.name == "follow_up" {
                        props.push("followUp: (message: string) => void".to_owned());
                    }
                    continue;
                }
                let opt = matches!(f.kind, Kind::OStr | Kind::OVal) || f.ty.starts_with("Option<");
                let ro = if f.kind == Kind::Set { "" } else { "readonly " };
                let q = if opt { "?" } else { "" };
                props.push(format!("{ro}{}{q}: {}", camel(&f.name), ts_type(f)));
            }
            if hook.inner.is_some() {
                for (name, ty) in [("child_id", "string"), ("depth", "number")] {
                    props.retain(|p| !p.starts_with(&format!("readonly {}", camel(name))));
                    props.push(format!("readonly {}: {ty}", camel(name)));
                }
            }
        }
        let ret = "void";
        let _ = writeln!(out, "  '{}': (ctx: {{ {} }}) => {ret}", hook.name, props.join("; "));
    }
    out.push_str(
        "}\n\n/** Every hook name, in the vocabulary's order. */\nexport type AgentHookName = keyof AgentHooks\n",
    );
    out
}

/// The names as a JavaScript module.
pub fn js(hooks: &[Hook]) -> String {
    let mut out = String::from(
        "// Generated from zidane-core's hooks.txt by the zidane-node crate's tests; do not edit.\n'use strict'\n\n/** Every hook name and whether its handlers' answers reach the loop. */\nmodule.exports = {\n",
    );
    for hook in hooks {
        let _ = writeln!(out, "  '{}': {},", hook.name, hook.mutable);
    }
    out.push_str("}\n");
    out
}
