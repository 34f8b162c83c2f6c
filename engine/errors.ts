/** Where a template problem sits, so authors can find it without reading XML. */
export interface ErrorLocation {
  part: string;
  /** Word/PowerPoint: 1-based paragraph of the part. */
  paragraph?: number;
  /** Spreadsheets: the sheet's name and the cell (A1 style). */
  sheet?: string;
  cell?: string;
  /** Character offset in the part's visible text (XML templates: in the template's text). */
  offset?: number;
  /** XML templates (engine/xml-template.ts): 1-based line and column in the template's text. */
  line?: number;
  column?: number;
}

/** Where a problem is, for people: `sheet "Sales", cell B2` or `word/document.xml, paragraph 3`. */
export function describeLocation(loc: ErrorLocation | undefined): string {
  if (loc === undefined) return 'template';
  if (loc.sheet !== undefined || loc.cell !== undefined) {
    const sheet = loc.sheet !== undefined ? `sheet ${JSON.stringify(loc.sheet)}` : loc.part;
    return loc.cell !== undefined ? `${sheet}, cell ${loc.cell}` : sheet;
  }
  if (loc.line !== undefined) return `${loc.part}, line ${loc.line}, column ${loc.column ?? 1}`;
  return loc.paragraph !== undefined && loc.paragraph > 0 ? `${loc.part}, paragraph ${loc.paragraph}` : loc.part;
}

export interface TemplateErrorEntry {
  id: string;
  message: string;
  location?: ErrorLocation;
  /** The tag as written between its delimiters, trimmed (`missing_value` warnings: which tag rendered empty). */
  tag?: string;
}

/**
 * Every failure caused by the input (template bytes, data, options) surfaces as this one error type,
 * carrying all problems found in one pass: the API maps it to a 400 with one innerError per entry.
 */
export class TemplateError extends Error {
  readonly errors: TemplateErrorEntry[];

  constructor(errors: TemplateErrorEntry[]) {
    const first = errors[0];
    const summary =
      first === undefined
        ? 'template error'
        : errors.length === 1
          ? first.message
          : `${first.message} (and ${errors.length - 1} more problem${errors.length === 2 ? '' : 's'})`;
    super(summary);
    this.name = 'TemplateError';
    this.errors = errors;
  }

  static single(id: string, message: string, location?: ErrorLocation): TemplateError {
    return new TemplateError([location === undefined ? { id, message } : { id, message, location }]);
  }
}

/** Collects problems across the stages so one render reports all of them at once. */
export class ErrorBag {
  readonly entries: TemplateErrorEntry[] = [];

  add(id: string, message: string, location?: ErrorLocation): void {
    // A runaway template (e.g. a loop error repeated per item) must not build an unbounded report.
    if (this.entries.length >= 100) return;
    this.entries.push(location === undefined ? { id, message } : { id, message, location });
  }

  get size(): number {
    return this.entries.length;
  }

  throwIfAny(): void {
    if (this.entries.length > 0) throw new TemplateError(this.entries.slice());
  }
}
