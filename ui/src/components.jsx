import { useEffect, useState, useRef } from 'preact/hooks';
import { api, ApiError, fmtTime, href, navigate, store, mayAct, onLive } from './lib.js';

// ---------- icons: one shape per meaning, so that state never depends on colour alone ----------
const ICONS = {
  clock: <><circle cx="8" cy="8" r="6" fill="none" stroke="currentColor" stroke-width="1.6" /><path d="M8 4.5V8l2.5 1.5" fill="none" stroke="currentColor" stroke-width="1.6" /></>,
  hourglass: <path d="M4 2h8M4 14h8M5 2c0 4 6 4 6 6s-6 2-6 6M11 2c0 4-6 4-6 6s6 2 6 6" fill="none" stroke="currentColor" stroke-width="1.5" />,
  play: <path d="M5 3l8 5-8 5z" fill="currentColor" />,
  check: <path d="M3 8.5l3.2 3L13 4.5" fill="none" stroke="currentColor" stroke-width="2" />,
  cross: <path d="M4 4l8 8M12 4l-8 8" fill="none" stroke="currentColor" stroke-width="2" />,
  stop: <rect x="4" y="4" width="8" height="8" fill="currentColor" />,
  question: <><circle cx="8" cy="8" r="6.3" fill="none" stroke="currentColor" stroke-width="1.4" /><path d="M6 6.3a2 2 0 1 1 2.6 1.9c-.5.2-.6.5-.6 1.1v.5" fill="none" stroke="currentColor" stroke-width="1.5" /><circle cx="8" cy="11.6" r=".9" fill="currentColor" /></>,
  pause: <path d="M5 3v10M11 3v10" stroke="currentColor" stroke-width="2.4" />,
  reuse: <><circle cx="8" cy="8" r="6" fill="none" stroke="currentColor" stroke-width="1.4" stroke-dasharray="2 1.5" /><path d="M5 8.3l2 2 4-4" fill="none" stroke="currentColor" stroke-width="1.6" /></>,
  lock: <><rect x="3.5" y="7" width="9" height="7" fill="currentColor" /><path d="M5.5 7V5a2.5 2.5 0 0 1 5 0v2" fill="none" stroke="currentColor" stroke-width="1.6" /></>,
  unlock: <><rect x="3.5" y="7" width="9" height="7" fill="none" stroke="currentColor" stroke-width="1.4" /><path d="M5.5 7V5a2.5 2.5 0 0 1 5 0" fill="none" stroke="currentColor" stroke-width="1.6" /></>,
  dash: <path d="M3 8h10" stroke="currentColor" stroke-width="2" />,
  skip: <path d="M3 3l6 5-6 5zM10 3h2.5v10H10z" fill="currentColor" />,
  warn: <><path d="M8 2l6.5 12h-13z" fill="none" stroke="currentColor" stroke-width="1.4" /><path d="M8 6.5v3.5" stroke="currentColor" stroke-width="1.6" /><circle cx="8" cy="12" r=".9" fill="currentColor" /></>,
};

// state word -> [tone class, icon]
const STATES = {
  QUEUED: ['tone-queued', 'clock'], LEASED: ['tone-leased', 'hourglass'], RUNNING: ['tone-running', 'play'],
  SUCCEEDED: ['tone-ok', 'check'], FAILED: ['tone-bad', 'cross'], CANCELLED: ['tone-muted', 'stop'],
  STALE: ['tone-stale', 'question'], YIELDED: ['tone-yield', 'pause'],
  PENDING: ['tone-queued', 'clock'], DONE: ['tone-ok', 'check'], REUSED: ['tone-ok', 'reuse'],
  open: ['tone-stale', 'lock'], released: ['tone-ok', 'unlock'],
  active: ['tone-ok', 'check'], paused: ['tone-muted', 'pause'], error: ['tone-bad', 'cross'], deleting: ['tone-muted', 'stop'],
  idle: ['tone-muted', 'dash'], running: ['tone-running', 'play'],
  succeeded: ['tone-ok', 'check'], failed: ['tone-bad', 'cross'], aborted: ['tone-muted', 'stop'], superseded: ['tone-stale', 'skip'],
  yes: ['tone-ok', 'check'], no: ['tone-bad', 'cross'],
  EXECUTION_STATE_UNKNOWN: ['tone-stale', 'lock'], RESULT_UNKNOWN: ['tone-leased', 'warn'],
};
export function toneOf(state) { return (STATES[state] || ['tone-muted', 'dash'])[0]; }
export function Icon({ name, title }) {
  return <svg class="icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden={title ? undefined : 'true'} role={title ? 'img' : undefined} aria-label={title} focusable="false">{ICONS[name] || ICONS.dash}</svg>;
}
export function State({ s, label }) {
  const [tone, icon] = STATES[s] || ['tone-muted', 'dash'];
  return <span class={`badge ${tone}`} data-state={s}><Icon name={icon} />{label || s}</span>;
}

export function Link({ to, children, ...rest }) {
  return <a href={to} {...rest} onClick={(e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  }}>{children}</a>;
}
export const JobLink = ({ id, asOf }) => <Link to={href(`/ui/jobs/${encodeURIComponent(id)}`, { as_of: asOf })}>{id}</Link>;
export const HoldLink = ({ id }) => <Link to={href(`/ui/holds/${encodeURIComponent(id)}`)}>{id}</Link>;
export const TargetLink = ({ t }) => <Link to={href(`/ui/targets/${encodeURIComponent(t)}`)}>{t}</Link>;
export const ConnLink = ({ id }) => <Link to={href(`/ui/connectors/${encodeURIComponent(id)}`)}>{id}</Link>;
export const SeqLink = ({ seq }) => <Link class="seq" to={href(`/ui/events/${seq}`)}>#{seq}</Link>;

// A time, always with its seq when one is known.
export function Time({ iso, seq }) {
  if (!iso) return <span class="muted">—</span>;
  return <span class="when"><time datetime={iso} title={iso}>{fmtTime(iso)}</time>{seq ? <> <SeqLink seq={seq} /></> : null}</span>;
}

export function ErrorBox({ error }) {
  if (!error) return null;
  const status = error instanceof ApiError ? `${error.status} ` : '';
  const code = error.body && error.body.code ? ` (${error.body.code})` : '';
  return <div class="error" role="alert"><Icon name="warn" /> <strong>{status}</strong>{error.message}{code}</div>;
}

// Load something from the API; reload on demand or when a matching live event arrives.
export function useApi(fn, deps, liveMatch) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const gen = useRef(0);
  const load = async () => {
    const g = ++gen.current;
    try {
      const data = await fn();
      if (g === gen.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (g === gen.current) setState((s) => ({ data: s.data, error, loading: false }));
    }
  };
  useEffect(() => { setState({ data: null, error: null, loading: true }); load(); }, deps);
  useEffect(() => {
    if (!liveMatch) return undefined;
    let t = null;
    const off = onLive((ev) => { if (liveMatch(ev) && !t) t = setTimeout(() => { t = null; load(); }, 150); });
    return () => { off(); if (t) clearTimeout(t); };
  }, deps);
  return { ...state, reload: load };
}

// An operator action: shown only to a role that may make it, confirmed, sent with an Idempotency-Key.
export function Action({ label, confirm, run, done, danger }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState(null);
  if (!mayAct()) return null;
  return <span class="action">
    <button type="button" class={danger ? 'danger' : ''} disabled={busy} onClick={async () => {
      if (!window.confirm(confirm)) return;
      setBusy(true); setErr(null);
      try { const r = await run(); if (done) done(r); } catch (e) { setErr(e); }
      setBusy(false);
    }}>{label}</button>
    <ErrorBox error={err} />
  </span>;
}

// JSON shown on demand.
export function JsonToggle({ value, label = 'JSON' }) {
  const [open, setOpen] = useState(false);
  return <>
    <button type="button" class="small" aria-expanded={open ? 'true' : 'false'} onClick={() => setOpen(!open)}>{open ? 'Hide' : label}</button>
    {open ? <pre class="json">{JSON.stringify(value, null, 2)}</pre> : null}
  </>;
}

// Top-level JSON of an object, one line per key, changed keys highlighted. Parses back to the object.
export function JsonLines({ value, changed = new Set(), testid }) {
  const keys = Object.keys(value);
  return <pre class="json" data-testid={testid}>{'{\n'}{keys.map((k, i) => (
    <span class={changed.has(k) ? 'chg' : ''} key={k}>{`  ${JSON.stringify(k)}: ${JSON.stringify(value[k])}${i < keys.length - 1 ? ',' : ''}\n`}</span>
  ))}{'}'}</pre>;
}

// A table of events; rows may be clicked (time travel).
export function EventsTable({ events, onPick, picked, showStream = true, caption }) {
  return <div class="scroll" tabindex="0" role="region" aria-label={caption || 'events'}>
    <table class="events">
      {caption ? <caption>{caption}</caption> : null}
      <thead><tr><th scope="col">seq</th>{showStream ? <th scope="col">stream</th> : null}<th scope="col">version</th><th scope="col">type</th><th scope="col">recorded (UTC unless switched)</th><th scope="col">actor</th><th scope="col">command id</th><th scope="col">data</th></tr></thead>
      <tbody>{events.map((e) => <EventRow key={e.seq} e={e} onPick={onPick} picked={picked === e.seq} showStream={showStream} />)}</tbody>
    </table>
  </div>;
}
function EventRow({ e, onPick, picked, showStream }) {
  return <tr data-seq={e.seq} class={picked ? 'picked' : ''}>
    <td><Link class="seq" to={href(`/ui/events/${e.seq}`)}>{e.seq}</Link></td>
    {showStream ? <td><StreamLink stream={e.stream} seq={e.seq} /></td> : null}
    <td>{e.version}</td>
    <td>{onPick ? <button type="button" class="linkish" aria-pressed={picked ? 'true' : 'false'} title="show the entity as of this event" onClick={() => onPick(e.seq)}>{e.type}</button> : e.type}</td>
    <td><time datetime={e.recorded_at}>{fmtTime(e.recorded_at)}</time></td>
    <td>{e.actor}</td>
    <td class="mono">{e.command_id}</td>
    <td><JsonToggle value={e.data} /></td>
  </tr>;
}
export function StreamLink({ stream, seq }) {
  const i = stream.indexOf('/');
  const kind = stream.slice(0, i), id = stream.slice(i + 1);
  const base = kind === 'job' ? '/ui/jobs/' : kind === 'hold' ? '/ui/holds/' : '/ui/connectors/';
  return <Link to={href(base + encodeURIComponent(id), { as_of: seq })}>{stream}</Link>;
}

export function Pager({ onPrev, onNext, label }) {
  return <nav class="pager" aria-label={label || 'pages'}>
    <button type="button" disabled={!onPrev} onClick={onPrev}>◀ Previous</button>
    <button type="button" disabled={!onNext} onClick={onNext}>Next ▶</button>
  </nav>;
}

export function Field({ k, children }) { return <><dt>{k}</dt><dd>{children}</dd></>; }

export { store };
