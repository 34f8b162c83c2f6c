// Long throttling by DriveA (issue 39, finding 1): SharePoint answers 429 with a Retry-After of tens of
// seconds, then minutes, for every call. Through the HTTP API, the real worker and Temporal, against the
// fake Microsoft Graph throttling for a time window (every API call in it answers 429 with the seconds
// still to go as Retry-After): an async run waits the window out heartbeating and delivers, having sent
// nothing inside the window but its first request; a synchronous call whose deadline is sooner answers 429
// TOO_MANY_REQUESTS with Retry-After at once; an async run whose wait would pass DRIVE_THROTTLE_MAX_WAIT_MS
// calls back 429 TOO_MANY_REQUESTS, never 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';
import { connect, DRIVE_A } from './support.ts';

/** Longer than a transfer's heartbeat timeout (20 s): the wait must heartbeat, or the step would be
 *  retried inside the window. */
const WINDOW_S = 25;
/** DRIVE_THROTTLE_MAX_WAIT_MS of the stack: the window above fits, a 60 s one does not. */
const MAX_WAIT_MS = 40_000;

describe('DriveA throttling for longer than one wait', () => {
  let fake: GraphFake;
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    receiver = await startReceiver();
    stack = await startStack({
      driveAGraphUrl: fake.graphUrl,
      driveALoginUrl: fake.loginUrl,
      driveThrottleMaxWaitMs: MAX_WAIT_MS,
      generateTimeoutMs: 10_000,
      outboundAllow: ['127.0.0.1'],
    });
    creds = await stack.credentials();
    api = client(creds);
    await connect(api, fake);
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
    await fake?.close();
  });

  async function body(name: string) {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'Ada' });
    return generateBody(templateUrn, dataUrn, { document: { deliveryMethod: 'DriveA', path: 'Throttled', name } });
  }
  async function postAsync(name: string, dest: string) {
    const t = await api.call('POST', '/common/client/token', {
      json: { sub: `cb-${dest}`, iss: `${receiver.url}/hooks`, dest, client_id: 'tests' },
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    const res = await api.call('POST', '/documents/document/generate/async', {
      json: await body(name),
      headers: { 'x-client-authorization': t.body.result.data.token },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const afterWindow = (until: number) =>
    fake.log.filter((e) => e.path.startsWith('/v1.0/') && e.status !== 429 && e.status !== 0).length > 0 && Date.now() >= until;

  it('an async run waits the whole window out as Retry-After says, heartbeating, sending nothing meanwhile, and delivers', async () => {
    const window = fake.throttleFor(WINDOW_S);
    await postAsync('waited', '/throttled-ok');
    const [delivery] = await receiver.waitFor('/hooks/throttled-ok', 1, 120_000);
    const answer = JSON.parse(delivery!.body);
    expect(answer.error, delivery!.body).toBeUndefined();
    expect(answer.result.data.document).toMatchObject({ deliveryMethod: 'DriveA', name: 'waited.docx' });
    expect(docxParagraphs(fake.item(DRIVE_A, answer.result.data.document.urn)!.content!)).toEqual(['Hello Ada']);
    // One request met the window; the next came after it (Retry-After waited out, no Temporal retry inside).
    expect(window.times).toHaveLength(1);
    expect(fake.earlyRetries()).toBe(0);
    expect(afterWindow(window.until)).toBe(true);
  });

  it('a synchronous call whose deadline comes before the window ends answers 429 TOO_MANY_REQUESTS with Retry-After, not 504', async () => {
    // 30 s: within DRIVE_THROTTLE_MAX_WAIT_MS, past the caller's GENERATE_TIMEOUT_MS (10 s).
    const window = fake.throttleFor(30);
    const res = await api.call('POST', '/documents/document/generate', { json: await body('sync') });
    expect(res.status, JSON.stringify(res.body)).toBe(429);
    expect(res.body.error.innerErrors[0].code).toBe('TOO_MANY_REQUESTS');
    expect(res.body.error.innerErrors[0].message).toMatch(/DriveA \(Microsoft Graph\) is throttling requests \(it asks to wait \d+ s\)/);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(window.times).toHaveLength(1);
    fake.clearFaults();
  });

  it('an async run whose wait would pass DRIVE_THROTTLE_MAX_WAIT_MS calls back 429 TOO_MANY_REQUESTS naming the setting, never 500', async () => {
    const window = fake.throttleFor(60);
    await postAsync('past-bound', '/throttled-past');
    const [delivery] = await receiver.waitFor('/hooks/throttled-past', 1, 60_000);
    const answer = JSON.parse(delivery!.body);
    expect(answer.error.statusCode, delivery!.body).toBe(429);
    expect(answer.error.innerErrors[0].code).toBe('TOO_MANY_REQUESTS');
    expect(answer.error.innerErrors[0].message).toMatch(/DRIVE_THROTTLE_MAX_WAIT_MS \(40 s\).*again after \d+ s/);
    expect(window.times).toHaveLength(1);
    expect(fake.files(DRIVE_A).filter((f) => f.path.includes('past-bound'))).toEqual([]);
    fake.clearFaults();
  });
});
