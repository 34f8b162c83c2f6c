/**
 * Page metering (`pages-generated` / `pages-managed`). The rule, per delivered format:
 *
 * | format | count | exact? |
 * |---|---|---|
 * | pdf  | the page tree's /Count | yes |
 * | pptx | slides listed in ppt/presentation.xml (hidden ones included: they are delivered) | yes |
 * | docx | the pages its PDF rendition has: LibreOffice's layout count (`layout`, no PDF written), or the pages of a rendition (`rendition`, Gotenberg); without a converter, or with `statistic: 'document'`, docProps/app.xml `<Pages>` (what the last editor saved; stale after templating), else 1 | layout/rendition: yes; else the document's statistic |
 * | xlsx | the same for its print layout; the document statistic is the number of worksheets | layout/rendition: yes; else the document's statistic |
 * | csv  | 1 (a csv has no pages; one file is one page) | by definition |
 */
import { ConvertError } from './errors.ts';
import { normalizeFormat } from './options.ts';
import { pdfPageCount } from './pdf.ts';
import type { ConvertOptions } from './types.ts';
import { entryText, readZip } from './zip.ts';

export type PageCountMethod = 'pdf' | 'slides' | 'layout' | 'rendition' | 'app.xml' | 'sheets' | 'csv' | 'xml' | 'fallback';

export interface PageCount {
  pages: number;
  method: PageCountMethod;
  exact: boolean;
}

export interface PageCountOptions {
  /**
   * How to get a rendition for docx/xlsx. Default: the module's converter when one is available.
   * Pass null to never convert (cheap estimate only).
   */
  render?: ((input: Uint8Array, options: ConvertOptions) => Promise<Uint8Array>) | null;
  /**
   * How to count a docx/xlsx's rendition pages without making the rendition (Converter.pageCount);
   * preferred over `render` when given. Default: none (index.ts passes the converter's).
   */
  count?: ((input: Uint8Array, options: Omit<ConvertOptions, 'to'>) => Promise<number>) | null;
  /** 'exact' (default): the rendition's pages when `count` or `render` is available; 'document': always
   *  the document's own statistic (app.xml Pages, worksheets), nothing converted. */
  statistic?: 'exact' | 'document';
  signal?: AbortSignal;
  /** Passed to the rendition's conversion (ConvertOptions). */
  timeoutMs?: number;
  tenant?: string;
  abandonAt?: number;
}

function part(bytes: Uint8Array, name: string): string | undefined {
  const e = readZip(bytes).find((x) => x.name === name);
  return e ? entryText(e) : undefined;
}

export async function pageCount(bytes: Uint8Array, format: string, opts: PageCountOptions = {}): Promise<PageCount> {
  const f = normalizeFormat(format);
  switch (f) {
    case 'pdf':
      return { pages: pdfPageCount(bytes), method: 'pdf', exact: true };
    case 'csv':
      return { pages: 1, method: 'csv', exact: true };
    case 'xml':
      // An e-invoice (XRechnung): metered as one page, whatever the pdf inside it.
      return { pages: 1, method: 'xml', exact: true };
    case 'pptx': {
      const xml = part(bytes, 'ppt/presentation.xml');
      if (xml === undefined) throw new ConvertError('BAD_INPUT', 'not a pptx (no ppt/presentation.xml)');
      return { pages: xml.match(/<p:sldId\b/g)?.length ?? 0, method: 'slides', exact: true };
    }
    case 'docx':
    case 'xlsx': {
      const exact = opts.statistic !== 'document';
      const how = {
        from: f,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        ...(opts.tenant !== undefined ? { tenant: opts.tenant } : {}),
        ...(opts.abandonAt !== undefined ? { abandonAt: opts.abandonAt } : {}),
      };
      if (exact && opts.count) return { pages: await opts.count(bytes, how), method: 'layout', exact: true };
      if (exact && opts.render)
        return { pages: pdfPageCount(await opts.render(bytes, { ...how, to: 'pdf' })), method: 'rendition', exact: true };
      if (f === 'docx') {
        const app = part(bytes, 'docProps/app.xml');
        const n = app === undefined ? undefined : /<(?:\w+:)?Pages>\s*(\d+)\s*</.exec(app)?.[1];
        return n !== undefined && Number(n) > 0
          ? { pages: Number(n), method: 'app.xml', exact: false }
          : { pages: 1, method: 'fallback', exact: false };
      }
      const wb = part(bytes, 'xl/workbook.xml');
      if (wb === undefined) throw new ConvertError('BAD_INPUT', 'not an xlsx (no xl/workbook.xml)');
      return { pages: Math.max(1, wb.match(/<(?:\w+:)?sheet\b/g)?.length ?? 1), method: 'sheets', exact: false };
    }
    default:
      throw new ConvertError('UNSUPPORTED', `cannot count pages of '${format}'`);
  }
}
