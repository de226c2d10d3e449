/// The README's example configuration is one the program reads.
#[test]
fn the_readme_example_parses() {
    let readme = include_str!("../../../../../README.md");
    let start = readme.find("# ~/.config/zidane/config.toml").expect("the example");
    let block = &readme[start..];
    let block = &block[..block.find("```").expect("its end")];
    let file = super::ConfigFile::parse(std::path::Path::new("README.md"), block).unwrap();
    assert_eq!(
        file.settings.permissions.as_ref().unwrap().deny,
        ["shell(rm -rf:*)", "read_file(.env)"]
    );
    assert_eq!(file.settings.hooks.as_ref().unwrap()["PreToolUse"].len(), 1);
    assert_eq!(file.line("profiles.local.model"), 10);
}
