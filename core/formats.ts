// The table of file formats (spec 2.3, 4.4, 4.8): extension, content type, what converts to what. One
// copy, read by the API's checks, the workflows (content types of scratch files), the activities and the
// locations. Which location reads or receives which format is each location's registration
// (core/locations.ts, connectors/registry.ts).

export type FormatKind = 'office' | 'native' | 'output';

export interface FormatSpec {
  readonly kind: FormatKind;
  readonly contentType: string;
  /** Formats our converter produces from this one (spec 4.8 rule 2 and the manage Convert operation). */
  readonly convertsTo: readonly string[];
}

export const FORMATS = {
  docx: {
    kind: 'office',
    contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    convertsTo: ['pdf'],
  },
  xlsx: {
    kind: 'office',
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    convertsTo: ['pdf', 'csv'],
  },
  pptx: {
    kind: 'office',
    contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    convertsTo: ['pdf'],
  },
  gdoc: { kind: 'native', contentType: 'application/vnd.google-apps.document', convertsTo: ['pdf'] },
  gsheet: { kind: 'native', contentType: 'application/vnd.google-apps.spreadsheet', convertsTo: ['pdf'] },
  gslide: { kind: 'native', contentType: 'application/vnd.google-apps.presentation', convertsTo: ['pdf'] },
  pdf: { kind: 'output', contentType: 'application/pdf', convertsTo: [] },
  csv: { kind: 'output', contentType: 'text/csv', convertsTo: [] },
  /** An XRechnung e-invoice (document.einvoice): made from the data, not converted from the template. */
  xml: { kind: 'output', contentType: 'application/xml', convertsTo: [] },
} as const satisfies Record<string, FormatSpec>;

export type FileFormat = keyof typeof FORMATS;

export const ALL_FORMATS = Object.keys(FORMATS) as FileFormat[];
export const TEMPLATE_FORMATS = ['docx', 'xlsx', 'pptx', 'gdoc', 'gsheet', 'gslide'] as const satisfies readonly FileFormat[];
export const OFFICE_FORMATS = ['docx', 'xlsx', 'pptx'] as const satisfies readonly FileFormat[];
export const DRIVEB_NATIVE_FORMATS = ['gdoc', 'gsheet', 'gslide'] as const satisfies readonly FileFormat[];
/** Upload extensions (spec 4.4, 8). */
export const UPLOAD_TEMPLATE_FORMATS = OFFICE_FORMATS;

export function isFormat(f: string | undefined): f is FileFormat {
  return f !== undefined && Object.hasOwn(FORMATS, f);
}

export function isOfficeFormat(f: string | undefined): f is (typeof OFFICE_FORMATS)[number] {
  return isFormat(f) && FORMATS[f].kind === 'office';
}

export function isNativeFormat(f: string | undefined): f is (typeof DRIVEB_NATIVE_FORMATS)[number] {
  return isFormat(f) && FORMATS[f].kind === 'native';
}

/** A DriveB-native format's Office twin: what Drive exports it to, what the engine merges and converts,
 *  and what Drive converts back to the native type on upload. */
export const NATIVE_OFFICE_TWIN = { gdoc: 'docx', gsheet: 'xlsx', gslide: 'pptx' } as const;

/** The format whose bytes a file of `format` travels as between steps: the Office twin for a native
 *  format, the format itself otherwise. */
export function bytesFormatOf(format: string): string {
  return isNativeFormat(format) ? NATIVE_OFFICE_TWIN[format] : format;
}

/** What an Office package is, for people: `a Word document (docx)`. */
export const OFFICE_KIND_NAMES: Record<(typeof OFFICE_FORMATS)[number], string> = {
  docx: 'a Word document (docx)',
  xlsx: 'an Excel workbook (xlsx)',
  pptx: 'a PowerPoint presentation (pptx)',
};

/** Why a template whose package is of another kind than its declared template.fileFormat is refused
 *  (INVALID_TEMPLATE_FORMAT): said the same by the API (an upload whose kind it knows) and the merge. */
export function otherKindMessage(declared: string, actual: (typeof OFFICE_FORMATS)[number]): string {
  return `template.fileFormat is ${declared}, but the template is ${OFFICE_KIND_NAMES[actual]}`;
}

export function contentTypeOf(format: string): string {
  return isFormat(format) ? FORMATS[format].contentType : 'application/octet-stream';
}

/** Whether our converter turns `from` into `to` (same format: nothing to convert). */
export function canConvert(from: string, to: string): boolean {
  return isFormat(from) && (FORMATS[from].convertsTo as readonly string[]).includes(to);
}

/** The file name a document gets: the requested name with the format's extension. */
export function outputFileName(name: string, fileFormat: string): string {
  const ext = `.${fileFormat}`;
  return name.toLowerCase().endsWith(ext) ? name : `${name}${ext}`;
}

/** The format a stored file name says it is (its extension), lower case. */
export function formatOfFileName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot < 0 ? '' : fileName.slice(dot + 1).toLowerCase();
}
