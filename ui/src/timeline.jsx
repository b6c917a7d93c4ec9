import { useState, useMemo, useRef, useEffect } from 'preact/hooks';
import { fmtTime, fmtDur, ms, store } from './lib.js';
import { toneOf } from './components.jsx';

const END_TYPES = { AttemptSucceeded: 'SUCCEEDED', AttemptFailed: 'FAILED', AttemptCancelled: 'CANCELLED', AttemptYielded: 'YIELDED', AttemptStale: 'STALE', AttemptResolved: null };

// Build the rows of a job's timeline from its view, its events and the holds on its target.
export function jobTimeline(job, events, holds, now) {
  const rows = [];
  const markers = [];
  const byAttempt = new Map();
  for (const e of events) {
    const a = e.data && typeof e.data.attempt === 'number' ? e.data.attempt : null;
    if (e.type === 'JobEnqueued') {
      markers.push({ t: ms(e.recorded_at), kind: 'enqueue', label: 'enqueued', iso: e.recorded_at, seq: e.seq });
      if (e.data.not_before) markers.push({ t: ms(e.data.not_before), kind: 'notbefore', label: 'not before', iso: e.data.not_before, seq: e.seq });
    } else if (e.type === 'CancelRequested') markers.push({ t: ms(e.recorded_at), kind: 'cancel', label: 'cancel requested', iso: e.recorded_at, seq: e.seq });
    else if (e.type === 'RerunRequested') markers.push({ t: ms(e.recorded_at), kind: 'rerun', label: `rerun requested (attempt ${e.data.attempt})`, iso: e.recorded_at, seq: e.seq });
    else if (e.type === 'RetryScheduled') markers.push({ t: ms(e.recorded_at), kind: 'rerun', label: 'retry scheduled', iso: e.recorded_at, seq: e.seq });
    if (a === null) continue;
    if (!byAttempt.has(a)) byAttempt.set(a, []);
    byAttempt.get(a).push(e);
    // a rerun or a retry opens attempt N: attribute it to N too
  }
  let end = now;
  const finished = job && !['QUEUED', 'LEASED', 'RUNNING', 'STALE'].includes(job.state);
  if (finished && events.length) end = ms(events[events.length - 1].recorded_at);
  const attempts = (job && job.attempts) || [];
  for (const at of attempts) {
    const evs = byAttempt.get(at.attempt) || [];
    const segs = [];
    let leasedAt = null, leasedSeq = null, runAt = null, runSeq = null, staleAt = null, staleSeq = null, worker = null;
    let firstLease = null, lastExpiry = null, lastSeq = null, firstSeq = null;
    const ticks = [];
    const steps = new Map();
    for (const e of evs) {
      const t = ms(e.recorded_at);
      if (firstSeq === null && e.type !== 'RerunRequested' && e.type !== 'RetryScheduled' && e.type !== 'JobEnqueued') firstSeq = e.seq;
      lastSeq = e.seq;
      switch (e.type) {
        case 'JobLeased':
          leasedAt = t; leasedSeq = e.seq; worker = e.data.worker;
          if (firstLease === null) firstLease = t;
          lastExpiry = ms(e.data.lease_expires_at);
          break;
        case 'LeaseRenewed':
          ticks.push({ t, seq: e.seq, kind: 'hb', iso: e.recorded_at });
          lastExpiry = ms(e.data.lease_expires_at);
          break;
        case 'LeaseReleased':
        case 'LeaseExpired':
          if (e.type === 'LeaseExpired') ticks.push({ t, seq: e.seq, kind: 'expired', iso: e.recorded_at });
          if (leasedAt !== null && runAt === null) { segs.push({ from: leasedAt, to: t, state: 'LEASED', fromSeq: leasedSeq, toSeq: e.seq }); leasedAt = null; }
          break;
        case 'JobStarted':
          if (leasedAt !== null) segs.push({ from: leasedAt, to: t, state: 'LEASED', fromSeq: leasedSeq, toSeq: e.seq });
          leasedAt = null; runAt = t; runSeq = e.seq; worker = e.data.worker || worker;
          break;
        case 'ExecutionReattached':
          ticks.push({ t, seq: e.seq, kind: 'reattached', iso: e.recorded_at });
          if (staleAt !== null) { segs.push({ from: staleAt, to: t, state: 'STALE', fromSeq: staleSeq, toSeq: e.seq }); staleAt = null; runAt = t; runSeq = e.seq; }
          if (e.data.lease_expires_at) lastExpiry = ms(e.data.lease_expires_at);
          worker = e.data.worker || worker;
          break;
        case 'StepStarted': steps.set(e.data.step, { name: e.data.step, from: t, fromSeq: e.seq, to: null, state: 'RUNNING' }); break;
        case 'StepSucceeded': case 'StepFailed': {
          const s = steps.get(e.data.step) || { name: e.data.step, from: t, fromSeq: e.seq };
          s.to = t; s.toSeq = e.seq; s.state = e.type === 'StepSucceeded' ? 'DONE' : 'FAILED';
          steps.set(e.data.step, s);
          break;
        }
        default:
          if (e.type in END_TYPES) {
            if (runAt !== null) { segs.push({ from: runAt, to: t, state: 'RUNNING', fromSeq: runSeq, toSeq: e.seq }); runAt = null; }
            if (leasedAt !== null) { segs.push({ from: leasedAt, to: t, state: 'LEASED', fromSeq: leasedSeq, toSeq: e.seq }); leasedAt = null; }
            if (staleAt !== null && e.type === 'AttemptResolved') { segs.push({ from: staleAt, to: t, state: 'STALE', fromSeq: staleSeq, toSeq: e.seq }); staleAt = null; }
            if (e.type === 'AttemptStale') { staleAt = t; staleSeq = e.seq; }
          }
      }
    }
    if (leasedAt !== null) segs.push({ from: leasedAt, to: end, state: 'LEASED', fromSeq: leasedSeq, open: true });
    if (runAt !== null) segs.push({ from: runAt, to: end, state: 'RUNNING', fromSeq: runSeq, open: true });
    if (staleAt !== null) segs.push({ from: staleAt, to: end, state: 'STALE', fromSeq: staleSeq, open: true });
    const bar = segs.length ? { from: segs[0].from, to: segs[segs.length - 1].to } : null;
    rows.push({ kind: 'attempt', attempt: at.attempt, state: at.state, startedAt: at.started_at, finishedAt: at.finished_at, worker, segs, bar, firstSeq, lastSeq, ticks,
      lease: firstLease !== null ? { from: firstLease, to: lastExpiry } : null });
    // the latest attempt's reused steps come from the view
    const viewSteps = at.attempt === job.attempt ? job.steps : [];
    const stepRows = [];
    for (const s of viewSteps || []) if (s.state === 'REUSED') stepRows.push({ name: s.name, state: 'REUSED', reusedFrom: s.reused_from, from: bar ? bar.from : null, to: bar ? bar.from : null });
    for (const s of steps.values()) stepRows.push({ ...s, to: s.to === null ? (bar ? bar.to : end) : s.to, open: s.to === null && !!(bar && segs[segs.length - 1].open) });
    rows.push(...stepRows.map((s) => ({ kind: 'step', attempt: at.attempt, ...s })));
  }
  const holdRow = { kind: 'holds', items: (holds || []).map((h) => ({ id: h.id, from: ms(h.placed_at), to: h.released ? ms(h.released_at) : end, open: !h.released, kindName: h.kind, placed: h.placed_at, released: h.released_at })) };
  let t0 = Infinity, t1 = -Infinity;
  for (const e of events.length ? [events[0]] : []) t0 = Math.min(t0, ms(e.recorded_at));
  if (job) t0 = Math.min(t0, ms(job.created_at));
  t1 = Math.max(end, events.length ? ms(events[events.length - 1].recorded_at) : -Infinity);
  for (const m of markers) if (m.t) { t0 = Math.min(t0, m.t); t1 = Math.max(t1, m.t); }
  for (const h of holdRow.items) { t1 = Math.max(t1, h.to); }
  if (!(t1 > t0)) t1 = t0 + 1000;
  return { rows, markers, holdRow, t0, t1 };
}

const W = 1000, LABEL = 150, ROW = 26, RIGHT = 100;

function label(row) {
  const seqs = row.firstSeq ? `seq ${row.firstSeq}–${row.lastSeq}` : 'no events';
  const lease = row.segs.find((s) => s.state === 'LEASED');
  return `Attempt ${row.attempt} ${row.state}: ` +
    (lease ? `leased ${new Date(lease.from).toISOString()} (seq ${lease.fromSeq}), ` : '') +
    `started ${row.startedAt || 'never'}, ended ${row.finishedAt || 'not yet'}` +
    (row.startedAt && row.finishedAt ? ` (ran ${fmtDur(ms(row.finishedAt) - ms(row.startedAt))})` : '') +
    `, worker ${row.worker || 'none'}, ${seqs}`;
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
      const segEls = r.segs.map((s) => {
        const a = clampX(s.from), b = Math.max(clampX(s.to), a + 2);
        return <g>
          <rect x={a} y={yy + 3} width={b - a} height={18} class={`seg ${toneOf(s.state)} ${s.state === 'STALE' ? 'stale' : ''}`} />
          {s.state === 'STALE' ? <><rect x={a} y={yy + 3} width={b - a} height={18} fill="url(#hatch)" />{b - a > 10 ? <text x={(a + b) / 2} y={yy + 17} class="tl-q" text-anchor="middle">?</text> : null}</> : null}
        </g>;
      });
      els.push(<g class="bar" tabindex="0" role="img" aria-label={label(r)} data-attempt={r.attempt} data-started={r.startedAt || ''} data-finished={r.finishedAt || ''}
        onKeyDown={(e) => { if (e.key === 'Enter' && onPickSeq && r.lastSeq) onPickSeq(r.lastSeq); }}
        onClick={() => { if (onPickSeq && r.lastSeq) onPickSeq(r.lastSeq); }}>
        <title>{label(r)}</title>
        <rect x={LABEL - 2} y={yy} width={W - LABEL + 2} height={ROW - 2} class="row-bg" />
        {segEls}
        <text x={W - RIGHT + 6} y={yy + 16} class={`tl-end ${toneOf(r.state)}`}>{r.state}{r.segs.some((s) => s.open) ? ' →' : ''}</text>
      </g>);
      rows.push({ name: `Attempt ${r.attempt}`, what: r.segs.map((s) => s.state).join(' → ') + ` (${r.state})`, from: r.bar ? r.bar.from : null, to: r.bar ? r.bar.to : null, seqs: r.firstSeq ? `${r.firstSeq}–${r.lastSeq}` : '', who: r.worker || '' });
      y += ROW;
      if (r.lease) {
        const yl = y;
        els.push(<text x="14" y={yl + 12} class="tl-sub">lease</text>);
        const a = clampX(r.lease.from), b = Math.max(clampX(r.lease.to), a + 1);
        els.push(<g tabindex="0" role="img" aria-label={`Attempt ${r.attempt} lease window ${new Date(r.lease.from).toISOString()} to ${new Date(r.lease.to).toISOString()}`}>
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
      const lbl = r.state === 'REUSED' ? `Step ${r.name} of attempt ${r.attempt} REUSED from attempt ${r.reusedFrom}` : `Step ${r.name} of attempt ${r.attempt} ${r.open ? 'RUNNING' : r.state}: ${new Date(r.from).toISOString()} (seq ${r.fromSeq}) to ${r.open ? 'now' : new Date(r.to).toISOString() + ` (seq ${r.toSeq})`}`;
      els.push(<text x="22" y={y + 13} class="tl-sub">{r.name}</text>);
      els.push(<g tabindex="0" role="img" aria-label={lbl} class="step"><title>{lbl}</title>
        <rect x={a} y={y + 3} width={r.state === 'REUSED' ? 40 : b - a} height={12} class={`seg ${toneOf(r.state)} ${r.state === 'REUSED' ? 'outlined' : ''}`} />
      </g>);
      rows.push({ name: `  step ${r.name}`, what: r.state, from: r.from, to: r.to, seqs: r.fromSeq ? `${r.fromSeq}–${r.toSeq || ''}` : '', who: '' });
      y += 18;
    }
  }
  // holds on the target
  const hy = y + 4;
  els.push(<text x="4" y={hy + 14} class="tl-label">Holds</text>);
  for (const h of model.holdRow.items) {
    const a = clampX(h.from), b = Math.max(clampX(h.to), a + 3);
    const lbl = `Hold ${h.id} ${h.kindName} ${h.open ? 'open' : 'released'}: placed ${h.placed}, ${h.open ? 'still open' : 'released ' + h.released}`;
    els.push(<g tabindex="0" role="img" aria-label={lbl} class="holdbar"><title>{lbl}</title><rect x={a} y={hy + 3} width={b - a} height={14} class={`seg ${h.open ? 'tone-stale' : 'tone-ok'} outlined`} /></g>);
    rows.push({ name: `hold ${h.id}`, what: h.open ? 'open' : 'released', from: h.from, to: h.to, seqs: '', who: h.kindName });
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
          <defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><path d="M0 0v6" class="hatch" stroke-width="3" /></pattern></defs>
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
      <defs><pattern id="hatch2" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><path d="M0 0v6" class="hatch" stroke-width="3" /></pattern></defs>
      {axis}
      {bands.map((b) => <g tabindex="0" role="img" aria-label={b.label} class="band"><title>{b.label}</title><rect x={x(b.from)} y="18" width={Math.max(3, x(b.to) - x(b.from))} height={height - 18} /></g>)}
      {lanes.map((l, i) => {
        const y = 24 + i * ROW;
        return <g>
          <text x="4" y={y + 15} class="tl-label">{l.name.length > 19 ? l.name.slice(0, 18) + '…' : l.name}</text>
          {l.bars.map((b) => {
            const a = x(b.from), w = Math.max(3, x(b.to) - a);
            return <g tabindex="0" role="img" aria-label={b.label} class="bar"><title>{b.label}</title>
              <rect x={a} y={y + 3} width={w} height={18} class={`seg ${toneOf(b.state)} ${b.outlined ? 'outlined' : ''}`} />
              {b.state === 'STALE' || b.state === 'superseded' ? <rect x={a} y={y + 3} width={w} height={18} fill="url(#hatch2)" /> : null}
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
