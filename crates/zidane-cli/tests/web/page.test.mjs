// The page `zidane serve` serves, in Chromium: the token, a streamed
// answer, an approval from a dialog and its diff, steering, two tabs on one
// session, a reload mid-turn, the charts, a hostile tool result, a phone's
// screen, and axe-core's accessibility rules.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { AXE, Model, SHOTS, Served, answer, call, launch, login, newSession, prompt, turn, watch } from './harness.mjs';

const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';

// What the model answers, by what the conversation asks.
function script(text, step, model) {
  if (text.includes('say hello')) {
    return [turn.start(), turn.text(0, ['Hello ', 'from the ', '**model**.']), turn.end('end_turn')];
  }
  const write = text.match(/write the (\w+) notes/);
  if (write) {
    const file = `${write[1]}.txt`;
    return step === 0 ? call('toolu_w', 'write_file', { path: file, content: 'alpha\nbeta\n' }) : answer(`Wrote ${file}.`);
  }
  if (text.includes('long job')) {
    if (step === 0) return [model.gate('steer'), ...call('toolu_l', 'list_files', { path: '.' })];
    const steered = text.includes('STEER-NOW');
    return answer(steered ? 'Steered: I read STEER-NOW.' : 'Not steered.');
  }
  if (text.includes('stop me')) return [turn.start(), model.gate('never')];
  if (text.includes('slow story')) {
    return [turn.start(), turn.text(0, ['Once upon a time']).replace(/event: content_block_stop[^\n]*\n[^\n]*\n\n$/, ''), model.gate('story'),
      `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ', they lived happily.' } })}\n\n`,
      `event: content_block_stop\ndata: ${JSON.stringify({ type: 'content_block_stop', index: 0 })}\n\n`,
      turn.end('end_turn')];
  }
  if (text.includes('count tokens')) {
    // Cached 2,000, read them back, then read nothing: a break at turn 3.
    if (step === 0) return call('toolu_c1', 'list_files', { path: '.' }, { input: 100, write: 2000 });
    if (step === 1) return call('toolu_c2', 'list_files', { path: '.' }, { input: 50, read: 2000, write: 300 });
    return answer('Counted.', { input: 60, read: 0, write: 2500 });
  }
  if (text.includes('delegate it')) {
    return step === 0 ? call('toolu_s', 'spawn', { task: 'child task: list the files' }) : answer('Parent done.');
  }
  if (text.includes('child task')) {
    return step === 0 ? call('toolu_k1', 'list_files', { path: '.' }) : answer('Child done.');
  }
  if (text.includes('read the page')) {
    return step === 0 ? call('toolu_h', 'read_file', { path: 'evil.html' }) : answer(`Found ${HOSTILE} and [a link](javascript:window.__pwned=3).`);
  }
  return answer('Nothing scripted.');
}

let model;
let served;
let browser;

before(async () => {
  model = new Model(script);
  await model.start();
  served = await Served.start(model);
  browser = await launch();
  fs.mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  served?.stop();
  model?.stop();
});

/// Answers an approval when one is asked (the sandbox's rules decide
/// which calls are).
async function allowIfAsked(page) {
  const dialog = page.locator('#ask[open]');
  if (await dialog.isVisible()) await dialog.getByRole('button', { name: 'Allow', exact: true }).click();
}

test('the page needs the token: refused without it, kept in the tab once given', async () => {
  const page = await browser.newPage();
  const problems = watch(page);
  const res = await page.goto(served.url);
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline|https?:/);
  await page.waitForSelector('#login:not([hidden])');
  // Without a token the protocol refuses the page's WebSocket.
  const bare = await page.evaluate(
    () => new Promise((resolve) => {
      const ws = new WebSocket(`ws://${location.host}/acp`, ['zidane.v1']);
      ws.onopen = () => resolve('open');
      ws.onerror = () => resolve('refused');
    }),
  );
  assert.equal(bare, 'refused');
  await page.fill('#token', 'not-the-token');
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#login-error:has-text("refused")');
  assert.equal(await page.isVisible('#list'), false);
  await login(page, served);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('zidane.token')), served.token);
  assert.ok(!page.url().includes(served.token));
  assert.deepEqual(problems, []);
  await page.close();
});

test('a new session streams its answer, Markdown rendered', async () => {
  const page = await browser.newPage();
  const problems = watch(page);
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'say hello');
  const strong = page.locator('#transcript .msg.agent strong');
  await strong.waitFor();
  assert.equal(await strong.textContent(), 'model');
  await page.waitForSelector('#state:has-text("idle")');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a file write approved from the dialog shows its diff', async () => {
  const page = await browser.newPage();
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'write the first notes');
  const dialog = page.locator('#ask');
  await dialog.waitFor({ state: 'visible' });
  assert.match(await page.textContent('#ask-title'), /Write first\.txt/);
  const choices = await dialog.locator('#ask-options button').allTextContents();
  assert.equal(choices.length, 4, `${choices}`);
  assert.ok(choices.includes('Allow') && choices.includes('Reject'), `${choices}`);
  await page.screenshot({ path: path.join(SHOTS, 'approval.png') });
  await dialog.getByRole('button', { name: 'Allow', exact: true }).click();
  await page.waitForSelector('#transcript .diff .add:has-text("alpha")');
  await page.waitForSelector('#transcript .msg.agent:has-text("Wrote first.txt")');
  assert.equal(fs.readFileSync(path.join(served.work, 'first.txt'), 'utf8'), 'alpha\nbeta\n');
  await page.screenshot({ path: path.join(SHOTS, 'session.png') });
  // `/rewind` alone lists the prompts to go back before; cancelled, nothing changes.
  await prompt(page, '/rewind');
  const pick = page.locator('#ask[open] #ask-options button.checkpoint');
  await pick.first().waitFor();
  assert.match(await pick.first().textContent(), /^1\. write the first notes \(1 file\)$/);
  await page.getByRole('button', { name: 'Cancel', exact: true }).click();
  assert.equal(fs.readFileSync(path.join(served.work, 'first.txt'), 'utf8'), 'alpha\nbeta\n');
  // The slash commands offered as one types; /undo shows its plan, then takes the file back.
  await page.fill('#prompt', '/un');
  await page.type('#prompt', 'd');
  await page.waitForSelector('#commands:not([hidden]) button:has-text("/undo")');
  await prompt(page, '/undo');
  await page.waitForSelector('#ask[open] #ask-input:has-text("first.txt")');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await page.waitForFunction(() => document.querySelectorAll('#transcript .msg.note').length > 0);
  assert.equal(fs.existsSync(path.join(served.work, 'first.txt')), false, await page.textContent('#transcript'));
  await page.close();
});

test('a prompt sent while a turn runs steers it', async () => {
  const page = await browser.newPage();
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'long job');
  await page.waitForSelector('#send:has-text("Steer")');
  await prompt(page, 'STEER-NOW');
  await page.waitForSelector('#transcript .msg.user:has-text("STEER-NOW")');
  model.open('steer');
  await allowIfAsked(page);
  await page.waitForSelector('#transcript .msg.agent:has-text("Steered: I read STEER-NOW.")');
  await page.close();
});

test('the stop button interrupts a running turn', async () => {
  const page = await browser.newPage();
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'stop me');
  await page.waitForSelector('#stop:not([hidden])');
  await page.click('#stop');
  await page.waitForSelector('#transcript .msg.note:has-text("Interrupted.")');
  await page.waitForSelector('#state:has-text("idle")');
  assert.equal(await page.isHidden('#stop'), true);
  await page.close();
});

test('two tabs on one session see the same stream, and a reload mid-turn picks the turn up', async () => {
  const context = await browser.newContext();
  const a = await context.newPage();
  const b = await context.newPage();
  await login(a, served);
  await login(b, served);
  await newSession(a, served);
  const id = await a.evaluate(() => location.hash.slice('#/s/'.length));
  await prompt(a, 'slow story');
  await a.waitForSelector('#transcript .msg.agent:has-text("Once upon a time")');
  // The other tab's list shows it running, live; opened, it shows the turn so far.
  await b.waitForSelector(`#sessions a[href="#/s/${id}"] ~ .badge.running`);
  await b.click(`#sessions a[href="#/s/${id}"]`);
  await b.waitForSelector('#transcript .msg.user:has-text("slow story")');
  await b.waitForSelector('#transcript .msg.agent:has-text("Once upon a time")');
  await a.reload();
  await a.waitForSelector('#transcript .msg.agent:has-text("Once upon a time")');
  await a.waitForSelector('#state:has-text("running")');
  model.open('story');
  for (const page of [a, b]) {
    await page.waitForSelector('#transcript .msg.agent:has-text("Once upon a time, they lived happily.")');
    await page.waitForSelector('#state:has-text("idle")');
  }
  await context.close();
});

test('the charts: one point per turn, the cache break marked', async () => {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1500 } });
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'count tokens');
  for (let i = 0; i < 2; i++) await allowIfAsked(page);
  await page.waitForSelector('#transcript .msg.agent:has-text("Counted.")');
  await page.click('#tab-charts');
  await page.waitForFunction(() => document.querySelectorAll('#charts g.turn').length === 3);
  assert.equal(await page.locator('#charts circle.point.cost').count(), 3);
  assert.equal(await page.locator('#charts circle.point.fill').count(), 3);
  const breaks = page.locator('#charts g.cache-break');
  assert.equal(await breaks.count(), 1);
  assert.equal(await breaks.getAttribute('data-turn'), '3');
  // Turn 2 read 2,000 tokens from the cache: its cache-read bar is the tallest part.
  const read = await page.locator('#charts g.turn[data-turn="2"] rect.cacheRead').getAttribute('height');
  assert.ok(Number(read) > 50, read);
  await page.screenshot({ path: path.join(SHOTS, 'charts.png'), fullPage: true });
  // The sessions list counts the session's turns and what they cost.
  const id = await page.evaluate(() => location.hash.slice('#/s/'.length));
  await page.evaluate(() => {
    location.hash = '#/';
  });
  const meta = page.locator(`#sessions li:has(a[href="#/s/${id}"]) .meta`);
  await meta.waitFor();
  assert.match(await meta.textContent(), / · 3 turns · \$\d+\.\d+$/);
  await page.close();
});

test("a sub-agent's calls sit under its spawn call", async () => {
  const page = await browser.newPage();
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'delegate it');
  await page.waitForSelector('#transcript .msg.agent:has-text("Parent done.")');
  const nested = page.locator('#transcript details.tool[data-id="toolu_s"] > .children > details.tool[data-id="toolu_k1"]');
  assert.equal(await nested.count(), 1);
  // Not among the agent's own calls.
  assert.equal(await page.locator('#transcript > details.tool[data-id="toolu_k1"]').count(), 0);
  await page.close();
});

test('a hostile tool result and answer are shown as text and run nothing', async () => {
  fs.writeFileSync(path.join(served.work, 'evil.html'), `${HOSTILE}\n`);
  const page = await browser.newPage();
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'read the page');
  await allowIfAsked(page);
  await page.waitForSelector('#transcript .msg.agent:has-text("Found")');
  await page.locator('#transcript details.tool summary').first().click();
  await page.waitForSelector('#transcript pre.output:has-text("<script>")');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('#transcript img, #transcript script').count(), 0);
  assert.equal(await page.locator('#transcript a[href^="javascript"]').count(), 0);
  assert.match(await page.textContent('#transcript .msg.agent:has-text("Found")'), /onerror/);
  await page.close();
});

test('a phone-sized screen: no sideways scrolling, the prompt at hand', async () => {
  const context = await browser.newContext({ viewport: { width: 375, height: 700 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const page = await context.newPage();
  await login(page, served);
  await newSession(page, served);
  await prompt(page, 'say hello');
  await page.waitForSelector('#transcript .msg.agent strong');
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${wide}px wider than the screen`);
  assert.ok(await page.locator('#prompt').isVisible());
  const box = await page.locator('#send').boundingBox();
  assert.ok(box && box.x + box.width <= 375 && box.y + box.height <= 700, JSON.stringify(box));
  await page.screenshot({ path: path.join(SHOTS, 'phone.png') });
  await context.close();
});

test('axe-core finds no serious violation on the sessions, a session and its charts', async () => {
  const page = await browser.newPage();
  await login(page, served);
  const check = async (where) => {
    await page.evaluate(AXE);
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(serious.map((v) => `${where}: ${v.id}: ${v.nodes.map((n) => n.target).join(' ')}`), []);
  };
  await check('sessions');
  await newSession(page, served);
  await prompt(page, 'write the second notes');
  await page.locator('#ask').waitFor({ state: 'visible' });
  await check('approval');
  await page.getByRole('button', { name: 'Allow', exact: true }).click();
  await page.waitForSelector('#transcript .diff');
  await check('session');
  await page.click('#tab-charts');
  await page.waitForSelector('#charts svg');
  await check('charts');
  await page.close();
});
