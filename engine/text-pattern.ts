// A line of text with template tags, such as a batch's document name `Invoice {number}` or path
// `root/{customer.region | upper}`: the same tag syntax and filters as a template's fields, evaluated against
// one row. Compiled once (every problem of the pattern at once), rendered per row.
import { ErrorBag, TemplateError } from './errors.ts';
import { evaluate, ExpressionError, parseExpression, type Expr } from './expression.ts';
import { FilterError, toText } from './filters.ts';
import { classifyTag } from './lexer.ts';

export interface TextPattern {
  readonly source: string;
  /** True when the pattern has at least one tag (a constant name gives every row the same name). */
  readonly hasTags: boolean;
  /** The text for one row; a TemplateError when a tag cannot be evaluated (a filter fails, or, with
   *  `strict`, a value is missing). */
  render(row: unknown, ctx: { locale: string; timezone: string; strict?: boolean }): string;
}

type Piece = string | { expr: Expr; source: string };

/** `field` names the pattern in messages (e.g. `document.name`). Only plain fields are allowed: no loops,
 *  conditions, images or includes. */
export function compileTextPattern(source: string, field: string, delimiters = { start: '{', end: '}' }): TextPattern {
  const errors = new ErrorBag();
  const pieces: Piece[] = [];
  let pos = 0;
  for (;;) {
    const s = source.indexOf(delimiters.start, pos);
    if (s < 0) break;
    const e = source.indexOf(delimiters.end, s + delimiters.start.length);
    if (e < 0) {
      errors.add('unclosed_tag', `${field}: the tag at character ${s + 1} is never closed`);
      break;
    }
    if (s > pos) pieces.push(source.slice(pos, s));
    const tag = source.slice(s + delimiters.start.length, e);
    const kind = classifyTag(tag);
    if (tag.trim() === '') errors.add('empty_tag', `${field}: an empty tag at character ${s + 1}`);
    else if (kind.kind !== 'field')
      errors.add('pattern_tag', `${field}: tag "${tag.trim()}" must be a plain field (such as {number} or {date | date:'YYYY-MM'})`);
    else {
      try {
        pieces.push({ expr: parseExpression(kind.value), source: tag.trim() });
      } catch (err) {
        if (!(err instanceof ExpressionError)) throw err;
        errors.add(err.id, `${field}: tag "${tag.trim()}": ${err.message}`);
      }
    }
    pos = e + delimiters.end.length;
  }
  if (pos < source.length) pieces.push(source.slice(pos));
  errors.throwIfAny();
  return {
    source,
    hasTags: pieces.some((p) => typeof p !== 'string'),
    render(row, ctx) {
      let out = '';
      const bag = new ErrorBag();
      for (const p of pieces) {
        if (typeof p === 'string') {
          out += p;
          continue;
        }
        let v: unknown;
        try {
          v = evaluate(p.expr, [row], { locale: ctx.locale, timezone: ctx.timezone });
        } catch (err) {
          if (err instanceof FilterError) bag.add('filter_failed', `${field}: tag "${p.source}": ${err.message}`);
          else if (err instanceof ExpressionError) bag.add(err.id, `${field}: tag "${p.source}": ${err.message}`);
          else if (err instanceof RangeError || err instanceof TypeError)
            bag.add('evaluation_failed', `${field}: tag "${p.source}": ${err.message}`);
          else throw err;
          continue;
        }
        if ((v === undefined || v === null) && ctx.strict) bag.add('missing_value', `${field}: no value for tag "${p.source}"`);
        out += toText(v);
      }
      bag.throwIfAny();
      return out;
    },
  };
}

export { TemplateError };
