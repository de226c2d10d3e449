//! A review as SARIF 2.1.0, the format GitHub code scanning, GitLab and
//! most CI dashboards read: one rule per category (`zidane/security`, …),
//! one result per finding with its place and excerpt, and a
//! `partialFingerprints` entry that is the same when the same problem is
//! found again (so a dashboard keeps one alert across runs).

use serde_json::{Value, json};

use super::Report;
use super::finding::{Category, Finding, Priority};

/// The key of the fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "zidaneFindingHash/v1";

/// The SARIF level of a priority.
fn level(priority: Priority) -> &'static str {
    match priority {
        Priority::P0 | Priority::P1 => "error",
        Priority::P2 => "warning",
        Priority::P3 => "note",
    }
}

/// The security severity GitHub sorts security alerts by.
fn severity(priority: Priority) -> &'static str {
    match priority {
        Priority::P0 => "9.0",
        Priority::P1 => "7.0",
        Priority::P2 => "4.0",
        Priority::P3 => "1.0",
    }
}

fn rule(category: Category) -> Value {
    let mut tags = vec!["review"];
    if category == Category::Security {
        tags.push("security");
    }
    json!({
        "id": category.rule_id(),
        "name": category.name(),
        "shortDescription": { "text": format!("Review: {}", category.name()) },
        "fullDescription": { "text": category.about() },
        "defaultConfiguration": { "level": "warning" },
        "properties": { "tags": tags },
    })
}

fn result(finding: &Finding, rule_index: usize) -> Value {
    let mut region = json!({ "startLine": finding.start_line, "endLine": finding.end_line });
    if !finding.excerpt.is_empty() {
        region["snippet"] = json!({ "text": finding.excerpt });
    }
    let mut text = format!("{}\n\n{}", finding.title, finding.body);
    if let Some(reason) = &finding.outside_diff_reason {
        text.push_str(&format!("\n\nOutside the diff: {reason}"));
    }
    let mut properties = json!({
        "priority": finding.priority.name(),
        "confidence": finding.confidence,
        "title": finding.title,
    });
    if finding.category == Category::Security {
        properties["security-severity"] = json!(severity(finding.priority));
    }
    json!({
        "ruleId": finding.category.rule_id(),
        "ruleIndex": rule_index,
        "level": level(finding.priority),
        "message": { "text": text },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": { "uri": finding.path, "uriBaseId": "%SRCROOT%" },
                "region": region,
            }
        }],
        "partialFingerprints": { FINGERPRINT_KEY: finding.fingerprint },
        "properties": properties,
    })
}

/// The report as a SARIF 2.1.0 log.
pub fn to_sarif(report: &Report) -> Value {
    let rules: Vec<Value> = Category::ALL.into_iter().map(rule).collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let index = Category::ALL.iter().position(|c| *c == f.category).unwrap_or(0);
            result(f, index)
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "zidane",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://github.com/zidane-rs/zidane-rs",
                    "rules": rules,
                }
            },
            "automationDetails": { "id": "zidane-review/" },
            "results": results,
            "properties": {
                "reviewed": report.summary.reviewed.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
                "skipped": report.summary.skipped,
            },
        }]
    })
}
