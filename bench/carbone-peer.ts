// Benchmark peer (not part of the product): a minimal HTTP server that renders the bench's template with
// carbone (`carbone.render`, pdf through carbone's own warm LibreOffice) and answers the rendered bytes.
//   POST /render {"data": {...}, "convertTo": "docx" | "pdf"}  ->  200 the document
// carbone's Community License forbids offering it as a hosted document-generation service, so the product
// never depends on it: it is installed on first use outside the repository, into ~/.cache/docgen-bench-peers
// (BENCH_PEERS_DIR), with `npm install carbone@3.8.2`, and loaded from there (the peers of ../shared/bench
// use the same directory). It runs in its own process, as docgen does in the benchmark.
//   node bench/carbone-peer.ts --serve <dir>   prints "listening <port>" when ready
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { makeDocx } from '../test/support/office.ts';

const CARBONE = 'carbone@3.8.2';

export function peersDir(): string {
  return process.env.BENCH_PEERS_DIR || path.join(os.homedir(), '.cache', 'docgen-bench-peers');
}

function loadCarbone(): any {
  const dir = peersDir();
  if (!fs.existsSync(path.join(dir, 'node_modules', 'carbone', 'package.json'))) {
    fs.mkdirSync(dir, { recursive: true });
    const pkg = path.join(dir, 'package.json');
    if (!fs.existsSync(pkg)) fs.writeFileSync(pkg, `${JSON.stringify({ name: 'docgen-bench-peers', private: true }, null, 2)}\n`);
    process.stderr.write(`installing ${CARBONE} into ${dir} (benchmark peer only) ...\n`);
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', CARBONE], { cwd: dir, stdio: ['ignore', 2, 2] });
    if (r.status !== 0) throw new Error(`npm install ${CARBONE} failed (${r.error?.message ?? `exit ${r.status}`}) in ${dir}`);
  }
  return createRequire(path.join(dir, 'package.json'))('carbone');
}

/** The bench's template (bench/generate-latency.ts) with carbone's tags: the same document, `{d.x}` for `{x}`. */
export function carboneTemplate(): Uint8Array {
  return makeDocx(['Dear {d.customer.name},', 'Order {d.order} total {d.total}']);
}

async function serve(dir: string, template?: string, factories = 1): Promise<void> {
  const carbone = loadCarbone();
  const templatePath = path.join(dir, 'template.docx');
  fs.writeFileSync(templatePath, template ? fs.readFileSync(template) : carboneTemplate());
  // Warm LibreOffice factories (one by default), started now (not by the first request).
  carbone.set({ tempPath: dir, templatePath: dir, factories, startFactory: true });
  const renderOnce = (data: unknown, convertTo: string) =>
    new Promise<Buffer>((resolve, reject) =>
      carbone.render(templatePath, data, convertTo === 'pdf' ? { convertTo: 'pdf' } : {}, (err: unknown, out: Buffer) =>
        err ? reject(err) : resolve(out),
      ),
    );
  // Warm both paths before answering "listening".
  await renderOnce({ customer: { name: 'warm' } }, 'docx');
  await renderOnce({ customer: { name: 'warm' } }, 'pdf');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: unknown; convertTo?: string };
          const out = await renderOnce(body.data, body.convertTo ?? 'docx');
          res.writeHead(200, { 'content-type': body.convertTo === 'pdf' ? 'application/pdf' : 'application/octet-stream' });
          res.end(out);
        } catch (err) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String((err as Error)?.message ?? err));
        }
      })();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
  const stop = () => {
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop); // the benchmark died
  process.stdin.resume();
}

function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = path.join(dir, cmd);
    if (dir && fs.existsSync(p)) return p;
  }
  return undefined;
}

/** Starts the peer in a child process; resolves with its URL once it has rendered a docx and a pdf. `template`:
 *  a docx file with carbone's tags instead of the latency bench's letter; `factories`: LibreOffice instances. */
export async function startCarbonePeer(
  opts: { template?: string; factories?: number } = {},
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  // carbone looks for `soffice.bin` on PATH (Linux) and for a python3 that has `uno` (Debian's).
  const env = {
    ...process.env,
    PATH: [path.dirname(fs.realpathSync(which('soffice') ?? '/usr/bin/soffice')), '/usr/bin', process.env.PATH].filter(Boolean).join(':'),
  };
  // Its files (template, LibreOffice profile, renders) live in a directory this process removes at the end.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-carbone-'));
  const extra = [
    ...(opts.template ? ['--template', opts.template] : []),
    ...(opts.factories ? ['--factories', String(opts.factories)] : []),
  ];
  const child: ChildProcess = spawn(process.execPath, [import.meta.filename, '--serve', dir, ...extra], {
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true,
    env,
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the carbone peer exited (${code}) before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      // Its whole process group: carbone's soffice and python helper too.
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 5000);
      await exited;
      clearTimeout(t);
      // LibreOffice may still be writing its profile for a moment after the group is signalled.
      await new Promise((r) => setTimeout(r, 500));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const serveAt = process.argv.indexOf('--serve');
const argOf = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
if (serveAt >= 0)
  await serve(
    process.argv[serveAt + 1] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-carbone-')),
    argOf('--template'),
    Number(argOf('--factories') ?? 1),
  );
