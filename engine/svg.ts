import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Resvg as ResvgType } from '@resvg/resvg-wasm';

/**
 * SVG images. Office stores an SVG picture as a PNG (what applications without SVG support, and
 * LibreOffice's PDF export, draw) whose blip carries the SVG in the `asvg:svgBlip` extension (what
 * Word/PowerPoint/Excel 2016+ draw). The PNG is rasterised here with resvg (WebAssembly, loaded on
 * the first SVG; `prepareSvg()` loads it, `render()` does so by itself when it meets an SVG).
 */

type ResvgClass = typeof ResvgType;

let Resvg: ResvgClass | undefined;
let loading: Promise<void> | undefined;
let fonts: Uint8Array[] | undefined;

/** Thrown when an SVG must be rasterised before the renderer is loaded (render retries after loading). */
export class SvgNotReady extends Error {}

export function prepareSvg(): Promise<void> {
  loading ??= (async () => {
    const mod = await import('@resvg/resvg-wasm');
    const wasm = await readFile(createRequire(import.meta.url).resolve('@resvg/resvg-wasm/index_bg.wasm'));
    await mod.initWasm(wasm);
    Resvg = mod.Resvg;
  })().catch((e: unknown) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

// Text in an SVG is drawn with these fonts when the machine has them (the worker image has the
// fonts LibreOffice uses); without any, the fallback PNG has no text (Office draws the SVG itself).
const FONT_FILES = [
  '/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf',
  '/usr/share/fonts/truetype/liberation2/LiberationSans-Bold.ttf',
  '/usr/share/fonts/truetype/liberation2/LiberationSerif-Regular.ttf',
  '/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf',
  '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
];

function fontBuffers(): Uint8Array[] {
  if (fonts !== undefined) return fonts;
  fonts = [];
  for (const f of FONT_FILES) {
    try {
      fonts.push(readFileSync(f));
    } catch {
      // Not on this machine.
    }
  }
  return fonts;
}

export class SvgError extends Error {}

const UNITS: Record<string, number> = { '': 1, px: 1, pt: 96 / 72, pc: 16, mm: 96 / 25.4, cm: 96 / 2.54, in: 96 };

function length(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*(px|pt|pc|mm|cm|in)?\s*$/i.exec(v);
  if (!m) return undefined;
  const n = Number(m[1]) * (UNITS[(m[2] ?? '').toLowerCase()] ?? 1);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Whether bytes look like an SVG document. */
export function isSvg(b: Uint8Array): boolean {
  const head = Buffer.from(b.subarray(0, 1024))
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  return /^\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(head);
}

/**
 * Checks and cleans an SVG: DTDs (entity expansion) are refused; scripts, event handlers and
 * references to anything but the document itself or data: URLs are removed, so the picture never
 * loads anything when an application opens it. Returns the cleaned text and its intrinsic size.
 */
export function readSvg(bytes: Uint8Array): { svg: string; width: number; height: number } {
  let svg = Buffer.from(bytes)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (/<!DOCTYPE|<!ENTITY/i.test(svg)) throw new SvgError('SVG images with a DOCTYPE or entities are refused');
  svg = svg
    .replace(/<script\b[^>]*\/>|<script\b[^>]*>[\s\S]*?<\/script\s*>/gi, '')
    .replace(/<foreignObject\b[^>]*\/>|<foreignObject\b[^>]*>[\s\S]*?<\/foreignObject\s*>/gi, '')
    .replace(/\son[a-z]+\s*=\s*("[^"]*"|'[^']*')/gi, '')
    .replace(
      /(\s(?:xlink:)?href\s*=\s*)("([^"]*)"|'([^']*)')/gi,
      (m, _a: string, _q: string, d: string | undefined, s: string | undefined) => {
        const v = (d ?? s ?? '').trim();
        return v.startsWith('#') || /^data:/i.test(v) ? m : '';
      },
    )
    .replace(/url\(\s*(['"]?)(?!#|data:)[^)'"]*\1\s*\)/gi, 'none')
    .replace(/@import\b[^;]*;?/gi, '');
  const root = /<svg\b[^>]*>/i.exec(svg)?.[0];
  if (root === undefined) throw new SvgError('the SVG has no <svg> element');
  const attr = (name: string): string | undefined =>
    new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`)
      .exec(root)
      ?.slice(1)
      .find((x) => x !== undefined);
  const vb = (attr('viewBox') ?? '')
    .trim()
    .split(/[\s,]+/)
    .map(Number);
  const vbW = vb.length === 4 && (vb[2] ?? 0) > 0 ? vb[2] : undefined;
  const vbH = vb.length === 4 && (vb[3] ?? 0) > 0 ? vb[3] : undefined;
  let width = length(attr('width'));
  let height = length(attr('height'));
  if (width === undefined && height === undefined) {
    width = vbW ?? 300;
    height = vbH ?? 150;
  } else if (width === undefined) {
    width = vbW !== undefined && vbH !== undefined ? ((height ?? 150) * vbW) / vbH : 300;
  } else if (height === undefined) {
    height = vbW !== undefined && vbH !== undefined ? (width * vbH) / vbW : 150;
  }
  return { svg, width: Math.max(1, Math.round(width)), height: Math.max(1, Math.round(height ?? 150)) };
}

/** PNG of an SVG at `widthPx` pixels wide. */
export function rasterise(svg: string, widthPx: number): Uint8Array {
  if (Resvg === undefined) throw new SvgNotReady('the SVG renderer is not loaded');
  let r: InstanceType<ResvgClass> | undefined;
  try {
    r = new Resvg(svg, {
      fitTo: { mode: 'width', value: Math.max(1, Math.round(widthPx)) },
      font: { fontBuffers: fontBuffers(), defaultFontFamily: 'Liberation Sans', sansSerifFamily: 'Liberation Sans' },
    });
    const img = r.render();
    const png = img.asPng();
    img.free();
    return png;
  } catch (e) {
    if (e instanceof SvgNotReady) throw e;
    throw new SvgError(`the SVG cannot be drawn: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    r?.free();
  }
}
