import { createHash } from 'node:crypto';
import { isSvg, rasterise, readSvg, SvgError } from './svg.ts';
import { escapeXml } from './xml.ts';

/**
 * `{%image}` values: a data URL, raw bytes, an http(s) URL, or `{ data, width?, height?, alt?, decorative? }`
 * (pixels, a box the image is fitted into with its aspect ratio kept; `alt` the alternative text a screen
 * reader speaks, written as the picture's description; `decorative: true` Office's mark for a picture that
 * carries no meaning). The engine never fetches: URLs are resolved
 * by the caller's `resolveUrl` (render's injected `fetchImage`), and refused without one.
 */

/** Resolves an image URL to bytes the engine already has (fetched by render before the final pass). */
export type UrlResolver = (url: string) => Uint8Array;

export interface ImageData {
  bytes: Uint8Array;
  ext: 'png' | 'jpeg' | 'gif' | 'bmp' | 'svg';
  mime: string;
  widthPx: number;
  heightPx: number;
  hash: string;
}

export class ImageError extends Error {
  readonly id: string;
  /** The value is an image of a known kind whose bytes are damaged (a truncated PNG): the document goes out
   *  without it and a warning says so (an error under strict). */
  readonly damaged: boolean;
  constructor(id: string, message: string, damaged = false) {
    super(message);
    this.id = id;
    this.damaged = damaged;
  }
}

/** Why a PNG's bytes cannot be drawn (a file cut short: only the header, no image data, no end), or
 *  undefined. Walks the chunks: IHDR first, at least one IDAT, IEND last, every length inside the file. */
export function pngDamage(b: Uint8Array): string | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let p = 8;
  let idat = false;
  let first = true;
  while (p + 8 <= b.length) {
    const len = v.getUint32(p);
    const type = String.fromCharCode(b[p + 4]!, b[p + 5]!, b[p + 6]!, b[p + 7]!);
    if (first && type !== 'IHDR') return 'the PNG does not start with its header (IHDR)';
    first = false;
    if (p + 12 + len > b.length) return `the PNG is cut short: its ${type} chunk needs ${len} bytes, the file ends before`;
    if (type === 'IDAT') idat = true;
    if (type === 'IEND') return idat ? undefined : 'the PNG holds no image data (no IDAT chunk)';
    p += 12 + len;
  }
  return idat
    ? 'the PNG is cut short: it has no end (IEND)'
    : `the PNG is cut short (${b.length} bytes, the header only): it holds no image data`;
}

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** Default box: roughly the text width of an A4/Letter page at 96 dpi. */
const DEFAULT_BOX = { width: 600, height: 800 };
export const EMU_PER_PX = 9525;

export function sniff(b: Uint8Array): Exclude<ImageData['ext'], 'svg'> | undefined {
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'png';
  if (b[0] === 0xff && b[1] === 0xd8) return 'jpeg';
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46) return 'gif';
  if (b[0] === 0x42 && b[1] === 0x4d) return 'bmp';
  return undefined;
}

export function dimensions(b: Uint8Array, ext: Exclude<ImageData['ext'], 'svg'>): { w: number; h: number } | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  try {
    switch (ext) {
      case 'png':
        return { w: v.getUint32(16), h: v.getUint32(20) };
      case 'gif':
        return { w: v.getUint16(6, true), h: v.getUint16(8, true) };
      case 'bmp':
        return { w: Math.abs(v.getInt32(18, true)), h: Math.abs(v.getInt32(22, true)) };
      case 'jpeg': {
        let p = 2;
        while (p + 9 < b.length) {
          if (b[p] !== 0xff) return undefined;
          const marker = b[p + 1] ?? 0;
          const len = v.getUint16(p + 2);
          // SOF0..SOF15 except DHT (C4), JPG (C8), DAC (CC) carry the frame size.
          if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
            return { h: v.getUint16(p + 5), w: v.getUint16(p + 7) };
          }
          p += 2 + len;
        }
        return undefined;
      }
    }
  } catch {
    return undefined;
  }
}

export function isImageUrl(v: string): boolean {
  return /^https?:\/\//i.test(v.trim());
}

function toBytes(v: unknown, resolveUrl?: UrlResolver): Uint8Array {
  if (v instanceof Uint8Array) return v;
  if (typeof v === 'string') {
    const m = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(v.trim());
    if (m === null) {
      if (isImageUrl(v)) {
        if (resolveUrl !== undefined) return resolveUrl(v.trim());
        throw new ImageError('image_url_unsupported', 'images from URLs are not available here; pass a data URL or bytes');
      }
      throw new ImageError('image_invalid', 'the image value is not a data URL');
    }
    if (m[2] === undefined) {
      // SVG is text: data:image/svg+xml,%3Csvg… (percent-encoded) is how it is usually written.
      if (/^image\/svg\+xml$/i.test((m[1] ?? '').trim())) {
        try {
          return Buffer.from(decodeURIComponent(m[3] ?? ''), 'utf8');
        } catch {
          throw new ImageError('image_invalid', 'the SVG data URL is not correctly percent-encoded');
        }
      }
      throw new ImageError('image_invalid', 'the image data URL must be base64-encoded');
    }
    return Buffer.from(m[3] ?? '', 'base64');
  }
  throw new ImageError('image_invalid', 'the image value must be a data URL, bytes or {data, width, height}');
}

export interface ImageBox {
  widthPx: number;
  heightPx: number;
}

/** Longest side of the PNG drawn for an SVG (twice the display size, for sharpness). */
const MAX_FALLBACK_PX = 2048;

/**
 * Decodes an image value and computes its display size in pixels. An SVG comes back as `svg`
 * with `image` its PNG rendering (the fallback every Office picture with an SVG carries).
 */
/** What a picture says to a screen reader: its alternative text, or that it is decorative. */
export interface PictureText {
  alt?: string;
  decorative?: true;
}

export function loadImage(
  value: unknown,
  resolveUrl?: UrlResolver,
): { image: ImageData; box: ImageBox; svg?: ImageData; text: PictureText } {
  let data = value;
  let boxW: number | undefined;
  let boxH: number | undefined;
  const text: PictureText = {};
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const o = value as Record<string, unknown>;
    data = Object.hasOwn(o, 'data') ? o['data'] : Object.hasOwn(o, 'src') ? o['src'] : undefined;
    if (typeof o['width'] === 'number' && o['width'] > 0) boxW = o['width'];
    if (typeof o['height'] === 'number' && o['height'] > 0) boxH = o['height'];
    if (typeof o['alt'] === 'string' && o['alt'].trim() !== '') text.alt = o['alt'].trim();
    if (o['decorative'] === true) text.decorative = true;
  }
  return { ...loadBytes(data, resolveUrl, boxW, boxH), text };
}

function loadBytes(
  data: unknown,
  resolveUrl: UrlResolver | undefined,
  boxW: number | undefined,
  boxH: number | undefined,
): { image: ImageData; box: ImageBox; svg?: ImageData } {
  const bytes = toBytes(data, resolveUrl);
  if (bytes.length > MAX_IMAGE_BYTES) throw new ImageError('image_too_large', `the image is larger than ${MAX_IMAGE_BYTES} bytes`);
  const ext = sniff(bytes);
  if (ext === undefined && isSvg(bytes)) return loadSvg(bytes, boxW, boxH);
  if (ext === undefined) throw new ImageError('image_invalid', 'unsupported image format (use PNG, JPEG, GIF, BMP or SVG)');
  const dim = dimensions(bytes, ext);
  if (dim === undefined || dim.w <= 0 || dim.h <= 0) throw new ImageError('image_invalid', 'cannot read the image dimensions');
  const damage = ext === 'png' ? pngDamage(bytes) : undefined;
  if (damage !== undefined) throw new ImageError('image_invalid', damage, true);
  const image: ImageData = {
    bytes,
    ext,
    mime: `image/${ext}`,
    widthPx: dim.w,
    heightPx: dim.h,
    hash: createHash('sha256').update(bytes).digest('hex').slice(0, 16),
  };
  return { image, box: fit(dim.w, dim.h, boxW, boxH) };
}

function loadSvg(
  bytes: Uint8Array,
  boxW: number | undefined,
  boxH: number | undefined,
): { image: ImageData; box: ImageBox; svg: ImageData } {
  try {
    const { svg, width, height } = readSvg(bytes);
    const box = fit(width, height, boxW, boxH);
    const scale = Math.min(2, MAX_FALLBACK_PX / Math.max(box.widthPx, box.heightPx));
    const png = rasterise(svg, box.widthPx * scale);
    const svgBytes = Buffer.from(svg, 'utf8');
    const hash = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex').slice(0, 16);
    const pngDim = dimensions(png, 'png');
    return {
      image: {
        bytes: png,
        ext: 'png',
        mime: 'image/png',
        widthPx: pngDim?.w ?? box.widthPx,
        heightPx: pngDim?.h ?? box.heightPx,
        hash: hash(png),
      },
      box,
      svg: { bytes: svgBytes, ext: 'svg', mime: 'image/svg+xml', widthPx: width, heightPx: height, hash: hash(svgBytes) },
    };
  } catch (e) {
    if (e instanceof SvgError) throw new ImageError('image_invalid', e.message);
    throw e;
  }
}

/** `a:blip`, with the SVG extension (Office 2016+) when the picture is an SVG with a PNG fallback. */
export function blipXml(rId: string, svgRId?: string, ns = ''): string {
  if (svgRId === undefined) return `<a:blip${ns} r:embed="${rId}"/>`;
  return (
    `<a:blip${ns} r:embed="${rId}"><a:extLst><a:ext uri="{96DAC541-7B7A-43D3-8B79-37D633B846F1}">` +
    `<asvg:svgBlip xmlns:asvg="http://schemas.microsoft.com/office/drawing/2016/SVG/main" r:embed="${svgRId}"/></a:ext></a:extLst></a:blip>`
  );
}

/** Largest size with the image's aspect ratio inside the box (never upscaled without a box). */
export function fit(w: number, h: number, boxW?: number, boxH?: number): ImageBox {
  if (boxW === undefined && boxH === undefined) {
    const s = Math.min(1, DEFAULT_BOX.width / w, DEFAULT_BOX.height / h);
    return { widthPx: Math.max(1, Math.round(w * s)), heightPx: Math.max(1, Math.round(h * s)) };
  }
  const s = Math.min(boxW === undefined ? Infinity : boxW / w, boxH === undefined ? Infinity : boxH / h);
  return { widthPx: Math.max(1, Math.round(w * s)), heightPx: Math.max(1, Math.round(h * s)) };
}

/** A picture's non-visual properties (`wp:docPr`, `p:cNvPr`, `xdr:cNvPr`): its id and name, its
 *  alternative text (descr), and Office's decorative mark (the a16 decorative extension). */
export function pictureProps(element: string, id: number, text?: PictureText): string {
  const descr = text?.alt === undefined ? '' : ` descr="${escapeXml(text.alt)}"`;
  const open = `<${element} id="${id}" name="Picture ${id}"${descr}`;
  if (text?.decorative !== true) return `${open}/>`;
  return (
    `${open}><a:extLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:ext uri="{C183D7F6-B498-43B3-948B-1728B52AA6E4}">` +
    `<adec:decorative xmlns:adec="http://schemas.microsoft.com/office/drawing/2017/decorative" val="1"/></a:ext></a:extLst></${element}>`
  );
}

export function docxDrawing(rId: string, id: number, box: ImageBox, svgRId?: string, text?: PictureText): string {
  const cx = box.widthPx * EMU_PER_PX;
  const cy = box.heightPx * EMU_PER_PX;
  return (
    `<w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" distT="0" distB="0" distL="0" distR="0">` +
    `<wp:extent cx="${cx}" cy="${cy}"/>${pictureProps('wp:docPr', id, text)}` +
    `<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">` +
    `<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="${id}" name="Picture ${id}"/><pic:cNvPicPr/></pic:nvPicPr>` +
    `<pic:blipFill>${blipXml(rId, svgRId, ' xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')}<a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic>` +
    `</a:graphicData></a:graphic></wp:inline></w:drawing>`
  );
}

/** A picture that takes the place of a slide shape, fitted and centred in the shape's box. */
export function pptxPicture(
  rId: string,
  id: number,
  image: ImageData,
  frame: { x: number; y: number; cx: number; cy: number },
  svgRId?: string,
  text?: PictureText,
): string {
  const s = Math.min(frame.cx / image.widthPx, frame.cy / image.heightPx);
  const cx = Math.round(image.widthPx * s);
  const cy = Math.round(image.heightPx * s);
  const x = frame.x + Math.round((frame.cx - cx) / 2);
  const y = frame.y + Math.round((frame.cy - cy) / 2);
  return (
    `<p:pic><p:nvPicPr>${pictureProps('p:cNvPr', id, text)}<p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr>` +
    `<p:blipFill>${blipXml(rId, svgRId)}<a:stretch><a:fillRect/></a:stretch></p:blipFill>` +
    `<p:spPr><a:xfrm><a:off x="${x}" y="${y}"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>`
  );
}
