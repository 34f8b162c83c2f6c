// Concurrent deliveries into one DriveB folder, through the HTTP API, made to collide on purpose: the local
// Google server holds its answers until every delivery has asked (fake.barrier), so the outcome does not
// depend on timing. Drive allows any number of files and folders of one name; docgen must create a new
// folder once and give each file its own name however many deliveries race for them.
//   - N generates into a new folder RaceB/2026, all named `same`, on PostgreSQL with two services (API and
//     worker each, one database, one task queue) as two hosts would run them: one RaceB, one 2026, N files
//     `same`, `same (1)`, ...; before, N RaceB folders each with its own 2026 and its own `same`.
//   - the same name from three generates into an existing folder, on PGlite (one process): `same`,
//     `same (1)`, `same (2)`; before, three files named `same`.
// Each case prints its figures (folders, files, names).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase, type Stack, startStack } from '../../support/stack.ts';
import type { FakeFile, GoogleFake, LoggedRequest } from '../../fakes/google/server.ts';
import { MIME } from '../../fakes/google/server.ts';
import { docParagraphs } from '../../fakes/google/office-model.ts';
import { makeDocx, para } from '../convert/fixtures.ts';
import { ADA, type Api, apiOf, connect, driveBBody, startFakeGoogle } from './setup.ts';

const ADA_USER = 'ada@example.com';

describe('DriveB: concurrent deliveries into one folder', () => {
  let fake: GoogleFake;
  let restoreEnv: () => void;
  const stacks: Stack[] = [];

  beforeAll(async () => {
    const g = await startFakeGoogle();
    fake = g.fake;
    restoreEnv = g.restoreEnv;
  });
  afterAll(async () => {
    for (const s of stacks) await s.stop();
    await fake?.close();
    restoreEnv?.();
  });

  const folders = (name: string) => [...fake.files.values()].filter((f) => f.name === name && f.mimeType === MIME.folder && !f.trashed);
  const lookupOfFolder = (name: string) => (r: LoggedRequest) =>
    r.method === 'GET' &&
    r.path === '/drive/v3/files' &&
    (r.query.q ?? '').startsWith(`name = '${name}'`) &&
    (r.query.q ?? '').includes(MIME.folder);
  const uploads = (r: LoggedRequest) => r.method === 'POST' && r.path === '/upload/drive/v3/files';

  async function race(apis: Api[], n: number, template: FakeFile, path: string): Promise<{ status: number; body: any }[]> {
    const datas = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const d = await apis[i % apis.length]!.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ n: i }) }]);
        expect(d.status, JSON.stringify(d.body)).toBe(201);
        return d.body.result.data.files[0].id as string;
      }),
    );
    return Promise.all(
      datas.map((urn, i) =>
        apis[i % apis.length]!.call('POST', '/documents/document/generate', {
          json: driveBBody({ urn: template.id, fileFormat: 'gdoc' }, { urn }, { name: 'same', path }),
        }),
      ),
    );
  }

  it('N generates into a new folder, two services on PostgreSQL: one folder each level, N distinct names', async () => {
    const databaseUrl = await createPgDatabase();
    const shared = {
      driveBApiUrl: `${fake.url}/`,
      driveBTokenUrl: `${fake.url}/token`,
      databaseUrl,
      taskQueue: `race-${Date.now()}`,
      converterMode: 'none' as const,
    };
    const first = await startStack(shared, { database: 'postgres' });
    stacks.push(first);
    const second = await startStack(shared, { database: 'postgres' });
    stacks.push(second);
    // One database: the same subscription and credentials on both APIs, one connection.
    const creds = await first.credentials('race');
    const apis = [apiOf(creds), apiOf({ ...creds, baseUrl: `${second.service.baseUrl}/v1` })];
    await connect(apis[0]!, ADA);
    const template = fake.put({
      name: 'Race template',
      mimeType: MIME.document,
      parent: fake.rootOf(ADA_USER),
      owner: ADA_USER,
      content: makeDocx(para('Number {n}')),
    });

    const N = 4;
    // Every delivery looks RaceB up before any is answered: all of them find it missing.
    const met = fake.barrier(N, lookupOfFolder('RaceB'));
    const results = await race(apis, N, template, 'RaceB/2026');
    await met.arrived;
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);

    const raceB = folders('RaceB');
    const y2026 = folders('2026');
    const files = y2026.flatMap((f) => fake.childrenOf(f.id));
    const names = files.map((f) => f.name).sort();
    console.log(
      `figures, ${N} concurrent generates into the new folder RaceB/2026 (2 services, PostgreSQL): RaceB folders ${raceB.length}, RaceB/2026 folders ${y2026.length}, files ${files.length}, names ${JSON.stringify(names)}`,
    );
    expect(raceB).toHaveLength(1);
    expect(y2026).toHaveLength(1);
    expect(y2026[0]!.parents).toEqual([raceB[0]!.id]);
    expect(names).toEqual(['same', 'same (1)', 'same (2)', 'same (3)']);
    // Each answer names its own file, whose content is its own generate's.
    const byUrn = new Map(files.map((f) => [f.id, f]));
    const numbers = results.map((r) => docParagraphs(byUrn.get(r.body.result.data.document.urn)!.content)[0]).sort();
    expect(numbers).toEqual(['Number 0', 'Number 1', 'Number 2', 'Number 3']);
    expect(new Set(results.map((r) => r.body.result.data.document.name))).toEqual(new Set(names));
    // No temporary name is left.
    expect(files.filter((f) => f.name.startsWith('.docgen-'))).toEqual([]);
  });

  it('the same name from three generates at once, one process on PGlite: same, same (1), same (2)', async () => {
    const stack = await startStack(
      { driveBApiUrl: `${fake.url}/`, driveBTokenUrl: `${fake.url}/token`, converterMode: 'none' },
      { database: 'pglite' },
    );
    stacks.push(stack);
    const api = apiOf(await stack.credentials('same-name'));
    await connect(api, ADA);
    const folder = fake.folder('Same', fake.rootOf(ADA_USER), ADA_USER);
    const template = fake.put({
      name: 'Same template',
      mimeType: MIME.document,
      parent: fake.rootOf(ADA_USER),
      owner: ADA_USER,
      content: makeDocx(para('Number {n}')),
    });

    // Every upload is held until all three have been sent: each delivery has looked at the folder by then.
    const met = fake.barrier(3, uploads);
    const results = await race([api], 3, template, 'Same');
    await met.arrived;
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBe(201);
    const names = fake
      .childrenOf(folder.id)
      .map((f) => f.name)
      .sort();
    console.log(
      `figures, 3 concurrent generates named "same" into one folder (1 service, PGlite): files ${names.length}, names ${JSON.stringify(names)}`,
    );
    expect(names).toEqual(['same', 'same (1)', 'same (2)']);
    expect(folders('Same')).toHaveLength(1);
  });
});
