import type { OpcPackage } from './package.ts';
import { relsOf, resolvePath } from './package.ts';
import { getAttr } from './xml.ts';
import { blipXml, pictureProps, type PictureText } from './images.ts';

/**
 * `{%img}` in a spreadsheet cell: the picture is anchored at that cell (its top-left corner, the
 * row it was rendered to inside loops) in the sheet's drawing: the existing one (next to its
 * charts and shapes) or a new drawing part related to the sheet.
 */

export interface SheetImage {
  col: number;
  row: number;
  rId: string;
  cx: number;
  cy: number;
  id: number;
  svgRId?: string;
  /** The alternative text or decorative mark from the image tag's value. */
  text?: PictureText;
}
export interface SheetImages {
  part: string;
  existing: boolean;
  images: SheetImage[];
}

const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
export const DRAWING_REL = `${R}/drawing`;
const DRAWING_CT = 'application/vnd.openxmlformats-officedocument.drawing+xml';

/**
 * The drawing `{%img}` pictures of a sheet go to. `added` covers sheets this render created (an
 * included sheet): its relationships and parts so far, and the names already taken.
 */
export function sheetDrawing(
  pkg: OpcPackage,
  sheetPart: string,
  added?: { relsXml: string | undefined; taken: (name: string) => boolean },
): SheetImages {
  if (added?.relsXml !== undefined) {
    for (const m of added.relsXml.matchAll(/<Relationship\b[^>]*>/g)) {
      if (getAttr(m[0], 'Type') !== DRAWING_REL || getAttr(m[0], 'TargetMode') === 'External') continue;
      const dir = sheetPart.slice(0, sheetPart.lastIndexOf('/'));
      return { part: resolvePath(dir, getAttr(m[0], 'Target') ?? ''), existing: true, images: [] };
    }
  }
  const rel = relsOf(pkg, sheetPart).find((r) => r.type === DRAWING_REL && !r.external && pkg.entries.has(r.target));
  if (rel !== undefined) return { part: rel.target, existing: true, images: [] };
  const base = sheetPart.slice(sheetPart.lastIndexOf('/') + 1).replace(/\.xml$/, '');
  const taken = (name: string): boolean => pkg.entries.has(name) || added?.taken(name) === true;
  let name = `xl/drawings/docgen_${base}.xml`;
  for (let n = 1; taken(name); n++) name = `xl/drawings/docgen_${base}_${n}.xml`;
  return { part: name, existing: false, images: [] };
}

function anchor(img: SheetImage): string {
  // Namespaces declared on each anchor, so they also fit an existing drawing with other prefixes.
  return (
    `<xdr:oneCellAnchor xmlns:xdr="${XDR}" xmlns:a="${A}" xmlns:r="${R}"><xdr:from><xdr:col>${img.col - 1}</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>${img.row - 1}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>` +
    `<xdr:ext cx="${img.cx}" cy="${img.cy}"/><xdr:pic><xdr:nvPicPr>${pictureProps('xdr:cNvPr', img.id, img.text)}<xdr:cNvPicPr><a:picLocks noChangeAspect="1"/></xdr:cNvPicPr></xdr:nvPicPr>` +
    `<xdr:blipFill>${blipXml(img.rId, img.svgRId)}<a:stretch><a:fillRect/></a:stretch></xdr:blipFill>` +
    `<xdr:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${img.cx}" cy="${img.cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr></xdr:pic><xdr:clientData/></xdr:oneCellAnchor>`
  );
}

// Elements that follow <drawing> in a worksheet (CT_Worksheet order).
const AFTER_DRAWING =
  /<(?:legacyDrawing|legacyDrawingHF|drawingHF|picture|oleObjects|controls|webPublishItems|tableParts|extLst)\b|<\/worksheet>/;

/**
 * Writes the drawings of one sheet: returns the drawing part's XML and, for a new drawing, the
 * sheet XML with its `<drawing>` element and the content-types XML with the part's override.
 */
export function writeSheetImages(
  sheetXml: string,
  imgs: SheetImages,
  drawingXml: string | undefined,
  relId: string | undefined,
  contentTypes: string,
): { drawing: string; sheet: string; contentTypes: string } {
  const anchors = imgs.images.map(anchor).join('');
  if (imgs.existing && drawingXml !== undefined) {
    const at = drawingXml.lastIndexOf('</');
    return { drawing: `${drawingXml.slice(0, at)}${anchors}${drawingXml.slice(at)}`, sheet: sheetXml, contentTypes };
  }
  const drawing = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}" xmlns:r="${R}">${anchors}</xdr:wsDr>`;
  const m = AFTER_DRAWING.exec(sheetXml);
  const at = m?.index ?? sheetXml.length;
  const sheet = `${sheetXml.slice(0, at)}<drawing xmlns:r="${R}" r:id="${relId ?? ''}"/>${sheetXml.slice(at)}`;
  const ct = contentTypes.includes(`PartName="/${imgs.part}"`)
    ? contentTypes
    : contentTypes.replace('</Types>', `<Override PartName="/${imgs.part}" ContentType="${DRAWING_CT}"/></Types>`);
  return { drawing, sheet, contentTypes: ct };
}
