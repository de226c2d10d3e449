// What the page's browser tests stand on: a scripted model on loopback
// (Anthropic's Messages API, streamed as server-sent events, as the Rust
// tests script theirs), the real `zidane serve` against it in a home and a
// folder of their own, and Chromium driven by Playwright.

import { createRequire } from 'node:module';
import http from 'node:http';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const modules = process.env.WEB_TEST_MODULES;
if (!modules || !process.env.ZIDANE_BIN || !process.env.CHROMIUM) {
  throw new Error('run these tests with `cargo xtask web-tests` (it sets WEB_TEST_MODULES, ZIDANE_BIN and CHROMIUM)');
}
const require = createRequire(path.join(modules, 'index.js'));
export const { chromium } = require('playwright-core');
export const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const SHOTS = process.env.WEB_SCREENSHOTS || path.join(modules, '..', 'screenshots');

const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/// One model turn as events: its usage, then text and tool calls.
export const turn = {
  start: (u = {}) =>
    event('message_start', {
      message: {
        id: 'msg', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [],
        usage: { input_tokens: u.input ?? 50, output_tokens: 1, cache_read_input_tokens: u.read ?? 0, cache_creation_input_tokens: u.write ?? 0 },
      },
    }),
  text: (index, parts) =>
    event('content_block_start', { index, content_block: { type: 'text', text: '' } }) +
    parts.map((text) => event('content_block_delta', { index, delta: { type: 'text_delta', text } })).join('') +
    event('content_block_stop', { index }),
  call: (index, id, name, input) =>
    event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }) +
    event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } }) +
    event('content_block_stop', { index }),
  end: (stop, output = 12) =>
    event('message_delta', { delta: { stop_reason: stop }, usage: { output_tokens: output } }) + event('message_stop', {}),
};

/// An answer in one turn.
export const answer = (text, u) => [turn.start(u), turn.text(0, [text]), turn.end('end_turn')];
/// A tool call in one turn.
export const call = (id, name, input, u) => [turn.start(u), turn.call(0, id, name, input), turn.end('tool_use')];

/// The scripted model. `script(body, step)` picks the reply of a request
/// that offers tools (the agent's own turns; anything else, a title say,
/// gets a short answer): a list of chunks, each a string or a promise the
/// stream waits on (a gate the test opens). `step` counts the tool results
/// in the conversation so far.
export class Model {
  constructor(script) {
    this.script = script;
    this.bodies = [];
    this.gates = new Map();
  }

  /// A gate named `name`: the stream waits at it until `open(name)`.
  gate(name) {
    if (!this.gates.has(name)) {
      let open;
      const opened = new Promise((resolve) => (open = resolve));
      this.gates.set(name, { opened, open });
    }
    return this.gates.get(name).opened;
  }

  open(name) {
    this.gate(name);
    this.gates.get(name).open();
  }

  async start() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', async () => {
        this.bodies.push(body);
        let parsed = {};
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = {};
        }
        const text = JSON.stringify(parsed.messages ?? []);
        const step = (text.match(/"type":"tool_result"/g) || []).length;
        const chunks = parsed.tools?.length ? this.script(text, step, this) : answer('A session');
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const chunk of chunks) {
          if (typeof chunk === 'string') res.write(chunk);
          else await chunk;
        }
        res.end();
      });
    });
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
  }

  stop() {
    this.server.closeAllConnections?.();
    this.server.close();
  }
}

/// `zidane serve` in a home and a folder of its own, against `model`.
export class Served {
  static async start(model) {
    const s = new Served();
    s.home = fs.mkdtempSync(path.join(os.tmpdir(), 'zweb-home-'));
    s.work = fs.mkdtempSync(path.join(os.tmpdir(), 'zweb-work-'));
    const env = { ...process.env, ANTHROPIC_API_KEY: 'sk-test', ZIDANE_HOME: s.home, ZIDANE_APPROVE: 'ask' };
    for (const k of ['OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL']) delete env[k];
    s.child = spawn(process.env.ZIDANE_BIN, ['--base-url', model.url, 'serve'], {
      cwd: s.work,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    s.log = '';
    const ws = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`zidane serve did not listen:\n${s.log}`)), 60_000);
      s.child.stderr.on('data', (d) => {
        s.log += d;
        const m = s.log.match(/listening on (ws:\/\/\S+)/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      s.child.on('exit', (code) => reject(new Error(`zidane serve ended (${code}):\n${s.log}`)));
    });
    s.url = ws.replace(/^ws:/, 'http:').replace(/\/acp$/, '/');
    s.token = fs.readFileSync(path.join(s.home, 'serve-token'), 'utf8').trim();
    return s;
  }

  stop() {
    this.child.kill('SIGTERM');
    fs.rmSync(this.home, { recursive: true, force: true });
    fs.rmSync(this.work, { recursive: true, force: true });
  }
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/// Every error a page raised and every CSP violation it reported.
export function watch(page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/.test(m.text())) problems.push(m.text());
  });
  return problems;
}

/// The page opened with the token, showing the sessions.
export async function login(page, served) {
  await page.goto(served.url);
  await page.fill('#token', served.token);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#list:not([hidden])');
}

/// A new session in the served folder, from the page.
export async function newSession(page, served) {
  await page.fill('#folder', served.work);
  await page.click('#new-form button[type=submit]');
  await page.waitForSelector('#session:not([hidden])');
  await page.waitForFunction(() => /^#\/s\//.test(location.hash));
}

export async function prompt(page, text) {
  await page.fill('#prompt', text);
  await page.press('#prompt', 'Enter');
}
