// A scripted model on loopback: the Anthropic Messages and OpenAI Chat
// Completions streaming wire formats, over real HTTP. Each request is
// answered by `script(request, index)`: `text('…')`, `tools([...])`, or
// `hang()` (headers, then nothing until the client goes away).

import http from 'node:http'

export const text = t => ({ text: t })
export const tools = calls => ({ tools: calls })
export const hang = () => ({ hang: true })

function anthropicEvents(reply, n) {
  const events = [
    {
      type: 'message_start',
      message: {
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-loopback',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      },
    },
  ]
  let index = 0
  if (reply.text !== undefined) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })
    events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: reply.text } })
    events.push({ type: 'content_block_stop', index })
    index++
  }
  for (const call of reply.tools ?? []) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } })
    events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input ?? {}) } })
    events.push({ type: 'content_block_stop', index })
    index++
  }
  const stop = reply.tools ? 'tool_use' : 'end_turn'
  events.push({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 7 } })
  events.push({ type: 'message_stop' })
  return events.map(e => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
}

function openaiEvents(reply, n) {
  const chunk = (delta, finish = null) => ({
    id: `chatcmpl-${n}`,
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-loopback',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })
  const out = [chunk({ role: 'assistant', content: reply.text ?? '' })]
  ;(reply.tools ?? []).forEach((call, i) =>
    out.push(
      chunk({
        tool_calls: [{ index: i, id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) } }],
      }),
    ),
  )
  out.push(chunk({}, reply.tools ? 'tool_calls' : 'stop'))
  out.push({ id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 0, model: 'gpt-loopback', choices: [], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } })
  return out.map(c => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n'
}

/** Starts the model; `script(request, index)` answers each request. */
export async function startModel(script) {
  const requests = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', d => (body += d))
    req.on('end', () => {
      const parsed = body ? JSON.parse(body) : {}
      const request = { path: req.url, headers: req.headers, body: parsed }
      const n = requests.length
      requests.push(request)
      let reply
      try {
        reply = script(request, n)
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: String(error) } }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      if (reply.hang) {
        res.flushHeaders()
        return
      }
      res.end(req.url.includes('chat/completions') ? openaiEvents(reply, n) : anthropicEvents(reply, n))
    })
  })
  let connections = 0
  server.on('connection', () => connections++)
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** TCP connections the clients opened. */
    get connections() {
      return connections
    },
    close: () =>
      new Promise(resolve => {
        server.closeAllConnections()
        server.close(resolve)
      }),
  }
}

/** The tool results the last request carried, by tool-use id (Anthropic shape). */
export function toolResults(request) {
  const out = {}
  for (const message of request.body.messages ?? []) {
    if (!Array.isArray(message.content)) continue
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        const content = Array.isArray(block.content) ? block.content.map(b => b.text ?? '').join('') : block.content
        out[block.tool_use_id] = { content, isError: !!block.is_error }
      }
    }
  }
  return out
}
