use zidane_provider::SYSTEM_PROMPT_BOUNDARY;

use super::{RunOptions, SystemAddition};

fn options(system: Option<&str>, additions: Vec<SystemAddition>) -> RunOptions {
    RunOptions {
        system: system.map(str::to_owned),
        system_additions: additions,
        ..Default::default()
    }
}

#[test]
fn additions_go_after_the_run_s_prompt_or_the_loop_s() {
    let base = "You help.".to_owned();
    let mcp = SystemAddition::Section("# MCP servers\n\nUse them.".into());
    let skills = SystemAddition::Dynamic("Skills: a, b.".into());
    // Nothing added: the run's own prompt, or none.
    assert_eq!(options(None, vec![]).run_system(Some(&base)), None);
    assert_eq!(
        options(Some("Run."), vec![]).run_system(Some(&base)),
        Some("Run.".into())
    );
    // A section after the loop's prompt, a blank line between.
    assert_eq!(
        options(None, vec![mcp.clone()]).run_system(Some(&base)),
        Some("You help.\n\n# MCP servers\n\nUse them.".into())
    );
    // Dynamic text behind a boundary it adds, so the static half keeps its
    // bytes; after the one the prompt has, a blank line between.
    assert_eq!(
        options(Some("Run."), vec![mcp, skills.clone()]).run_system(Some(&base)),
        Some(format!(
            "Run.\n\n# MCP servers\n\nUse them.{SYSTEM_PROMPT_BOUNDARY}Skills: a, b."
        ))
    );
    let split = format!("Static.{SYSTEM_PROMPT_BOUNDARY}Dynamic.");
    assert_eq!(
        options(Some(&split), vec![skills]).run_system(None),
        Some(format!("{split}\n\nSkills: a, b."))
    );
}
