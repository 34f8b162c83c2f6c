// Fair use of LibreOffice time (issue 36, section 1), with real LibreOffice and a pool of one instance:
// - waiting conversions go to the subscription that used the least LibreOffice time recently, not to the
//   one served longest ago (round-robin by request count gave a tenant's costly conversion the instance
//   as often as another's cheap one);
// - a conversion running past CONVERTER_SLICE_MS while a subscription that used less time waits is
//   stopped and answered (final, naming the setting); one that used more waits its turn;
// - a conversion still queued when its synchronous caller stops waiting is not run;
// - the page limit holds on the pdf that would be delivered, whatever the estimate let through;
// - a document that asks for its own file name learns the same neutral path in every job (section 3).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { conversionCost } from '../../../engine/cost.ts';
import { rejection } from '../../support/convert-error.ts';
import { entryText, makeEntry, readZip, writeZip } from '../../../converter/zip.ts';
import { longDocx, makeDocx, makeXlsx, poolDocs, poppler, until } from './fixtures.ts';

const { small, medium, long } = poolDocs;

describe('fair queuing by LibreOffice time, one instance', () => {
  let pool: LibreOfficePool;
  beforeAll(async () => {
    // No slice, no contended limit: only the order of the queue is under test.
    pool = new LibreOfficePool({
      size: 1,
      timeoutMs: 60_000,
      contendedTimeoutMs: 60_000,
      sliceMs: 60_000,
      budgetMs: 600_000,
      log: () => {},
    });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it('the subscription that used less time goes first, though the other was served longer ago', async () => {
    await pool.convert(medium, { from: 'docx', to: 'pdf', tenant: 'B' });
    for (let i = 0; i < 3; i++) await pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    // B was served longest ago (round-robin would pick it) but used far more of the instance than A.
    const c = pool.convert(medium, { from: 'docx', to: 'pdf', tenant: 'C' });
    await until("C's conversion to run", () => pool.subscriptionUsage('C').running === 1);
    const order: string[] = [];
    const b = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'B' }).then(() => order.push('B'));
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' }).then(() => order.push('A'));
    await Promise.all([a, b, c]);
    expect(order).toEqual(['A', 'B']);
  }, 180_000);
});

describe('the slice, one instance', () => {
  let pool: LibreOfficePool;
  beforeAll(async () => {
    pool = new LibreOfficePool({ size: 1, timeoutMs: 60_000, contendedTimeoutMs: 60_000, sliceMs: 300, budgetMs: 600_000, log: () => {} });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });
  afterEach(async () => {
    await until('the instance to be back', () => pool.status().instances.some((i) => i.state === 'idle'), 120_000);
  });

  it('a conversion past CONVERTER_SLICE_MS is stopped when a subscription that used less time waits, and answered with the setting', async () => {
    const b = pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    await until("B's conversion to run", () => pool.subscriptionUsage('B').running === 1);
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    const e = await rejection(b);
    expect(e.code).toBe('TIMEOUT');
    expect(e.setting).toBe('CONVERTER_SLICE_MS');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(
      /^the conversion ran \d+ ms while another subscription that used less of the converter recently waited for it; the limit is 300 ms then \(CONVERTER_SLICE_MS\)$/,
    );
    expect(poppler('pdftotext', await a)).toContain('small document');
  }, 120_000);

  it('a subscription that used more time waits for the running one (no slice against it)', async () => {
    // H has used two long conversions' time (~900 pages); L's medium conversion (~110 pages) uses far less,
    // however slow the machine makes both.
    for (let i = 0; i < 2; i++) await pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'H' });
    const l = pool.convert(medium, { from: 'docx', to: 'pdf', tenant: 'L' });
    await until("L's conversion to run", () => pool.subscriptionUsage('L').running === 1);
    const h = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'H' });
    expect(poppler('pdfinfo', await l)).toMatch(/Pages:\s+\d+/);
    expect(poppler('pdftotext', await h)).toContain('small document');
  }, 180_000);
});

describe('a spare instance (CONVERTER_SPARE_INSTANCES)', () => {
  let pool: LibreOfficePool;
  afterEach(async () => {
    await pool?.stop();
  });

  it('serves a subscription that used less time at once while a heavier one holds the instance, stopping nothing', async () => {
    pool = new LibreOfficePool({
      size: 1,
      spareInstances: 1,
      timeoutMs: 60_000,
      contendedTimeoutMs: 60_000,
      sliceMs: 60_000,
      budgetMs: 600_000,
      log: () => {},
    });
    await pool.ready();
    await until('the spare to be warm', () => pool.status().instances[1]!.state === 'idle');
    expect(pool.status().instances.map((i) => Boolean(i.spare))).toEqual([false, true]);
    const b = pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    await until("B's conversion to run", () => pool.subscriptionUsage('B').running === 1);
    // A has used nothing: it runs on the spare at once, while B's long conversion goes on. The spare takes
    // work only while the regular instance is busy, so its one conversion is A's, started before B ended; and
    // B is not stopped (the slice is a minute): both answer.
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    expect(poppler('pdftotext', await a)).toContain('small document');
    expect(pool.status().instances[1]).toMatchObject({ spare: true, conversions: 1 });
    expect(poppler('pdfinfo', await b)).toMatch(/Pages:\s+\d+/);
    const [regular, spare] = pool.status().instances;
    expect(regular).toMatchObject({ conversions: 1 });
    expect(spare).toMatchObject({ spare: true, conversions: 1 });
  }, 180_000);

  it('a subscription alone borrows every regular instance for short jobs; a newcomer takes the spare at once; long jobs keep the share', async () => {
    pool = new LibreOfficePool({
      size: 2,
      spareInstances: 1,
      timeoutMs: 60_000,
      contendedTimeoutMs: 60_000,
      sliceMs: 60_000,
      budgetMs: 600_000,
      log: () => {},
    });
    await pool.ready();
    await until('every instance to be warm', () => pool.status().instances.every((i) => i.state === 'idle'));
    expect(pool.perSubscription).toBe(1);
    // B alone, short documents: both regular instances (its share is one).
    const bShort = [0, 1].map(() => pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'B' }));
    expect(pool.subscriptionUsage('B')).toMatchObject({ running: 2, queued: 0 });
    // A arrives while B holds both: the spare, at once.
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    expect(pool.subscriptionUsage('A')).toMatchObject({ running: 1, queued: 0 });
    expect(poppler('pdftotext', await a)).toContain('small document');
    await Promise.all(bShort);
    expect(pool.status().instances[2]).toMatchObject({ spare: true, conversions: 1 });
    // Long documents (past CONVERTER_SPARE_MAX_PAGES) are never borrowed: B keeps to its share.
    const bLong = [0, 1].map(() => pool.convert(medium, { from: 'docx', to: 'pdf', tenant: 'B' }));
    expect(pool.subscriptionUsage('B')).toMatchObject({ running: 1, queued: 1 });
    await Promise.all(bLong);
  }, 240_000);

  it("keeps the lane for short documents: a lighter subscription's long one waits for an instance", async () => {
    pool = new LibreOfficePool({
      size: 1,
      spareInstances: 1,
      spareMaxPages: 20,
      timeoutMs: 60_000,
      contendedTimeoutMs: 60_000,
      sliceMs: 60_000,
      budgetMs: 600_000,
      log: () => {},
    });
    await pool.ready();
    await until('the spare to be warm', () => pool.status().instances[1]!.state === 'idle');
    const b = pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    await until("B's conversion to run", () => pool.subscriptionUsage('B').running === 1);
    // ~110 pages by the estimate: past the lane's 20, so A waits for the instance B holds.
    const a = pool.convert(medium, { from: 'docx', to: 'pdf', tenant: 'A' });
    expect(poppler('pdfinfo', await b)).toMatch(/Pages:\s+\d+/);
    expect(poppler('pdfinfo', await a)).toMatch(/Pages:\s+\d+/);
    const [regular, spare] = pool.status().instances;
    expect(spare).toMatchObject({ spare: true, conversions: 0 });
    expect(regular).toMatchObject({ conversions: 2 });
  }, 180_000);

  it('takes over at once from an instance stopped by a time limit: the next conversion runs on it, not after a restart', async () => {
    pool = new LibreOfficePool({
      size: 1,
      spareInstances: 1,
      // Long enough for the small document's first conversion on the former spare on a loaded machine (it
      // once took over 1.5 s in CI).
      timeoutMs: 6_000,
      contendedTimeoutMs: 60_000,
      sliceMs: 60_000,
      budgetMs: 600_000,
      // The document stopped by the limit: ~4,800 pages, about 50 s of LibreOffice on a 2-core machine where
      // `long` (~450 pages) takes under 3 s, so it outlasts the limit on any machine.
      limits: { maxPages: 10_000 },
      log: () => {},
    });
    await pool.ready();
    // ready() waits for the regular instance; the spare may still be starting on a loaded machine.
    await until('the spare to be warm', () => pool.status().instances[1]!.state === 'idle');
    const longer = longDocx(120_000);
    expect((await rejection(pool.convert(longer, { from: 'docx', to: 'pdf', tenant: 'B' }))).setting).toBe('CONVERTER_TIMEOUT_MS');
    expect(poppler('pdftotext', await pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' }))).toContain('small document');
    const [first, second] = pool.status().instances;
    // A ran on the former spare; the stopped instance restarts as the spare.
    expect(second).toMatchObject({ conversions: 1 });
    expect(second!.spare).toBeUndefined();
    expect(first).toMatchObject({ spare: true });
  }, 120_000);
});

describe('a caller that stopped waiting', () => {
  let pool: LibreOfficePool;
  beforeAll(async () => {
    pool = new LibreOfficePool({
      size: 1,
      timeoutMs: 60_000,
      contendedTimeoutMs: 60_000,
      sliceMs: 60_000,
      budgetMs: 600_000,
      log: () => {},
    });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it('leaves nothing queued: a conversion still waiting at abandonAt is dropped, naming GENERATE_TIMEOUT_MS', async () => {
    const b = pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    await until("B's conversion to run", () => pool.subscriptionUsage('B').running === 1);
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A', abandonAt: Date.now() + 200 });
    const e = await rejection(a);
    expect(e.code).toBe('TIMEOUT');
    expect(e.setting).toBe('GENERATE_TIMEOUT_MS');
    expect(e.retryable).toBe(false);
    expect(pool.subscriptionUsage('A')).toMatchObject({ queued: 0, running: 0, started: 0 });
    // B's conversion, already running, was not disturbed.
    expect(pool.subscriptionUsage('B').running).toBe(1);
    await b;
  }, 120_000);
});

describe('the page limit on the delivered pdf', () => {
  let pool: LibreOfficePool;
  // What the estimate does not read (character scale, w:w 600 %) on a 1-inch page: each character takes a
  // line and a page in LibreOffice; the estimate counts it at its natural width.
  const scaled = makeDocx({
    body: Array.from(
      { length: 4 },
      (_, i) => `<w:p><w:r><w:rPr><w:w w:val="600"/><w:sz w:val="72"/></w:rPr><w:t>Paragraph ${i} of 4 words</w:t></w:r></w:p>`,
    ).join(''),
    sectPr: '<w:sectPr><w:pgSz w:w="1440" w:h="1440"/><w:pgMar w:top="0" w:right="0" w:bottom="0" w:left="0"/></w:sectPr>',
  });
  const estimate = conversionCost(scaled).pages;
  beforeAll(async () => {
    // The limit is the estimate itself: the document passes the estimate.
    pool = new LibreOfficePool({ size: 1, timeoutMs: 60_000, limits: { maxPages: estimate }, log: () => {} });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it('a document the estimate lets through that lays out past TEMPLATE_MAX_PAGES is refused, no pdf delivered', async () => {
    expect(await pool.pageCount(scaled, { from: 'docx' })).toBeGreaterThan(estimate);
    const e = await rejection(pool.convert(scaled, { from: 'docx', to: 'pdf', tenant: 'B' }));
    expect(e.code).toBe('TOO_COMPLEX');
    expect(e.message).toMatch(new RegExp(`laid out as \\d+ pages; the limit is ${estimate} \\(TEMPLATE_MAX_PAGES\\)$`));
  }, 120_000);
});

/** A workbook whose cell A1 asks for the file's own name (no cached value: LibreOffice computes it). */
function cellFilenameXlsx(): Uint8Array {
  const xlsx = makeXlsx([{ name: 'Data', rows: [['placeholder']] }]);
  const entries = readZip(xlsx).map((e) =>
    e.name === 'xl/worksheets/sheet1.xml'
      ? makeEntry(e.name, entryText(e).replace(/<c r="A1"[\s\S]*?<\/c>/, '<c r="A1" t="str"><f>CELL("filename")</f></c>'))
      : e,
  );
  return writeZip(entries);
}

describe('what a document learns of its own file', () => {
  let pool: LibreOfficePool;
  beforeAll(async () => {
    pool = new LibreOfficePool({ size: 1, sandbox: 'required', log: () => {} });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it('=CELL("filename") gives the same neutral path in every job: no host path, no job number', async () => {
    const book = cellFilenameXlsx();
    const outputs: string[] = [];
    for (let i = 0; i < 3; i++) {
      outputs.push(Buffer.from(await pool.convert(book, { from: 'xlsx', to: 'csv', tenant: `T${i}` })).toString('utf8'));
      await pool.convert(small, { from: 'docx', to: 'pdf' }); // other jobs in between
    }
    expect(outputs[0]).toMatch(/\/job\/document\.xlsx/);
    expect(outputs.every((o) => o === outputs[0])).toBe(true);
    expect(outputs[0]).not.toContain(pool.baseDir);
    expect(outputs[0]).not.toMatch(/\d+-in\./);
  }, 120_000);
});
