// JavaScript tools and hooks on the Rust loop.

import { test } from 'node:test'
import assert from 'node:assert/strict'

import { startModel, text, tools, toolResults } from './model.mjs'
import { z, tempDir, deferred, capturingErrors } from './helpers.mjs'

const { createAgent, anthropic, basic } = z

const empty = { type: 'object', properties: {} }

test('a JavaScript tool runs in parallel with a Rust tool of the same turn', async () => {
  const dir = tempDir()
  const model = await startModel((req, n) =>
    n === 0
      ? tools([
          { id: 'toolu_js', name: 'lookup', input: { key: 'answer' } },
          { id: 'toolu_rs', name: 'todoread', input: {} },
        ])
      : text('done'),
  )
  const rustDone = deferred()
  const agent = createAgent({
    ...basic,
    cwd: dir,
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      lookup: {
        description: 'Looks a key up.',
        inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
        // Finishes only once the Rust tool of the same batch (`todoread`,
        // parallel-safe) has: run one after the other, it would never end.
        execute: async ({ key }, ctx) => {
          assert.equal(ctx.callId, 'toolu_js')
          const rust = await rustDone.promise
          return `${key}=42, after ${rust}`
        },
      },
    },
  })
  agent.hooks.on('tool:after', ctx => {
    if (ctx.name === 'todoread') rustDone.resolve(`${ctx.name} (${ctx.callId})`)
  })
  await agent.run({ prompt: 'look it up' })
  const results = toolResults(model.requests[1])
  assert.equal(results.toolu_js.content, 'answer=42, after todoread (toolu_rs)')
  assert.equal(results.toolu_rs.isError, false)
  await agent.destroy()
  await model.close()
})

test('the loop validates a JavaScript tool\'s input against its inputSchema', async () => {
  const model = await startModel((req, n) => (n === 0 ? tools([{ id: 'toolu_1', name: 'square', input: { n: 'seven' } }]) : text('ok')))
  let called = false
  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      square: {
        description: 'Squares n.',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        execute: async ({ n }) => {
          called = true
          return String(n * n)
        },
      },
    },
  })
  const rejects = []
  agent.hooks.on('validation:reject', ctx => rejects.push(ctx))
  await agent.run({ prompt: 'square seven' })
  assert.equal(called, false)
  assert.equal(rejects.length, 1)
  assert.equal(rejects[0].name, 'square')
  assert.equal(toolResults(model.requests[1]).toolu_1.isError, true)
  await agent.destroy()
  await model.close()
})

test('a thrown error becomes the tool\'s error result', async () => {
  const model = await startModel((req, n) => (n === 0 ? tools([{ id: 'toolu_1', name: 'fail', input: {} }]) : text('noted')))
  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      fail: {
        description: 'Always fails.',
        inputSchema: empty,
        execute: async () => {
          throw new Error('the disk is full')
        },
      },
    },
  })
  const errors = []
  agent.hooks.on('tool:error', ctx => errors.push(ctx))
  const stats = await agent.run({ prompt: 'try it' })
  assert.equal(stats.status, 'completed', 'the run goes on')
  const result = toolResults(model.requests[1]).toolu_1
  assert.equal(result.isError, true)
  assert.equal(result.content, 'Tool error: the disk is full')
  assert.equal(errors.length, 1)
  assert.match(errors[0].error, /the disk is full/)
  await agent.destroy()
  await model.close()
})

test('content blocks and { content, isError } are tool results too', async () => {
  const model = await startModel((req, n) =>
    n === 0
      ? tools([
          { id: 'toolu_a', name: 'blocks', input: {} },
          { id: 'toolu_b', name: 'soft', input: {} },
        ])
      : text('ok'),
  )
  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      blocks: { description: 'b', inputSchema: empty, execute: async () => [{ type: 'text', text: 'part one' }] },
      soft: { description: 's', inputSchema: empty, execute: async () => ({ content: 'not found', isError: true }) },
    },
  })
  await agent.run({ prompt: 'go' })
  const results = toolResults(model.requests[1])
  assert.equal(results.toolu_a.content, 'part one')
  assert.deepEqual(results.toolu_b, { content: 'not found', isError: true })
  await agent.destroy()
  await model.close()
})

test('a tool:gate handler blocks a call with a reason the model reads', async () => {
  const model = await startModel((req, n) =>
    n === 0 ? tools([{ id: 'toolu_1', name: 'deploy', input: { env: 'production' } }]) : text('understood'),
  )
  let ran = false
  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: {
      deploy: {
        description: 'Deploys.',
        inputSchema: { type: 'object', properties: { env: { type: 'string' } } },
        execute: async () => {
          ran = true
          return 'deployed'
        },
      },
    },
    hooks: {
      'tool:gate': async ctx => {
        await new Promise(resolve => setImmediate(resolve))
        if (ctx.name === 'deploy' && ctx.input.env === 'production') {
          ctx.block = true
          ctx.reason = 'production deploys need a person'
        }
      },
    },
  })
  const dispatched = []
  agent.hooks.on('tool:dispatched', ctx => dispatched.push(ctx.outcome))
  await agent.run({ prompt: 'ship it' })
  assert.equal(ran, false)
  assert.deepEqual(dispatched, ['gate-block'])
  assert.deepEqual(toolResults(model.requests[1]).toolu_1, { content: 'Blocked: production deploys need a person', isError: true })
  await agent.destroy()
  await model.close()
})

test('an async tool:transform rewrites the result the model reads', async () => {
  const model = await startModel((req, n) => (n === 0 ? tools([{ id: 'toolu_1', name: 'secret', input: {} }]) : text('ok')))
  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    tools: { secret: { description: 's', inputSchema: empty, execute: async () => 'token=abc123' } },
  })
  agent.hooks.on('tool:transform', async ctx => {
    await new Promise(resolve => setTimeout(resolve, 0))
    assert.equal(ctx.isError, false)
    ctx.result = ctx.result.replace(/abc123/, '[redacted]')
  })
  await agent.run({ prompt: 'go' })
  assert.equal(toolResults(model.requests[1]).toolu_1.content, 'token=[redacted]')
  await agent.destroy()
  await model.close()
})

test('system:transform and turn:before answers reach the request', async () => {
  const model = await startModel(() => text('ok'))
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }), system: 'Base prompt.' })
  agent.hooks.on('system:transform', async ctx => {
    ctx.system = `${ctx.system}\nAlways answer in French.`
  })
  const turns = []
  agent.hooks.on('turn:before', ctx => {
    turns.push(ctx.turn)
    ctx.options.maxTokens = 321
  })
  await agent.run({ prompt: 'hello' })
  const body = model.requests[0].body
  assert.match(body.system.map(b => b.text).join(''), /Base prompt\.\nAlways answer in French\./)
  assert.equal(body.max_tokens, 321)
  assert.deepEqual(turns, [1])
  await agent.destroy()
  await model.close()
})

test('observers get camelCase plain objects', async () => {
  const model = await startModel(() => text('Hello there'))
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }) })
  const seen = {}
  for (const name of ['agent:start', 'stream:text', 'turn:after', 'agent:done', 'usage']) {
    agent.hooks.on(name, ctx => (seen[name] = ctx))
  }
  await agent.run({ prompt: 'hi' })
  assert.equal(typeof seen['agent:start'].runId, 'string')
  assert.equal(seen['agent:start'].depth, 0)
  assert.equal(seen['stream:text'].delta, 'Hello there')
  assert.equal(typeof seen['stream:text'].turnId, 'string')
  assert.equal(seen['turn:after'].turn, 1)
  assert.equal(typeof seen['turn:after'].turnId, 'string')
  assert.equal(seen['agent:done'].turns, 1, 'agent:done carries the stats themselves')
  assert.equal(seen['agent:done'].totalOut, 7)
  assert.equal(seen.usage.totalIn, 12)
  assert.ok(!Object.keys(seen['agent:start']).some(k => k.includes('_')), 'no snake_case keys')
  await agent.destroy()
  await model.close()
})

test('hooks.on returns an unsubscribe; a throwing handler is logged and the run goes on', async () => {
  const model = await startModel(() => text('ok'))
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }) })
  const calls = []
  const off = agent.hooks.on('turn:after', () => calls.push('first'))
  agent.hooks.on('turn:after', () => {
    throw new Error('handler bug')
  })
  agent.hooks.on('turn:after', () => calls.push('after the throw'))
  const { value: stats, lines } = await capturingErrors(() => agent.run({ prompt: 'one' }))
  assert.equal(stats.status, 'completed')
  assert.deepEqual(calls, ['first', 'after the throw'])
  assert.ok(lines.some(l => l.includes('"turn:after" hook handler threw') && l.includes('handler bug')), lines.join('\n'))
  off()
  off() // idempotent
  await capturingErrors(() => agent.run({ prompt: 'two' }))
  assert.deepEqual(calls, ['first', 'after the throw', 'after the throw'], 'the removed handler no longer runs')
  await agent.destroy()
  await model.close()
})

test('run:beforeEnd followUp keeps the run going', async () => {
  const model = await startModel((req, n) => text(n === 0 ? 'draft' : 'final'))
  const agent = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }) })
  let asked = false
  agent.hooks.on('run:beforeEnd', ctx => {
    if (!asked) {
      asked = true
      ctx.followUp('Check your answer once more.')
    }
  })
  const stats = await agent.run({ prompt: 'go' })
  assert.equal(stats.text, 'final')
  assert.equal(model.requests.length, 2)
  assert.match(JSON.stringify(model.requests[1].body.messages), /Check your answer once more/)
  await agent.destroy()
  await model.close()
})
