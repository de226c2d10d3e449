//! `shell`: run a command in the working folder.

use std::time::Duration;

use serde_json::json;
use zidane_core::execution::ExecOptions;
use zidane_core::{FnTool, ToolOutput};

use crate::{Env, cap_output, fail, workspace};

pub(crate) fn shell(env: Env) -> FnTool {
    FnTool::new(
        "shell",
        "Run a shell command (sh -c) in the working folder and return its exit code and output. Long output is cut in \
         the middle. Use it to build, test, run programs and inspect the system.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line."},
                "timeout_secs": {"type": "integer", "minimum": 1, "description": "Time limit in seconds (default 120)."},
                "cwd": {"type": "string", "description": "Folder to run in, relative to the working folder."}
            },
            "required": ["command"]
        }),
        move |input, cx| {
            let env = env.clone();
            async move {
                let command = input["command"]
                    .as_str()
                    .ok_or_else(|| fail("`command` is required"))?
                    .to_owned();
                let timeout = input["timeout_secs"]
                    .as_u64()
                    .map_or(env.options.shell_timeout, Duration::from_secs);
                let options = ExecOptions {
                    timeout: Some(timeout),
                    signal: cx.signal().clone(),
                    cwd: input["cwd"].as_str().map(str::to_owned),
                    max_output_bytes: Some(env.options.max_output_bytes),
                };
                let out = workspace(&cx)?
                    .exec(&command, options)
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                if out.timed_out {
                    return Ok(ToolOutput::error(format!(
                        "The command timed out after {}s and was killed.",
                        timeout.as_secs()
                    )));
                }
                if out.aborted {
                    return Ok(ToolOutput::error("The command was cancelled and killed."));
                }
                let mut text = match out.exit_code {
                    Some(code) => format!("exit code: {code}\n"),
                    None => "exit code: none (killed by a signal)\n".to_owned(),
                };
                if !out.stdout.is_empty() {
                    text.push_str(&out.stdout);
                    if !out.stdout.ends_with('\n') {
                        text.push('\n');
                    }
                }
                if !out.stderr.is_empty() {
                    text.push_str("[stderr]\n");
                    text.push_str(&out.stderr);
                }
                let mut output = ToolOutput::text(cap_output(&text, env.options.max_output_bytes));
                output.is_error = out.exit_code != Some(0);
                Ok(output)
            }
        },
    )
}
