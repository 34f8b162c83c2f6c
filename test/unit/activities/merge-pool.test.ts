// The merge thread pool on its own: a merge past its time limit is ended (the thread, not the process),
// the next merge runs on a fresh thread, and waiting merges are served round-robin per tenant.
import { afterEach, describe, expect, it } from 'vitest';
import { MergeLimitError, MergePool, MergeTemplateError } from '../../../activities/merge-pool.ts';
import { vettedOf } from '../../../converter/index.ts';
import { DEFAULT_TEMPLATE_LIMITS } from '../../../engine/index.ts';
import { inflateEntry, readZip } from '../../../engine/zip.ts';
import { docx, p } from '../engine/helpers.ts';

const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
const opts = { locale: 'en-US', timezone: 'UTC' };
// A loop of 400,000 items, each rendering a filtered value: a few seconds of CPU, far past 300 ms.
const slowTemplate = docx(p('{#items}') + p('{. | upper}') + p('{/items}'));
const slowData = enc({ items: Array.from({ length: 400_000 }, (_, i) => `item ${i}`) });

describe('MergePool', () => {
  let pool: MergePool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('ends a merge past MERGE_TIMEOUT_MS with a limit error naming it; the pool carries on', async () => {
    pool = new MergePool({ threads: 1, timeoutMs: 300 });
    // The merge itself would succeed (seconds later): a time-limit error can only come from the pool's timer.
    const err = await pool.merge('b', slowTemplate, slowData, opts).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MergeLimitError);
    expect((err as MergeLimitError).limit).toBe('time');
    expect((err as Error).message).toMatch(/the limit is 300 ms \(MERGE_TIMEOUT_MS\)/);
    // The next merge runs on a fresh thread. Its own limit is generous: what is shown is that the pool
    // carries on, not how fast a loaded machine starts a thread.
    const out = await pool.merge('a', docx(p('Hello {name}')), enc({ name: 'A' }), opts, undefined, 120_000);
    expect(out.output.length).toBeGreaterThan(100);
    expect(pool.status()).toMatchObject({ running: 0, queued: 0, threads: 1 });
  });

  it('a job may carry its own time limit, named as such', async () => {
    pool = new MergePool({ threads: 1, timeoutMs: 120_000 });
    const err = await pool.merge('b', slowTemplate, slowData, opts, undefined, 300).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MergeLimitError);
    expect((err as Error).message).toBe("the merge took longer than 300 ms; the limit is 300 ms (this merge's own limit)");
  });

  it('brings back the tags that rendered empty for want of data, and with strict refuses them', async () => {
    pool = new MergePool({ threads: 1 });
    const t = docx(p('Hello {name}, your rep is {rep}.'));
    const out = await pool.merge('a', t, enc({ name: 'A' }), opts);
    expect(out.warnings).toEqual([
      {
        id: 'missing_value',
        message: 'no value for tag "rep"',
        tag: 'rep',
        location: { part: 'word/document.xml', paragraph: 1, offset: 26 },
      },
    ]);
    const err = await pool.merge('a', t, enc({ name: 'A' }), { ...opts, strict: true }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MergeTemplateError);
    expect((err as MergeTemplateError).errors.map((e) => [e.id, e.message])).toEqual([['missing_value', 'no value for tag "rep"']]);
  });

  it('serves waiting merges round-robin per tenant: one burst does not delay another tenant behind all of it', async () => {
    pool = new MergePool({ threads: 1, timeoutMs: 60_000 });
    const small = docx(p('{#items}{.}{/items}'));
    const data = enc({ items: Array.from({ length: 20_000 }, (_, i) => i) });
    const order: string[] = [];
    const run = (tenant: string, n: number) => pool!.merge(tenant, small, data, opts).then(() => order.push(`${tenant}${n}`));
    // Tenant b queues four merges, then tenant a one: a's runs second, not fifth.
    const all = [run('b', 1), run('b', 2), run('b', 3), run('b', 4), run('a', 1)];
    await Promise.all(all);
    expect(order).toEqual(['b1', 'a1', 'b2', 'b3', 'b4']);
  });
});

describe('MergePool shares', () => {
  it('runs one subscription on all threads but one: its burst of costly merges leaves a thread to the others', async () => {
    const pool = new MergePool({ threads: 2, timeoutMs: 60_000 });
    try {
      expect(pool.perSubscription).toBe(1);
      const costly = docx(p('{#items}') + p('{. | upper}') + p('{/items}'));
      const data = enc({ items: Array.from({ length: 100_000 }, (_, i) => `item ${i}`) });
      const order: string[] = [];
      const bs = [1, 2, 3].map((n) => pool.merge('b', costly, data, opts).then(() => order.push(`b${n}`)));
      expect(pool.status()).toMatchObject({ running: 1, queued: 2 });
      // A's merge starts at once on the thread B may not take, and ends before any of B's.
      const a = pool.merge('a', docx(p('Hello {name}')), enc({ name: 'A' }), opts).then(() => order.push('a1'));
      expect(pool.status()).toMatchObject({ running: 2, queued: 2 });
      await Promise.all([...bs, a]);
      expect(order).toEqual(['a1', 'b1', 'b2', 'b3']);
    } finally {
      await pool.close();
    }
  });
});

describe('MergePool cost checks', () => {
  it('refuses a template past the cost limits before rendering it (before even reading the data), and checks the merged document', async () => {
    const pool = new MergePool({ threads: 1, limits: { ...DEFAULT_TEMPLATE_LIMITS, maxPages: 10 } });
    try {
      // 600 paragraphs: about 12 pages. The data is not even JSON: the template is refused first.
      const big = docx(p('{name}') + p('x').repeat(600));
      const err = await pool.merge('b', big, new TextEncoder().encode('not json'), opts).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(MergeTemplateError);
      expect((err as MergeTemplateError).errors).toEqual([
        { id: 'limit_exceeded', message: 'the document comes to about 13 pages (601 paragraphs); the limit is 10 (TEMPLATE_MAX_PAGES)' },
      ]);
      // A small template whose loop makes the document too long: refused after the merge.
      const loop = await pool
        .merge('b', docx(p('{#items}') + p('{.}') + p('{/items}')), enc({ items: Array.from({ length: 600 }, (_, i) => i) }), opts)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect((loop as MergeTemplateError).errors[0]?.message).toMatch(/the limit is 10 \(TEMPLATE_MAX_PAGES\)$/);
    } finally {
      await pool.close();
    }
  });
});

describe('MergePool: the merged parts are judged before they are zipped', () => {
  it('refuses a merged part past TEMPLATE_MAX_PART_BYTES and strips a field the data makes DDE, as for a zipped document', async () => {
    const pool = new MergePool({ threads: 1, limits: { ...DEFAULT_TEMPLATE_LIMITS, maxPartBytes: 64 * 1024 } });
    try {
      const template = docx(p('{#items}') + p('{.}') + p('{/items}'));
      // Within the part size: merged, sanitized, estimated and zipped.
      const small = await pool.merge('z', template, enc({ items: Array.from({ length: 50 }, (_, i) => `item ${i}`) }), opts);
      expect(vettedOf(small.output)?.pages).toBe(1);
      // 3,000 paragraphs make a document.xml of about 200 KB: past the part size, named by its setting.
      const big = await pool.merge('z', template, enc({ items: Array.from({ length: 3_000 }, (_, i) => `item ${i}`) }), opts).then(
        () => null,
        (e: unknown) => e,
      );
      expect(big).toBeInstanceOf(MergeTemplateError);
      expect((big as MergeTemplateError).errors[0]?.message).toMatch(
        /^part word\/document\.xml expands to \d+ bytes; the limit is 65536 \(TEMPLATE_MAX_PART_BYTES\)$/,
      );
      // A field whose instruction the data completes (DDEAUTO and a program) loses its instruction, as the
      // sanitizer strips it from a zipped document.
      const dde = docx(
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> DDEAUTO {app} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>',
      );
      const out = await pool.merge('z', dde, enc({ app: 'c:\\\\windows\\\\system32\\\\cmd.exe' }), opts);
      expect(vettedOf(out.output)).toBeDefined();
      const body = inflateEntry(readZip(out.output).get('word/document.xml')!).toString('utf8');
      expect(body).toContain('<w:fldChar w:fldCharType="begin"/>');
      expect(body).not.toContain('DDEAUTO');
      expect(body).not.toContain('cmd.exe');
    } finally {
      await pool.close();
    }
  });
});

describe('MergePool: templates sent once per thread', () => {
  it('merges a template the thread no longer holds (more templates than it keeps) by sending it again', async () => {
    const pool = new MergePool({ threads: 1 });
    try {
      const text = async (template: Uint8Array, data: unknown) => {
        const out = await pool.merge('k', template, enc(data), opts);
        return inflateEntry(readZip(out.output).get('word/document.xml')!).toString('utf8');
      };
      const first = docx(p('first {name}'));
      expect(await text(first, { name: 'A' })).toContain('first A');
      // The same array again (sent without its bytes), then twenty others: the thread keeps sixteen.
      expect(await text(first, { name: 'B' })).toContain('first B');
      for (let i = 0; i < 20; i++) expect(await text(docx(p(`template ${i} {name}`)), { name: i })).toContain(`template ${i} ${i}`);
      // The first template is no longer in the thread: it answers so, and the pool sends it again.
      expect(await text(first, { name: 'C' })).toContain('first C');
      // An equal template in another array is sent with it (arrays are numbered; the thread hashes what it is sent).
      expect(await text(new Uint8Array(first), { name: 'D' })).toContain('first D');
    } finally {
      await pool.close();
    }
  });
});

describe('MergePool vetted output', () => {
  it("marks what it merged as sanitized and estimated (the converter takes the thread's findings); a copy carries no mark", async () => {
    const pool = new MergePool({ threads: 1 });
    try {
      const template = docx(p('{#items}') + p('{.}') + p('{/items}'));
      const out = await pool.merge('v', template, enc({ items: Array.from({ length: 120 }, (_, i) => i) }), opts);
      const facts = vettedOf(out.output);
      expect(facts?.embedsFonts).toBe(false);
      // 120 paragraphs of one line: about three pages by the estimate.
      expect(facts?.pages).toBeGreaterThanOrEqual(2);
      expect(vettedOf(new Uint8Array(out.output))).toBeUndefined();
      expect(vettedOf(template)).toBeUndefined();
    } finally {
      await pool.close();
    }
  });
});

describe('MergePool idle threads', () => {
  it('ends threads left idle but the first, so the heap of big merges is given back; merges go on', async () => {
    // 2 s idle: long enough that both threads are still there when the two merges have answered, on a
    // loaded machine too (200 ms was not, once in a run beside a benchmark).
    const pool = new MergePool({ threads: 2, idleMs: 2_000 });
    try {
      pool.warm();
      const t = docx(p('Hello {name}'));
      await Promise.all([pool.merge('a', t, enc({ name: 'A' }), opts), pool.merge('b', t, enc({ name: 'B' }), opts)]);
      expect(pool.status().threads).toBe(2);
      // The second thread ends once it has been idle for idleMs: polled, with a bound for a loaded machine.
      const deadline = Date.now() + 30_000;
      while (pool.status().threads > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(pool.status().threads).toBe(1);
      const out = await pool.merge('a', docx(p('Hello {name}')), enc({ name: 'A' }), opts);
      expect(out.output.length).toBeGreaterThan(100);
    } finally {
      await pool.close();
    }
  });
});
