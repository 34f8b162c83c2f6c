import type { CompileSpec } from './compile.ts';
import type { LexOptions } from './lexer.ts';
import type { OpcPackage } from './package.ts';
import { pptxSpec } from './pptx.ts';

/**
 * SmartArt: the diagram's text lives in its data part (`dgm:pt` points with DrawingML paragraphs),
 * and Office also keeps a drawing part with the laid-out shapes it shows until it re-lays the
 * diagram out; both carry the same text, so both are templated (fields, conditions, inline loops).
 */

export function diagramParts(pkg: OpcPackage): string[] {
  const dir = pkg.format === 'docx' ? 'word' : pkg.format === 'pptx' ? 'ppt' : '';
  if (dir === '') return [];
  const re = new RegExp(`^${dir}/diagrams/(data|drawing)[^/]*\\.xml$`);
  return [...pkg.entries.keys()].filter((name) => re.test(name));
}

export function diagramLex(part: string, start: string, end: string): LexOptions {
  return {
    part,
    textTags: new Set(['a:t']),
    paragraphTag: 'a:p',
    runTag: 'a:r',
    runPropsTag: 'a:rPr',
    start,
    end,
    droppedInTag: new Set(['a:p', 'a:br']),
  };
}

export function diagramSpec(paragraphLoop: boolean): CompileSpec {
  // DrawingML text like a slide's, without shapes to replace (no raw XML or image tags).
  return { ...pptxSpec(paragraphLoop), rawExpand: '', imageExpand: '' };
}
