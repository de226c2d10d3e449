// The page: the token (asked once, kept in this tab's session storage),
// the sessions list (kept fresh), a session (its transcript live, the
// prompt box, approvals and forms as dialogs) and its charts. Everything
// goes through the server's WebSocket protocol (ACP and its `_zidane/`
// extensions), as any other client's.

import { Rpc } from './rpc.js';
import { Transcript } from './transcript.js';
import { renderCharts } from './charts.js';

const $ = (id) => document.getElementById(id);
const KEY = 'zidane.token';

const state = {
  rpc: null,
  sessions: [],
  open: null, // the session shown: its id
  running: false,
  listTimer: 0,
  usageTimer: 0,
  view: 'transcript',
  asking: new Map(), // request id → dialog answerer
  commands: [], // the session's slash commands: name, description
};

// What the page does itself, beside the commands the server runs.
const PAGE_COMMANDS = [
  { name: 'undo', description: 'take back the files the last prompt changed' },
  { name: 'rewind', description: 'go back to prompt N: files and conversation', input: { hint: 'N' } },
];

const transcript = new Transcript($('transcript'), $('plan'));

function show(section) {
  for (const id of ['login', 'list', 'session']) $(id).hidden = id !== section;
}

function setConn(text) {
  $('conn').textContent = text;
}

// ---- the token and the connection ------------------------------------

async function connect() {
  const token = sessionStorage.getItem(KEY);
  if (!token) {
    show('login');
    $('token').focus();
    return;
  }
  setConn('connecting…');
  const rpc = new Rpc(token, { notification, request, closed });
  try {
    await rpc.open();
  } catch {
    sessionStorage.removeItem(KEY);
    setConn('not connected');
    $('login-error').textContent = 'The server refused the connection: the token is wrong, or this page is not the server’s own.';
    show('login');
    return;
  }
  state.rpc = rpc;
  $('forget').hidden = false;
  await rpc.call('initialize', {
    protocolVersion: 1,
    clientCapabilities: { elicitation: { form: {} } },
    clientInfo: { name: 'web', version: '1' },
    _meta: { zidane: { events: true, name: 'web' } },
  });
  setConn('connected');
  route();
}

function closed() {
  state.rpc = null;
  setConn('disconnected — reconnecting…');
  clearInterval(state.listTimer);
  setTimeout(() => {
    state.open = null;
    connect();
  }, 1500);
}

$('login-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const token = $('token').value.trim();
  if (!token) return;
  sessionStorage.setItem(KEY, token);
  $('token').value = '';
  $('login-error').textContent = '';
  connect();
});

$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  state.rpc?.close();
  location.hash = '';
  location.reload();
});

// ---- routing -----------------------------------------------------------

function route() {
  if (!state.rpc) return;
  const m = location.hash.match(/^#\/s\/([\w.:-]+)$/);
  if (m) openSession(m[1]);
  else showList();
}

window.addEventListener('hashchange', route);

// ---- the sessions list ---------------------------------------------------

const age = (iso) => {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
};

async function showList() {
  await leaveSession();
  show('list');
  await refreshList();
  clearInterval(state.listTimer);
  state.listTimer = setInterval(refreshList, 2000);
}

async function refreshList() {
  if (!state.rpc) return;
  let listed;
  try {
    listed = await state.rpc.call('session/list', {});
  } catch {
    return;
  }
  state.sessions = listed.sessions || [];
  const ul = $('sessions');
  ul.replaceChildren();
  if (!state.sessions.length) {
    const li = document.createElement('li');
    li.textContent = 'No session yet: start one in a folder.';
    ul.append(li);
  }
  for (const s of state.sessions) {
    const z = s._meta?.zidane || {};
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `#/s/${encodeURIComponent(s.sessionId)}`;
    a.className = 'title';
    a.textContent = s.title || '(no prompt yet)';
    const meta = document.createElement('div');
    meta.className = 'meta';
    const where = z.worktree ? `${z.worktree.path} (${z.worktree.branch})` : s.cwd;
    const turns = z.turns === undefined ? '' : ` · ${z.turns} ${z.turns === 1 ? 'turn' : 'turns'}`;
    const cost = typeof z.cost === 'number' ? ` · $${z.cost.toFixed(z.cost < 1 ? 4 : 2)}` : '';
    meta.textContent = `${where} · ${age(s.updatedAt)}${turns}${cost}`;
    const badge = document.createElement('span');
    badge.className = `badge ${z.state}`;
    badge.textContent = z.state || '';
    li.append(a, badge, meta);
    ul.append(li);
  }
  if (!$('folder').value && state.sessions[0]) $('folder').value = state.sessions[0].cwd;
}

$('new-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const cwd = $('folder').value.trim();
  try {
    const made = await state.rpc.call('session/new', { cwd, mcpServers: [] });
    location.hash = `#/s/${made.sessionId}`;
  } catch (err) {
    alertNote(`Could not start a session: ${err.message}`);
  }
});

function alertNote(text) {
  const li = document.createElement('li');
  li.className = 'error';
  li.setAttribute('role', 'alert');
  li.textContent = text;
  $('sessions').prepend(li);
}

// ---- a session ------------------------------------------------------------

async function leaveSession() {
  if (!state.open) return;
  const id = state.open;
  state.open = null;
  try {
    await state.rpc?.call('session/close', { sessionId: id });
  } catch {
    // gone already
  }
}

async function openSession(id) {
  clearInterval(state.listTimer);
  if (state.open === id) return;
  await leaveSession();
  state.open = id;
  transcript.clear();
  show('session');
  setView(state.view);
  $('session-title').textContent = 'Session';
  const known = state.sessions.find((s) => s.sessionId === id);
  try {
    await state.rpc.call('session/load', { sessionId: id, cwd: known?.cwd || '/', mcpServers: [] });
  } catch (err) {
    transcript.note(`Could not open the session: ${err.message}`);
    return;
  }
  const status = await state.rpc.call('_zidane/status', { sessionId: id }).catch(() => null);
  if (status) {
    $('session-title').textContent = known?.title || status.cwd || 'Session';
    setRunning(status.running);
  }
  refreshUsage();
  $('prompt').focus();
}

function setRunning(running, waiting) {
  state.running = running;
  const badge = $('state');
  badge.textContent = waiting ? 'waiting for approval' : running ? 'running' : 'idle';
  badge.className = `badge ${waiting ? 'waiting' : running ? 'running' : 'open'}`;
  $('send').textContent = running ? 'Steer' : 'Send';
  $('stop').hidden = !running;
  $('followup').hidden = !running;
}

async function send(followUp) {
  const text = $('prompt').value;
  if (!text.trim() || !state.open) return;
  $('prompt').value = '';
  showCommands();
  const back = text.trim().match(/^\/(undo|rewind)(?:\s+(\d+))?$/);
  if (back) {
    transcript.user(text);
    if (back[1] === 'rewind' && back[2] === undefined) {
      const picked = await pickCheckpoint();
      if (picked !== undefined) await rewind(picked);
      return;
    }
    await rewind(back[1] === 'rewind' ? Number(back[2]) : undefined);
    return;
  }
  const sessionId = state.open;
  transcript.user(text, state.running ? (followUp ? 'queued' : 'steering') : null);
  if (state.running && followUp) {
    await state.rpc.call('_zidane/steer', { sessionId, text, followUp: true }).catch((e) => transcript.note(e.message));
    return;
  }
  const wasRunning = state.running;
  if (!wasRunning) setRunning(true);
  try {
    const result = await state.rpc.call('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    if (result?._meta?.zidane?.steered) return;
    if (state.open === sessionId) {
      if (result?.stopReason === 'cancelled') transcript.note('Interrupted.');
      setRunning(false);
    }
  } catch (err) {
    if (state.open === sessionId) {
      transcript.note(`Error: ${err.message}`);
      setRunning(false);
    }
  }
}

$('prompt-form').addEventListener('submit', (e) => {
  e.preventDefault();
  send(false);
});
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send(false);
  }
});
$('followup').addEventListener('click', () => send(true));
$('stop').addEventListener('click', () => {
  if (state.open) state.rpc.notify('session/cancel', { sessionId: state.open });
});

// `/undo` and `/rewind N`: the plan shown, applied once confirmed.
async function rewind(index) {
  const sessionId = state.open;
  let plan;
  try {
    plan = await state.rpc.call('_zidane/rewind', index === undefined ? { sessionId } : { sessionId, index });
  } catch (err) {
    transcript.note(err.message);
    return;
  }
  if (plan.empty) {
    transcript.note('Nothing to take back.');
    return;
  }
  const yes = await confirmDialog(index === undefined ? 'Undo?' : `Rewind to prompt ${index}?`, plan.plan);
  if (!yes) {
    transcript.note('Left as it is.');
    return;
  }
  try {
    const done = await state.rpc.call('_zidane/rewind', { ...(index === undefined ? {} : { index }), sessionId, apply: true });
    transcript.note(done.report || 'Done.');
  } catch (err) {
    transcript.note(err.message);
  }
}

// `/rewind` alone: the session's checkpoints, one button each (before that
// prompt); the one picked, or undefined.
async function pickCheckpoint() {
  let listed;
  try {
    listed = await state.rpc.call('_zidane/checkpoints', { sessionId: state.open });
  } catch (err) {
    transcript.note(err.message);
    return undefined;
  }
  const list = (listed.checkpoints || []).filter((c) => c.kind === 'prompt');
  if (!list.length) {
    transcript.note('No checkpoints yet.');
    return undefined;
  }
  const dialog = $('ask');
  $('ask-title').textContent = 'Rewind to before which prompt?';
  $('ask-what').textContent = 'The files and the conversation go back to how they were before it.';
  $('ask-input').textContent = '';
  const box = $('ask-options');
  box.replaceChildren();
  return new Promise((resolve) => {
    const choose = (value) => {
      dialog.close();
      resolve(value);
    };
    for (const c of list) {
      const changes = c.changes || {};
      const n = ['created', 'modified', 'deleted'].reduce((sum, k) => sum + (changes[k] || []).length, 0);
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'allow checkpoint';
      b.textContent = `${c.index}. ${c.label} (${n} ${n === 1 ? 'file' : 'files'})`;
      b.addEventListener('click', () => choose(c.index));
      box.append(b);
    }
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'reject';
    cancel.textContent = 'Cancel';
    cancel.addEventListener('click', () => choose(undefined));
    box.append(cancel);
    dialog.addEventListener('cancel', () => resolve(undefined), { once: true });
    dialog.showModal();
    box.querySelector('button')?.focus();
  });
}

function confirmDialog(title, text) {
  const dialog = $('ask');
  $('ask-title').textContent = title;
  $('ask-what').textContent = '';
  $('ask-input').textContent = text;
  const box = $('ask-options');
  box.replaceChildren();
  return new Promise((resolve) => {
    for (const [label, yes] of [['Apply', true], ['Cancel', false]]) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = label;
      b.className = yes ? 'allow' : 'reject';
      b.addEventListener('click', () => {
        dialog.close();
        resolve(yes);
      });
      box.append(b);
    }
    dialog.showModal();
    box.querySelector('button')?.focus();
  });
}

// The commands matching what is typed, under the prompt, while it starts with `/`.
function showCommands() {
  const list = $('commands');
  const typed = $('prompt').value.match(/^\/(\S*)$/);
  list.replaceChildren();
  list.hidden = !typed;
  if (!typed) return;
  for (const c of [...PAGE_COMMANDS, ...state.commands].filter((c) => c.name.startsWith(typed[1])).slice(0, 12)) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'link';
    b.textContent = `/${c.name}`;
    b.addEventListener('click', () => {
      $('prompt').value = `/${c.name}${c.input ? ' ' : ''}`;
      showCommands();
      $('prompt').focus();
    });
    li.append(b, document.createTextNode(` ${c.description || ''}${c.input?.hint ? ` (${c.input.hint})` : ''}`));
    list.append(li);
  }
  list.hidden = !list.children.length;
}
$('prompt').addEventListener('input', showCommands);

function setView(view) {
  state.view = view;
  $('tab-transcript').setAttribute('aria-pressed', String(view === 'transcript'));
  $('tab-charts').setAttribute('aria-pressed', String(view === 'charts'));
  $('transcript').hidden = view !== 'transcript';
  $('charts').hidden = view !== 'charts';
  if (view === 'charts') refreshUsage();
}
$('tab-transcript').addEventListener('click', () => setView('transcript'));
$('tab-charts').addEventListener('click', () => setView('charts'));

async function refreshUsage() {
  if (!state.open) return;
  const usage = await state.rpc.call('_zidane/usage', { sessionId: state.open }).catch(() => null);
  if (usage) renderCharts($('charts'), usage);
}

// ---- what the server sends --------------------------------------------------

function notification(m) {
  const p = m.params || {};
  if (m.method === 'session/update' && p.sessionId === state.open) {
    if (p.update?.sessionUpdate === 'available_commands_update') state.commands = p.update.availableCommands || [];
    transcript.update(p.update);
  } else if (m.method === '_zidane/event' && p.sessionId === state.open) {
    const type = p.event?.type;
    if (type === 'request_start' && !state.running) setRunning(true);
    if (type === 'run_end') setRunning(false);
    if (['turn_end', 'cache_break', 'compact_end', 'run_end'].includes(type)) {
      clearTimeout(state.usageTimer);
      state.usageTimer = setTimeout(refreshUsage, 100);
    }
    if (type === 'compact_end') transcript.note('Context compacted.');
  } else if (m.method === '$/cancel_request') {
    const answer = state.asking.get(p.requestId);
    if (answer) answer(null, p._meta?.zidane?.answeredBy);
  }
}

function request(m) {
  if (m.method === 'session/request_permission') askPermission(m);
  else if (m.method === 'elicitation/create') askForm(m);
  else state.rpc.send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
}

function askPermission(m) {
  const p = m.params;
  const dialog = $('ask');
  const z = p._meta?.zidane || {};
  $('ask-title').textContent = `Approve: ${p.toolCall?.title || z.name || 'a tool call'}?`;
  $('ask-what').textContent = z.reason || '';
  $('ask-input').textContent = JSON.stringify(p.toolCall?.rawInput ?? {}, null, 2);
  const box = $('ask-options');
  box.replaceChildren();
  const done = (optionId, by) => {
    state.asking.delete(m.id);
    if (optionId) state.rpc.respond(m.id, { outcome: { outcome: 'selected', optionId } });
    else if (by) transcript.note(`Answered by ${by}.`);
    if (dialog.open) dialog.close();
    if (p.sessionId === state.open) setRunning(true);
  };
  for (const o of p.options || []) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = o.name;
    b.className = o.kind.startsWith('allow') ? 'allow' : 'reject';
    b.addEventListener('click', () => done(o.optionId));
    box.append(b);
  }
  state.asking.set(m.id, done);
  dialog.onCancel = null;
  dialog.addEventListener('cancel', (e) => e.preventDefault(), { once: true });
  if (p.sessionId === state.open) setRunning(true, true);
  if (!dialog.open) dialog.showModal();
  box.querySelector('button')?.focus();
}

function askForm(m) {
  const p = m.params;
  const dialog = $('form');
  $('form-title').textContent = p.message || 'A form';
  const form = $('form-fields');
  form.replaceChildren();
  const props = p.requestedSchema?.properties || {};
  const inputs = [];
  for (const [name, schema] of Object.entries(props)) {
    const label = document.createElement('label');
    const id = `f-${name}`;
    label.htmlFor = id;
    label.textContent = schema.title || name;
    let input;
    if (schema.enum) {
      input = document.createElement('select');
      for (const v of schema.enum) input.append(new Option(String(v), String(v)));
    } else {
      input = document.createElement('input');
      input.type = schema.type === 'boolean' ? 'checkbox' : schema.type === 'number' || schema.type === 'integer' ? 'number' : 'text';
    }
    input.id = id;
    inputs.push([name, schema, input]);
    form.append(label, input);
  }
  const buttons = document.createElement('div');
  buttons.className = 'buttons';
  const answer = (action) => {
    state.asking.delete(m.id);
    const content = {};
    for (const [name, schema, input] of inputs) {
      content[name] = schema.type === 'boolean' ? input.checked : schema.type === 'number' || schema.type === 'integer' ? Number(input.value) : input.value;
    }
    if (action) state.rpc.respond(m.id, action === 'accept' ? { action, content } : { action });
    if (dialog.open) dialog.close();
  };
  for (const [action, text] of [['accept', 'Submit'], ['decline', 'Decline'], ['cancel', 'Cancel']]) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.addEventListener('click', () => answer(action));
    buttons.append(b);
  }
  form.append(buttons);
  state.asking.set(m.id, () => answer(null));
  dialog.showModal();
}

connect();
