import { describe, expect, it } from 'vitest';
import { render } from '../../support/engine.ts';
import { docText, docx, paragraphs, pptx, shape, sheetCells, unzipText, xlsxBook, zip } from './helpers.ts';
import { packageProblems } from './package-check.ts';
import { tokenize } from '../../../engine/xml.ts';

/**
 * Packages as other writers make them (Excel's formatted blanks, the .NET Open XML SDK's prefixes,
 * openpyxl's local namespace declarations, SharePoint's document properties), each a minimal reproducer.
 */

const s = (ref: string, i: number): string => `<c r="${ref}" t="s"><v>${i}</v></c>`;
const n = (ref: string, v: number): string => `<c r="${ref}"><v>${v}</v></c>`;

describe('xlsx: shared formulas after a formatted blank cell', () => {
  it('gives each follower its own formula when a self-closing styled cell comes before it', async () => {
    // Excel writes a formatted empty cell as <c r="C2" s="0"/>; D2 (right after such a blank) is the master
    // of D2:E3, filled right and down over a looped row (row 2) and the row below it.
    const tpl = xlsxBook({
      strings: ['{#items}{qty}', '{/items}'],
      sheets: [
        {
          name: 'Data',
          rows:
            `<row r="2">${s('A2', 0)}${s('B2', 1)}<c r="C2" s="0"/><c r="D2"><f t="shared" ref="D2:E3" si="0">A2*10</f><v>0</v></c><c r="E2"><f t="shared" si="0"/><v>0</v></c></row>` +
            `<row r="3">${n('A3', 7)}<c r="C3" s="0"/><c r="D3"><f t="shared" si="0"/><v>0</v></c><c r="E3"><f t="shared" si="0"/><v>0</v></c></row>`,
        },
      ],
    });
    const out = await render(tpl, { items: [{ qty: 1 }, { qty: 2 }] });
    const cells = sheetCells(out);
    expect(cells.filter((c) => /^[DE]/.test(c))).toEqual(['D2==A2*10', 'E2==B2*10', 'D3==A3*10', 'E3==B3*10', 'D4==A4*10', 'E4==B4*10']);
  });
});

/** The package with every unprefixed element of the parts whose default namespace is `uri` written with `prefix:` instead. */
function withPrefix(bytes: Uint8Array, uri: string, prefix: string): Uint8Array {
  const files: Record<string, string> = {};
  for (const [name, xml] of unzipText(bytes)) {
    files[name] = !xml.includes(`xmlns="${uri}"`)
      ? xml
      : xml.replace(`xmlns="${uri}"`, `xmlns:${prefix}="${uri}"`).replace(/<(\/?)([A-Za-z][\w.-]*)(?=[\s/>])/g, `<$1${prefix}:$2`);
  }
  return zip(files);
}

/** The package with prefix `from:` renamed to `to:` in every part (declarations included). */
function renamePrefix(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const files: Record<string, string> = {};
  const re = new RegExp(`(<\\/?|\\s)${from}:`, 'g');
  for (const [name, xml] of unzipText(bytes)) files[name] = xml.replace(re, `$1${to}:`).replaceAll(`xmlns:${from}=`, `xmlns:${to}=`);
  return zip(files);
}

const SML = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

describe('namespaces by URI, not by prefix', () => {
  it('renders a workbook whose SpreadsheetML is prefixed (x:workbook, x:sheet, as the .NET Open XML SDK writes)', async () => {
    const plain = xlsxBook({
      strings: ['Customer', '{customer}', '{#items}{name}', '{qty}{/items}', 'Total'],
      sheets: [
        {
          name: 'Orders',
          rows:
            `<row r="1">${s('A1', 0)}${s('B1', 1)}</row>` +
            `<row r="2">${s('A2', 2)}${s('B2', 3)}</row>` +
            `<row r="3">${s('A3', 4)}<c r="B3"><f>SUM(B2:B2)</f><v>0</v></c></row>`,
        },
      ],
    });
    const tpl = withPrefix(plain, SML, 'x');
    expect(unzipText(tpl).get('xl/workbook.xml')).toContain('<x:sheet name="Orders"');
    const out = await render(tpl, {
      customer: 'ACME',
      items: [
        { name: 'a', qty: 2 },
        { name: 'b', qty: 3 },
      ],
    });
    // Untouched parts (the shared strings) keep the writer's prefix; read them as such.
    const unprefixed = zip(
      Object.fromEntries(
        [...unzipText(out)].map(([k, v]) => [
          k,
          k === 'xl/sharedStrings.xml' ? v.replace(/(<\/?)x:/g, '$1').replace('xmlns:x=', 'xmlns=') : v,
        ]),
      ),
    );
    expect(sheetCells(unprefixed)).toEqual([
      'A1=Customer',
      'B1=ACME',
      'A2=a',
      'B2=num:2',
      'A3=b',
      'B3=num:3',
      'A4=Total',
      'B4==SUM(B2:B3)',
    ]);
    expect(packageProblems(out)).toEqual([]);
  });

  it('renders a document whose WordprocessingML uses another prefix or the default namespace', async () => {
    const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
    const body =
      '<w:p><w:r><w:t>Dear {name},</w:t></w:r></w:p><w:p><w:r><w:t>{#items}</w:t></w:r></w:p><w:p><w:r><w:t>- {.}</w:t></w:r></w:p><w:p><w:r><w:t>{/items}</w:t></w:r></w:p>';
    const base = docx(body);
    const data = { name: 'Ann', items: ['x', 'y'] };
    for (const tpl of [renamePrefix(base, 'w', 'ns0'), withPrefix(renamePrefix(base, 'w', 'zz').slice(), W, 'w')]) {
      const out = await render(tpl, data);
      expect(docText(out)).toEqual(['Dear Ann,', '- x', '- y']);
    }
    // The default namespace: <document xmlns="…/wordprocessingml/2006/main"> with unprefixed elements.
    const files: Record<string, string> = {};
    for (const [name, xml] of unzipText(base))
      files[name] = name === 'word/document.xml' ? xml.replace(`xmlns:w="${W}"`, `xmlns="${W}"`).replace(/(<\/?)w:/g, '$1') : xml;
    const out = await render(zip(files), data);
    expect(docText(out)).toEqual(['Dear Ann,', '- x', '- y']);
  });
});

describe('namespaces by URI, not by prefix (presentations, refusals)', () => {
  it('renders and repeats slides whose PresentationML and DrawingML use other prefixes', async () => {
    const tpl = renamePrefix(renamePrefix(pptx([shape(2, '{:items}', '{name}')]), 'p', 'pml'), 'a', 'dml');
    expect(unzipText(tpl).get('ppt/slides/slide1.xml')).toContain('<pml:sld');
    const out = await render(tpl, { items: [{ name: 'one' }, { name: 'two' }] });
    const files = unzipText(out);
    const slides = [...files.keys()].filter((k) => /^ppt\/slides\/slide\d+\.xml$/.test(k)).sort();
    expect(
      slides.map((k) =>
        paragraphs(files.get(k) ?? '')
          .filter((x) => x !== '')
          .join('|'),
      ),
    ).toEqual(['one', 'two']);
    expect(packageProblems(out)).toEqual([]);
  });

  it('refuses, naming the part, a document whose usual prefix is bound to another namespace where WordprocessingML needs it', async () => {
    const files: Record<string, string> = {};
    for (const [name, xml] of unzipText(renamePrefix(docx('<w:p><w:r><w:t>{name}</w:t></w:r></w:p>'), 'w', 'ns0'))) {
      files[name] = name === 'word/document.xml' ? xml.replace('<ns0:body>', '<ns0:body xmlns:w="urn:example:other">') : xml;
    }
    await expect(render(zip(files), { name: 'Ann' })).rejects.toMatchObject({
      errors: [{ id: 'unsupported_format', message: expect.stringContaining('word/document.xml') as unknown }],
    });
  });
});

const R_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Prefixed names used where their prefix is not declared (what makes XML not namespace-well-formed). */
function undeclaredPrefixes(xml: string): string[] {
  const bad: string[] = [];
  const stack: Array<Set<string>> = [new Set(['xml', 'xmlns'])];
  for (const t of tokenize(xml)) {
    if (t.k === 'close') stack.pop();
    if (t.k !== 'open') continue;
    const scope = new Set(stack[stack.length - 1]);
    for (const m of t.text.matchAll(/\sxmlns:([^\s=]+)\s*=/g)) scope.add(m[1] ?? '');
    const used = [t.name, ...[...t.text.matchAll(/\s([^\s=<>/]+)\s*=/g)].map((m) => m[1] ?? '')];
    for (const q of used) {
      const pre = q.includes(':') ? q.slice(0, q.indexOf(':')) : '';
      if (pre !== '' && !scope.has(pre)) bad.push(`${q} in <${t.name}>`);
    }
    if (!t.self) stack.push(scope);
  }
  return bad;
}

describe('xlsx include into a workbook that declares r: on each sheet (openpyxl)', () => {
  it('writes the included sheets with their relationship namespace declared', async () => {
    const openpyxlStyle = (bytes: Uint8Array): Uint8Array => {
      const files = Object.fromEntries(unzipText(bytes));
      files['xl/workbook.xml'] = (files['xl/workbook.xml'] ?? '')
        .replace(` xmlns:r="${R_NS}"`, '')
        .replace(/<sheet /g, `<sheet xmlns:r="${R_NS}" `);
      return zip(files);
    };
    const host = openpyxlStyle(
      xlsxBook({
        strings: ['Summary', '{>details}'],
        sheets: [{ name: 'Summary', rows: `<row r="1">${s('A1', 0)}</row><row r="2">${s('A2', 1)}</row>` }],
      }),
    );
    expect(undeclaredPrefixes(unzipText(host).get('xl/workbook.xml') ?? '')).toEqual([]);
    const details = openpyxlStyle(
      xlsxBook({ strings: ['Total', '{total}'], sheets: [{ name: 'Details', rows: `<row r="1">${s('A1', 0)}${s('B1', 1)}</row>` }] }),
    );
    const out = await render(host, { total: 42 }, { relatedItems: { details } });
    const wb = unzipText(out).get('xl/workbook.xml') ?? '';
    expect([...wb.matchAll(/<sheet\b[^>]*\sname="([^"]+)"/g)].map((m) => m[1])).toEqual(['Summary', 'Details']);
    expect(undeclaredPrefixes(wb)).toEqual([]);
    expect(packageProblems(out)).toEqual([]);
  });
});

describe('xlsx: ranges written end-first', () => {
  it('reads O3:O2 as Excel does (O2:O3) in a looped row instead of writing #REF!', async () => {
    const tpl = xlsxBook({
      strings: ['{#items}{qty}', '{/items}'],
      sheets: [
        {
          name: 'Data',
          rows:
            `<row r="2">${n('A2', 0)}</row>` +
            // A running total written end-first, as Excel keeps it when the range was selected upwards.
            `<row r="3">${s('A3', 0)}<c r="B3"><f>SUMIFS(A3:A2,A3:A2,"&gt;0")</f><v>0</v></c>${s('C3', 1)}</row>`,
        },
      ],
    });
    const out = await render(tpl, { items: [{ qty: 1 }, { qty: 2 }, { qty: 3 }] });
    expect(sheetCells(out).filter((c) => c.startsWith('B'))).toEqual([
      'B3==SUMIFS(A2:A3,A2:A3,"&gt;0")',
      'B4==SUMIFS(A2:A4,A2:A4,"&gt;0")',
      'B5==SUMIFS(A2:A5,A2:A5,"&gt;0")',
    ]);
  });
});

describe('pptx: a package listing its .rels parts by Override', () => {
  it('gives the relationships of repeated slides a content type', async () => {
    const RELS_CT = 'application/vnd.openxmlformats-package.relationships+xml';
    const files = Object.fromEntries(unzipText(pptx([shape(2, '{:items}{name}')])));
    const rels = Object.keys(files).filter((k) => k.endsWith('.rels'));
    files['[Content_Types].xml'] = (files['[Content_Types].xml'] ?? '')
      .replace(`<Default Extension="rels" ContentType="${RELS_CT}"/>`, '')
      .replace('</Types>', `${rels.map((k) => `<Override PartName="/${k}" ContentType="${RELS_CT}"/>`).join('')}</Types>`);
    const tpl = zip(files);
    expect(packageProblems(tpl)).toEqual([]);
    const out = await render(tpl, { items: [{ name: 'one' }, { name: 'two' }, { name: 'three' }] });
    expect([...unzipText(out).keys()].filter((k) => /^ppt\/slides\/_rels\//.test(k))).toHaveLength(3);
    expect(packageProblems(out)).toEqual([]);
  });
});

describe('document properties hold values, not tags', () => {
  const CUSTOM_CT = 'application/vnd.openxmlformats-officedocument.custom-properties+xml';
  const withCustom = (props: string): Uint8Array => {
    const files = Object.fromEntries(unzipText(docx('<w:p><w:r><w:t>Hello {name}</w:t></w:r></w:p>')));
    files['[Content_Types].xml'] = (files['[Content_Types].xml'] ?? '').replace(
      '</Types>',
      `<Override PartName="/docProps/custom.xml" ContentType="${CUSTOM_CT}"/></Types>`,
    );
    files['_rels/.rels'] = (files['_rels/.rels'] ?? '').replace(
      '</Relationships>',
      `<Relationship Id="rId9" Type="${R_NS}/custom-properties" Target="docProps/custom.xml"/></Relationships>`,
    );
    files['docProps/custom.xml'] =
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">' +
      `${props}</Properties>`;
    return zip(files);
  };
  const prop = (pid: number, name: string, value: string): string =>
    `<property fmtid="{D5CDD505-2E9C-101B-9397-08002B2CF9AE}" pid="${pid}" name="${name}"><vt:lpwstr>${value}</vt:lpwstr></property>`;

  it('renders a document carrying SharePoint properties (a braced GUID, a managed _dlc_ name) and keeps them as they are', async () => {
    const guid = prop(2, '_dlc_DocIdItemGuid', '{2B0EC025-1D7C-4C54-9E0F-7A0C3E5B6A11}');
    // All-digit groups would even parse as a subtraction: still a value.
    const digits = prop(3, 'TemplateGuid', '{11111111-2222-3333-4444-555555555555}');
    const managed = prop(4, '_dlc_DocId', '{ABC-123 not a tag}');
    const author = prop(5, 'Client', '{name}');
    const out = await render(withCustom(guid + digits + managed + author), { name: 'Ann' });
    expect(docText(out)).toEqual(['Hello Ann']);
    const custom = unzipText(out).get('docProps/custom.xml') ?? '';
    expect(custom).toContain(guid);
    expect(custom).toContain(digits);
    expect(custom).toContain(managed);
    expect(custom).toContain(prop(5, 'Client', 'Ann'));
  });
});

describe('namespaces the engine does not match on keep their prefixes', () => {
  it("leaves Word 2007's ve: markup-compatibility prefix as written", async () => {
    const MC = 'http://schemas.openxmlformats.org/markup-compatibility/2006';
    const files = Object.fromEntries(unzipText(docx('<w:p><w:r><w:t>Hello {name}</w:t></w:r></w:p>')));
    files['word/document.xml'] = (files['word/document.xml'] ?? '').replace(
      '<w:document ',
      `<w:document xmlns:ve="${MC}" xmlns:w10="urn:schemas-microsoft-com:office:word" ve:Ignorable="w10" `,
    );
    const out = unzipText(await render(zip(files), { name: 'Ann' })).get('word/document.xml') ?? '';
    expect(out).toContain(`xmlns:ve="${MC}"`);
    expect(out).toContain('ve:Ignorable="w10"');
    expect(out).not.toContain('xmlns:mc=');
    expect(paragraphs(out)).toEqual(['Hello Ann']);
  });
});
