// Native image merge on the directory store, which has no presigned URLs: image bytes in the data cannot
// reach Google, so they are refused (400, naming the option and what to configure) before the template is
// copied; an http(s) image URL in the data is handed to Google as is (the fake fetches it, as Google would).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slidesText } from '../../fakes/google/office-model.ts';
import { type GoogleFake, MIME } from '../../fakes/google/server.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { makePptx, png } from '../convert/fixtures.ts';
import { ADA, type Api, apiOf, connect, driveBBody, expectOnlyConfiguredHost, startFakeGoogle } from './setup.ts';

describe('DriveB native image merge without object storage', () => {
  let fake: GoogleFake;
  let restoreEnv: () => void;
  let stack: Stack;
  let api: Api;
  let images: http.Server;
  let imageUrl: string;
  const logo = png([200, 30, 30]);

  beforeAll(async () => {
    const g = await startFakeGoogle();
    fake = g.fake;
    restoreEnv = g.restoreEnv;
    stack = await startStack(g.settings, { storage: 'directory' });
    api = apiOf(await stack.credentials());
    await connect(api, ADA);
    images = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(logo);
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}/logo.png`;
  });
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
    images?.close();
    restoreEnv?.();
  });

  const deck = () =>
    fake.put({
      name: 'Deck',
      mimeType: MIME.presentation,
      parent: fake.rootOf('ada@example.com'),
      owner: 'ada@example.com',
      content: makePptx(['Hi {name}', '{%logo}']),
    });
  async function run(logoValue: string) {
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'Ada', logo: logoValue }) }]);
    const template = deck();
    const before = fake.requests.length;
    const res = await api.call('POST', '/documents/document/generate', {
      json: driveBBody(
        { urn: template.id, fileFormat: 'gslide' },
        { urn: d.body.result.data.files[0].id },
        {
          name: 'deck',
          path: 'Decks',
          options: { driveBGenerate: { nativeMergeEnabled: true, nativeImageMergeEnabled: true } },
        },
      ),
    });
    return { res, template, calls: fake.requests.slice(before).map((r) => `${r.method} ${r.path}`) };
  }

  it('image bytes: 400 NOT_SUPPORTED before anything is copied', async () => {
    const { res, template, calls } = await run(`data:image/png;base64,${Buffer.from(logo).toString('base64')}`);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('NOT_SUPPORTED');
    expect(res.body.error.innerErrors[0].message).toMatch(/nativeImageMergeEnabled: \{%logo\} holds image bytes.*STORAGE_URL/);
    expect(calls).not.toContain(`POST /drive/v3/files/${template.id}/copy`);
    expect(await stack.blobs.list('scratch/driveB-images-')).toEqual([]);
  });

  it('an image URL goes to Google as is', async () => {
    const { res } = await run(imageUrl);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const file = fake.files.get(res.body.result.data.document.urn)!;
    expect(slidesText(file.content)).toEqual(['Hi Ada']);
    expect(file.images.map((i) => i.sourceUrl)).toEqual([imageUrl]);
    expectOnlyConfiguredHost(fake);
  });
});
