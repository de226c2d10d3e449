// Sessions in SQLite, and a durable run resumed after SIGKILL of the Node
// process that ran it.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { startModel, text, tools } from './model.mjs'
import { z, tempDir } from './helpers.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const { createAgent, anthropic, sqliteSession, checkpointRuntime } = z

test('a session in a SQLite file carries the conversation to a new agent', async () => {
  const db = path.join(tempDir(), 'sessions.db')
  const model = await startModel((req, n) => text(n === 0 ? 'Noted: blue.' : 'Blue.'))
  const first = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }), session: sqliteSession(db, 'chat-1') })
  await first.run({ prompt: 'My favourite colour is blue.' })
  assert.equal(first.session.id, 'chat-1')
  await first.destroy()

  const second = createAgent({ provider: anthropic({ apiKey: 'k', baseURL: model.url }), session: sqliteSession(db, 'chat-1') })
  const stats = await second.run({ prompt: 'What is my favourite colour?' })
  assert.equal(stats.text, 'Blue.')
  const sent = JSON.stringify(model.requests[1].body.messages)
  assert.match(sent, /My favourite colour is blue/, 'the earlier turns came from the file')
  assert.match(sent, /Noted: blue/)
  assert.equal(second.turns.length, 4)
  await second.destroy()
  await model.close()
})

test('SIGKILL mid-run, then a new process resumes without asking the model again for the started turn', async () => {
  const db = path.join(tempDir(), 'durable.db')
  const model = await startModel((req, n) =>
    n === 0 ? tools([{ id: 'toolu_deploy', name: 'deploy_step', input: { step: 'migrate' } }]) : text('The deployment stopped; I checked the state.'),
  )
  const child = spawn(process.execPath, [path.join(here, 'fixtures', 'durable-child.mjs'), model.url, db, 'deploy-1'], {
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', d => {
      out += d
      if (out.includes('STARTED')) resolve()
    })
    child.on('exit', code => reject(new Error(`the child ended (${code}) before its tool call started: ${out}`)))
  })
  child.kill('SIGKILL')
  await new Promise(resolve => child.on('exit', resolve))
  assert.equal(model.requests.length, 1, 'the first process asked the model once')

  const agent = createAgent({
    provider: anthropic({ apiKey: 'k', baseURL: model.url }),
    system: 'Deploy with deploy_step.',
    durable: checkpointRuntime(db),
    sessionId: 'deploy-1',
    tools: {
      deploy_step: {
        description: 'Runs the next deployment step.',
        inputSchema: { type: 'object', properties: { step: { type: 'string' } }, required: ['step'] },
        execute: async () => assert.fail('an unsafe call that had started must not run again'),
      },
    },
  })
  const resumed = []
  agent.hooks.on('tool-batch:resumed', ctx => resumed.push(ctx))
  const stats = await agent.resume()
  assert.ok(stats, 'there was a run to resume')
  assert.equal(stats.text, 'The deployment stopped; I checked the state.')
  assert.equal(model.requests.length, 2, 'the turn whose call had started was answered from its record')
  const last = model.requests[1].body.messages.at(-1).content[0]
  assert.equal(last.tool_use_id, 'toolu_deploy')
  assert.equal(last.is_error, true)
  assert.match(String(last.content), /interrupted/)
  assert.deepEqual(resumed.map(r => r.resuming), [['toolu_deploy']])
  assert.equal(await agent.resume(), null, 'nothing left to resume')
  await agent.destroy()
  await model.close()
})
