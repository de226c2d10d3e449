use proptest::prelude::*;
use serde_json::json;
use zidane_provider::{ContentBlock, Message, Role, SYSTEM_PROMPT_BOUNDARY, StreamOptions, ThinkingLevel, ToolSpec};

use zidane_core::events::{CacheDimensionName, CacheSystemSection};

use crate::{CachePromptSections, diff_cache_dimensions, fnv1a32, hash_messages, snapshot_cache_dimensions};

#[test]
fn fnv1a32_matches_hand_computed_values_over_utf16_units() {
    assert_eq!(fnv1a32(""), 0x811c_9dc5);
    assert_eq!(fnv1a32("a"), 0xe40c_292c);
    assert_eq!(fnv1a32("foobar"), 0xbf9c_f968, "the FNV-1a reference vector");
    assert_eq!(fnv1a32("é"), 0x6c0b_6c44);
    assert_eq!(fnv1a32("café"), 0x3308_be7c);
    assert_eq!(fnv1a32("😀"), 0xcb31_c4b8, "an astral character is two surrogate units");
    // The full unit is mixed in: U+0100 and U+0000 share a low byte but not a hash.
    assert_eq!((fnv1a32("Ā"), fnv1a32("\0")), (0x050a_ca1f, 0x050c_5d1f));
}

fn conversation(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question {i}"))
            } else {
                Message::assistant(format!("answer {i}"))
            }
        })
        .collect()
}

fn options(messages: Vec<Message>) -> StreamOptions {
    let mut o = StreamOptions::new("claude-sonnet-4-5", messages);
    o.system = Some(format!("Static rules.{SYSTEM_PROMPT_BOUNDARY}Dynamic part."));
    o.tools = vec![ToolSpec {
        name: "shell".into(),
        description: "Run".into(),
        input_schema: json!({"type": "object"}),
    }];
    o
}

#[test]
fn diff_names_each_changed_dimension_with_a_readable_line() {
    let a = snapshot_cache_dimensions(&options(conversation(4)), None);
    let mut o = options(conversation(4));
    o.system = Some(format!("Static rules!{SYSTEM_PROMPT_BOUNDARY}Dynamic part, longer."));
    o.model = "claude-opus-4-1".into();
    o.thinking = ThinkingLevel::High;
    o.thinking_budget = Some(8000);
    o.tools.push(ToolSpec {
        name: "read".into(),
        description: "Read".into(),
        input_schema: json!({"type": "object"}),
    });
    let b = snapshot_cache_dimensions(&o, None);
    let diff = diff_cache_dimensions(&a, &b);
    assert_eq!(
        diff.changed,
        vec![
            CacheDimensionName::System,
            CacheDimensionName::Tools,
            CacheDimensionName::Model,
            CacheDimensionName::Thinking,
            CacheDimensionName::ThinkingBudget,
        ]
    );
    let system_bytes = |s: &crate::CacheDimensionSnapshot| s.system_bytes;
    assert_eq!(
        diff.details[&CacheDimensionName::System],
        format!("system: {} → {} bytes", system_bytes(&a), system_bytes(&b))
    );
    assert_eq!(diff.details[&CacheDimensionName::Tools], "tools: 1 → 2 tools");
    assert_eq!(
        diff.details[&CacheDimensionName::Model],
        "model: claude-sonnet-4-5 → claude-opus-4-1"
    );
    assert_eq!(diff.details[&CacheDimensionName::Thinking], "thinking: off → high");
    assert_eq!(
        diff.system_sections,
        Some(vec![CacheSystemSection::HostStatic, CacheSystemSection::HostDynamic])
    );
}

#[test]
fn a_system_change_is_traced_to_its_section() {
    let sections = CachePromptSections {
        skills_catalog: Some("<skills>a</skills>".into()),
        ..Default::default()
    };
    let mut o = options(conversation(2));
    o.system = Some(format!("Rules. <skills>a</skills>{SYSTEM_PROMPT_BOUNDARY}Dynamic."));
    let a = snapshot_cache_dimensions(&o, Some(&sections));
    let sections_b = CachePromptSections {
        skills_catalog: Some("<skills>b</skills>".into()),
        ..Default::default()
    };
    o.system = Some(format!("Rules. <skills>b</skills>{SYSTEM_PROMPT_BOUNDARY}Dynamic."));
    let b = snapshot_cache_dimensions(&o, Some(&sections_b));
    let diff = diff_cache_dimensions(&a, &b);
    assert_eq!(diff.changed, vec![CacheDimensionName::System]);
    assert_eq!(
        diff.details[&CacheDimensionName::System],
        "system: 74 bytes, content changed"
    );
    assert_eq!(
        diff.system_sections,
        Some(vec![CacheSystemSection::SkillsCatalog]),
        "the host parts are unchanged"
    );
}

#[test]
fn hashes_are_memoized_per_message_and_follow_edits() {
    let mut messages = conversation(3);
    let before = hash_messages(&messages);
    assert_eq!(hash_messages(&messages), before);
    messages[1].content_mut().push(ContentBlock::text("edit"));
    let after = hash_messages(&messages);
    assert_eq!((after[0], after[2]), (before[0], before[2]));
    assert_ne!(after[1], before[1], "an edited message hashes anew");
    let as_user = {
        let mut m = messages[1].clone();
        m.set_role(Role::User);
        m
    };
    assert_ne!(hash_messages(std::slice::from_ref(&as_user))[0], after[1]);
}

fn arb_message() -> impl Strategy<Value = Message> {
    (any::<bool>(), "[a-zé😀 ]{0,24}").prop_map(|(user, text)| {
        if user {
            Message::user(text)
        } else {
            Message::assistant(text)
        }
    })
}

proptest! {
    #[test]
    fn diff_of_a_snapshot_with_itself_is_empty(messages in prop::collection::vec(arb_message(), 0..12)) {
        let s = snapshot_cache_dimensions(&options(messages), None);
        prop_assert!(diff_cache_dimensions(&s, &s).is_empty());
    }

    #[test]
    fn appending_never_reports_a_prefix_change(
        messages in prop::collection::vec(arb_message(), 0..12),
        more in prop::collection::vec(arb_message(), 0..6),
    ) {
        let a = snapshot_cache_dimensions(&options(messages.clone()), None);
        let mut longer = messages;
        longer.extend(more);
        let b = snapshot_cache_dimensions(&options(longer), None);
        let diff = diff_cache_dimensions(&a, &b);
        prop_assert!(!diff.changed.contains(&CacheDimensionName::MessagePrefix));
        prop_assert!(diff.is_empty());
    }

    #[test]
    fn rewriting_message_k_diverges_at_k(
        messages in prop::collection::vec(arb_message(), 1..12),
        k in any::<prop::sample::Index>(),
        more in prop::collection::vec(arb_message(), 0..4),
    ) {
        let k = k.index(messages.len());
        let a = snapshot_cache_dimensions(&options(messages.clone()), None);
        let mut rewritten = messages;
        rewritten[k].content_mut().push(ContentBlock::text("rewritten"));
        rewritten.extend(more);
        let b = snapshot_cache_dimensions(&options(rewritten), None);
        let diff = diff_cache_dimensions(&a, &b);
        prop_assert_eq!(diff.changed, vec![CacheDimensionName::MessagePrefix]);
        prop_assert_eq!(diff.message_prefix_diverged_at, Some(k as u32));
    }

    #[test]
    fn hashes_survive_a_serialization_round_trip(messages in prop::collection::vec(arb_message(), 0..12)) {
        let json = serde_json::to_string(&messages).unwrap();
        let back: Vec<Message> = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(hash_messages(&back), hash_messages(&messages));
        let s = snapshot_cache_dimensions(&options(messages), None);
        let s2: crate::CacheDimensionSnapshot = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        prop_assert_eq!(s2, s);
    }
}
