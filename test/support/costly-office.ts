// Documents small on disk that cost LibreOffice minutes (issue 25, section 2), built at test time: each is
// under every size limit of the service and was accepted before the cost estimates (engine/cost.ts).
import { makeDocx, para, pngFile } from '../integration/convert/fixtures.ts';

/** `n` one-line paragraphs numbered apart: compresses like real text (260 000 of them: a 0.7 MB docx of
 *  ~5 200 pages). */
export function numberedParagraphs(n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`<w:p><w:r><w:t>${i}</w:t></w:r></w:p>`);
  return out.join('');
}

/** A docx whose single paragraph holds one run of `chars` characters of words drawn at random from a few
 *  (60 MB of text deflate to ~3 MB: under the part size and zip-bomb limits); `before` goes first. */
export function longRunDocx(chars: number, before = ''): Uint8Array {
  const words = ['lorem ', 'ipsum ', 'dolor ', 'amet '];
  const parts: string[] = [];
  let n = 0;
  // A fixed linear congruential sequence: the same document every time, and not a zip bomb.
  for (let x = 12345; n < chars;) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = words[(x >>> 16) % words.length]!;
    parts.push(w);
    n += w.length;
  }
  return makeDocx(`${before}<w:p><w:r><w:t xml:space="preserve">${parts.join('').slice(0, chars)}</w:t></w:r></w:p>`);
}

/** A 1-bit greyscale PNG of width x height pixels, all white: 30 000 x 30 000 (900 megapixels, a 112 MB
 *  bitmap before LibreOffice widens it) is ~110 KB. */
export function hugePng(width: number, height: number): Uint8Array {
  const row = Math.ceil(width / 8) + 1;
  const raw = Buffer.alloc(row * height, 0xff);
  for (let y = 0; y < height; y++) raw[y * row] = 0; // filter byte: none
  return pngFile(width, height, 1, 0, raw, 9);
}

/** An HTML table of `rows` rows of `cols` cells (for `{~~html}`): 40 000 x 10 is 7.3 MB. */
export function htmlTable(rows: number, cols: number): string {
  const out: string[] = ['<table>'];
  for (let i = 0; i < rows; i++) {
    out.push('<tr>');
    for (let c = 0; c < cols; c++) out.push(`<td>r${i}c${c}</td>`);
    out.push('</tr>');
  }
  out.push('</table>');
  return out.join('');
}

/** A template with one tag in a paragraph (`{~~html}`, `{%img}`, `{name}`). */
export function tagDocx(tag: string): Uint8Array {
  return makeDocx(para(tag));
}
