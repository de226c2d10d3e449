//! Language servers: the known ones, changed key by key by the layers'
//! `[lsp.NAME]` tables, and the tables' own servers after them.

use super::{ConfigFile, FileSettings};
use crate::Error;
use zidane::lsp::ServerConfig;

/// The servers in effect, in order of preference, each with where it came
/// from.
pub(super) fn collect(
    layers: &[(&ConfigFile, &FileSettings, Option<String>)],
) -> Result<Vec<(ServerConfig, String)>, Error> {
    let mut servers: Vec<(ServerConfig, String)> = ServerConfig::known()
        .into_iter()
        .map(|s| (s, "built in".to_owned()))
        .collect();
    // The configuration's own servers come before the known ones: one
    // configured for a language is the one used.
    let mut own = 0;
    for (file, settings, profile) in layers {
        for (name, table) in settings.lsp.iter().flatten() {
            let prefix = profile.as_ref().map(|p| format!("profiles.{p}.")).unwrap_or_default();
            let key = format!("{prefix}lsp.{name}");
            let origin = format!("{}:{}", file.path.display(), file.line(&key));
            let at = servers.iter().position(|(s, _)| s.name == *name);
            let mut server = match at {
                Some(i) => servers[i].0.clone(),
                None => {
                    let command = table
                        .command
                        .clone()
                        .ok_or_else(|| file.error(&key, "a new language server needs `command`"))?;
                    let languages = table.languages.clone().filter(|l| !l.is_empty()).ok_or_else(|| {
                        file.error(&key, "a new language server needs `languages` (such as [\"python\"])")
                    })?;
                    ServerConfig::new(name.clone(), command, Vec::<String>::new(), languages)
                }
            };
            if let Some(command) = &table.command {
                if command.trim().is_empty() {
                    return Err(file.error(&format!("{key}.command"), "is empty"));
                }
                server.command.clone_from(command);
            }
            if let Some(args) = &table.args {
                server.args.clone_from(args);
            }
            if let Some(languages) = &table.languages {
                server.languages.clone_from(languages);
            }
            if let Some(markers) = &table.root_markers {
                server.root_markers.clone_from(markers);
            }
            if let Some(enabled) = table.enabled {
                server.enabled = enabled;
            }
            match at {
                Some(i) => servers[i] = (server, origin),
                None => {
                    servers.insert(own, (server, origin));
                    own += 1;
                }
            }
        }
    }
    Ok(servers)
}
