import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { store, subscribe, setToken, probeRole, startLive, query, setQuery, tzMode, href, notify } from './lib.js';
import { Link, Icon } from './components.jsx';
import { SvgDefs } from './timeline.jsx';
import { NowPage, JobsPage, JobPage, TargetPage, HoldsPage, HoldPage, ConnectorsPage, ConnectorPage, EventsPage, EventPage } from './pages.jsx';
import './app.css';

function route(path) {
  const p = path.replace(/\/+$/, '');
  const seg = p.split('/').slice(2).map((s) => { try { return decodeURIComponent(s); } catch { return s; } });
  const [a, b] = seg;
  if (!a) return [NowPage, {}, 'now'];
  if (a === 'jobs') return b ? [JobPage, { id: b }, 'jobs'] : [JobsPage, {}, 'jobs'];
  if (a === 'targets' && b) return [TargetPage, { target: seg.slice(1).join('/') }, 'targets'];
  if (a === 'holds') return b ? [HoldPage, { id: b }, 'holds'] : [HoldsPage, {}, 'holds'];
  if (a === 'connectors') return b ? [ConnectorPage, { id: b }, 'connectors'] : [ConnectorsPage, {}, 'connectors'];
  if (a === 'events') return b && /^\d+$/.test(b) ? [EventPage, { seq: Number(b) }, 'events'] : [EventsPage, {}, 'events'];
  return [NotFound, {}, ''];
}
function NotFound() { return <><h1>Not found</h1><p>No page here. <Link to={href('/ui/')}>Go to Now</Link>.</p></>; }

function applyTheme() {
  const t = store.theme;
  const dark = t === 'dark' || (t === 'auto' && window.matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', applyTheme);

function TokenForm() {
  const [tok, setTok] = useState('');
  return <form class="token" onSubmit={(e) => { e.preventDefault(); setToken(tok.trim()); }}>
    <h1>A token is needed</h1>
    <div class="error" role="alert"><Icon name="warn" /> <strong>401</strong> {store.authMessage}</div>
    <p>This server has authentication on. Paste a bearer token; it is kept for this tab's session only.</p>
    <label for="token-input">Token</label>
    <input id="token-input" type="password" autocomplete="off" value={tok} onInput={(e) => setTok(e.target.value)} />
    <button type="submit">Use this token</button>
  </form>;
}

function Header({ section }) {
  const tz = tzMode();
  const nav = [['now', '/ui/', 'Now'], ['jobs', '/ui/jobs', 'Jobs'], ['holds', '/ui/holds', 'Holds'], ['connectors', '/ui/connectors', 'Connectors'], ['events', '/ui/events', 'Events']];
  return <header class="top">
    <Link class="brand" to={href('/ui/')}><Icon name="check" /> runledger</Link>
    <nav aria-label="main"><ul>{nav.map(([k, p, l]) => <li><Link to={href(p)} aria-current={section === k ? 'page' : undefined}>{l}</Link></li>)}</ul></nav>
    <div class="tools">
      <label>time <select value={tz} onChange={(e) => setQuery({ tz: e.target.value === 'utc' ? '' : e.target.value })}>
        <option value="utc">UTC</option><option value="local">local</option><option value="rel">relative</option></select></label>
      <label>theme <select value={store.theme} onChange={(e) => { store.theme = e.target.value; localStorage.setItem('runledger.theme', e.target.value); applyTheme(); notify(); }}>
        <option value="auto">system</option><option value="light">light</option><option value="dark">dark</option></select></label>
      <span class={`badge ${store.live.status === 'live' ? 'tone-ok' : 'tone-leased'}`} data-testid="live" title="the live event stream">
        <Icon name={store.live.status === 'live' ? 'play' : 'pause'} />{store.live.status}{store.live.lastSeq !== null ? ` · seq ${store.live.lastSeq}` : ''}</span>
      {store.role ? <span class="badge tone-muted" data-testid="role">{store.role === 'operator' ? 'may act' : 'read only'}</span> : null}
      {store.token ? <button type="button" class="small" onClick={() => setToken('')}>Forget token</button> : null}
    </div>
  </header>;
}

function App() {
  const [, force] = useState(0);
  useEffect(() => subscribe(() => force((n) => n + 1)), []);
  const [Page, props, section] = route(store.route.path);
  const key = store.route.path + '|' + (store.token ? 't' : '');
  return <>
    <a class="skip" href="#main">Skip to content</a>
    <SvgDefs />
    <Header section={section} />
    <main id="main">{store.needToken ? <TokenForm /> : <Page key={key} {...props} />}</main>
  </>;
}

applyTheme();
render(<App />, document.getElementById('app'));
probeRole();
startLive();
