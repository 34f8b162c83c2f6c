// Benchmark (not a test): the saturation case of issue 25 against the real `docgen start`. Tenant B queues
// async pdf generates of documents that would hold LibreOffice for minutes; tenant A sends one small sync
// pdf generate every `--every` ms. Printed per pool size: A's answers and p50/p95 first alone (the
// baseline), then during B's attack, in the same run; B's callbacks; the peak RSS of the service's
// processes. The issue's figures: one instance, four copies of the 260 000-paragraph docx, A every 3 s for
// 3 minutes: 58 of A's 60 requests got 504.
//   npm run bench:saturation [-- --pools 1,default --every 3000 --seconds 180 --baseline-seconds 90 --attack hostile|all|long --copies 4]
// --attack hostile: the 260 000-paragraph docx (the issue's case); all: each of the issue's four files;
// long: a ~900-page docx within every limit (the share and contention limits, not the estimates, apply).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startReceiver } from '../test/integration/async/receiver.ts';
import { longDocx, makeDocx, para } from '../test/integration/convert/fixtures.ts';
import { hugePng, htmlTable, longRunDocx, numberedParagraphs, tagDocx } from '../test/support/costly-office.ts';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { pdfTraffic, summary } from '../test/support/saturation.ts';
import { rssPeaks } from './processes.ts';

const { values } = parseArgs({
  options: {
    pools: { type: 'string', default: '1,default' },
    every: { type: 'string', default: '3000' },
    seconds: { type: 'string', default: '180' },
    'baseline-seconds': { type: 'string', default: '90' },
    attack: { type: 'string', default: 'hostile' },
    copies: { type: 'string', default: '4' },
  },
});
const EVERY = Number(values.every);
const SECONDS = Number(values.seconds);
const BASELINE = Number(values['baseline-seconds']);
const COPIES = Number(values.copies);

function attackFiles(kind: string): { name: string; template: Uint8Array; data: string }[] {
  const paragraphs = { name: '260,000-paragraph docx', template: makeDocx(para('{name}') + numberedParagraphs(260_000)), data: '{"name":"B"}' };
  if (kind === 'hostile') return [paragraphs];
  if (kind === 'long') return [{ name: '~900-page docx within every limit', template: longDocx(24_000), data: '{}' }];
  if (kind !== 'all') throw new Error(`--attack must be hostile, all or long, got ${kind}`);
  return [
    paragraphs,
    { name: 'docx with a 60 MB run', template: longRunDocx(60_000_000, para('{name}')), data: '{"name":"B"}' },
    { name: '900-megapixel PNG (0.1 MB)', template: tagDocx('{%img}'), data: JSON.stringify({ img: `data:image/png;base64,${Buffer.from(hugePng(30_000, 30_000)).toString('base64')}` }) },
    { name: '7.3 MB HTML table', template: tagDocx('{~~html}'), data: JSON.stringify({ html: htmlTable(40_000, 10) }) },
  ];
}

const receiver = await startReceiver('127.0.0.1');
try {
  for (const pool of values.pools.split(',')) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-saturation-'));
    const env = await docgenStartEnv(dataDir, { OUTBOUND_ALLOW: '127.0.0.1', ...(pool === 'default' ? {} : { CONVERTER_POOL_SIZE: pool }) });
    const svc = await spawnDocgenStart(env, { timeoutMs: 300_000 });
    const rss = rssPeaks(svc.child.pid!);
    try {
      const a = client(await docgenCredentials(svc.env, 'tenant-a'));
      const b = client(await docgenCredentials(svc.env, 'tenant-b'));
      const dest = `/sat-${pool}`;
      const made = await b.call('POST', '/common/client/token', { json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest, client_id: 'bench' } });
      if (made.status !== 200) throw new Error(`client token: ${JSON.stringify(made.body)}`);
      await pdfTraffic(a, { everyMs: 0, min: 3, until: () => true }); // warm-up
      let end = Date.now() + BASELINE * 1000;
      rss.reset();
      const baseline = summary(await pdfTraffic(a, { everyMs: EVERY, min: 3, until: () => Date.now() > end }));
      const baselineRss = rss.peak();
      rss.reset();
      const t0 = Date.now();
      end = t0 + SECONDS * 1000;
      const attack = (async () => {
        const sent: string[] = [];
        for (const f of attackFiles(values.attack)) {
          for (let i = 0; i < COPIES; i++) {
            const t = await b.upload('template', [{ name: 'b.docx', bytes: f.template }]);
            const d = await b.upload('data', [{ name: 'b.json', bytes: f.data }]);
            const res = await b.call('POST', '/documents/document/generate/async', {
              json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: 'pdf' } }),
              headers: { 'x-client-authorization': made.body.result.data.token },
            });
            sent.push(`${f.name}: ${res.status}`);
          }
        }
        return sent;
      })();
      const during = summary(await pdfTraffic(a, { everyMs: EVERY, min: 3, until: () => Date.now() > end }));
      const sent = await attack;
      const callbacks = receiver.at(`/hooks${dest}`).map((d) => {
        const body = JSON.parse(d.body) as { result?: { statusCode: number }; error?: { statusCode: number; innerErrors: { code: string; message: string }[] } };
        return `${Math.round((d.at - t0) / 1000)} s: ${body.result?.statusCode ?? `${body.error?.statusCode} ${body.error?.innerErrors[0]?.code} ${body.error?.innerErrors[0]?.message.replace(/.*\(([A-Z_]+)\).*/, '$1')}`}`;
      });
      console.log(
        JSON.stringify({
          pool: pool === 'default' ? `default (${os.availableParallelism()} CPUs)` : Number(pool),
          attack: `${values.attack}, ${COPIES} cop${COPIES === 1 ? 'y' : 'ies'} each`,
          tenantA: { everyMs: EVERY, baseline, during, p95VsBaseline: Number((during.p95 / Math.max(1, baseline.p95)).toFixed(2)) },
          tenantB: { sent: sent.length, answered: sent.filter((s) => s.endsWith(': 201')).length, callbacks },
          peakRssMb: { baseline: baselineRss, during: rss.peak() },
        }),
      );
    } finally {
      rss.stop();
      await svc.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
} finally {
  await receiver.close();
}
