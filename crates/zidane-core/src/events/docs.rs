//! Field documentation shared by every event that carries the field.

/// The doc line of a payload field, by field name.
macro_rules! field_doc {
    (aborted) => {
        "Whether the run was already aborted when this fired."
    };
    (action) => {
        "What the guard did about the call."
    };
    (added) => {
        "Calls added by handlers."
    };
    (agent_name) => {
        "Display name of the agent, when it has one."
    };
    (answers) => {
        "The decision's answers, on success."
    };
    (artifact) => {
        "The recorded artifact."
    };
    (attempt) => {
        "1-based attempt or pass number."
    };
    (block) => {
        "Set to refuse the call; wins over `result`."
    };
    (budget) => {
        "The configured budget."
    };
    (bytes) => {
        "Bytes measured against the budget."
    };
    (bytes_written) => {
        "Bytes the task has written so far."
    };
    (call_id) => {
        "Id of the tool call."
    };
    (catalog) => {
        "The rendered catalog text."
    };
    (child_id) => {
        "Id of the sub-agent concerned."
    };
    (coercions) => {
        "Input fields that validation coerced into shape."
    };
    (command) => {
        "The command line."
    };
    (content) => {
        "The content, as received."
    };
    (cost_usd) => {
        "Running cost estimate in USD, when the model is priced."
    };
    (count) => {
        "How many, as counted by the emitter."
    };
    (cumulative_usage) => {
        "The run's running totals."
    };
    (cwd) => {
        "Working directory."
    };
    (data) => {
        "The data, when supplied."
    };
    (delay_ms) => {
        "Milliseconds the loop waits before the next attempt."
    };
    (delta) => {
        "The new chunk."
    };
    (depth) => {
        "Depth below the root agent (1 for a direct child)."
    };
    (discarded_text) => {
        "Whether the failed attempt had streamed text that is now discarded."
    };
    (discarded_thinking) => {
        "Whether the failed attempt had streamed reasoning that is now discarded."
    };
    (done) => {
        "Ids of calls rebuilt from their step records."
    };
    (dropped) => {
        "Turns dropped."
    };
    (duration_ms) => {
        "Elapsed milliseconds."
    };
    (effective_tokens) => {
        "Estimated context tokens after the compaction."
    };
    (err) => {
        "The error as the provider layer raised it."
    };
    (error) => {
        "The error."
    };
    (est_output_tokens) => {
        "Estimated output tokens so far (characters / 4)."
    };
    (estimated_tokens) => {
        "Estimated tokens of the history being compacted."
    };
    (exit_code) => {
        "Exit code."
    };
    (exits) => {
        "Exits to deliver; handlers may reorder, filter or replace them."
    };
    (expires_at) => {
        "When the new credentials expire, epoch milliseconds."
    };
    (follow_up) => {
        "The follow-up message a handler asked for."
    };
    (from) => {
        "The exhausted target."
    };
    (from_handle_id) => {
        "Handle that owned the task."
    };
    (handle) => {
        "The bound handle."
    };
    (handled) => {
        "Set when a handler reported the failure itself (suppresses the default log line)."
    };
    (id) => {
        "Id given by the caller or the provider."
    };
    (info) => {
        "The structured payload."
    };
    (input) => {
        "The call's arguments."
    };
    (is_error) => {
        "Whether the result reports a failure."
    };
    (key) => {
        "The key."
    };
    (kind) => {
        "What kind of entry this is."
    };
    (lazy) => {
        "Whether registration happened without connecting."
    };
    (limit) => {
        "The configured limit."
    };
    (max) => {
        "The configured maximum."
    };
    (max_attempts) => {
        "Attempts the retry budget allows."
    };
    (message) => {
        "The message or turn concerned."
    };
    (message_index) => {
        "Index of the message concerned."
    };
    (messages) => {
        "The conversation of the request."
    };
    (meta) => {
        "Identifiers of the call site (tool name, server, turn id)."
    };
    (metadata) => {
        "Metadata riding the tool result."
    };
    (mode) => {
        "How the budget reacted."
    };
    (model) => {
        "Model id of the request."
    };
    (name) => {
        "Name of the tool, server or item concerned."
    };
    (next_attempt) => {
        "The attempt that runs after the wait."
    };
    (ok) => {
        "Whether it succeeded."
    };
    (ops) => {
        "Staged writes that did not land, in order."
    };
    (options) => {
        "The request's options."
    };
    (outcome) => {
        "The path the call took or the result of the attempt."
    };
    (output) => {
        "The produced value."
    };
    (output_bytes) => {
        "Size of the output before any handler rewrote it."
    };
    (output_path) => {
        "File receiving the task's output."
    };
    (parent_child_id) => {
        "Id of the sub-agent that spawned this one."
    };
    (parent_run_id) => {
        "Run id of the parent run."
    };
    (pid) => {
        "OS process id."
    };
    (prior_content) => {
        "The previous content of the target, when the tool reports it."
    };
    (progress) => {
        "The progress report."
    };
    (prompt) => {
        "The prompt or its label."
    };
    (provider) => {
        "Provider name."
    };
    (provider_counted) => {
        "Whether the provider counted the tokens (else characters / 4)."
    };
    (provider_name) => {
        "Name of the primary provider."
    };
    (reason) => {
        "Why, in words."
    };
    (redacted) => {
        "The value to ship; starts equal to `value`."
    };
    (replaced) => {
        "Turns replaced by the summary."
    };
    (request) => {
        "The decision request."
    };
    (request_id) => {
        "The provider's request id, when known."
    };
    (restored) => {
        "Synthetic calls re-attached after the summary."
    };
    (result) => {
        "The result the model sees."
    };
    (results) => {
        "The results, in order."
    };
    (resume_state) => {
        "Per-handler state stored with the call's step record."
    };
    (resume_turn) => {
        "Turn the saved turns resume at."
    };
    (resumed) => {
        "Whether this call is dispatched again by a resumed run."
    };
    (resuming) => {
        "Ids of calls that run again or are reported interrupted."
    };
    (run_id) => {
        "Id of the run."
    };
    (run_tool_counts) => {
        "Calls dispatched so far in the run, before this one."
    };
    (running) => {
        "Children currently running."
    };
    (schema) => {
        "The JSON schema involved."
    };
    (server) => {
        "MCP server name."
    };
    (session_id) => {
        "Id of the session."
    };
    (signal) => {
        "Signal that ended the process, when one did."
    };
    (skill) => {
        "The skill."
    };
    (skills) => {
        "The skills."
    };
    (spawn) => {
        "The spawned agent's identity and context."
    };
    (spawned) => {
        "Whether the agent created the handle (else the host injected it)."
    };
    (stalled_for_ms) => {
        "Milliseconds without output."
    };
    (started_at) => {
        "Start time, epoch milliseconds."
    };
    (stats) => {
        "The statistics."
    };
    (status) => {
        "How it ended."
    };
    (status_code) => {
        "HTTP status, when known."
    };
    (stored_turns) => {
        "Turns the step records belong to."
    };
    (suppress_error) => {
        "Set to skip the `tool:error` that would follow."
    };
    (system) => {
        "The system prompt."
    };
    (target_index) => {
        "Index of the new target in the fallback chain."
    };
    (task_id) => {
        "Background task id."
    };
    (text) => {
        "The text accumulated so far."
    };
    (thinking) => {
        "The reasoning accumulated so far."
    };
    (threshold) => {
        "The configured threshold."
    };
    (to) => {
        "The newly active target."
    };
    (to_handle_id) => {
        "Handle that owns the task now."
    };
    (tokens) => {
        "Tokens so far."
    };
    (tool) => {
        "Canonical tool name."
    };
    (tool_counts) => {
        "Tool calls of this turn and of the run."
    };
    (tool_name) => {
        "Name of the tool."
    };
    (tool_use_id) => {
        "Id of the tool-use block."
    };
    (tools) => {
        "The tools."
    };
    (total_in) => {
        "Input tokens of the run so far."
    };
    (total_out) => {
        "Output tokens of the run so far."
    };
    (tracing_context) => {
        "Trace carrier propagated from the parent (e.g. `traceparent`)."
    };
    (transformations) => {
        "What the provider reported, as sent."
    };
    (transport) => {
        "MCP transport."
    };
    (turn) => {
        "Turn index within the run."
    };
    (turn_id) => {
        "Id of the turn."
    };
    (turn_ids) => {
        "Ids of the repaired turns."
    };
    (turn_range) => {
        "First and last turn index the run produced."
    };
    (turns) => {
        "Turns concerned."
    };
    (unknown) => {
        "Whether the tool name is unknown (the call will not run)."
    };
    (url) => {
        "The URL."
    };
    (usage) => {
        "Token usage of the turn."
    };
    (value) => {
        "The value."
    };
    (via) => {
        "What triggered it."
    };
}
