// The console in a real browser (Debian's chromium via playwright-core) against real runledgerd
// processes on loopback, seeded over the API. Run by scripts/ui-test.sh BINARY_DIR.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { client, sleep } from './client.mjs';
import { seed, TARGET } from './seed.mjs';
import { Server, binary, ROOT } from './harness.mjs';
import { launch, context } from './browser.mjs';

const BIN = binary(process.env.RL_BIN_DIR || join(ROOT, 'build/bin'));
const SHOTS = join(ROOT, 'build/ui-screenshots');
const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const READER = 'reader-token-0123456789abcdef', OPERATOR = 'operator-token-0123456789abcdef';

let srv, auth, base, api, scen, browser, main;
const timings = {};

async function newPage(c) {
  return c.ctx.newPage();
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const t0 = Date.now();
  srv = await new Server({ bin: BIN }).start();
  base = srv.base;
  api = client(srv.base);
  scen = await seed(api);
  timings.seed = Date.now() - t0;
  browser = await launch();
  main = await context(browser, base);
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
  if (auth) await auth.stop();
  console.log('timings (ms):', JSON.stringify(timings));
});

const enc = encodeURIComponent;
const pages = () => [
  ['now', '/ui/', 'Now'],
  ['jobs', '/ui/jobs?state=SUCCEEDED', 'Jobs'],
  ['job', `/ui/jobs/${scen.twice}`, `Job ${scen.twice}`],
  ['job-big', `/ui/jobs/${scen.big}`, `Job ${scen.big}`],
  ['target', `/ui/targets/${enc(TARGET)}`, 'Target'],
  ['holds', '/ui/holds', 'Holds'],
  ['hold', `/ui/holds/${scen.staleHold}`, `Hold ${scen.staleHold}`],
  ['hold-open', `/ui/holds/${scen.openHold}`, `Hold ${scen.openHold}`],
  ['connectors', '/ui/connectors', 'Connectors'],
  ['connector', `/ui/connectors/${scen.failedConnector}`, `Connector ${scen.failedConnector}`],
  ['events', '/ui/events', 'Events'],
  ['event', '/ui/events/9', 'Event #9'],
];

test('the server answers the page for every /ui/ path, assets hashed and immutable, with CSP and nosniff', async () => {
  for (const p of ['/ui/', '/ui', '/ui/jobs/x', `/ui/targets/${enc(TARGET)}`, '/ui/events/12']) {
    const r = await fetch(base + p, { redirect: 'manual' });
    assert.equal(r.status, 200, p);
    assert.match(r.headers.get('content-type'), /^text\/html/, p);
    assert.match(r.headers.get('content-security-policy') || '', /default-src 'self'/, p);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff', p);
    assert.match(r.headers.get('cache-control') || '', /no-cache/, p);
    const html = await r.text();
    assert.doesNotMatch(html, /<script>|<style|style=/, 'no inline script or style');
    for (const [, a] of html.matchAll(/"\/ui\/assets\/([^"]+)"/g)) {
      const ar = await fetch(`${base}/ui/assets/${a}`);
      assert.equal(ar.status, 200, a);
      assert.match(ar.headers.get('cache-control') || '', /immutable/, a);
      assert.match(a, /-[0-9a-f]{16}\.(js|css|svg)$/);
    }
  }
  assert.equal((await fetch(base + '/ui/assets/nothing-0000.js')).status, 404);
});

test('deep links load, and load again on reload', async () => {
  const p = await newPage(main);
  for (const [, path, h1] of pages()) {
    await p.goto(base + path);
    await p.locator('h1', { hasText: h1 }).first().waitFor({ timeout: 5000 });
    await p.reload();
    await p.locator('h1', { hasText: h1 }).first().waitFor({ timeout: 5000 });
  }
  await p.close();
});

test('the twice-run job shows two attempt bars whose labelled times are the API\'s to the millisecond', async () => {
  const job = await api.get(`/v1/jobs/${scen.twice}`);
  assert.equal(job.attempts.length, 2);
  const p = await newPage(main);
  await p.goto(`${base}/ui/jobs/${scen.twice}`);
  const bars = p.locator('g.bar[data-attempt]');
  await bars.nth(1).waitFor();
  assert.equal(await bars.count(), 2);
  for (let i = 0; i < 2; i++) {
    const label = await bars.nth(i).getAttribute('aria-label');
    const m = label.match(/^Attempt (\d+) (\w+): .*started (\S+) \(seq \d+\), .*ended (\S+) \(seq \d+\)/);
    assert.ok(m, label);
    const a = job.attempts[Number(m[1]) - 1];
    assert.equal(m[2], a.state);
    assert.equal(m[3], a.started_at);
    assert.equal(m[4], a.finished_at);
    assert.equal(await bars.nth(i).getAttribute('tabindex'), '0');
  }
  // attempt 1 ended STALE then was resolved: its bar shows the lease expiry and the hatched stale part
  assert.ok(await p.locator('g.tick-expired').count() >= 1, 'a lease-expired marker');
  assert.ok(await p.locator('rect[fill="url(#hatch)"]').count() >= 1, 'a hatched STALE segment');
  // zoom and fit: the window narrows, then comes back to the job's whole life
  const range = p.locator('section.timeline .toolbar span.small').first();
  const whole = await range.innerText();
  await p.getByRole('button', { name: 'zoom in' }).click();
  assert.notEqual(await range.innerText(), whole, 'zoomed in');
  await p.getByRole('button', { name: 'Fit' }).click();
  assert.equal(await range.innerText(), whole, 'fit');
  await p.getByLabel('as a table').check();
  await p.locator('table', { hasText: 'Attempt 2' }).first().waitFor();
  // the job list says it ran twice
  await p.goto(`${base}/ui/jobs?kind=sync&target=${enc(TARGET)}`);
  await p.locator(`tr[data-job="${scen.twice}"] [data-ran="2"]`, { hasText: 'ran 2 times' }).waitFor();
  await p.close();
});

// A page of the main context, closed even when the test fails (an open page keeps a live stream,
// and the browser's six connections to the server must stay free for the tests that follow).
async function withPage(fn, c = main) {
  const p = await c.ctx.newPage();
  try { return await fn(p); } finally { await p.close(); }
}

// How many colours a PNG has, decoded by the browser itself in a blank page.
const colours = (png) => withPage((blank) => blank.evaluate(async (b64) => {
  const img = await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: 'image/png' }));
  const g = new OffscreenCanvas(img.width, img.height).getContext('2d');
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, img.width, img.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  return seen.size;
}, png.toString('base64')));

test('the STALE segment is drawn hatched, light and dark', async () => {
  const bad = [];
  for (const scheme of ['light', 'dark']) {
    const c = await context(browser, base, { colorScheme: scheme });
    await withPage(async (p) => {
      await p.goto(`${base}/ui/jobs/${scen.twice}`);
      const stale = p.locator('g.bar[data-attempt="1"] rect[fill="url(#hatch)"]');
      await stale.waitFor();
      const stroke = await p.evaluate(() => getComputedStyle(document.querySelector('pattern#hatch path')).stroke);
      if (stroke === 'none') bad.push(`${scheme}: the hatch's stripes have no colour`);
      // a strip at the segment's left end, clear of its "?" and its edges: stripes, not one flat colour
      const box = await stale.boundingBox();
      const png = await p.screenshot({ clip: { x: box.x + 2, y: box.y + 3, width: Math.min(16, box.width - 4), height: box.height - 6 } });
      const n = await colours(png);
      if (n < 2) bad.push(`${scheme}: the STALE segment is one flat colour`);
    }, c);
    main.problems.push(...c.problems);
    await c.ctx.close();
  }
  assert.deepEqual(bad, []);
});

// What is wrong with a bar's label: each time in it must come with the seq of the event that
// recorded it, nothing may be undefined, and a worker is named where there is one.
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;
function labelFaults(label, { worker = true } = {}) {
  const times = label.match(ISO) || [];
  return [
    /undefined|NaN|null/.test(label) ? 'says undefined' : null,
    times.length ? null : 'no time to the millisecond',
    (label.match(/seq \d+/g) || []).length >= times.length ? null : 'a time without its seq',
    !worker || /worker (?!none)\S+/.test(label) ? null : 'no worker',
  ].filter(Boolean).map((f) => `${f}: ${label}`);
}
const labelsOf = (p, sel) => p.locator(sel).evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));

test('every bar of the job picture says its state, times, worker and seqs', async () => {
  const evs = (await api.get(`/v1/jobs/${scen.twice}/events`)).events;
  await withPage(async (p) => {
    await p.goto(`${base}/ui/jobs/${scen.twice}`);
    await p.locator('g.holdbar').first().waitFor();
    const bad = [];
    const steps = await labelsOf(p, 'g.step');
    const leases = (await labelsOf(p, 'svg.tl [role=img]')).filter((l) => / lease window/.test(l));
    const holds = await labelsOf(p, 'g.holdbar');
    const attempts = await labelsOf(p, 'g.bar[data-attempt]');
    for (const l of [...steps, ...leases, ...attempts]) bad.push(...labelFaults(l));
    for (const l of holds) bad.push(...labelFaults(l, { worker: false }), ...(/ by \S+, released .* by alice/.test(l) ? [] : [`who placed and released it: ${l}`]));
    assert.equal(leases.length, 2, 'a lease window per attempt');
    // attempt 1's LOAD was still RUNNING when the attempt went STALE: its bar ends at the resolution
    const resolved = evs.find((e) => e.type === 'AttemptResolved');
    const load1 = steps.find((l) => l.startsWith('Step LOAD of attempt 1'));
    if (!load1.includes(`${resolved.recorded_at} (seq ${resolved.seq})`)) bad.push(`ends at the attempt's resolution: ${load1}`);
    assert.deepEqual(bad, []);
  });
});

test('the job view gives each step the seq of the event that finished it', async () => {
  const evs = (await api.get(`/v1/jobs/${scen.twice}/events`)).events;
  const done = evs.find((e) => e.type === 'StepSucceeded' && e.data.attempt === 2 && e.data.step === 'LOAD');
  // recorded with AttemptSucceeded, in the same millisecond: the time alone does not tell them apart
  assert.ok(evs.some((e) => e.type === 'AttemptSucceeded' && e.recorded_at === done.recorded_at));
  await withPage(async (p) => {
    await p.goto(`${base}/ui/jobs/${scen.twice}`);
    const row = p.locator('section.travel table', { hasText: 'Steps of attempt 2' }).locator('tr', { hasText: 'LOAD' });
    await row.locator('a.seq').nth(1).waitFor();
    assert.equal(await row.locator('a.seq').nth(1).innerText(), `#${done.seq}`);
  });
});

// The seq shown beside a time in a table row (null when none shows within 2 s).
async function seqBeside(row, iso) {
  await row.waitFor();
  for (let i = 0; i < 40; i++) {
    const t = (await row.locator('.when').evaluateAll((els) => els.map((e) => ({ iso: e.querySelector('time').getAttribute('datetime'), seq: e.querySelector('a.seq') ? Number(e.querySelector('a.seq').textContent.slice(1)) : null })))).find((x) => x.iso === iso);
    if (t && t.seq) return t.seq;
    await sleep(50);
  }
  return null;
}

test('the lists show the seq beside their times', async () => {
  const job = await api.get(`/v1/jobs/${scen.twice}`);
  const jobEvs = (await api.get(`/v1/jobs/${scen.twice}/events`)).events;
  const hold = await api.get(`/v1/holds/${scen.staleHold}`);
  const holdEvs = (await api.get(`/v1/holds/${scen.staleHold}/events`)).events;
  const crm = await api.get(`/v1/connectors/${scen.failedConnector}`);
  const synced = (await api.get(`/v1/connectors/${scen.failedConnector}/events`)).events.filter((e) => e.type === 'SyncSucceeded').pop();
  assert.equal(synced.recorded_at, crm.last_synced_at);
  const big = await api.get(`/v1/jobs/${scen.big}`);
  const bigLast = (await api.get(`/v1/jobs/${scen.big}/events?after=${big.version - 1}&limit=1`)).events[0];
  assert.equal(bigLast.data.lease_expires_at, big.lease.expires_at, 'the last heartbeat granted the lease');
  const open = await api.get(`/v1/holds/${scen.openHold}`);
  const openPlaced = (await api.get(`/v1/holds/${scen.openHold}/events`)).events[0];
  const got = {}, want = {};
  await withPage(async (p) => {
    await p.goto(`${base}/ui/jobs?kind=sync&target=${enc(TARGET)}`);
    got.jobUpdated = await seqBeside(p.locator(`tr[data-job="${scen.twice}"]`), job.updated_at);
    want.jobUpdated = jobEvs.find((e) => e.version === job.version).seq;
    await p.goto(`${base}/ui/holds`);
    got.holdPlaced = await seqBeside(p.locator(`tr[data-hold="${scen.staleHold}"]`), hold.placed_at);
    want.holdPlaced = holdEvs.find((e) => e.type === 'HoldPlaced').seq;
    got.holdReleased = await seqBeside(p.locator(`tr[data-hold="${scen.staleHold}"]`), hold.released_at);
    want.holdReleased = holdEvs.find((e) => e.type === 'HoldReleased').seq;
    await p.goto(`${base}/ui/connectors`);
    got.lastSynced = await seqBeside(p.locator(`tr[data-conn="${scen.failedConnector}"]`), crm.last_synced_at);
    want.lastSynced = synced.seq;
    // Now: a lease's expiry (beside it, the event that granted it) and an open hold's placing
    await p.goto(`${base}/ui/`);
    got.leaseExpiry = await seqBeside(p.locator('tr', { has: p.locator(`a[href="/ui/jobs/${scen.big}"]`) }).first(), big.lease.expires_at);
    want.leaseExpiry = bigLast.seq;
    got.openHoldPlaced = await seqBeside(p.locator(`tr[data-hold="${scen.openHold}"]`), open.placed_at);
    want.openHoldPlaced = openPlaced.seq;
  });
  assert.deepEqual(got, want);
});

test('the target page draws each holder from its claim to its end or now, LEASED ones too', async () => {
  await api.post('/v1/jobs', { id: 'held-run', kind: 'held-run', target: 'shop-h/run', plan: ['A'] });
  const run = await api.post('/v1/jobs/claim', { worker: 'wr', kinds: ['held-run'], lease_s: 600 });
  await sleep(30); // the claim and the start at different milliseconds
  await api.post('/v1/jobs/held-run/start', { lease_token: run.lease_token });
  await api.post('/v1/jobs', { id: 'held-lease', kind: 'held-lease', target: 'shop-h/lease', plan: ['A'] });
  await api.post('/v1/jobs/claim', { worker: 'wl', kinds: ['held-lease'], lease_s: 600 });
  await sleep(300); // so that now is well after the claim
  await withPage(async (p) => {
    for (const [id, target, state, worker] of [['held-lease', 'shop-h/lease', 'LEASED', 'wl'], ['held-run', 'shop-h/run', 'RUNNING', 'wr']]) {
      const claim = (await api.get(`/v1/jobs/${id}/events`)).events.find((e) => e.type === 'JobLeased');
      const opened = Date.now();
      await p.goto(`${base}/ui/targets/${enc(target)}`);
      const bar = p.locator('svg.tl g.bar', { has: p.locator('title', { hasText: `job ${id} attempt 1 ${state}` }) });
      await bar.waitFor({ timeout: 5000 });
      const label = await bar.getAttribute('aria-label');
      assert.deepEqual(labelFaults(label), []);
      assert.ok(label.includes(`held the target from ${claim.recorded_at} (seq ${claim.seq})`), `held from the claim: ${label}`);
      assert.ok(label.includes(`worker ${worker}`), label);
      // the axis runs to now, not to the claim
      const range = await p.locator('section.timeline .toolbar span.small').first().innerText();
      assert.ok(Date.parse(range.split(' … ')[1]) >= opened, `the axis ends at now: ${range}`);
    }
  });
});

test('the release form counts the note in UTF-8 bytes, as the API does', async () => {
  const tooLong = 'é'.repeat(2049); // 2,049 characters, 4,098 bytes
  assert.equal((await api.call('POST', `/v1/holds/${scen.openHold}/release`, { note: tooLong, execution_stopped: true })).status, 422);
  await withPage(async (p) => {
    await p.goto(`${base}/ui/holds/${scen.openHold}`);
    const submit = p.locator('form.release button[type=submit]');
    await submit.waitFor();
    await p.check('form.release input[type=checkbox]');
    await p.fill('#rel-note', tooLong);
    assert.ok(await submit.isDisabled(), 'a note over 4,096 bytes is refused');
    assert.match(await p.locator('form.release .problems').innerText(), /4,096 bytes/);
    await p.fill('#rel-note', 'é'.repeat(2048)); // 4,096 bytes: the API takes it
    assert.ok(!(await submit.isDisabled()), 'a note of 4,096 bytes is taken');
  });
});

test('time travel shows exactly GET /v1/jobs/{id}?as_of=seq, by click, slider and arrow keys', async () => {
  const evs = (await api.get(`/v1/jobs/${scen.twice}/events`)).events;
  const p = await newPage(main);
  await p.goto(`${base}/ui/jobs/${scen.twice}`);
  await p.locator('tr[data-seq]').first().waitFor();
  const check = async (seq) => {
    await p.locator(`[data-testid=asof-seq]`, { hasText: String(seq) }).waitFor();
    const json = p.locator('[data-testid=asof-json]');
    await json.waitFor();
    const want = await api.get(`/v1/jobs/${scen.twice}?as_of=${seq}`);
    await assert.doesNotReject(async () => {
      for (let i = 0; i < 40; i++) { try { assert.deepEqual(JSON.parse(await json.textContent()), want); return; } catch (e) { if (i === 39) throw e; await sleep(50); } }
    });
  };
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  for (let k = 0; k < 8; k++) {
    const e = evs[Math.floor(rnd() * evs.length)];
    await p.locator(`tr[data-seq="${e.seq}"] button.linkish`).click();
    await check(e.seq);
    assert.ok(await p.locator('pre[data-testid=asof-json] .chg').count() >= 1, 'the event\'s changes are highlighted');
  }
  // a click on the lease-expired marker of the picture travels to that event
  const expired = evs.find((e) => e.type === 'LeaseExpired');
  await p.locator('g.tick-expired').first().click();
  await check(expired.seq);
  // arrow keys on the slider step to the previous event
  await p.locator(`tr[data-seq="${evs[5].seq}"] button.linkish`).click();
  await check(evs[5].seq);
  await p.locator('#tt-slider').focus();
  await p.keyboard.press('ArrowLeft');
  await check(evs[4].seq);
  await p.keyboard.press('ArrowRight');
  await p.keyboard.press('ArrowRight');
  await check(evs[6].seq);
  // and a deep link with ?as_of= reloads to the same view
  await p.reload();
  await check(evs[6].seq);
  await p.close();
});

test('a job enqueued over the API appears within 2 s without reload', async () => {
  const p = await newPage(main);
  await p.goto(`${base}/ui/jobs?state=QUEUED`);
  await p.locator('h1', { hasText: 'Jobs' }).waitFor();
  await p.locator('[data-testid=live]', { hasText: 'live' }).waitFor({ timeout: 5000 });
  const ev = await newPage(main);
  await ev.goto(`${base}/ui/events`);
  await ev.locator('[data-testid=live]', { hasText: 'live' }).waitFor({ timeout: 5000 });
  const t0 = Date.now();
  await api.post('/v1/jobs', { id: 'fresh-01', kind: 'sync', target: 'shop-c/new', plan: ['A'] });
  await p.locator('tr[data-job="fresh-01"]').waitFor({ timeout: 2000 });
  timings.enqueueToJobsList = Date.now() - t0;
  await ev.locator('a', { hasText: 'job/fresh-01' }).first().waitFor({ timeout: 2000 });
  timings.enqueueToEvents = Date.now() - t0;
  await p.close(); await ev.close();
});

test('killing and restarting the server resumes the live view with no gap and no duplicate', async () => {
  const p = await newPage(main);
  await p.goto(`${base}/ui/events`);
  await p.locator('[data-testid=live]', { hasText: 'live' }).waitFor({ timeout: 5000 });
  await api.post('/v1/jobs', { id: 'before-kill', kind: 'x', target: 'shop-d/a', plan: ['A'] });
  await p.locator('a', { hasText: 'job/before-kill' }).first().waitFor({ timeout: 2000 });
  await srv.kill('SIGKILL');
  await sleep(300);
  await srv.start();
  const t0 = Date.now();
  for (let i = 0; i < 3; i++) await api.post('/v1/jobs', { id: `after-kill-${i}`, kind: 'x', target: `shop-d/b${i}`, plan: ['A'] });
  await p.locator('a', { hasText: 'job/after-kill-2' }).first().waitFor({ timeout: 10000 });
  timings.resumeAfterRestart = Date.now() - t0;
  const seqs = await p.locator('table.events tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.seq)));
  // newest first: every seq once, none missing
  for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] - 1, `contiguous seqs at row ${i}: ${seqs[i - 1]} then ${seqs[i]}`);
  const last = (await api.get('/v1/health')).last_seq;
  assert.equal(seqs[0], last);
  assert.ok(seqs.length > 20, `${seqs.length} rows span the restart`);
  await p.close();
});

test('a hidden tab closes its stream and resumes from its seq when shown', async () => {
  const p = await newPage(main);
  await p.goto(`${base}/ui/events`);
  await p.locator('[data-testid=live]', { hasText: 'live' }).waitFor({ timeout: 5000 });
  const liveStreams = async () => Number((await (await fetch(srv.base + '/metrics')).text()).match(/^runledger_live_streams (\d+)/m)[1]);
  const before = await liveStreams();
  await p.evaluate(() => { Object.defineProperty(document, 'hidden', { configurable: true, get: () => true }); document.dispatchEvent(new Event('visibilitychange')); });
  await p.locator('[data-testid=live]', { hasText: 'hidden' }).waitFor({ timeout: 2000 });
  for (let i = 0; (await liveStreams()) !== before - 1; i++) { assert.ok(i < 40, 'the hidden tab closed its stream'); await sleep(50); }
  await api.post('/v1/jobs', { id: 'while-hidden', kind: 'x', target: 'shop-e/a', plan: ['A'] });
  await sleep(500);
  assert.equal(await p.locator('a', { hasText: 'job/while-hidden' }).count(), 0, 'a hidden tab shows nothing new');
  await p.evaluate(() => { Object.defineProperty(document, 'hidden', { configurable: true, get: () => false }); document.dispatchEvent(new Event('visibilitychange')); });
  await p.locator('a', { hasText: 'job/while-hidden' }).first().waitFor({ timeout: 3000 });
  const seqs = await p.locator('table.events tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.dataset.seq)));
  for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] - 1);
  await p.close();
});

test('the live tail pauses, counts what is new, and catches up on resume', async () => {
  const p = await newPage(main);
  await p.goto(`${base}/ui/events?stream=job/`);
  await p.locator('[data-testid=live]', { hasText: 'live' }).waitFor({ timeout: 5000 });
  await p.locator('table.events tbody tr').first().waitFor();
  await p.click('button:has-text("Pause")');
  for (let i = 0; i < 2; i++) await api.post('/v1/jobs', { id: `paused-${i}`, kind: 'x', target: `shop-f/${i}`, plan: ['A'] });
  await p.locator('[data-testid=new-count]', { hasText: '2 new' }).waitFor({ timeout: 2000 });
  assert.equal(await p.locator('a', { hasText: 'job/paused-1' }).count(), 0, 'paused: nothing appended');
  await p.click('button:has-text("Resume")');
  await p.locator('a', { hasText: 'job/paused-1' }).first().waitFor({ timeout: 2000 });
  const first = await p.locator('table.events tbody tr').first().locator('a').nth(1).innerText();
  assert.equal(first, 'job/paused-1', 'newest first');
  await p.close();
});

test('the theme switch overrides the system scheme and is kept', async () => {
  const c = await context(browser, base, { colorScheme: 'light' });
  const p = await c.ctx.newPage();
  await p.goto(`${base}/ui/holds`);
  assert.equal(await p.getAttribute('html', 'data-theme'), 'light');
  await p.selectOption('header select >> nth=1', 'dark');
  assert.equal(await p.getAttribute('html', 'data-theme'), 'dark');
  await p.reload();
  await p.locator('h1', { hasText: 'Holds' }).waitFor();
  assert.equal(await p.getAttribute('html', 'data-theme'), 'dark');
  assert.notEqual(await p.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)');
  main.problems.push(...c.problems);
  await c.ctx.close();
});

test('two time zones give the same UTC text, and local time says its offset', async () => {
  const texts = [];
  for (const tz of ['UTC', 'Asia/Kolkata', 'America/Los_Angeles']) {
    const c = await context(browser, base, { timezoneId: tz });
    const p = await c.ctx.newPage();
    await p.goto(`${base}/ui/jobs/${scen.twice}`);
    await p.locator('table.events tbody tr').nth(5).waitFor();
    texts.push(await p.locator('table.events').innerText());
    if (tz === 'Asia/Kolkata') {
      await p.goto(`${base}/ui/jobs/${scen.twice}?tz=local`);
      await p.locator('table.events tbody tr').nth(5).waitFor();
      assert.match(await p.locator('table.events').innerText(), /\+05:30/);
    }
    main.problems.push(...c.problems);
    await c.ctx.close();
  }
  assert.equal(texts[1], texts[0]);
  assert.equal(texts[2], texts[0]);
  const job = await api.get(`/v1/jobs/${scen.twice}`);
  assert.ok(texts[0].includes(job.created_at), 'UTC text is the API\'s own');
});

test('the 10,000-event job: first screen within 1 s, under 500 rows', async () => {
  const n = (await api.get(`/v1/jobs/${scen.big}`)).version;
  assert.ok(n >= 10000, `the job has ${n} events`);
  const p = await newPage(main);
  await p.goto(`${base}/ui/events/1`); // the app's assets are cached, as for an operator already in the console
  await p.locator('h1', { hasText: 'Event #1' }).waitFor();
  // three loads, the median judged: the machine's other work should not decide the verdict
  const firsts = [];
  let t0 = 0;
  for (let k = 0; k < 3; k++) {
    await p.goto('about:blank');
    t0 = Date.now();
    await p.goto(`${base}/ui/jobs/${scen.big}`);
    // the first screen (1280x900): header, the timeline picture with its bar, the time-travel view
    await p.locator('g.bar[data-attempt="1"]').waitFor({ timeout: 5000 });
    await p.locator('section.travel dl.kv').waitFor({ timeout: 5000 });
    firsts.push(Date.now() - t0);
  }
  timings.bigFirstScreens = firsts;
  timings.bigFirstScreen = [...firsts].sort((a, b) => a - b)[1];
  await p.locator('table.events tbody tr').nth(50).waitFor({ timeout: 5000 });
  timings.bigFirstEventPage = Date.now() - t0;
  await p.locator('text=loading the rest').waitFor({ state: 'detached', timeout: 15000 });
  timings.bigAllEvents = Date.now() - t0;
  const rows = await p.locator('tr').count();
  assert.ok(rows < 500, `${rows} rows in the page`);
  // the slider spans every event; its last position is the newest seq
  assert.equal(Number(await p.locator('#tt-slider').getAttribute('max')), n - 1);
  const budget = Number(process.env.RL_UI_FIRST_SCREEN_MS || 1000);
  assert.ok(timings.bigFirstScreen < budget, `first screen in ${timings.bigFirstScreen} ms (budget ${budget} ms)`);
  await p.close();
});

test('with auth on: the page asks for a token, a reader sees no action, an operator releases a hold', async () => {
  auth = await new Server({ bin: BIN, tokens: [['ro', 'reader', READER], ['ops', 'operator', OPERATOR]] }).start();
  const aapi = client(auth.base, OPERATOR);
  const h = await aapi.post('/v1/holds', { target: 'shop-z/t', kind: 'EXECUTION_STATE_UNKNOWN', reason: 'export may still run' });
  await aapi.post('/v1/jobs', { id: 'z1', kind: 'k', target: 'shop-z/u', plan: ['A'] });
  // a job whose lease expires while RUNNING: STALE, with a hold whose release needs an outcome
  await aapi.post('/v1/jobs', { id: 'z2', kind: 'stale', target: 'shop-z/s', plan: ['A'] });
  const cl = await aapi.post('/v1/jobs/claim', { worker: 'wz', kinds: ['stale'], lease_s: 1 });
  await aapi.post('/v1/jobs/z2/start', { lease_token: cl.lease_token });
  // no token: the page asks, with the server's message
  const anon = await context(browser, auth.base);
  let p = await anon.ctx.newPage();
  await p.goto(`${auth.base}/ui/holds/${h.id}`);
  await p.locator('#token-input').waitFor();
  const said = (await client(auth.base).call('GET', '/v1/holds')).json.error;
  const shown = await p.locator('form.token [role=alert]').innerText();
  assert.ok(shown.includes('401') && shown.includes(said), `the server's 401 message: ${shown}`);
  await p.fill('#token-input', READER);
  await p.click('text=Use this token');
  await p.locator('h1', { hasText: `Hold ${h.id}` }).waitFor();
  assert.equal(await p.evaluate(() => sessionStorage.getItem('runledger.token')), READER);
  await anon.ctx.close();
  // a reader: no action anywhere
  const rd = await context(browser, auth.base, { token: READER });
  p = await rd.ctx.newPage();
  for (const path of [`/ui/holds/${h.id}`, '/ui/jobs/z1', '/ui/connectors']) {
    await p.goto(auth.base + path);
    await p.locator('h1').first().waitFor();
    await p.locator('[data-testid=role]', { hasText: 'read only' }).waitFor();
    assert.equal(await p.locator('.action button, form.release').count(), 0, `no action on ${path}`);
  }
  assert.deepEqual(rd.problems, []);
  await rd.ctx.close();
  // an operator releases the hold through the form, which first refuses what the API would
  const op = await context(browser, auth.base, { token: OPERATOR });
  p = await op.ctx.newPage();
  await p.goto(`${auth.base}/ui/holds/${h.id}`);
  await p.locator('[data-testid=role]', { hasText: 'may act' }).waitFor();
  const submit = p.locator('form.release button[type=submit]');
  assert.ok(await submit.isDisabled(), 'no note: refused');
  await p.fill('#rel-note', 'export pid 81 checked: gone');
  assert.ok(await submit.isDisabled(), 'execution not confirmed stopped: refused');
  await p.check('form.release input[type=checkbox]');
  assert.ok(!(await submit.isDisabled()));
  p.once('dialog', (d) => d.accept());
  let keyed = null;
  p.on('request', (r) => { if (r.url().endsWith('/release')) keyed = r.headers()['idempotency-key']; });
  await submit.click();
  await p.locator('h1 [data-state=released]').waitFor({ timeout: 3000 });
  const after = await aapi.get(`/v1/holds/${h.id}`);
  assert.equal(after.released, true);
  assert.equal(after.released_by, 'ops');
  assert.equal(after.execution_stopped, true);
  assert.ok(keyed && keyed.length >= 8, 'the release carried an Idempotency-Key');
  // a STALE attempt's hold: the form also wants the outcome, and the release resolves the attempt
  for (let i = 0; (await aapi.get('/v1/jobs/z2')).state !== 'STALE'; i++) { assert.ok(i < 100, 'z2 went STALE'); await sleep(50); }
  const sh = (await aapi.get(`/v1/holds?target=${enc('shop-z/s')}&open=true`)).holds[0];
  await p.goto(`${auth.base}/ui/holds/${sh.id}`);
  await p.fill('#rel-note', 'host checked: process gone, output incomplete');
  await p.check('form.release input[type=checkbox]');
  assert.ok(await submit.isDisabled(), 'no outcome for a STALE attempt: refused');
  await p.selectOption('form.release select', 'FAILED');
  p.once('dialog', (d) => d.accept());
  await submit.click();
  await p.locator('h1 [data-state=released]').waitFor({ timeout: 3000 });
  const z2 = await aapi.get('/v1/jobs/z2');
  assert.equal(z2.attempts[0].state, 'FAILED');
  // and cancels a queued job from its page, after confirming
  await p.goto(`${auth.base}/ui/jobs/z1`);
  p.once('dialog', (d) => { assert.match(d.message(), /Cancel job z1/); d.accept(); });
  await p.getByRole('button', { name: 'Cancel job' }).click();
  await p.locator('h1 [data-state=CANCELLED]').waitFor({ timeout: 3000 });
  assert.equal((await aapi.get('/v1/jobs/z1')).state, 'CANCELLED');
  assert.deepEqual(op.problems, []);
  await op.ctx.close();
});

test('axe-core finds no WCAG 2.1 AA violation on any page, light and dark; screenshots kept', async () => {
  const found = [];
  for (const scheme of ['light', 'dark']) {
    const c = await context(browser, base, { colorScheme: scheme });
    const p = await c.ctx.newPage();
    for (const [name, path, h1] of pages()) {
      await p.goto(base + path);
      await p.locator('h1', { hasText: h1 }).first().waitFor();
      await p.locator('[role=status]').first().waitFor({ state: 'detached', timeout: 5000 }).catch(() => {});
      await p.locator('text=loading the rest').waitFor({ state: 'detached', timeout: 15000 }).catch(() => {});
      await sleep(200);
      await p.screenshot({ path: join(SHOTS, `${name}-${scheme}.png`), fullPage: name !== 'job-big' });
      await p.evaluate(AXE);
      const res = await p.evaluate(() => window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }));
      for (const v of res.violations) found.push(`${scheme} ${name}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
    }
    main.problems.push(...c.problems);
    await c.ctx.close();
  }
  assert.deepEqual(found, []);
});

test('no request left loopback, no console error, no CSP violation, no failed request', () => {
  assert.deepEqual(main.problems, []);
});
