// Benchmark (not a test): the saturation cases of issues 25 and 36 against the real `docgen start`. Tenant A
// sends one small sync pdf generate every `--every` ms; attackers (tenants B, C) send documents that would
// hold LibreOffice. Printed per pool size and case: A's answers, p50/p95 and failures, first alone (the
// baseline), then during the attack, in the same run; the attackers' answers; the peak RSS of the
// service's processes (service = all of them together).
//   npm run bench:saturation [-- --pools 1,default --every 3000 --seconds 120 --baseline-seconds 45 --attack layout --cases alone,pair,continuous]
// --attack layout (default): issue 36's hostile layout (1-inch pages, 72 pt type, 22-inch line spacing,
// 100 paragraphs: ~2 400 pages in LibreOffice); hostile: the 260 000-paragraph docx of issue 25; all:
// each of issue 25's four files; long: a ~900-page docx within every limit.
// --cases: alone = B sends one async generate per --interval ms (30 s); pair = B and C do, each; continuous
// = B sends sync generates back to back (the next as soon as the last is answered). `burst` is issue 25's
// case: --copies async generates of each file at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startReceiver } from '../test/integration/async/receiver.ts';
import { hostileLayoutDocx, longDocx, makeDocx, para } from '../test/integration/convert/fixtures.ts';
import { hugePng, htmlTable, longRunDocx, numberedParagraphs, tagDocx } from '../test/support/costly-office.ts';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { client, generateBody } from '../test/support/http.ts';
import { pdfTraffic, summary } from '../test/support/saturation.ts';
import { rssPeaks } from './processes.ts';

const { values } = parseArgs({
  options: {
    pools: { type: 'string', default: '1,default' },
    every: { type: 'string', default: '3000' },
    seconds: { type: 'string', default: '120' },
    'baseline-seconds': { type: 'string', default: '45' },
    attack: { type: 'string', default: 'layout' },
    cases: { type: 'string', default: 'alone,pair,continuous' },
    interval: { type: 'string', default: '30000' },
    copies: { type: 'string', default: '4' },
  },
});
const EVERY = Number(values.every);
const SECONDS = Number(values.seconds);
const BASELINE = Number(values['baseline-seconds']);
const COPIES = Number(values.copies);
const INTERVAL = Number(values.interval);

function attackFiles(kind: string): { name: string; template: Uint8Array; data: string }[] {
  const paragraphs = {
    name: '260,000-paragraph docx',
    template: makeDocx(para('{name}') + numberedParagraphs(260_000)),
    data: '{"name":"B"}',
  };
  if (kind === 'layout')
    return [{ name: '1-inch pages, 72 pt, 22-inch lines, 100 paragraphs', template: hostileLayoutDocx(100), data: '{}' }];
  if (kind === 'hostile') return [paragraphs];
  if (kind === 'long') return [{ name: '~900-page docx within every limit', template: longDocx(24_000), data: '{}' }];
  if (kind !== 'all') throw new Error(`--attack must be layout, hostile, all or long, got ${kind}`);
  return [
    paragraphs,
    { name: 'docx with a 60 MB run', template: longRunDocx(60_000_000, para('{name}')), data: '{"name":"B"}' },
    {
      name: '900-megapixel PNG (0.1 MB)',
      template: tagDocx('{%img}'),
      data: JSON.stringify({ img: `data:image/png;base64,${Buffer.from(hugePng(30_000, 30_000)).toString('base64')}` }),
    },
    { name: '7.3 MB HTML table', template: tagDocx('{~~html}'), data: JSON.stringify({ html: htmlTable(40_000, 10) }) },
  ];
}

type Api = ReturnType<typeof client>;

/** One generate of `f` by an attacker: async with its callback token, or sync; the answer's status and code. */
async function send(api: Api, f: { template: Uint8Array; data: string }, token: string | undefined): Promise<string> {
  const t = await api.upload('template', [{ name: 'b.docx', bytes: f.template }]);
  const d = await api.upload('data', [{ name: 'b.json', bytes: f.data }]);
  const res = await api.call('POST', `/documents/document/generate${token ? '/async' : ''}`, {
    json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: 'pdf' } }),
    ...(token ? { headers: { 'x-client-authorization': token } } : {}),
  });
  const code = res.body?.error?.innerErrors?.[0]?.code as string | undefined;
  return `${res.status}${code ? ` ${code}` : ''}`;
}

const count = (xs: string[]) => xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {});
const receiver = await startReceiver('127.0.0.1');
try {
  for (const pool of values.pools.split(',')) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-saturation-'));
    const env = await docgenStartEnv(dataDir, {
      OUTBOUND_ALLOW: '127.0.0.1',
      ...(pool === 'default' ? {} : { CONVERTER_POOL_SIZE: pool }),
    });
    const svc = await spawnDocgenStart(env, { timeoutMs: 300_000 });
    const rss = rssPeaks(svc.child.pid!);
    try {
      const a = client(await docgenCredentials(svc.env, 'tenant-a'));
      const attackers: { api: Api; token: string; dest: string }[] = [];
      for (const name of ['b', 'c']) {
        const api = client(await docgenCredentials(svc.env, `tenant-${name}`));
        const dest = `/sat-${pool}-${name}`;
        const made = await api.call('POST', '/common/client/token', {
          json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest, client_id: 'bench' },
        });
        if (made.status !== 200) throw new Error(`client token: ${JSON.stringify(made.body)}`);
        attackers.push({ api, token: made.body.result.data.token, dest });
      }
      await pdfTraffic(a, { everyMs: 0, min: 3, until: () => true }); // warm-up
      let end = Date.now() + BASELINE * 1000;
      rss.reset();
      const baseline = summary(await pdfTraffic(a, { everyMs: EVERY, min: 3, until: () => Date.now() > end }));
      const baselineRss = rss.peak();
      console.log(
        JSON.stringify({
          pool: pool === 'default' ? `default (${os.availableParallelism()} CPUs)` : Number(pool),
          baseline,
          peakRssMb: baselineRss,
        }),
      );
      const files = attackFiles(values.attack);
      for (const kind of values.cases.split(',')) {
        rss.reset();
        const t0 = Date.now();
        end = t0 + SECONDS * 1000;
        const before = attackers.map((x) => receiver.at(`/hooks${x.dest}`).length);
        const answers: string[] = [];
        const accepted = attackers.map(() => 0);
        const asyncSend = async (i: number, f: (typeof files)[number]) => {
          const answer = await send(attackers[i]!.api, f, attackers[i]!.token);
          if (answer === '201') accepted[i]!++;
          answers.push(`async ${answer}`);
        };
        const periodic = async (i: number) => {
          while (Date.now() < end) {
            for (const f of files) await asyncSend(i, f);
            await new Promise((r) => setTimeout(r, Math.max(0, Math.min(INTERVAL, end - Date.now()))));
          }
        };
        const attack =
          kind === 'alone'
            ? periodic(0)
            : kind === 'pair'
              ? Promise.all([periodic(0), periodic(1)])
              : kind === 'continuous'
                ? (async () => {
                    while (Date.now() < end) for (const f of files) answers.push(`sync ${await send(attackers[0]!.api, f, undefined)}`);
                  })()
                : kind === 'burst'
                  ? (async () => {
                      for (const f of files) for (let i = 0; i < COPIES; i++) await asyncSend(0, f);
                    })()
                  : Promise.reject(new Error(`--cases: alone, pair, continuous or burst, got ${kind}`));
        const during = summary(await pdfTraffic(a, { everyMs: EVERY, min: 3, until: () => Date.now() > end }));
        await attack;
        // The attackers' async work ends before the next case (an idle converter) and is reported.
        const waitUntil = Date.now() + 180_000;
        while (Date.now() < waitUntil && attackers.some((x, i) => receiver.at(`/hooks${x.dest}`).length - before[i]! < accepted[i]!)) {
          await new Promise((r) => setTimeout(r, 500));
        }
        const callbacks = attackers.flatMap((x, i) =>
          receiver
            .at(`/hooks${x.dest}`)
            .slice(before[i])
            .map((d) => {
              const body = JSON.parse(d.body) as {
                result?: { statusCode: number };
                error?: { statusCode: number; innerErrors: { code: string; message: string }[] };
              };
              return String(
                body.result?.statusCode ??
                  `${body.error?.statusCode} ${body.error?.innerErrors[0]?.code} ${body.error?.innerErrors[0]?.message.replace(/.*\(([A-Z_]+)\)[^(]*$/, '$1')}`,
              );
            }),
        );
        console.log(
          JSON.stringify({
            pool: pool === 'default' ? `default (${os.availableParallelism()} CPUs)` : Number(pool),
            case: kind,
            attack: values.attack,
            tenantA: {
              everyMs: EVERY,
              baselineP95: baseline.p95,
              during,
              p95VsBaseline: Number((during.p95 / Math.max(1, baseline.p95)).toFixed(2)),
              failures: during.n - during.ok,
            },
            attackers: { answers: count(answers), callbacks: count(callbacks) },
            peakRssMb: rss.peak(),
          }),
        );
      }
    } finally {
      rss.stop();
      await svc.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
} finally {
  await receiver.close();
}
