//! Tool arguments a model wrote slightly wrong, repaired when the repair is
//! unambiguous: a Markdown fence around the JSON, the object sent as a JSON
//! string, Python's `True` / `False` / `None`, trailing commas,
//! single-quoted strings and unquoted keys (read by `jsonc-parser`). Each
//! repair is named, for `validation:coerce`.

use serde_json::Value;

/// Arguments made whole, and what was changed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Repaired {
    pub(crate) input: Value,
    pub(crate) notes: Vec<String>,
}

/// `text` as a JSON object, repaired; `None` when no repair gives one.
pub(crate) fn repair(text: &str) -> Option<Repaired> {
    let mut notes = Vec::new();
    let mut text = text.trim().to_owned();
    if let Some(inner) = unfence(&text) {
        notes.push("removed the Markdown code fence around the arguments".to_owned());
        text = inner;
    }
    if let Ok(Value::String(inner)) = serde_json::from_str::<Value>(&text) {
        notes.push("read the arguments from the JSON string that held them".to_owned());
        text = inner.trim().to_owned();
    }
    if let Some(changed) = python_literals(&text) {
        notes.push("read Python's True / False / None as true / false / null".to_owned());
        text = changed;
    }
    if let Ok(input @ Value::Object(_)) = serde_json::from_str::<Value>(&text) {
        return (!notes.is_empty()).then_some(Repaired { input, notes });
    }
    // The fewest lenient rules that read it, so the notes say what was wrong.
    const RULES: [&str; 3] = [
        "removed trailing commas",
        "read single-quoted strings",
        "quoted unquoted keys",
    ];
    let mut sets: Vec<u8> = (1..8).collect();
    sets.sort_by_key(|s| s.count_ones());
    for set in sets {
        let options = jsonc_parser::ParseOptions {
            allow_comments: false,
            allow_trailing_commas: set & 1 != 0,
            allow_single_quoted_strings: set & 2 != 0,
            allow_loose_object_property_names: set & 4 != 0,
            allow_missing_commas: false,
            allow_hexadecimal_numbers: false,
            allow_unary_plus_numbers: false,
            allow_bare_decimal_point_numbers: false,
            allow_non_finite_numbers: false,
            allow_extended_string_escapes: false,
        };
        if let Ok(input @ Value::Object(_)) = jsonc_parser::parse_to_serde_value::<Value>(&text, &options) {
            notes.extend((0..3).filter(|i| set & (1 << i) != 0).map(|i| RULES[i].to_owned()));
            return Some(Repaired { input, notes });
        }
    }
    None
}

/// The body of a ```` ```json ```` fence, when `text` is one.
fn unfence(text: &str) -> Option<String> {
    let rest = text.strip_prefix("```")?;
    let (_, body) = rest.split_once('\n')?;
    let body = body.trim_end().strip_suffix("```")?;
    Some(body.trim().to_owned())
}

/// `text` with `True`, `False` and `None` outside strings made JSON's;
/// `None` when there are none.
fn python_literals(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut changed = false;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            out.push(c);
            continue;
        }
        let before_ok = i == 0 || !text[..i].ends_with(|p: char| p.is_alphanumeric() || p == '_');
        let word = ["True", "False", "None"].into_iter().find(|w| text[i..].starts_with(w));
        if let Some(word) = word.filter(|_| before_ok) {
            let after = text[i + word.len()..].chars().next();
            if !after.is_some_and(|a| a.is_alphanumeric() || a == '_') {
                out.push_str(match word {
                    "True" => "true",
                    "False" => "false",
                    _ => "null",
                });
                for _ in 1..word.len() {
                    chars.next();
                }
                changed = true;
                continue;
            }
        }
        out.push(c);
    }
    changed.then_some(out)
}

/// An example of the arguments `schema` asks for: its required properties
/// with a placeholder of their type.
pub(crate) fn example(schema: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for name in required {
        let property = &schema["properties"][name];
        let placeholder = match property["type"].as_str() {
            Some("integer") | Some("number") => Value::from(1),
            Some("boolean") => Value::Bool(false),
            Some("array") => Value::Array(Vec::new()),
            Some("object") => Value::Object(serde_json::Map::new()),
            _ => Value::from("…"),
        };
        out.insert(name.to_owned(), placeholder);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests;
