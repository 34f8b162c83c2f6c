// A paused Temporal server (issue 28 §1): synchronous generates and manage moves are sent to a running
// `docgen start` while its Temporal dev server is stopped (SIGSTOP) for longer than the caller's deadline,
// then continued (SIGCONT). Every request carries an Idempotency-Key (or none, `keyless`: then its
// operationId is the key a 504 names); an answer that is not final is retried with its key until it is.
// What the callers were told is then compared with what happened: documents recorded, files written,
// metering, move sources removed. No vitest imports: the freeze benchmark uses it too.
import fs from 'node:fs';
import path from 'node:path';
import type { Credentials } from '../../api/auth/credentials.ts';
import { client, generateBody, type Reply } from './http.ts';
import { makeDocx } from './office.ts';

export interface FreezePlan {
  generates: number;
  /** Of the generates, how many are sent without an Idempotency-Key. */
  keyless?: number;
  moves: number;
  /** Requests are sent evenly over this window, which starts `freezeAfterMs` before the pause. */
  sendOverMs: number;
  freezeAfterMs: number;
  freezeMs: number;
  /** How many times an answer that is not final (5xx, socket error) is retried with its key. */
  retries?: number;
}

export interface Answers {
  /** The first answer's status (0 = no answer: a socket error), counted. */
  first: Record<string, number>;
  /** First answers 504 that say nothing was delivered. */
  saidNothingDelivered: number;
  /** After retries with the key: the final status, counted. */
  final: Record<string, number>;
}

export interface FreezeOutcome {
  generate: Answers;
  move: Answers;
  /** Document records of the generates / moves, as the service lists them. */
  generatedRecords: number;
  movedRecords: number;
  /** Files under the subscription's documents/ in the data directory (the directory store). */
  documentFiles: number;
  metered: { documentsGenerated: number; documentsManaged: number };
  /** Move sources that no longer resolve. */
  sourcesGone: number;
  /** Files left under scratch/ (intermediate files of runs). */
  scratchLeft: number;
}

const count = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

/** Runs the plan; `pause(true|false)` stops or continues the Temporal server. */
export async function freezeScenario(
  creds: Credentials,
  dataDir: string,
  plan: FreezePlan,
  pause: (stopped: boolean) => void,
): Promise<FreezeOutcome> {
  const api = client(creds);
  const tag = `f${Date.now().toString(36)}`;
  // Everything a request needs exists before the pause: its own template and data (a generate consumes
  // them), and each move's source document.
  const pairs = [];
  for (let i = 0; i < plan.generates; i++) pairs.push(await api.uploadPair(makeDocx(['Dear {name}']), { name: `n${i}` }));
  const sources: string[] = [];
  for (let i = 0; i < plan.moves; i++) {
    const p = await api.uploadPair(makeDocx(['Source {name}']), { name: `s${i}` });
    const r = await api.call('POST', '/documents/document/generate', {
      json: generateBody(p.templateUrn, p.dataUrn, { document: { name: `${tag}-src-${i}` } }),
    });
    if (r.status !== 201) throw new Error(`source ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    sources.push(r.body.result.data.document.urn as string);
  }
  const before = await meteredTotals(api);

  type Job = { kind: 'generate' | 'move'; route: string; body: unknown; key?: string };
  const generates: Job[] = pairs.map((p, i) => ({
    kind: 'generate' as const,
    route: '/documents/document/generate',
    body: generateBody(p.templateUrn, p.dataUrn, { document: { name: `${tag}-gen-${i}` } }),
    ...(i < (plan.keyless ?? 0) ? {} : { key: `${tag}-gen-${i}` }),
  }));
  const moves: Job[] = sources.map((urn, i) => ({
    kind: 'move' as const,
    route: '/documents/document/manage',
    body: {
      sourceDocument: { urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'delete' },
      targetDocument: { name: `${tag}-moved-${i}`, fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root/moved' },
    },
    key: `${tag}-move-${i}`,
  }));
  // Interleaved, so that both kinds are in flight when the server stops.
  const jobs: Job[] = [];
  for (let i = 0; i < Math.max(generates.length, moves.length); i++)
    jobs.push(...[generates[i], moves[i]].filter((j): j is Job => j !== undefined));

  const answers = {
    generate: { first: {}, saidNothingDelivered: 0, final: {} } as Answers,
    move: { first: {}, saidNothingDelivered: 0, final: {} } as Answers,
  };
  const send = async (job: Job, key?: string): Promise<Reply | undefined> => {
    try {
      return await api.call('POST', job.route, { json: job.body, headers: key ? { 'idempotency-key': key } : {} });
    } catch {
      return undefined; // the connection failed: no answer
    }
  };
  const run = async (job: Job, delayMs: number) => {
    await new Promise((r) => setTimeout(r, delayMs));
    const tally = answers[job.kind];
    let res = await send(job, job.key);
    count(tally.first, String(res?.status ?? 0));
    if (res?.status === 504 && /nothing was delivered/i.test(JSON.stringify(res.body))) tally.saidNothingDelivered++;
    // The key a retry sends: the request's own, or the operationId its 504 named.
    const key = job.key ?? (res?.body?.operationId as string | undefined);
    for (let i = 0; i < (plan.retries ?? 20) && (!res || res.status >= 500) && key; i++) {
      await new Promise((r) => setTimeout(r, 500));
      res = await send(job, key);
    }
    count(tally.final, String(res?.status ?? 0));
  };

  const step = plan.sendOverMs / Math.max(1, jobs.length);
  const all = Promise.all(jobs.map((job, i) => run(job, i * step)));
  await new Promise((r) => setTimeout(r, plan.freezeAfterMs));
  pause(true);
  try {
    await new Promise((r) => setTimeout(r, plan.freezeMs));
  } finally {
    pause(false);
  }
  await all;

  const after = await meteredTotals(api);
  const records = async (prefix: string) => {
    const filter = [{ key: 'Title', column: 'Title', type: 'string', condition: 'CONTAINS', value: prefix }];
    const r = await api.call('GET', `/documents/document/list?top=1&filter=${encodeURIComponent(JSON.stringify(filter))}`);
    return Number(r.body?.result?.data?.rowCount ?? NaN);
  };
  const files = (dir: string) =>
    fs.existsSync(dir)
      ? (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile() && !f.endsWith('.tmp'))
          .length
      : 0;
  let sourcesGone = 0;
  for (const urn of sources) if ((await api.download(urn)).status === 404) sourcesGone++;
  return {
    ...answers,
    generatedRecords: await records(`${tag}-gen-`),
    movedRecords: await records(`${tag}-moved-`),
    // A Storage move removes its source softly: the source's bytes stay, and are not counted.
    documentFiles: files(path.join(dataDir, 'storage', 'subscriptions', creds.subscriptionId, 'documents')) - sources.length,
    metered: { documentsGenerated: after.generated - before.generated, documentsManaged: after.managed - before.managed },
    sourcesGone,
    scratchLeft: files(path.join(dataDir, 'storage', 'scratch')),
  };
}

async function meteredTotals(api: ReturnType<typeof client>): Promise<{ generated: number; managed: number }> {
  const r = await api.call('GET', '/common/summary?type=self-service');
  const dims = (r.body?.result?.data?.dimensions ?? []) as { name: string; monthly: { used: number } }[];
  const used = (name: string) => dims.find((d) => d.name === name)?.monthly.used ?? 0;
  return { generated: used('documents-generated'), managed: used('documents-managed') };
}
