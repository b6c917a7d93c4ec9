// Builds the console into dist/: index.html and content-hashed assets, the same bytes every time.
// Usage: node build.mjs [OUTDIR]   (default: dist)
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] || join(here, 'dist'));
const hash = (buf) => createHash('sha256').update(buf).digest('hex').slice(0, 16);

const res = await build({
  entryPoints: [join(here, 'src/main.jsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  charset: 'utf8',
  write: false,
  outdir: 'out',
  entryNames: 'app',
  absWorkingDir: here,
  logLevel: 'warning',
});

const files = {};
for (const f of res.outputFiles) {
  if (f.path.endsWith('.js')) files.js = Buffer.from(f.contents);
  else if (f.path.endsWith('.css')) files.css = Buffer.from(f.contents);
}
if (!files.js || !files.css) throw new Error('esbuild gave no js or css');
const icon = readFileSync(join(here, 'src/icon.svg'));
const names = {
  js: `app-${hash(files.js)}.js`,
  css: `app-${hash(files.css)}.css`,
  icon: `icon-${hash(icon)}.svg`,
};

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>runledger console</title>
<link rel="icon" type="image/svg+xml" href="/ui/assets/${names.icon}">
<link rel="stylesheet" href="/ui/assets/${names.css}">
<script type="module" src="/ui/assets/${names.js}"></script>
</head>
<body>
<noscript>The runledger console needs JavaScript. The same data is in the HTTP API under /v1/.</noscript>
<div id="app"></div>
</body>
</html>
`;

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
writeFileSync(join(out, 'index.html'), html);
writeFileSync(join(out, 'assets', names.js), files.js);
writeFileSync(join(out, 'assets', names.css), files.css);
writeFileSync(join(out, 'assets', names.icon), icon);
console.log(`built ${out}: ${names.js} (${files.js.length} B), ${names.css} (${files.css.length} B), ${names.icon}`);
