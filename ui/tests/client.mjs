// A small HTTP client for the suite: JSON in, JSON out, keep-alive.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

export function client(base, token) {
  const u = new URL(base);
  function call(method, path, body, headers = {}) {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
      const h = { ...headers };
      if (data) { h['content-type'] = 'application/json'; h['content-length'] = data.length; }
      if (token) h.authorization = `Bearer ${token}`;
      const req = http.request({ host: u.hostname, port: u.port, method, path, headers: h, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json = null;
          try { json = text ? JSON.parse(text) : null; } catch { json = null; }
          resolve({ status: res.statusCode, json, text, headers: res.headers });
        });
      });
      req.on('error', reject);
      if (data) req.write(data);
      req.end();
    });
  }
  async function ok(method, path, body, headers) {
    const r = await call(method, path, body, headers);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  }
  return {
    call,
    get: (p) => ok('GET', p),
    post: (p, b = {}, h) => ok('POST', p, b, h),
    patch: (p, b, h) => ok('PATCH', p, b, h),
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
