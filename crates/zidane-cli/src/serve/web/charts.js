// The session's charts, drawn as SVG (elements of the page: styled by the
// stylesheet in both colour schemes, read by screen readers through their
// titles, and countable by tests): tokens per turn split by where the
// prompt came from, cumulative cost by model, the context window's fill.
// Cache breaks and compactions are marked where they happened.

const NS = 'http://www.w3.org/2000/svg';
const W = 640;
const H = 200;
const PAD = { l: 52, r: 12, t: 12, b: 26 };

const svg = (tag, attrs = {}, text) => {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
};

const fmt = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(Math.round(n)));
const usd = (n) => `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`;

// A frame: the SVG, its scales and axes.
function frame(label, turns, max, yfmt) {
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label, class: 'chart' });
  root.append(svg('title', {}, label));
  const x = (i) => PAD.l + ((i + 0.5) * (W - PAD.l - PAD.r)) / Math.max(1, turns);
  const y = (v) => H - PAD.b - (v / (max || 1)) * (H - PAD.t - PAD.b);
  const axes = svg('g', { class: 'axes' });
  axes.append(svg('line', { x1: PAD.l, y1: y(0), x2: W - PAD.r, y2: y(0) }));
  axes.append(svg('line', { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: y(0) }));
  for (const f of [0, 0.5, 1]) {
    axes.append(svg('text', { x: PAD.l - 6, y: y(max * f) + 4, 'text-anchor': 'end' }, yfmt(max * f)));
    if (f) axes.append(svg('line', { class: 'grid', x1: PAD.l, y1: y(max * f), x2: W - PAD.r, y2: y(max * f) }));
  }
  const step = Math.max(1, Math.ceil(turns / 12));
  for (let i = 0; i < turns; i += step) {
    axes.append(svg('text', { x: x(i), y: H - 8, 'text-anchor': 'middle' }, String(i + 1)));
  }
  root.append(axes);
  return { root, x, y, bw: ((W - PAD.l - PAD.r) / Math.max(1, turns)) * 0.7 };
}

const PARTS = [
  ['cacheRead', 'cache read'],
  ['cacheWrite', 'cache write'],
  ['input', 'uncached input'],
  ['output', 'output'],
];

function tokens(usage) {
  const turns = usage.turns;
  const max = Math.max(1, ...turns.map((t) => PARTS.reduce((s, [k]) => s + t[k], 0)));
  const f = frame('Tokens per turn: cache read, cache write, uncached input, output', turns.length, max, fmt);
  turns.forEach((t, i) => {
    const g = svg('g', { class: 'turn', 'data-turn': t.turn });
    let base = 0;
    for (const [k, name] of PARTS) {
      const v = t[k];
      const r = svg('rect', { class: `bar ${k}`, x: f.x(i) - f.bw / 2, y: f.y(base + v), width: f.bw, height: Math.max(0, f.y(base) - f.y(base + v)) });
      r.append(svg('title', {}, `turn ${t.turn}: ${fmt(v)} ${name}`));
      g.append(r);
      base += v;
    }
    f.root.append(g);
  });
  for (const b of usage.cacheBreaks) {
    const i = b.turn - 1;
    const why = b.changed.length ? b.changed.join(', ') : 'expired or evicted';
    const g = svg('g', { class: 'cache-break', 'data-turn': b.turn });
    g.append(svg('line', { x1: f.x(i), y1: PAD.t, x2: f.x(i), y2: f.y(0) }));
    const right = f.x(i) > W * 0.6;
    g.append(svg('text', { x: f.x(i) + (right ? -4 : 4), y: PAD.t + 10, 'text-anchor': right ? 'end' : 'start' }, `cache break: ${why}`));
    g.append(svg('title', {}, `cache break at turn ${b.turn} (${why}): ${fmt(b.rebilledTokens)} tokens read again`));
    f.root.append(g);
  }
  return figure(f.root, 'Tokens per turn', legend(PARTS.map(([k, n]) => [k, n]).concat([['break', 'cache break']])));
}

function cost(usage) {
  let sum = 0;
  const points = usage.turns.map((t) => (sum += t.cost || 0));
  const f = frame('Cumulative cost', points.length, Math.max(sum, 0.0001), usd);
  f.root.append(svg('polyline', { class: 'line cost', points: points.map((v, i) => `${f.x(i)},${f.y(v)}`).join(' ') }));
  points.forEach((v, i) => {
    const c = svg('circle', { class: 'point cost', cx: f.x(i), cy: f.y(v), r: 3, 'data-turn': i + 1 });
    c.append(svg('title', {}, `after turn ${i + 1}: ${usd(v)} (${usage.turns[i].model || 'unknown model'})`));
    f.root.append(c);
  });
  return figure(f.root, `Cumulative cost: ${usd(sum)}`);
}

function context(usage) {
  const window = usage.window || Math.max(1, ...usage.turns.map((t) => t.context));
  const f = frame('Context window fill', usage.turns.length, window, fmt);
  const pts = usage.turns.map((t, i) => `${f.x(i)},${f.y(Math.min(window, t.context))}`);
  f.root.append(svg('polyline', { class: 'line fill', points: pts.join(' ') }));
  usage.turns.forEach((t, i) => {
    const c = svg('circle', { class: 'point fill', cx: f.x(i), cy: f.y(Math.min(window, t.context)), r: 3, 'data-turn': t.turn });
    c.append(svg('title', {}, `turn ${t.turn}: ${fmt(t.context)} of ${fmt(window)} (${Math.round((100 * t.context) / window)}%)`));
    f.root.append(c);
  });
  for (const c of usage.compactions) {
    const x = f.x(c.afterTurn - 0.5);
    const g = svg('g', { class: 'compaction', 'data-after': c.afterTurn });
    g.append(svg('line', { x1: x, y1: PAD.t, x2: x, y2: f.y(0) }));
    g.append(svg('title', {}, `compaction after turn ${c.afterTurn}: ${c.replaced} messages summarized`));
    f.root.append(g);
  }
  return figure(f.root, `Context window fill (of ${fmt(window)} tokens)`, legend([['compaction', 'compaction']]));
}

function figure(chart, caption, extra) {
  const fig = document.createElement('figure');
  const cap = document.createElement('figcaption');
  cap.textContent = caption;
  fig.append(cap, chart);
  if (extra) fig.append(extra);
  return fig;
}

function legend(items) {
  const ul = document.createElement('ul');
  ul.className = 'legend';
  for (const [k, name] of items) {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = `swatch ${k}`;
    li.append(sw, document.createTextNode(name));
    ul.append(li);
  }
  return ul;
}

// The run summary's table: tokens and cost by model.
function table(usage) {
  const rows = new Map();
  for (const t of usage.turns) {
    const key = t.model || 'unknown';
    const r = rows.get(key) || { turns: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, cost: 0 };
    r.turns++;
    for (const k of ['input', 'cacheRead', 'cacheWrite', 'output']) r[k] += t[k];
    r.cost += t.cost || 0;
    rows.set(key, r);
  }
  const t = document.createElement('table');
  t.className = 'summary';
  const head = t.createTHead().insertRow();
  for (const h of ['model', 'turns', 'uncached in', 'cache read', 'cache write', 'output', 'cost']) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = h;
    head.append(th);
  }
  const body = t.createTBody();
  for (const [model, r] of rows) {
    const row = body.insertRow();
    for (const v of [model, r.turns, fmt(r.input), fmt(r.cacheRead), fmt(r.cacheWrite), fmt(r.output), usd(r.cost)]) {
      row.insertCell().textContent = String(v);
    }
  }
  return t;
}

export function renderCharts(into, usage) {
  into.replaceChildren();
  if (!usage || !usage.turns.length) {
    const p = document.createElement('p');
    p.textContent = 'No model turn yet.';
    into.append(p);
    return;
  }
  into.append(tokens(usage), cost(usage), context(usage), table(usage));
}
