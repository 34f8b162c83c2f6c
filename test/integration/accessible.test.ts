// Accessible pdfs (document.options.accessible, docs/accessibility.md) through the real stack: API, Temporal,
// the engine and LibreOffice. Each pdf that should conform is kept for veraPDF's PDF/UA-1 (and PDF/A-2a)
// profiles, which .ci/run runs over them after the suites (test/support/pdf-outputs.ts); here the tests
// read the structure the pdf carries: tags, headings, list, table header cells, figures' alternative text,
// title, language, and the warnings of what a screen reader would miss.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfaIdentification } from '../../converter/index.ts';
import { docxDrawing } from '../../engine/images.ts';
import { client, generateBody } from '../support/http.ts';
import { keepAccessiblePdf } from '../support/pdf-outputs.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { PNG_2x1, zip } from '../unit/engine/helpers.ts';
import { type Receiver, startReceiver } from './async/receiver.ts';
import { waitForBatch } from './batch/support.ts';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const EXAMPLES = path.join(import.meta.dirname, '../../examples');

const run = (t: string) => `<w:r><w:t xml:space="preserve">${t}</w:t></w:r>`;
const para = (t: string, pPr = '') => `<w:p>${pPr ? `<w:pPr>${pPr}</w:pPr>` : ''}${run(t)}</w:p>`;
const cell = (t: string) => `<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>${para(t)}</w:tc>`;
function tableXml(header: boolean): string {
  const head = `<w:tr>${header ? '<w:trPr><w:tblHeader/></w:trPr>' : ''}${cell('Item')}${cell('Amount')}</w:tr>`;
  return (
    `<w:tbl><w:tblPr><w:tblW w:w="6000" w:type="dxa"/></w:tblPr><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>` +
    `${head}<w:tr>${cell('{#lines}{item}')}${cell('{amount}{/lines}')}</w:tr></w:tbl>`
  );
}

/**
 * A statement: a title property with a tag, a heading, a bulleted list (a numbering part), a table, an image
 * tag, and a picture the template itself carries with its own description. `opts` leave out what a
 * screen reader needs (the header row), or set the template's own language.
 */
function statementDocx(opts: { header?: boolean; language?: string } = {}): Uint8Array {
  const drawing = docxDrawing('rIdSig', 7, { widthPx: 40, heightPx: 20 }, undefined, { alt: 'Signature of the branch manager' });
  const body =
    para('Statement {number}', '<w:outlineLvl w:val="0"/>') +
    para('Dear {name},') +
    para('{#points}{.}{/points}', '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>') +
    tableXml(opts.header !== false) +
    para('{%logo}') +
    `<w:p><w:r>${drawing}</w:r></w:p>`;
  const numbering =
    `<w:numbering xmlns:w="${W}"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/><w:lvlJc w:val="left"/>` +
    `<w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`;
  const styles = opts.language
    ? `<w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:lang w:val="${opts.language}"/></w:rPr></w:rPrDefault></w:docDefaults></w:styles>`
    : undefined;
  return zip({
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '<Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>' +
      (styles
        ? '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
        : '') +
      '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>',
    '_rels/.rels':
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/>` +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>',
    'docProps/core.xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">' +
      '<dc:title>Statement {number} for {name}</dc:title></cp:coreProperties>',
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>${body}<w:sectPr/></w:body></w:document>`,
    'word/_rels/document.xml.rels':
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdNum" Type="${R}/numbering" Target="numbering.xml"/>` +
      `<Relationship Id="rIdSig" Type="${R}/image" Target="media/signature.png"/>${styles ? `<Relationship Id="rIdSt" Type="${R}/styles" Target="styles.xml"/>` : ''}</Relationships>`,
    'word/numbering.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${numbering}`,
    'word/media/signature.png': PNG_2x1,
    ...(styles ? { 'word/styles.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${styles}` } : {}),
  });
}

const statementData = (logo: Record<string, unknown>) => ({
  number: 42,
  name: 'Ada Lovelace',
  points: ['Your balance is positive', 'No fees this month'],
  lines: [
    { item: 'Deposit', amount: '100.00' },
    { item: 'Coffee', amount: '-3.50' },
  ],
  logo: { data: `data:image/png;base64,${PNG_2x1.toString('base64')}`, width: 60, ...logo },
});

/** What a pdf says about itself, read from its bytes (LibreOffice writes the structure uncompressed). */
function facts(pdf: Uint8Array) {
  const text = Buffer.from(pdf).toString('latin1');
  const decode = (s: string) => (s.startsWith('<') ? Buffer.from(s.slice(5, -1), 'hex').swap16().toString('utf16le') : s.slice(1, -1));
  const types = new Set([...text.matchAll(/\/S\s*\/(\w+)/g)].map((m) => m[1]));
  return {
    tagged: text.includes('/StructTreeRoot') && /\/Marked\s+true/.test(text),
    ua: /pdfuaid:part>1</.test(text),
    displayTitle: /\/DisplayDocTitle\s+true/.test(text),
    // The last catalog is the current one (docgen may update it incrementally).
    lang: [...text.matchAll(/\/Lang\s*\(([^)]*)\)/g)].at(-1)?.[1],
    title: /<dc:title>\s*<rdf:Alt>\s*<rdf:li[^>]*>([^<]*)</.exec(Buffer.from(pdf).toString('utf8'))?.[1],
    alt: [...text.matchAll(/\/Alt\s*(<FEFF[0-9A-F]*>|\((?:[^)\\]|\\.)*\))/g)].map((m) => decode(m[1]!)),
    types,
  };
}

describe('accessible pdfs', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([startStack({ outboundAllow: ['127.0.0.1'] }), startReceiver('127.0.0.1')]);
    api = client(await stack.credentials());
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function generate(template: Uint8Array, data: unknown, document: Record<string, unknown>, format = 'docx') {
    const { templateUrn, dataUrn } = await api.uploadPair(template, data, format);
    const body = generateBody(templateUrn, dataUrn, {
      template: { fileFormat: format },
      document: { fileFormat: 'pdf', locale: 'de-CH', ...document },
    });
    return api.call('POST', '/documents/document/generate', { json: body });
  }

  it('a docx with a heading, a list, a table with a header row and pictures with alt text: tagged PDF/UA-1, title and language', async () => {
    const res = await generate(statementDocx(), statementData({ alt: 'Bank logo' }), { name: 'statement', options: { accessible: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.warnings).toBeUndefined();
    const pdf = (await api.download(res.body.result.data.document.urn)).bytes;
    const f = facts(pdf);
    expect(f).toMatchObject({ tagged: true, ua: true, displayTitle: true, lang: 'de-CH', title: 'Statement 42 for Ada Lovelace' });
    for (const t of ['H1', 'L', 'LI', 'Table', 'TH', 'TD', 'Figure']) expect(f.types, t).toContain(t);
    expect(f.alt).toEqual(expect.arrayContaining(['Bank logo', 'Signature of the branch manager']));
    keepAccessiblePdf(pdf, 'accessible-statement');
  });

  it("keeps the template's own language, and takes the title from the document's name when the template has none", async () => {
    const template = statementDocx({ language: 'fr-CH' });
    const res = await generate(template, statementData({ alt: 'Logo' }), { name: 'Relevé 7', options: { accessible: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pdf = (await api.download(res.body.result.data.document.urn)).bytes;
    expect(facts(pdf)).toMatchObject({ tagged: true, lang: 'fr-CH', title: 'Statement 42 for Ada Lovelace' });
    keepAccessiblePdf(pdf, 'accessible-template-language');

    const untitled = await generate(
      fs.readFileSync(path.join(EXAMPLES, 'reminder.docx')),
      { name: 'Ada' },
      {
        name: 'Reminder for Ada',
        options: { accessible: true },
      },
    );
    expect(untitled.status, JSON.stringify(untitled.body)).toBe(201);
    const reminder = (await api.download(untitled.body.result.data.document.urn)).bytes;
    expect(facts(reminder)).toMatchObject({ tagged: true, ua: true, title: 'Reminder for Ada', lang: 'de-CH' });
    keepAccessiblePdf(reminder, 'accessible-example-reminder');
  });

  it('without the option the pdf is untagged, as before', async () => {
    const res = await generate(statementDocx(), statementData({ alt: 'Bank logo' }), { name: 'plain' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const f = facts((await api.download(res.body.result.data.document.urn)).bytes);
    expect(f).toMatchObject({ tagged: false, ua: false });
  });

  it('the examples: the invoice (docx) and the product deck (pptx)', async () => {
    const read = (f: string) => fs.readFileSync(path.join(EXAMPLES, f));
    const cases = [
      { template: 'invoice.docx', data: 'invoice.json', format: 'docx' },
      { template: 'products.pptx', data: 'products.json', format: 'pptx' },
    ];
    for (const c of cases) {
      const res = await generate(
        read(c.template),
        JSON.parse(read(c.data).toString('utf8')),
        { name: c.template, options: { accessible: true } },
        c.format,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.result.data.warnings, c.template).toBeUndefined();
      const pdf = (await api.download(res.body.result.data.document.urn)).bytes;
      const f = facts(pdf);
      expect(f, c.template).toMatchObject({ tagged: true, ua: true, displayTitle: true, lang: 'de-CH' });
      expect(f.types, c.template).toContain('Figure');
      if (c.format === 'docx') expect(f.alt).toContain('Northwind Print & Paper logo');
      keepAccessiblePdf(pdf, `accessible-example-${c.template}`);
    }
  });

  it('with PDF/A-2b asked for: PDF/A-2a, tagged and identified as PDF/UA-1 too', async () => {
    const res = await generate(statementDocx(), statementData({ alt: 'Bank logo' }), {
      name: 'archived',
      options: { accessible: true, pdfSaveOptions: '{"pdfConformanceLevel":"PdfA2B"}' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pdf = (await api.download(res.body.result.data.document.urn)).bytes;
    expect(pdfaIdentification(pdf)).toEqual({ part: 2, conformance: 'A' });
    expect(facts(pdf)).toMatchObject({ tagged: true, ua: true });
    expect(Buffer.from(pdf).toString('latin1')).toContain('<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>');
    keepAccessiblePdf(pdf, 'accessible-pdfa2a', ['pdfua1', 'pdfa2a']);
  });

  it('warns of a picture without alt text and a table without a header row; under strict they are a 400', async () => {
    const template = statementDocx({ header: false });
    const res = await generate(template, statementData({}), { name: 'warned', options: { accessible: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.warnings).toEqual([
      expect.objectContaining({
        code: 'IMAGE_WITHOUT_ALT_TEXT',
        tag: '',
        location: { part: 'word/document.xml' },
        message: expect.stringContaining('has no alternative text'),
      }),
      expect.objectContaining({ code: 'TABLE_WITHOUT_HEADER_ROW', location: { part: 'word/document.xml' } }),
    ]);
    // Still a tagged pdf; the figure without alt text is what veraPDF would fail it for (not kept).
    expect(facts((await api.download(res.body.result.data.document.urn)).bytes).tagged).toBe(true);

    const strict = await generate(template, statementData({}), { name: 'strict', options: { accessible: true, strict: true } });
    expect(strict.status, JSON.stringify(strict.body)).toBe(400);
    expect(strict.body.error.innerErrors).toEqual([
      expect.objectContaining({ code: 'TEMPLATE_ERROR', message: expect.stringContaining('has no alternative text') }),
      expect.objectContaining({ code: 'TEMPLATE_ERROR', message: expect.stringContaining('no header row') }),
    ]);
  });

  it('async: the callback carries the accessibility warnings, and the pdf is tagged', async () => {
    const made = await api.call('POST', '/common/client/token', {
      json: { sub: 'a11y', iss: `${receiver.url}/hooks`, dest: '/a11y', client_id: 'tests' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const { templateUrn, dataUrn } = await api.uploadPair(statementDocx({ header: false }), statementData({ alt: 'Bank logo' }));
    const body = generateBody(templateUrn, dataUrn, {
      document: { fileFormat: 'pdf', locale: 'de-CH', name: 'async statement', options: { accessible: true } },
    });
    const queued = await api.call('POST', '/documents/document/generate/async', {
      json: body,
      headers: { 'x-client-authorization': made.body.result.data.token },
    });
    expect(queued.status, JSON.stringify(queued.body)).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/a11y', 1, 60_000);
    const result = JSON.parse(delivery?.body ?? 'null').result.data;
    expect(result.warnings).toEqual([expect.objectContaining({ code: 'TABLE_WITHOUT_HEADER_ROW', tag: '' })]);
    const pdf = (await api.download(result.document.urn)).bytes;
    expect(facts(pdf)).toMatchObject({ tagged: true, ua: true, lang: 'de-CH', title: 'Statement 42 for Ada Lovelace' });
  });

  it("manage: a docx converted to an accessible pdf, titled by the target's name, in the document's own language", async () => {
    const made = await generate(statementDocx({ language: 'it-CH' }), statementData({ alt: 'Bank logo' }), {
      name: 'source',
      fileFormat: 'docx',
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const res = await api.call('POST', '/documents/document/manage', {
      json: {
        sourceDocument: { urn: made.body.result.data.document.urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'none' },
        targetDocument: { name: 'Converted 1', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root', options: { accessible: true } },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pdf = (await api.download(res.body.result.data.document.urn)).bytes;
    // The merged docx carries its rendered title; the template's language is the document's own.
    expect(facts(pdf)).toMatchObject({ tagged: true, ua: true, lang: 'it-CH', title: 'Statement 42 for Ada Lovelace' });
    keepAccessiblePdf(pdf, 'accessible-manage');
  });

  it('refuses an xlsx template and a non-pdf output before queueing, naming the field', async () => {
    const read = (f: string) => fs.readFileSync(path.join(EXAMPLES, f));
    const xlsx = await generate(
      read('monthly-report.xlsx'),
      JSON.parse(read('monthly-report.json').toString('utf8')),
      {
        name: 'report',
        options: { accessible: true },
      },
      'xlsx',
    );
    expect(xlsx.status, JSON.stringify(xlsx.body)).toBe(400);
    expect(JSON.stringify(xlsx.body.error.innerErrors)).toContain('document.options.accessible needs a docx or pptx template');
    const docx = await generate(statementDocx(), statementData({ alt: 'x' }), {
      name: 'x',
      fileFormat: 'docx',
      options: { accessible: true },
    });
    expect(docx.status).toBe(400);
    expect(JSON.stringify(docx.body.error.innerErrors)).toContain('document.options.accessible applies to pdf output only');
    const bad = await generate(statementDocx(), statementData({ alt: 'x' }), { name: 'x', options: { accessible: 'yes' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.innerErrors)).toContain('document.options.accessible must be of type boolean');
  });

  it('a batch: each row an accessible pdf titled by its name', async () => {
    const t = await api.upload('template', [{ name: 't.docx', bytes: statementDocx() }]);
    const rows = [statementData({ alt: 'Bank logo' }), { ...statementData({ alt: 'Bank logo' }), number: 43, name: 'Grace Hopper' }];
    const d = await api.upload('data', [{ name: 'rows.json', bytes: JSON.stringify(rows) }]);
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
        document: {
          name: 'Statement {number}',
          fileFormat: 'pdf',
          deliveryMethod: 'Storage',
          path: 'root',
          timezone: 'UTC',
          locale: 'en-GB',
          options: { accessible: true },
        },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const batch = await waitForBatch(api, res.body.result.data.batch.id);
    expect(batch).toMatchObject({ status: 'completed', rowsDone: 2 });
    const listed = await api.call('GET', `/documents/batch/${res.body.result.data.batch.id}/rows?status=done&top=10`);
    for (const r of listed.body.result.data.rows) {
      const pdf = (await api.download(r.urn)).bytes;
      expect(facts(pdf)).toMatchObject({ tagged: true, ua: true, lang: 'en-GB' });
      keepAccessiblePdf(pdf, `accessible-batch-row-${r.row}`);
    }
  });
});
