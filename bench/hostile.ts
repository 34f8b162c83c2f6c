// Benchmark (not a test): the hostile cases of issues 11 and 25 against the real `docgen start` on default
// settings. For each case: what the service answers and how long it takes, the peak RSS of the service's
// processes (docgen + LibreOffice; the Temporal dev server apart) and the p50/p95 latency of another
// tenant's sync generates (pdf by default) while the attack runs; first the same traffic without attack.
//   npm run bench:hostile [-- --format pdf|docx --quiet-seconds 20 --only 25]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { makeDocx, para } from '../test/integration/convert/fixtures.ts';
import { hugePng, htmlTable, longRunDocx, numberedParagraphs, tagDocx } from '../test/support/costly-office.ts';
import { quantile } from '../test/support/saturation.ts';
import { rssPeaks } from './processes.ts';

const { values } = parseArgs({
  options: { format: { type: 'string', default: 'pdf' }, 'quiet-seconds': { type: 'string', default: '20' }, only: { type: 'string' } },
});
const FORMAT = values.format;
/** `--only 25`: the cases of issue 25 alone (with the no-attack phase). */
const ONLY = values.only;

const numbered = numberedParagraphs;
/** Ends the run early (--only). */
class Done extends Error {}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-hostile-'));
const svc = await spawnDocgenStart(await docgenStartEnv(dataDir), { timeoutMs: 300_000 });
const pid = svc.child.pid!;
const rss = rssPeaks(pid);

try {
  const a = client(await docgenCredentials(svc.env, 'tenant-a'));
  const b = client(await docgenCredentials(svc.env, 'tenant-b'));
  const small = makeDocx(para('Hello {name}'));

  async function otherTenant(until: () => boolean) {
    const ms: number[] = [];
    const statuses = new Map<number, number>();
    while (!until() || ms.length < 3) {
      const t = await a.upload('template', [{ name: 'a.docx', bytes: small }]);
      const d = await a.upload('data', [{ name: 'a.json', bytes: '{"name":"A"}' }]);
      const t0 = performance.now();
      const g = await a.call('POST', '/documents/document/generate', {
        json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: FORMAT } }),
      });
      ms.push(performance.now() - t0);
      statuses.set(g.status, (statuses.get(g.status) ?? 0) + 1);
    }
    return { n: ms.length, p50: quantile(ms, 0.5), p95: quantile(ms, 0.95), statuses: Object.fromEntries(statuses) };
  }

  async function phase(name: string, attack: () => Promise<string>) {
    rss.reset();
    let done = false;
    const traffic = otherTenant(() => done);
    const t0 = performance.now();
    let answer: string;
    try {
      answer = await attack();
    } finally {
      done = true;
    }
    const ms = Math.round(performance.now() - t0);
    const other = await traffic;
    console.log(JSON.stringify({ case: name, answer, ms, peakRssMb: rss.peak(), rssMbAfter: rss.now(), otherTenant: other }));
  }

  const describe = (r: { status: number; body: any }) =>
    `${r.status} ${r.body?.error?.innerErrors?.[0]?.code ?? r.body?.result?.message ?? ''} ${String(r.body?.error?.message ?? '').slice(0, 160)}`.trim();

  async function generate(template: Uint8Array, data: string, format = FORMAT) {
    const t = await b.upload('template', [{ name: 'b.docx', bytes: template }]);
    if (t.status !== 201) return `upload: ${describe(t)}`;
    const d = await b.upload('data', [{ name: 'b.json', bytes: data }]);
    if (d.status !== 201) return `data upload: ${describe(d)}`;
    const g = await b.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: format } }),
    });
    return describe(g);
  }

  const quiet = Number(values['quiet-seconds']) * 1000;
  await phase(`no attack (${quiet / 1000} s of tenant A's ${FORMAT} generates)`, async () => {
    await new Promise((r) => setTimeout(r, quiet));
    return '-';
  });

  // Issue 25: files under every size limit that held LibreOffice for 120 s; refused by their estimated cost.
  await phase(`generate ${FORMAT} (issue 25): 0.7 MB docx, 260,000 paragraphs`, () =>
    generate(makeDocx(para('{name}') + numbered(260_000)), '{"name":"B"}'),
  );
  await phase(`generate ${FORMAT} (issue 25): docx with one run of 60,000,000 characters`, () =>
    generate(longRunDocx(60_000_000, para('{name}')), '{"name":"B"}'),
  );
  await phase(`generate ${FORMAT} (issue 25): 0.1 MB PNG of 30,000 x 30,000 pixels as data`, () =>
    generate(
      tagDocx('{%img}'),
      JSON.stringify({ img: `data:image/png;base64,${Buffer.from(hugePng(30_000, 30_000)).toString('base64')}` }),
    ),
  );
  await phase(`generate ${FORMAT} (issue 25): 7.3 MB HTML table (40,000 rows) with {~~html}`, () =>
    generate(tagDocx('{~~html}'), JSON.stringify({ html: htmlTable(40_000, 10) })),
  );
  if (ONLY === '25') throw new Done();

  const flood = makeDocx(numbered(4_000_000) + para('{name}'));
  await phase(`upload: ${(flood.length / 1e6).toFixed(1)} MB docx, 4,000,000 paragraphs`, async () =>
    describe(await b.upload('template', [{ name: 'flood.docx', bytes: flood }])),
  );

  const spaces = ' '.repeat(25_000);
  const ws = makeDocx(
    `<w:p><w:r><w:t xml:space="preserve">${Array.from({ length: 10_000 }, (_, i) => `${spaces}${i}`).join('')}</w:t></w:r></w:p>`,
  );
  await phase(`upload: ${(ws.length / 1e6).toFixed(2)} MB docx inflating to 250 MB of whitespace`, async () =>
    describe(await b.upload('template', [{ name: 'ws.docx', bytes: ws }])),
  );

  const million = makeDocx(para('{name}') + '<w:p><w:r><w:t>x</w:t></w:r></w:p>'.repeat(1_000_000));
  await phase(`generate ${FORMAT}: ${(million.length / 1e6).toFixed(1)} MB docx, 1,000,000 paragraphs`, () =>
    generate(million, '{"name":"B"}'),
  );

  const loopJson = JSON.stringify({ items: Array.from({ length: 1_000_000 }, (_, i) => ({ n: i })) });
  await phase(`generate ${FORMAT}: ${(loopJson.length / 1e6).toFixed(1)} MB JSON, 1,000,000 loop items`, () =>
    generate(makeDocx(para('{#items}') + para('item {n}') + para('{/items}')), loopJson),
  );

  await phase(`two concurrent generates ${FORMAT} of the 1,000,000-paragraph docx`, async () =>
    (await Promise.all([generate(million, '{"name":"B"}'), generate(million, '{"name":"B"}')])).join(' | '),
  );

  // Idle RSS after 300 uploads (each used to start a sleeping retention workflow that stayed in the worker's
  // workflow cache; now one sweeper serves them all).
  await new Promise((r) => setTimeout(r, 5_000));
  const before = rss.now().service!;
  for (let i = 0; i < 300; i++) await a.upload('data', [{ name: 'x.json', bytes: '{}' }]);
  await new Promise((r) => setTimeout(r, 5_000));
  console.log(JSON.stringify({ idleRssMbBefore300Uploads: before, idleRssMbAfter300Uploads: rss.now() }));
  // Merge threads end after 30 s idle.
  await new Promise((r) => setTimeout(r, 35_000));
  console.log(JSON.stringify({ idleRssMb35sLater: rss.now() }));
} catch (e) {
  if (!(e instanceof Done)) throw e;
} finally {
  rss.stop();
  await svc.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
