// What the engine reports, as the API tells it: its warnings (result.data.warnings) and its errors (a 400
// TEMPLATE_ERROR, or TEMPLATE_TOO_COMPLEX for a limit, one inner error per problem with where it is). Shared
// by the merge of an Office template (activities/merge.ts) and an e-invoice's XML template (activities/einvoice.ts).
import { innerError, type InnerError } from '../core/errors.ts';
import { callerFailure } from '../core/failures.ts';
import { type GenerateWarning, MAX_GENERATE_WARNINGS, type MergeWarnings } from '../core/generate.ts';
import { describeLocation, LIMIT_EXCEEDED, type TemplateErrorEntry } from '../engine/index.ts';

/** Engine error ids that mean "too much work", not "wrong template". */
const TOO_COMPLEX_IDS = new Set([LIMIT_EXCEEDED, 'render_limit', 'template_too_complex']);

/** The warnings a merge reports, by the engine's ids (and the accessibility checks' codes). */
const WARNING_CODES: Record<string, GenerateWarning['code']> = {
  missing_value: 'MISSING_VALUE',
  image_invalid: 'IMAGE_INVALID',
  IMAGE_WITHOUT_ALT_TEXT: 'IMAGE_WITHOUT_ALT_TEXT',
  TABLE_WITHOUT_HEADER_ROW: 'TABLE_WITHOUT_HEADER_ROW',
};

/** The engine's warnings (missing_value; image_invalid, a damaged image left out) as the API lists them, the first MAX_GENERATE_WARNINGS of them and
 *  how many more there were; nothing when there are none. */
export function mergeWarnings(entries: readonly TemplateErrorEntry[]): MergeWarnings {
  const missing = entries.filter((e) => WARNING_CODES[e.id] !== undefined && e.location !== undefined);
  if (missing.length === 0) return {};
  const warnings = missing.slice(0, MAX_GENERATE_WARNINGS).map((e): GenerateWarning => ({
    code: WARNING_CODES[e.id]!,
    message: locatedMessage(e),
    tag: e.tag ?? '',
    location: { ...e.location! },
  }));
  return { warnings, ...(missing.length > warnings.length ? { warningsOmitted: missing.length - warnings.length } : {}) };
}

/** A template problem for people, with where it is as `docgen inspect` and `render` say it:
 *  `no value for tag "rep" (word/document.xml, paragraph 3)`, `... (sheet "Sales", cell B2)`. */
function locatedMessage(e: TemplateErrorEntry): string {
  return e.location ? `${e.message} (${describeLocation(e.location)})` : e.message;
}

/** The engine's errors as the caller's final failure: TEMPLATE_TOO_COMPLEX when one is a limit, else
 *  TEMPLATE_ERROR; `what` names the template (`the template`, `document.einvoice.template`). */
export function templateFailure(err: { errors: readonly TemplateErrorEntry[]; message: string }, what: string) {
  const tooComplex = err.errors.some((e) => TOO_COMPLEX_IDS.has(e.id));
  const code = tooComplex ? 'TEMPLATE_TOO_COMPLEX' : 'TEMPLATE_ERROR';
  const inner: InnerError[] = err.errors.map((e) => ({ ...innerError(code, locatedMessage(e)), eventId: e.id }));
  return callerFailure(code, `${what} cannot be ${tooComplex ? 'merged' : 'rendered'}: ${err.message}`, inner);
}
