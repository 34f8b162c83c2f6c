// A truncated PNG in an image tag (issue 39, finding 9): the header only (signature and IHDR: its size can be
// read, it holds no image data). Before, the document went out with the image silently missing (the
// sanitizer empties an image part no viewer can draw). Now the image is left out and the 201 says so in
// result.data.warnings (IMAGE_INVALID, the tag and where it is, as inspect locates it); under
// document.options.strict the generate is a 400 naming the tag, and nothing is delivered. `docgen render`
// says the same on stderr.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect } from '../../engine/index.ts';
import { client, generateBody } from '../support/http.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { type Stack, startStack } from '../support/stack.ts';

/** A PNG cut after its header: the 8-byte signature and the IHDR chunk of a 64 x 48 RGB image. */
function headerOnlyPng(): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(64, 8);
  ihdr.writeUInt32BE(48, 12);
  ihdr[16] = 8; // bit depth
  ihdr[17] = 2; // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
}

describe('a truncated PNG in an image tag', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    api = client(await stack.credentials());
  });
  afterAll(async () => stack?.stop());

  const template = makeDocx(['Logo: {%logo}', 'Hello {name}']);
  const data = { name: 'Ada', logo: `data:image/png;base64,${headerOnlyPng().toString('base64')}` };

  it('201: the document without the image, and an IMAGE_INVALID warning naming the tag and its place', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(template, data);
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const where = inspect(template).tags.find((t) => t.source === '%logo')?.location;
    expect(res.body.result.data.warnings).toEqual([
      {
        code: 'IMAGE_INVALID',
        message:
          'the image of tag "%logo" was left out: the PNG is cut short (33 bytes, the header only): it holds no image data (word/document.xml, paragraph 1)',
        tag: '%logo',
        location: where,
      },
    ]);
    const file = await api.download(res.body.result.data.document.urn);
    expect(docxParagraphs(file.bytes)).toEqual(['Logo: ', 'Hello Ada']);
  });

  it('docgen render writes the document and names the image it left out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'image-warning-'));
    try {
      await writeFile(join(dir, 't.docx'), template);
      await writeFile(join(dir, 'd.json'), JSON.stringify(data));
      const node = join(process.cwd(), 'node_modules', '.bin', 'node');
      const r = await promisify(execFile)(
        node,
        ['cli/docgen.mjs', 'render', '--template', join(dir, 't.docx'), '--data', join(dir, 'd.json'), '--out', join(dir, 'out.docx')],
        { cwd: process.cwd() },
      );
      expect(r.stderr).toContain(
        'docgen: 1 image left out, damaged (IMAGE_INVALID; --strict refuses them):\n  word/document.xml, paragraph 1: the image of tag "%logo" was left out: the PNG is cut short',
      );
      expect(r.stderr).not.toContain('rendered empty');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('strict: 400 TEMPLATE_ERROR naming the tag, nothing delivered', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(template, data);
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { options: { strict: true } } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_ERROR');
    expect(res.body.error.innerErrors.map((e: { message: string }) => e.message).join('\n')).toMatch(/tag "%logo": the PNG is cut short/);
  });
});
