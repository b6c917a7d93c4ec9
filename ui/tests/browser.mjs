// Debian's chromium driven by playwright-core; no browser download.
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  // playwright gives each launch a fresh, empty user data folder of its own.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  return browser;
}

// A context whose pages may reach the loopback server only, with every console error,
// page error and CSP violation collected.
export async function context(browser, base, opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: opts.colorScheme || 'light', timezoneId: opts.timezoneId || 'UTC', locale: 'en-GB' });
  ctx.setDefaultTimeout(10000);
  const problems = [];
  const origin = new URL(base).origin;
  await ctx.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin + '/')) return route.continue();
    problems.push(`request left the server: ${u}`);
    return route.abort();
  });
  ctx.on('page', (p) => watch(p, problems));
  if (opts.token) await ctx.addInitScript((t) => { try { sessionStorage.setItem('runledger.token', t); } catch { /* about:blank */ } }, opts.token);
  return { ctx, problems };
}

// A response of 4xx/5xx is a problem (the browser also logs each such response as a console
// error, "Failed to load resource", counted here once, by its response).
export function watch(page, problems) {
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console error on ${page.url()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e.message}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
}
