// A pptx table frame grows with its looped rows exactly as docxtemplater grows it (its loop-table.pptx
// fixture and expected output).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { render } from '../support/engine.ts';
import { unzipText } from '../unit/engine/helpers.ts';
import { docxtemplaterCorpus, requireShared } from './corpus.ts';

requireShared();

describe('pptx tables against docxtemplater', () => {
  it('grows the frame as docxtemplater does (its loop-table.pptx fixture)', async () => {
    const out = await render(new Uint8Array(fs.readFileSync(path.join(docxtemplaterCorpus, 'templates', 'loop-table.pptx'))), {
      products: [
        { name: 'Acme', price: 10 },
        { name: 'Ecma', price: 20 },
      ],
    });
    const frame = (xml: string): string | undefined => /<p:xfrm>([\s\S]*?)<\/p:xfrm>/.exec(xml)?.[1];
    const expected =
      unzipText(new Uint8Array(fs.readFileSync(path.join(docxtemplaterCorpus, 'expected', 'expected-loop-table.pptx')))).get(
        'ppt/slides/slide1.xml',
      ) ?? '';
    expect(frame(unzipText(out).get('ppt/slides/slide1.xml') ?? '')).toBe(frame(expected));
  });
});
