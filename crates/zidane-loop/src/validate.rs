//! Tool input validation against the tool's JSON schema, with coercion of
//! the near-misses models commonly produce.

use serde_json::{Map, Value};

/// Input that passed validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    /// The input the tool receives (coerced where needed).
    pub input: Value,
    /// Paths of the fields that were coerced (empty when none were).
    pub coercions: Vec<String>,
}

/// A compiled schema.
pub struct InputValidator {
    schema: Value,
    compiled: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for InputValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputValidator")
            .field("compiled", &self.compiled.is_some())
            .finish()
    }
}

impl InputValidator {
    /// Compiles `schema`. A schema that does not compile validates nothing
    /// (the tool's author is told by [`InputValidator::schema_error`]).
    pub fn new(schema: &Value) -> Self {
        InputValidator {
            schema: schema.clone(),
            compiled: jsonschema::validator_for(schema).ok(),
        }
    }

    /// Why the schema could not be compiled, if it could not.
    pub fn schema_error(&self) -> Option<String> {
        match &self.compiled {
            Some(_) => None,
            None => jsonschema::validator_for(&self.schema).err().map(|e| e.to_string()),
        }
    }

    /// Validates `input`, coercing near-misses: a JSON object or array sent
    /// as a string, a number or boolean sent as a string, a number sent where
    /// a string is expected, a whole float where an integer is expected.
    pub fn validate(&self, input: Value) -> Result<Validated, String> {
        let Some(validator) = &self.compiled else {
            return Ok(Validated {
                input,
                coercions: Vec::new(),
            });
        };
        let mut coercions = Vec::new();
        let mut input = input;
        if let Value::String(text) = &input
            && let Ok(parsed @ Value::Object(_)) = serde_json::from_str::<Value>(text)
        {
            input = parsed;
            coercions.push("(input)".to_owned());
        }
        if input.is_null() && expects(&self.schema, "object") {
            input = Value::Object(Map::new());
        }
        if validator.is_valid(&input) {
            return Ok(Validated { input, coercions });
        }
        coerce(&mut input, &self.schema, "", &mut coercions);
        if !coercions.is_empty() && validator.is_valid(&input) {
            return Ok(Validated { input, coercions });
        }
        let reasons: Vec<String> = validator
            .iter_errors(&input)
            .take(5)
            .map(|e| {
                let path = e.instance_path().to_string();
                if path.is_empty() {
                    e.to_string()
                } else {
                    format!("{path}: {e}")
                }
            })
            .collect();
        Err(reasons.join("; "))
    }
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn expects(schema: &Value, ty: &str) -> bool {
    types(schema).contains(&ty)
}

fn coerce(value: &mut Value, schema: &Value, path: &str, coercions: &mut Vec<String>) {
    let wanted = types(schema);
    let accepts = |v: &Value| {
        wanted.is_empty()
            || wanted.iter().any(|t| match *t {
                "object" => v.is_object(),
                "array" => v.is_array(),
                "string" => v.is_string(),
                "number" => v.is_number(),
                "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
                "boolean" => v.is_boolean(),
                "null" => v.is_null(),
                _ => false,
            })
    };
    if !accepts(value) {
        let replacement = wanted.iter().find_map(|t| convert(value, t));
        if let Some(replacement) = replacement {
            *value = replacement;
            coercions.push(if path.is_empty() {
                "(input)".to_owned()
            } else {
                path.to_owned()
            });
        }
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (key, sub) in props {
                    if let Some(child) = map.get_mut(key) {
                        let child_path = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        coerce(child, sub, &child_path, coercions);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter_mut().enumerate() {
                    coerce(item, item_schema, &format!("{path}[{i}]"), coercions);
                }
            }
        }
        _ => {}
    }
}

fn convert(value: &Value, ty: &str) -> Option<Value> {
    match (ty, value) {
        ("object", Value::String(s)) => serde_json::from_str::<Value>(s).ok().filter(Value::is_object),
        ("array", Value::String(s)) => serde_json::from_str::<Value>(s).ok().filter(Value::is_array),
        ("number", Value::String(s)) => {
            let n: f64 = s.trim().parse().ok()?;
            serde_json::Number::from_f64(n).map(Value::Number)
        }
        ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
        ("integer", Value::Number(n)) => {
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
        }
        ("boolean", Value::String(s)) => match s.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        _ => None,
    }
}
