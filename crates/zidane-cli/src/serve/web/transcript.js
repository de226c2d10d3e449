// A session's `session/update` notifications as a transcript: prompts,
// answers (Markdown, rendered safely), thinking (collapsed), tool calls
// (collapsible, with their outcome; edits as diffs) and the plan.

import { markdown } from './md.js';
import { diffView } from './diff.js';

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

export class Transcript {
  constructor(root, plan) {
    this.root = root;
    this.plan = plan;
    this.clear();
  }

  clear() {
    this.root.replaceChildren();
    this.plan.replaceChildren();
    this.plan.hidden = true;
    this.current = null; // { kind, text, node }
    this.calls = new Map();
  }

  // Scrolled to the end unless the reader scrolled up.
  follow(fn) {
    const r = this.root;
    const atEnd = r.scrollHeight - r.scrollTop - r.clientHeight < 40;
    fn();
    if (atEnd) r.scrollTop = r.scrollHeight;
  }

  user(text, who) {
    this.follow(() => {
      const box = el('div', 'msg user');
      if (who) box.append(el('div', 'who', who));
      box.append(el('div', 'text', text));
      this.root.append(box);
      this.current = null;
    });
  }

  note(text) {
    this.follow(() => {
      this.root.append(el('div', 'msg note', text));
      this.current = null;
    });
  }

  chunk(kind, text) {
    this.follow(() => {
      if (!this.current || this.current.kind !== kind) {
        let node;
        if (kind === 'thought') {
          node = el('details', 'msg thought');
          node.append(el('summary', null, 'Thinking'));
          node.append(el('div', 'body'));
        } else {
          node = el('div', 'msg agent');
        }
        this.root.append(node);
        this.current = { kind, text: '', node, queued: false };
      }
      const cur = this.current;
      cur.text += text;
      if (!cur.queued) {
        cur.queued = true;
        setTimeout(() => {
          cur.queued = false;
          const body = kind === 'thought' ? cur.node.querySelector('.body') : cur.node;
          body.replaceChildren(markdown(cur.text));
        }, 30);
      }
    });
  }

  call(u) {
    this.follow(() => {
      let c = this.calls.get(u.toolCallId);
      if (!c) {
        const node = el('details', 'tool');
        node.dataset.id = u.toolCallId;
        const summary = el('summary');
        const status = el('span', 'status');
        const title = el('span', 'title');
        summary.append(status, title);
        const body = el('div', 'body');
        node.append(summary, body);
        // A sub-agent's call goes under the `spawn` call it runs for.
        const parent = this.calls.get(u._meta?.zidane?.parentToolCallId);
        if (parent) {
          if (!parent.children.isConnected) parent.node.append(parent.children);
          parent.children.append(node);
        } else {
          this.root.append(node);
        }
        c = { node, status, title, body, input: null, content: el('div', 'content'), children: el('div', 'children') };
        this.calls.set(u.toolCallId, c);
        this.current = null;
      }
      if (u.title) c.title.textContent = u.title;
      if (u.kind) c.node.dataset.kind = u.kind;
      if (u.rawInput !== undefined && !c.input) {
        c.input = el('pre', 'input', JSON.stringify(u.rawInput, null, 2));
        c.body.append(c.input, c.content);
      }
      if (u.status) {
        c.node.dataset.status = u.status;
        c.status.textContent = { pending: '…', in_progress: '⋯', completed: '✓', failed: '✗' }[u.status] || '';
        c.status.setAttribute('aria-label', u.status.replace('_', ' '));
      }
      if (Array.isArray(u.content)) {
        if (!c.content.isConnected) c.body.append(c.content);
        c.content.replaceChildren();
        for (const part of u.content) {
          if (part.type === 'diff') {
            c.content.append(diffView(part.path, part.oldText, part.newText));
            c.node.open = true;
          } else if (part.type === 'content' && part.content?.type === 'text') {
            c.content.append(el('pre', 'output', part.content.text));
          }
        }
      }
    });
  }

  showPlan(entries) {
    this.plan.replaceChildren(el('h2', null, 'Plan'));
    const ul = el('ul');
    for (const e of entries) {
      const li = el('li', e.status, e.content);
      li.prepend(el('span', 'mark', e.status === 'completed' ? '☑ ' : e.status === 'in_progress' ? '▶ ' : '☐ '));
      ul.append(li);
    }
    this.plan.append(ul);
    this.plan.hidden = !entries.length;
  }

  update(u) {
    switch (u.sessionUpdate) {
      case 'user_message_chunk':
        this.user(u.content?.text ?? '', u._meta?.zidane?.client);
        break;
      case 'agent_message_chunk':
        this.chunk('agent', u.content?.text ?? '');
        break;
      case 'agent_thought_chunk':
        this.chunk('thought', u.content?.text ?? '');
        break;
      case 'tool_call':
      case 'tool_call_update':
        this.call(u);
        break;
      case 'plan':
        this.showPlan(u.entries || []);
        break;
      default:
        break;
    }
  }
}
