// perf driver for the shared harness (shared/perf, "The driver interface"):
// @zidane-rs/agent, the `zidane/agent` TypeScript API on the Rust core.
// M agents from createAgent sharing nothing but the process, one `echo`
// tool written in JavaScript, agent.run() each.
//
// Copied into a copy of the harness as drivers/zidane-node/index.mjs (see
// README.md beside this file); the package is the checkout's
// crates/zidane-node/npm, with the addon ZIDANE_NODE_ADDON names (the
// release build).
import { createRequire } from 'node:module';
import { config, runWorkload, PROMPT, ECHO_NAME, ECHO_DESCRIPTION, ECHO_SCHEMA } from '../common.mjs';

const require = createRequire(import.meta.url);
const { createAgent, anthropic } = require(process.env.ZIDANE_NODE_PACKAGE ?? '../../zidane-rs/crates/zidane-node/npm');

const cfg = config();
const provider = anthropic({ apiKey: 'mock-key', baseURL: cfg.base, defaultModel: cfg.model });
const tools = {
  [ECHO_NAME]: {
    description: ECHO_DESCRIPTION,
    inputSchema: ECHO_SCHEMA,
    execute: async (input) => JSON.stringify(input),
  },
};
const agents = Array.from({ length: cfg.agents }, () =>
  createAgent({ provider, tools, system: cfg.system || undefined, maxTokens: 4096, behavior: { maxTurns: cfg.turns + 1 } }),
);

async function agent(i) {
  const stats = await agents[i].run({ prompt: PROMPT });
  if (stats.status !== 'completed') throw new Error(`run ended ${stats.status}`);
  return { turns: stats.turns, toolCalls: stats.toolCalls };
}

await runWorkload('zidane-node', cfg, agent);
await Promise.all(agents.map((a) => a.destroy()));
