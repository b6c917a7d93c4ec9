import { useState, useRef } from 'preact/hooks';
import { fmtTime, fmtDur, ms, store } from './lib.js';
import { toneOf } from './components.jsx';
import { isLeaseGrant } from './seqs.js';

const ACTIVE = ['QUEUED', 'LEASED', 'RUNNING', 'STALE'];
export const ATTEMPT_ENDS = new Set(['AttemptSucceeded', 'AttemptFailed', 'AttemptCancelled', 'AttemptYielded', 'AttemptResolved']);
// The events that open or close an attempt's segments, and the enqueue: all the target page reads.
export const SEGMENT_EVENTS = ['JobEnqueued', 'JobLeased', 'LeaseReleased', 'LeaseExpired', 'JobStarted', 'ExecutionReattached', 'AttemptStale', ...ATTEMPT_ENDS];

const iso = (t) => new Date(t).toISOString();
// A time as labels say it: to the millisecond, with the seq of the event that recorded it.
export const at = (t, seq) => `${typeof t === 'number' ? iso(t) : t}${seq ? ` (seq ${seq})` : ''}`;

// What each attempt of a job did, from the job's events (in version order): its segments
// (LEASED from a claim, RUNNING from a start or a reattach, STALE) with the seqs of the events
// that open and close them, the intervals it held the target (LEASED and RUNNING: a STALE
// attempt does not hold its target), its worker, lease window, ticks and steps; and the job's
// markers. What is still open runs to `now`; a finished job's picture ends at its last event.
export function attemptsOf(job, events, now) {
  const end = !ACTIVE.includes(job.state) && events.length ? ms(events[events.length - 1].recorded_at) : now;
  const markers = [];
  const runs = new Map();
  const run = (n) => {
    if (!runs.has(n)) runs.set(n, { segs: [], current: null, worker: null, firstSeq: null, lastSeq: null, ticks: [], lease: null, steps: new Map(), reused: [] });
    return runs.get(n);
  };
  const lastDone = new Map(); // step name -> where it last finished DONE, which a rerun may reuse
  for (const e of events) {
    const t = ms(e.recorded_at);
    const mark = (kind, label) => markers.push({ t: ms(e.recorded_at), kind, label, iso: e.recorded_at, seq: e.seq });
    if (e.type === 'JobEnqueued') {
      mark('enqueue', 'enqueued');
      if (e.data.not_before) markers.push({ t: ms(e.data.not_before), kind: 'notbefore', label: 'not before', iso: e.data.not_before, seq: e.seq });
      continue;
    }
    if (e.type === 'CancelRequested') mark('cancel', 'cancel requested');
    const n = e.data && typeof e.data.attempt === 'number' ? e.data.attempt : null;
    if (n === null) continue;
    const r = run(n);
    if (e.type === 'RerunRequested' || e.type === 'RetryScheduled') {
      // they open attempt n before it runs: a marker, and the steps it reuses
      mark('rerun', e.type === 'RerunRequested' ? `rerun requested (attempt ${n})` : `retry scheduled (attempt ${n})`);
      for (const name of e.data.reused_steps || []) r.reused.push({ name, from: t, fromSeq: e.seq, done: lastDone.get(name) || null });
      continue;
    }
    if (r.firstSeq === null) r.firstSeq = e.seq;
    r.lastSeq = e.seq;
    const close = (why = 'ended') => { if (r.current) { r.segs.push({ ...r.current, to: t, toSeq: e.seq, why }); r.current = null; } };
    const open = (state, verb) => { close(); r.current = { state, verb, from: t, fromSeq: e.seq }; };
    if (e.data.worker) r.worker = e.data.worker;
    if (isLeaseGrant(e)) {
      if (!r.lease) r.lease = { from: t, fromSeq: e.seq };
      r.lease.to = ms(e.data.lease_expires_at); r.lease.toSeq = e.seq; r.lease.worker = r.worker;
    }
    switch (e.type) {
      case 'JobLeased': open('LEASED', 'leased'); break;
      case 'LeaseRenewed': r.ticks.push({ t, seq: e.seq, kind: 'hb', iso: e.recorded_at }); break;
      case 'LeaseExpired': case 'LeaseReleased':
        if (e.type === 'LeaseExpired') r.ticks.push({ t, seq: e.seq, kind: 'expired', iso: e.recorded_at });
        // before a start the attempt goes back to QUEUED; while RUNNING, AttemptStale follows
        if (r.current && r.current.state === 'LEASED') close('back to QUEUED');
        break;
      case 'JobStarted': open('RUNNING', 'started'); break;
      case 'ExecutionReattached': r.ticks.push({ t, seq: e.seq, kind: 'reattached', iso: e.recorded_at }); open('RUNNING', 'reattached'); break;
      case 'AttemptStale': open('STALE', 'stale'); break;
      case 'StepStarted': r.steps.set(e.data.step, { name: e.data.step, state: 'RUNNING', from: t, fromSeq: e.seq, to: null, toSeq: null, worker: e.data.worker }); break;
      case 'StepSucceeded': case 'StepFailed': {
        const s = r.steps.get(e.data.step) || { name: e.data.step, from: t, fromSeq: e.seq, worker: e.data.worker };
        Object.assign(s, { to: t, toSeq: e.seq, state: e.type === 'StepSucceeded' ? 'DONE' : 'FAILED' });
        r.steps.set(e.data.step, s);
        if (s.state === 'DONE') lastDone.set(s.name, { t, seq: e.seq, attempt: n, worker: s.worker });
        break;
      }
      default: if (ATTEMPT_ENDS.has(e.type)) close();
    }
  }
  const attempts = (job.attempts || []).map((a) => {
    const r = run(a.attempt);
    const segs = r.current ? [...r.segs, { ...r.current, to: end, toSeq: null, open: true }] : r.segs;
    const last = segs[segs.length - 1];
    // a step still RUNNING when its attempt ended (STALE, then resolved) ends with the attempt
    const steps = [...r.steps.values()].map((s) => (s.to !== null ? s
      : last && !last.open ? { ...s, to: last.to, toSeq: last.toSeq, cut: true } : { ...s, to: end, open: true }));
    const held = [];
    for (const s of segs) {
      if (s.state === 'STALE') continue;
      const h = held[held.length - 1];
      if (h && !h.open && h.toSeq === s.fromSeq) Object.assign(h, { to: s.to, toSeq: s.toSeq, open: s.open });
      else held.push({ from: s.from, fromSeq: s.fromSeq, to: s.to, toSeq: s.toSeq, open: s.open });
    }
    return { attempt: a.attempt, state: a.state, startedAt: a.started_at, finishedAt: a.finished_at, worker: r.worker, segs, held,
      bar: segs.length ? { from: segs[0].from, to: last.to } : null, firstSeq: r.firstSeq, lastSeq: r.lastSeq, ticks: r.ticks, lease: r.lease, steps, reused: r.reused };
  });
  return { attempts, markers, end };
}

// An attempt's segments in words: each one's start, and how the last one (or a return to
// QUEUED) ended, each time with its seq.
function phases(a) {
  const out = [];
  a.segs.forEach((s, i) => {
    const next = a.segs[i + 1];
    out.push(`${s.verb} ${at(s.from, s.fromSeq)}`);
    if (s.open) out.push('ended not yet');
    else if (!next || next.fromSeq !== s.toSeq) out.push(`${s.why} ${at(s.to, s.toSeq)}`);
  });
  return out.join(', ') || 'not claimed yet';
}
export function attemptLabel(a) {
  return `Attempt ${a.attempt} ${a.state}: ${phases(a)}` +
    (a.startedAt && a.finishedAt ? `, ran ${fmtDur(ms(a.finishedAt) - ms(a.startedAt))}` : '') +
    `, worker ${a.worker || 'none'}, ${a.firstSeq ? `seq ${a.firstSeq}–${a.lastSeq}` : 'no events'}`;
}
// The target page's bar: when the attempt held the target, then its segments.
export function heldLabel(job, a) {
  const held = a.held.map((h) => `from ${at(h.from, h.fromSeq)} to ${h.open ? 'now (open)' : at(h.to, h.toSeq)}`).join(' and ');
  return `job ${job} attempt ${a.attempt} ${a.state}, worker ${a.worker || 'none'}: held the target ${held || 'never'}; ${phases(a)}`;
}
function stepLabel(s) {
  if (s.state === 'REUSED') {
    return `Step ${s.name} of attempt ${s.attempt} REUSED: reused when the attempt was asked for ${at(s.from, s.fromSeq)}` +
      (s.done ? `; it finished in attempt ${s.done.attempt} ${at(s.done.t, s.done.seq)}, worker ${s.done.worker || 'none'}` : '');
  }
  return `Step ${s.name} of attempt ${s.attempt} ${s.state}, worker ${s.worker || 'none'}: started ${at(s.from, s.fromSeq)}, ` +
    (s.open ? 'not finished yet' : s.cut ? `never finished: its attempt ended ${at(s.to, s.toSeq)}` : `finished ${at(s.to, s.toSeq)}, took ${fmtDur(s.to - s.from)}`);
}
// A hold with its seqs (seqs.js), on the job page and the target page alike.
export function holdLabel(h) {
  const seqs = h.seqs || {};
  return `Hold ${h.id} ${h.kind} ${h.released ? 'released' : 'open'}: placed ${at(h.placed_at, seqs.placed)} by ${h.placed_by}, ` +
    (h.released ? `released ${at(h.released_at, seqs.released)} by ${h.released_by}` : 'still open');
}
function leaseLabel(a) {
  const l = a.lease;
  return `Attempt ${a.attempt} lease window, worker ${l.worker || 'none'}: from the claim ${at(l.from, l.fromSeq)} to ${iso(l.to)}, the last expiry granted (seq ${l.toSeq})`;
}

// The rows of a job's timeline picture from its view, its events and the holds on its target.
export function jobTimeline(job, events, holds, now) {
  const { attempts, markers, end } = attemptsOf(job, events, now);
  const rows = [];
  for (const a of attempts) {
    rows.push({ kind: 'attempt', ...a });
    for (const s of a.reused) rows.push({ kind: 'step', attempt: a.attempt, state: 'REUSED', ...s, to: s.from });
    for (const s of a.steps) rows.push({ kind: 'step', attempt: a.attempt, ...s });
  }
  const holdRow = { kind: 'holds', items: (holds || []).map((h) => ({ ...h, from: ms(h.placed_at), to: h.released ? ms(h.released_at) : end, open: !h.released })) };
  let t0 = events.length ? ms(events[0].recorded_at) : Infinity;
  t0 = Math.min(t0, ms(job.created_at));
  let t1 = Math.max(end, events.length ? ms(events[events.length - 1].recorded_at) : -Infinity);
  for (const m of markers) if (m.t) { t0 = Math.min(t0, m.t); t1 = Math.max(t1, m.t); }
  for (const h of holdRow.items) t1 = Math.max(t1, h.to);
  if (!(t1 > t0)) t1 = t0 + 1000;
  return { rows, markers, holdRow, t0, t1 };
}

const W = 1000, LABEL = 150, ROW = 26, RIGHT = 100;
const seqRange = (from, to) => (from ? `${from}–${to || ''}` : '');

// The hatching of STALE (and superseded) bars, defined once for every drawing of the page. A
// pattern's content takes its styles from where it is defined, not from the bar that uses it:
// the tone class here gives its stripes the STALE tone's light colour in either theme.
export function SvgDefs() {
  return <svg class="defs" width="0" height="0" aria-hidden="true" focusable="false"><defs>
    <pattern id="hatch" class="tone-stale" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><path d="M0 0v6" class="hatch" stroke-width="2" /></pattern>
  </defs></svg>;
}

// One stretch of a bar in its state's colour; what nobody can vouch for (STALE, a superseded
// sync) is hatched, and STALE also says "?".
function Segment({ state, x, x2, y }) {
  const w = Math.max(2, x2 - x);
  return <g class={toneOf(state)}>
    <rect x={x} y={y} width={w} height={18} class="seg" />
    {state === 'STALE' || state === 'superseded' ? <rect x={x} y={y} width={w} height={18} fill="url(#hatch)" /> : null}
    {state === 'STALE' && w > 10 ? <text x={x + w / 2} y={y + 14} class="tl-q" text-anchor="middle">?</text> : null}
  </g>;
}

// Ticks closer than 4 px merge into one counted tick.
function mergeTicks(ticks, x) {
  const out = [];
  for (const t of ticks) {
    const px = x(t.t);
    const last = out[out.length - 1];
    if (last && last.kind === t.kind && px - last.px < 4) { last.n++; last.toSeq = t.seq; last.toIso = t.iso; continue; }
    out.push({ ...t, px, n: 1, toSeq: t.seq, toIso: t.iso });
  }
  return out;
}

const TICK_WORD = { hb: 'heartbeat', expired: 'lease expired', reattached: 'reattached' };

export function Timeline({ model, title = 'Timeline', onPickSeq }) {
  const [view, setView] = useState(null);
  const [asTable, setAsTable] = useState(false);
  const boxRef = useRef(null);
  const t0 = model.t0, t1 = model.t1;
  const v0 = view ? Math.max(t0, view[0]) : t0;
  const v1 = view ? Math.min(t1, view[1]) : t1;
  const span = Math.max(1, v1 - v0);
  const x = (t) => LABEL + ((t - v0) / span) * (W - LABEL - RIGHT);
  const clampX = (t) => Math.max(LABEL, Math.min(W - RIGHT, x(t)));
  const zoom = (f) => { const c = (v0 + v1) / 2, h = (span * f) / 2; setView([Math.max(t0, c - h), Math.min(t1, c + h)]); };
  const pan = (f) => { let a = v0 + span * f, b = v1 + span * f; if (a < t0) { b += t0 - a; a = t0; } if (b > t1) { a -= b - t1; b = t1; } setView([Math.max(t0, a), b]); };
  const keys = (e) => {
    if (e.target !== boxRef.current) return;
    if (e.key === '+' || e.key === '=') { zoom(0.5); e.preventDefault(); } else if (e.key === '-') { zoom(2); e.preventDefault(); } else if (e.key === '0') { setView(null); e.preventDefault(); } else if (e.key === 'ArrowLeft') { pan(-0.2); e.preventDefault(); } else if (e.key === 'ArrowRight') { pan(0.2); e.preventDefault(); }
  };
  const rows = [];
  let y = 30;
  const els = [];
  for (const r of model.rows) {
    if (r.kind === 'attempt') {
      const yy = y;
      els.push(<text x="4" y={yy + 16} class="tl-label">{`Attempt ${r.attempt}`}</text>);
      const segEls = r.segs.map((s) => <Segment state={s.state} x={clampX(s.from)} x2={clampX(s.to)} y={yy + 3} />);
      const lbl = attemptLabel(r);
      els.push(<g class="bar" tabindex="0" role="img" aria-label={lbl} data-attempt={r.attempt} data-started={r.startedAt || ''} data-finished={r.finishedAt || ''}
        onKeyDown={(e) => { if (e.key === 'Enter' && onPickSeq && r.lastSeq) onPickSeq(r.lastSeq); }}
        onClick={() => { if (onPickSeq && r.lastSeq) onPickSeq(r.lastSeq); }}>
        <title>{lbl}</title>
        <rect x={LABEL - 2} y={yy} width={W - LABEL + 2} height={ROW - 2} class="row-bg" />
        {segEls}
        <text x={W - RIGHT + 6} y={yy + 16} class={`tl-end ${toneOf(r.state)}`}>{r.state}{r.segs.some((s) => s.open) ? ' →' : ''}</text>
      </g>);
      rows.push({ name: `Attempt ${r.attempt}`, what: r.segs.map((s) => s.state).join(' → ') + ` (${r.state})`, from: r.bar ? r.bar.from : null, to: r.bar ? r.bar.to : null, seqs: seqRange(r.firstSeq, r.lastSeq), who: r.worker || '' });
      y += ROW;
      if (r.lease) {
        const yl = y;
        els.push(<text x="14" y={yl + 12} class="tl-sub">lease</text>);
        const a = clampX(r.lease.from), b = Math.max(clampX(r.lease.to), a + 1);
        els.push(<g tabindex="0" role="img" aria-label={leaseLabel(r)} class="lease-window">
          <path d={`M${a} ${yl + 4}v8M${a} ${yl + 8}H${b}M${b} ${yl + 4}v8`} class="lease" />
        </g>);
        for (const t of mergeTicks(r.ticks.filter((t) => t.t >= v0 && t.t <= v1), x)) {
          const lbl = t.n > 1 ? `${t.n} ${TICK_WORD[t.kind]}s, ${t.iso} to ${t.toIso}, seq ${t.seq}–${t.toSeq}` : `${TICK_WORD[t.kind]} ${t.iso}, seq ${t.seq}`;
          els.push(<g tabindex="0" role="img" aria-label={lbl} class={`tick tick-${t.kind}`} onClick={() => onPickSeq && onPickSeq(t.toSeq)}
            onKeyDown={(e) => { if (e.key === 'Enter' && onPickSeq) onPickSeq(t.toSeq); }}>
            <title>{lbl}</title>
            {t.kind === 'hb' ? <path d={`M${t.px} ${yl + 2}v12`} /> : t.kind === 'expired' ? <path d={`M${t.px - 4} ${yl + 2}l8 10M${t.px + 4} ${yl + 2}l-8 10`} /> : <circle cx={t.px} cy={yl + 8} r="4" />}
            {t.n > 1 ? <text x={t.px + 3} y={yl + 22} class="tl-count">{t.n}</text> : null}
          </g>);
        }
        y += 24;
      }
    } else if (r.kind === 'step') {
      const a = clampX(r.from), b = Math.max(clampX(r.to), a + 3);
      const lbl = stepLabel(r);
      els.push(<text x="22" y={y + 13} class="tl-sub">{r.name}</text>);
      els.push(<g tabindex="0" role="img" aria-label={lbl} class="step"><title>{lbl}</title>
        <rect x={a} y={y + 3} width={r.state === 'REUSED' ? 40 : b - a} height={12} class={`seg ${toneOf(r.state)} ${r.state === 'REUSED' ? 'outlined' : ''}`} />
      </g>);
      rows.push({ name: `  step ${r.name}`, what: r.state, from: r.from, to: r.state === 'REUSED' ? null : r.to, seqs: seqRange(r.fromSeq, r.toSeq), who: r.worker || '' });
      y += 18;
    }
  }
  // holds on the target
  const hy = y + 4;
  els.push(<text x="4" y={hy + 14} class="tl-label">Holds</text>);
  for (const h of model.holdRow.items) {
    const a = clampX(h.from), b = Math.max(clampX(h.to), a + 3);
    const lbl = holdLabel(h);
    els.push(<g tabindex="0" role="img" aria-label={lbl} class="holdbar"><title>{lbl}</title><rect x={a} y={hy + 3} width={b - a} height={14} class={`seg ${h.open ? 'tone-stale' : 'tone-ok'} outlined`} /></g>);
    rows.push({ name: `hold ${h.id}`, what: h.open ? 'open' : 'released', from: h.from, to: h.to, seqs: seqRange(h.seqs && h.seqs.placed, h.seqs && h.seqs.released), who: h.kind });
  }
  y = hy + 24;
  // markers
  const my = y;
  els.push(<text x="4" y={my + 14} class="tl-label">Markers</text>);
  // markers closer than 6 px merge into one, labelled with each of them and counted
  const merged = [];
  for (const m of [...model.markers].sort((a, b) => a.t - b.t)) {
    if (m.t < v0 || m.t > v1) continue;
    const px = x(m.t);
    const last = merged[merged.length - 1];
    if (last && px - last.px < 6) { last.items.push(m); continue; }
    merged.push({ px, items: [m] });
  }
  for (const g of merged) {
    const m = g.items[g.items.length - 1];
    const px = g.px;
    const lbl = g.items.length > 1 ? `${g.items.length} markers: ` + g.items.map((i) => `${i.label} ${i.iso} (seq ${i.seq})`).join('; ') : `${m.label} ${m.iso}, seq ${m.seq}`;
    els.push(<g tabindex="0" role="img" aria-label={lbl} class={`marker marker-${m.kind}`} onClick={() => onPickSeq && onPickSeq(m.seq)}
      onKeyDown={(e) => { if (e.key === 'Enter' && onPickSeq) onPickSeq(m.seq); }}><title>{lbl}</title><path d={`M${px} ${my + 2}l5 7-5 7-5-7z`} />
      {g.items.length > 1 ? <text x={px + 6} y={my + 22} class="tl-count">{g.items.length}</text> : null}</g>);
    for (const i of g.items) rows.push({ name: i.label, what: 'marker', from: i.t, to: null, seqs: String(i.seq), who: '' });
  }
  y = my + 26;
  const height = y + 6;
  // axis ticks
  const axis = [];
  const step = niceStep(span / 6);
  for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
    const px = x(t);
    axis.push(<g><path d={`M${px} 18V${height}`} class="grid" /><text x={px + 2} y="12" class="tl-axis">{axisLabel(t, step)}</text></g>);
  }
  return <section class="timeline" aria-label={title}>
    <div class="toolbar">
      <h2>{title}</h2>
      <button type="button" onClick={() => zoom(0.5)} aria-label="zoom in">+ Zoom in</button>
      <button type="button" onClick={() => zoom(2)} aria-label="zoom out">- Zoom out</button>
      <button type="button" onClick={() => pan(-0.25)}>◀ Pan</button>
      <button type="button" onClick={() => pan(0.25)}>Pan ▶</button>
      <button type="button" onClick={() => setView(null)}>Fit</button>
      <label class="switch"><input type="checkbox" checked={asTable} onChange={(e) => setAsTable(e.target.checked)} /> as a table</label>
      <span class="muted small">{fmtTime(new Date(v0).toISOString())} … {fmtTime(new Date(v1).toISOString())} ({fmtDur(span)})</span>
    </div>
    {asTable ? <div class="scroll" tabindex="0" role="region" aria-label="timeline as a table"><table>
      <thead><tr><th scope="col">row</th><th scope="col">what</th><th scope="col">from</th><th scope="col">to</th><th scope="col">duration</th><th scope="col">seqs</th><th scope="col">worker / kind</th></tr></thead>
      <tbody>{rows.map((r) => <tr><td>{r.name}</td><td>{r.what}</td><td>{r.from ? fmtTime(new Date(r.from).toISOString()) : '—'}</td><td>{r.to ? fmtTime(new Date(r.to).toISOString()) : '—'}</td><td>{r.from && r.to ? fmtDur(r.to - r.from) : ''}</td><td>{r.seqs}</td><td>{r.who}</td></tr>)}</tbody>
    </table></div> :
      <div class="svgbox" ref={boxRef} tabindex="0" role="group" aria-label={`${title}: + and - zoom, arrows pan, 0 fits`} onKeyDown={keys}>
        <svg viewBox={`0 0 ${W} ${height}`} width="100%" class="tl" aria-label={title}>
          {axis}{els}
        </svg>
      </div>}
    <Legend />
  </section>;
}

export function Legend() {
  return <ul class="legend" aria-label="legend">
    <li><svg width="18" height="10" aria-hidden="true"><rect width="18" height="10" class="seg tone-leased" /></svg> LEASED (claim to start)</li>
    <li><svg width="18" height="10" aria-hidden="true"><rect width="18" height="10" class="seg tone-running" /></svg> RUNNING</li>
    <li><svg width="18" height="10" aria-hidden="true"><rect width="18" height="10" class="seg tone-stale" /><rect width="18" height="10" fill="url(#hatch)" /></svg> STALE (?)</li>
    <li><svg width="18" height="10" aria-hidden="true"><rect x="1" y="1" width="16" height="8" class="seg tone-ok outlined" /></svg> reused step / hold</li>
    <li><svg width="10" height="14" aria-hidden="true"><path d="M5 0v14" class="lease" /></svg> heartbeat (a number: merged ticks)</li>
    <li><svg width="12" height="12" aria-hidden="true" class="tick-expired"><path d="M1 1l10 10M11 1L1 11" /></svg> lease expired</li>
    <li><svg width="12" height="12" aria-hidden="true" class="tick-reattached"><circle cx="6" cy="6" r="4" /></svg> reattached</li>
    <li><svg width="12" height="14" aria-hidden="true" class="marker"><path d="M6 0l5 7-5 7-5-7z" /></svg> enqueue, not before, cancel requested, rerun</li>
  </ul>;
}

function niceStep(raw) {
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000, 7200000, 21600000, 43200000, 86400000];
  for (const s of steps) if (s >= raw) return s;
  return Math.ceil(raw / 86400000) * 86400000;
}
function axisLabel(t, step) {
  const iso = fmtTime(new Date(t).toISOString());
  if (store && iso.includes('T')) {
    const time = iso.slice(11, step < 1000 ? 23 : 19);
    return time;
  }
  return iso.length > 12 ? iso.slice(11, step < 1000 ? 23 : 19) : iso;
}

// ---------- a generic lane chart: rows of labelled bars on one time axis (targets, connectors) ----------
export function Lanes({ title, lanes, bands = [], t0: a0, t1: a1, legend }) {
  const pad = Math.max(5, (a1 - a0) * 0.03);
  const t0 = a0 - pad, t1 = Math.max(a1, a0 + 10) + pad;
  const span = Math.max(1, t1 - t0);
  const x = (t) => LABEL + ((t - t0) / span) * (W - LABEL - 80);
  const height = 24 + lanes.length * ROW + 6;
  const axis = [];
  const step = niceStep(span / 6);
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) axis.push(<g><path d={`M${x(t)} 18V${height}`} class="grid" /><text x={x(t) + 2} y="12" class="tl-axis">{axisLabel(t, step)}</text></g>);
  return <section class="timeline" aria-label={title}>
    <div class="toolbar"><h2>{title}</h2><span class="muted small">{fmtTime(new Date(t0).toISOString())} … {fmtTime(new Date(t1).toISOString())}</span></div>
    <div class="svgbox"><svg viewBox={`0 0 ${W} ${height}`} width="100%" class="tl" role="group" aria-label={title}>
      {axis}
      {bands.map((b) => <g tabindex="0" role="img" aria-label={b.label} class="band"><title>{b.label}</title><rect x={x(b.from)} y="18" width={Math.max(3, x(b.to) - x(b.from))} height={height - 18} /></g>)}
      {lanes.map((l, i) => {
        const y = 24 + i * ROW;
        return <g>
          <text x="4" y={y + 15} class="tl-label">{l.name.length > 19 ? l.name.slice(0, 18) + '…' : l.name}</text>
          {l.bars.map((b) => {
            const a = x(b.from), w = Math.max(3, x(b.to) - a);
            // a bar is one segment, or several (an attempt: LEASED, RUNNING, STALE); a hold is outlined
            return <g tabindex="0" role="img" aria-label={b.label} class="bar" data-lane={l.name}><title>{b.label}</title>
              {b.outlined ? <rect x={a} y={y + 3} width={w} height={18} class={`seg ${toneOf(b.state)} outlined`} />
                : (b.segs || [b]).map((s) => <Segment state={s.state} x={x(s.from)} x2={x(s.to)} y={y + 3} />)}
              {(b.marks || []).map((m) => <path d={`M${x(m.t)} ${y + 1}v22`} class={`mark mark-${m.kind}`}><title>{m.label}</title></path>)}
              {b.word ? <text x={Math.min(a + w + 4, W - 70)} y={y + 16} class={`tl-end ${toneOf(b.state)}`}>{b.word}</text> : null}
            </g>;
          })}
          {(l.points || []).map((p) => <g tabindex="0" role="img" aria-label={p.label} class="marker"><title>{p.label}</title><path d={`M${x(p.t)} ${y + 4}l5 7-5 7-5-7z`} /></g>)}
        </g>;
      })}
    </svg></div>
    {legend}
  </section>;
}
