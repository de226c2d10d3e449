// Markdown to DOM nodes, built with createElement and text nodes only:
// nothing the model, a tool or a file wrote is ever parsed as HTML, so a
// `<script>` or an `onerror` in it is shown as the characters it is.
// Covers what answers use: headings, paragraphs, lists, quotes, fenced
// code (with light highlighting), inline code, bold, italics, links
// (http and https only).

const el = (tag, cls) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
};

export function markdown(text) {
  const root = el('div', 'md');
  const lines = String(text).replace(/\r\n/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      root.append(codeBlock(body.join('\n'), fence[2]));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      const h = el(`h${Math.min(6, heading[1].length + 2)}`);
      inline(h, heading[2]);
      root.append(h);
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? 'ol' : 'ul');
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        const li = el('li');
        inline(li, lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ''));
        list.append(li);
        i++;
      }
      root.append(list);
      continue;
    }
    if (/^>\s?/.test(line)) {
      const quote = el('blockquote');
      const body = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) body.push(lines[i++].replace(/^>\s?/, ''));
      quote.append(markdown(body.join('\n')));
      root.append(quote);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !/^(\s*(```|~~~)|#{1,6}\s|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i])) {
      para.push(lines[i++]);
    }
    if (!para.length) para.push(lines[i++]);
    const p = el('p');
    inline(p, para.join('\n'));
    root.append(p);
  }
  return root;
}

// Inline spans into `parent`: code, links, bold, italics; the rest text.
function inline(parent, text) {
  const pattern = /(`+)([\s\S]*?)\1|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\n]+)\*|_([^_\n]+)_/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    if (m[1]) {
      const code = el('code');
      code.textContent = m[2];
      parent.append(code);
    } else if (m[3]) {
      parent.append(link(m[3], m[4]));
    } else if (m[5] || m[6]) {
      const b = el('strong');
      inline(b, m[5] || m[6]);
      parent.append(b);
    } else {
      const i = el('em');
      inline(i, m[7] || m[8]);
      parent.append(i);
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

function link(label, href) {
  let url = null;
  try {
    url = new URL(href);
  } catch {
    url = null;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    return document.createTextNode(`[${label}](${href})`);
  }
  const a = el('a');
  a.href = url.href;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  a.textContent = label;
  return a;
}

const KEYWORDS = new Set(
  ('fn let mut pub use mod impl struct enum trait match if else for while loop return async await const static ' +
    'def class import from as with try except finally raise lambda yield pass None True False ' +
    'function var new this typeof instanceof export default null undefined true false ' +
    'package func go defer type interface map chan select case switch break continue in of do').split(' '),
);

// A fenced block, its tokens coloured (strings, comments, numbers, keywords).
export function codeBlock(text, lang) {
  const pre = el('pre', 'code');
  const code = el('code');
  if (lang) code.dataset.lang = lang;
  const token = /(\/\/[^\n]*|#[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)|\b(\d[\d_.]*)\b|\b([A-Za-z_]\w*)\b/g;
  let last = 0;
  for (const m of text.matchAll(token)) {
    const kind = m[1] ? (lang === 'rust' || lang === 'js' ? (m[1][0] === '#' ? null : 'c') : 'c') : m[2] ? 's' : m[3] ? 'n' : KEYWORDS.has(m[4]) ? 'k' : null;
    if (!kind) continue;
    if (m.index > last) code.append(document.createTextNode(text.slice(last, m.index)));
    const span = el('span', `t-${kind}`);
    span.textContent = m[0];
    code.append(span);
    last = m.index + m[0].length;
  }
  if (last < text.length) code.append(document.createTextNode(text.slice(last)));
  pre.append(code);
  return pre;
}
