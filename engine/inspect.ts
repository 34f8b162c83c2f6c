import type { ErrorLocation, TemplateErrorEntry } from './errors.ts';
import type { TagKind } from './lexer.ts';
import type { Format } from './package.ts';
import { getCompiled } from './template.ts';

export interface InspectedTag {
  kind: TagKind;
  /** Text between the delimiters, as written. */
  source: string;
  /** Expression, loop expression, or include name. */
  value: string;
  location: ErrorLocation;
}

export interface InspectResult {
  format: Format;
  tags: InspectedTag[];
  /** Loop/section expressions, in document order, without duplicates. */
  loops: string[];
  /** Names of included templates ({>name}): each needs a matching relatedItems entry. */
  includes: string[];
  /** Every template problem found, with its location; empty when the template is valid. */
  errors: TemplateErrorEntry[];
}

export interface InspectOptions {
  delimiters?: { start: string; end: string };
  paragraphLoop?: boolean;
}

/**
 * Lists what a template uses and every problem in it without rendering. A package that cannot be
 * opened at all (not a zip, zip bomb, macros) throws a TemplateError like render does.
 */
export function inspect(template: Uint8Array, options?: InspectOptions): InspectResult {
  const delimiters = options?.delimiters ?? { start: '{', end: '}' };
  const compiled = getCompiled(template, { delimiters, paragraphLoop: options?.paragraphLoop ?? true });
  const tags: InspectedTag[] = compiled.tags.map((t) => ({ kind: t.kind, source: t.source, value: t.value, location: t.location }));
  const loops: string[] = [];
  const includes: string[] = [];
  for (const t of tags) {
    if ((t.kind === 'open' || t.kind === 'inverted') && !loops.includes(t.value)) loops.push(t.value);
    if (t.kind === 'include' && !includes.includes(t.value)) includes.push(t.value);
  }
  return { format: compiled.format, tags, loops, includes, errors: compiled.errors.slice() };
}
