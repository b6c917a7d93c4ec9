// Starts and stops real runledgerd processes for the suite: loopback, a free port, a temp data folder.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, chmodSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import net from 'node:net';
import { sleep } from './client.mjs';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);

export function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); });
    s.on('error', rej);
  });
}

export class Server {
  constructor({ bin, tokens = null, extra = [] }) {
    this.bin = bin;
    this.data = mkdtempSync(join(tmpdir(), 'rl-ui-data-'));
    this.tokens = tokens;
    this.extra = extra;
    this.proc = null;
    this.log = '';
  }
  args() {
    const a = ['--data', this.data, '--listen', `127.0.0.1:${this.port}`, '--log-level', 'warn', ...this.extra];
    if (this.tokens) {
      const f = join(this.data + '-tokens');
      writeFileSync(f, this.tokens.map(([n, r, t]) => `${n} ${r} ${t}`).join('\n') + '\n');
      chmodSync(f, 0o600);
      a.push('--auth-tokens', f);
    }
    const help = execFileSync(this.bin, ['--help']).toString();
    // RL_UI_DIR serves another build (an older one, to see a new test fail against it)
    if (help.includes('--ui-dir') && !process.env.RL_UI_EMBEDDED) a.push('--ui-dir', process.env.RL_UI_DIR || join(ROOT, 'ui/dist'));
    return a;
  }
  async start() {
    if (!this.port) this.port = await freePort();
    this.proc = spawn(this.bin, this.args(), { stdio: ['ignore', 'ignore', 'pipe'] });
    this.proc.stderr.on('data', (d) => { this.log += d; });
    this.base = `http://127.0.0.1:${this.port}`;
    const t0 = Date.now();
    for (;;) {
      try {
        const r = await fetch(this.base + '/v1/health');
        if (r.status === 200) break;
      } catch { /* not yet */ }
      if (this.proc.exitCode !== null) throw new Error(`runledgerd exited: ${this.log}`);
      if (Date.now() - t0 > 10000) throw new Error(`runledgerd did not answer: ${this.log}`);
      await sleep(50);
    }
    return this;
  }
  // Stop for good and remove the data folder and the tokens file.
  async stop() {
    await this.kill('SIGTERM');
    rmSync(this.data, { recursive: true, force: true });
    rmSync(this.data + '-tokens', { force: true });
  }
  async kill(signal = 'SIGKILL') {
    if (!this.proc || this.proc.exitCode !== null) return;
    const done = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill(signal);
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await done;
    clearTimeout(t);
  }
}

export function binary(dir) {
  const b = join(resolve(dir), 'runledgerd');
  if (!existsSync(b)) throw new Error(`no runledgerd in ${dir}`);
  return b;
}
