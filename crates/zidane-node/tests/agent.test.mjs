// The reference's `zidane/agent` examples and the Agent's members, against
// the loopback model.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { startModel, text, tools, hang } from './model.mjs'
import { z, tempDir, deferred } from './helpers.mjs'

const { createAgent, createRunSummaryCollector, anthropic, openai, openaiCompatible, basic } = z
const here = path.dirname(fileURLToPath(import.meta.url))

test('the entry point example: basic preset, a run summary, cache telemetry, compaction', async () => {
  const dir = tempDir()
  const model = await startModel((req, n) =>
    n === 0 ? tools([{ id: 'toolu_1', name: 'shell', input: { command: 'ls' } }]) : text(n === 1 ? 'Nothing here.' : 'Summary.'),
  )
  const agent = createAgent({ ...basic, cwd: dir, provider: anthropic({ apiKey: 'test-key', baseURL: model.url }) })
  const collector = createRunSummaryCollector()
  const uninstall = collector.install(agent.hooks)

  const stats = await agent.run({ prompt: 'Name the files in this directory.' })
  uninstall()
  assert.equal(stats.turns, 2)
  assert.equal(collector.latest()?.totals.output, 14, 'the collector summed both turns')
  assert.equal(model.requests[0].headers['x-api-key'], 'test-key')
  assert.ok(model.requests[0].body.tools.some(t => t.name === 'read_file'), 'the basic preset offers its tools')
  const impact = agent.cacheImpact({ model: 'claude-opus-5' })
  assert.ok(impact.tokens > 0, 'a model change re-reads the prompt')
  assert.deepEqual(impact.changed, ['model'])
  const expires = agent.cacheExpiresAt()
  assert.ok(expires > Date.now(), 'the cache lasts past now')

  const result = await agent.compact({ keepTurns: 0 })
  assert.equal(typeof result.compacted, 'boolean')
  await agent.destroy()
  await model.close()
})

test('createAgent example: a system prompt and the stats of a run', async () => {
  const model = await startModel(() => text('Hello!'))
  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    system: 'You are a helpful assistant.',
  })
  const stats = await agent.run({ prompt: 'Say hello.' })
  assert.equal(`Done in ${stats.turns} turns`, 'Done in 1 turns')
  assert.equal(stats.status, 'completed')
  assert.deepEqual(model.requests[0].body.system.map(b => b.text).join(''), 'You are a helpful assistant.')
  assert.equal(agent.cacheExpiresAt() !== null, true)
  await agent.destroy()
  await agent.destroy() // idempotent
  await model.close()
})

test('openai() with a base URL and the OpenAI-compatible form speak Chat Completions', async () => {
  const model = await startModel(() => text('hi'))
  for (const provider of [
    openai({ apiKey: 'sk-test', baseURL: `${model.url}/v1`, defaultModel: 'gpt-loopback' }),
    openaiCompatible({ baseURL: `${model.url}/v1`, apiKey: 'sk-test', defaultModel: 'local-model' }),
  ]) {
    const agent = createAgent({ provider })
    const stats = await agent.run({ prompt: 'hello' })
    assert.equal(stats.text, 'hi')
    await agent.destroy()
  }
  assert.equal(model.requests.length, 2)
  for (const request of model.requests) {
    assert.match(request.path, /\/v1\/chat\/completions$/)
    assert.equal(request.headers.authorization, 'Bearer sk-test')
  }
  assert.equal(model.requests[0].body.model, 'gpt-loopback')
  assert.equal(model.requests[1].body.model, 'local-model')
  await model.close()
})

test('agents made with one provider object share its connection pool', async () => {
  const model = await startModel(() => text('ok'))
  const shared = anthropic({ apiKey: 'k', baseURL: model.url })
  const a = createAgent({ provider: shared })
  const b = createAgent({ provider: shared })
  await a.run({ prompt: 'one' })
  await b.run({ prompt: 'two' })
  assert.equal(model.connections, 1, 'the second agent reused the first one\'s connection')
  const c = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }) })
  await c.run({ prompt: 'three' })
  assert.equal(model.connections, 2, 'another provider object is another pool')
  await Promise.all([a.destroy(), b.destroy(), c.destroy()])
  await model.close()
})

test('createAgent refuses a missing provider and an unknown hook', () => {
  assert.throws(() => createAgent({}), /provider/)
  assert.throws(() => createAgent({ provider: [] }), /provider/)
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: 'http://127.0.0.1:9' }) })
  assert.throws(() => agent.hooks.on('tool:gait', () => {}), /unknown hook "tool:gait"/)
  assert.equal(z.hookNames.length, 122)
})

test('members this build does not serve throw a clear error', () => {
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: 'http://127.0.0.1:9' }) })
  for (const member of z.NOT_SERVED) {
    assert.throws(() => agent[member], { name: 'NotAvailableError', message: `agent.${member} is not available in this build of @zidane-rs/agent` })
  }
})

test('steer mid-run reaches the model at the next boundary; followUp after the answer', async () => {
  const model = await startModel((req, n) =>
    n === 0 ? tools([{ id: 'toolu_1', name: 'wait', input: {} }]) : text(n === 1 ? 'first answer' : 'second answer'),
  )
  let agent
  agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      wait: {
        description: 'waits',
        inputSchema: { type: 'object', properties: {} },
        execute: async () => {
          assert.equal(agent.isRunning, true)
          assert.equal(agent.steer('Also mention the weather.'), true)
          assert.equal(agent.followUp('And now say goodbye.'), true)
          return 'waited'
        },
      },
    },
  })
  assert.equal(agent.steer('too early'), false, 'no run in flight')
  const stats = await agent.run({ prompt: 'go' })
  assert.equal(agent.isRunning, false)
  const second = JSON.stringify(model.requests[1].body.messages)
  assert.match(second, /Also mention the weather/)
  assert.doesNotMatch(second, /too early/)
  assert.match(JSON.stringify(model.requests[2].body.messages), /And now say goodbye/)
  assert.equal(stats.text, 'second answer')
  assert.ok(agent.turns.length >= 4, 'the turns are kept in memory')
  await agent.waitForIdle()
  await agent.reset()
  assert.equal(agent.turns.length, 0, 'reset clears the turns')
  await agent.destroy()
  await model.close()
})

test('abort mid-stream ends the run with the stats so far', async () => {
  const model = await startModel(() => hang())
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }) })
  const aborted = []
  agent.hooks.on('stream:start', () => agent.abort())
  agent.hooks.on('agent:abort', ctx => aborted.push(ctx))
  const stats = await agent.run({ prompt: 'go' })
  assert.equal(stats.status, 'aborted')
  assert.equal(aborted.length, 1)
  assert.equal(typeof aborted[0].runId, 'string')
  await agent.destroy()
  await model.close()
})

test('cancelTool stops one call: its signal fires and the model reads the cancellation', async () => {
  const model = await startModel((req, n) => (n === 0 ? tools([{ id: 'toolu_slow', name: 'slow', input: {} }]) : text('ok')))
  const seen = deferred()
  let agent
  agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      slow: {
        description: 'never ends by itself',
        inputSchema: { type: 'object', properties: {} },
        execute: (input, ctx) =>
          new Promise((resolve, reject) => {
            ctx.signal.addEventListener('abort', () => {
              seen.resolve(ctx.signal.reason)
              reject(new Error('cancelled'))
            })
            queueMicrotask(() => assert.equal(agent.cancelTool(ctx.callId, 'user clicked stop'), true))
          }),
      },
    },
  })
  await agent.run({ prompt: 'go' })
  assert.equal(await seen.promise, 'user clicked stop')
  const result = JSON.stringify(model.requests[1].body.messages.at(-1))
  assert.match(result, /The user cancelled this tool call/)
  assert.equal(agent.cancelTool('toolu_none'), false)
  await agent.destroy()
  await model.close()
})

test('getContextBreakdown reports the categories of the context', async () => {
  const model = await startModel(() => text('ok'))
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }), system: 'Be brief.' })
  await agent.run({ prompt: 'hello' })
  const breakdown = await agent.getContextBreakdown({ effectiveWindow: 200000 })
  assert.ok(breakdown.categories.length > 0)
  assert.ok(breakdown.used > 0)
  await agent.destroy()
  assert.equal(await agent.getContextBreakdown(), null, 'null after destroy')
  await model.close()
})

test('await using destroys the agent at the end of the scope', async () => {
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: 'http://127.0.0.1:9' }) })
  assert.equal(typeof agent[Symbol.asyncDispose], 'function')
  await agent[Symbol.asyncDispose]()
})

test('destroy releases everything: the process exits on its own', async () => {
  const child = spawn(process.execPath, [path.join(here, 'fixtures', 'destroy-child.mjs')], {
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', d => (out += d))
  const code = await new Promise(resolve => child.on('exit', resolve))
  assert.equal(code, 0)
  assert.match(out, /destroyed/)
  assert.match(out, /exit event/)
})
