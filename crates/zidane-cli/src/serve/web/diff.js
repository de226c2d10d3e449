// An edit as a coloured line diff (a new file: every line added). The
// texts are shown as text nodes only.

// The lines of `a` and `b` as kept (' '), removed ('-') and added ('+'),
// by their longest common subsequence (past 4M cells, all removed then all
// added).
export function lineDiff(a, b) {
  const lines = (t) => {
    const l = t ? t.split('\n') : [];
    if (l.length && l[l.length - 1] === '') l.pop();
    return l;
  };
  const x = lines(a);
  const y = lines(b);
  if (x.length * y.length > 4e6) return [...x.map((t) => ['-', t]), ...y.map((t) => ['+', t])];
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push([' ', x[i]]);
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out.push(['+', y[j++]]);
    } else {
      out.push(['-', x[i++]]);
    }
  }
  return out;
}

export function diffView(path, oldText, newText) {
  const box = document.createElement('div');
  box.className = 'diff';
  const head = document.createElement('div');
  head.className = 'diff-path';
  head.textContent = oldText == null ? `new file ${path}` : path;
  box.append(head);
  const pre = document.createElement('pre');
  for (const [op, text] of lineDiff(oldText ?? '', newText ?? '')) {
    const line = document.createElement('span');
    line.className = op === '+' ? 'add' : op === '-' ? 'del' : 'ctx';
    line.textContent = `${op} ${text}\n`;
    pre.append(line);
  }
  box.append(pre);
  return box;
}
