// The target of a write: where a document goes and how (spec 4.8: generate's `document`, manage's
// `targetDocument`). One contract and one parser for both operations: the target the workflow writes, what
// it asks of the locations, or every problem with it at once.
import { type InnerError, innerError } from './errors.ts';
import { ALL_FORMATS, isFormat } from './formats.ts';
import {
  type ConflictBehavior,
  type CrmTargetOptions,
  entryOf,
  type LocationCatalog,
  type LocationEntry,
  type LocationNeed,
  methodsFor,
  type SharingRequest,
} from './locations.ts';
import { parseSaveOptions, type SaveOptions } from './save-options.ts';

export interface Target {
  /** The file name, without or with the format's extension (the location adds it when missing). */
  name: string;
  fileFormat: string;
  /** The location it is written to. */
  deliveryMethod: string;
  /** The folder at that location. */
  path: string;
  /** The conversion's options (pdfSaveOptions, csvSaveOptions), only the one matching fileFormat. */
  saveOptions?: SaveOptions;
  /** The target location's own options (spec 4.8: the options object of the delivery's own location). */
  sharing?: SharingRequest;
  conflict?: ConflictBehavior;
  options?: { crm?: CrmTargetOptions };
}

/** A target as a request spells it. */
export interface TargetRequest {
  name: string;
  fileFormat: string;
  deliveryMethod: string;
  path: string;
  /** Save options and the options of the locations, by name (an object as the schema admits it). */
  options?: object | undefined;
}

export interface ParsedTarget {
  target: Target;
  /** What the target asks of its location: to write the format, to share when sharing is asked. */
  needs: LocationNeed[];
  problems: InnerError[];
}

/** A file name every location can hold: no slashes or control characters, 1 to 255 characters. */
export function fileNameProblem(name: string): string | undefined {
  if (name.trim() === '' || /[\\/\u0000-\u001f]/.test(name) || name.length > 255)
    return 'must be a file name without slashes or control characters (1-255 characters)';
  return undefined;
}

/** The place rules of a target at its location: the location's path rule and the file-name rule, each
 *  message naming `field`'s path or name. What parseTarget checks, for a name and path known only later too
 *  (a batch row's, rendered from its patterns). */
export function placeProblems(
  place: { name: string; path: string },
  location: Pick<LocationEntry, 'pathProblem'> | undefined,
  field: string,
): string[] {
  const out: string[] = [];
  const pathProblem = location?.pathProblem?.(place.path);
  if (pathProblem) out.push(`${field}.path ${pathProblem}`);
  const nameProblem = fileNameProblem(place.name);
  if (nameProblem) out.push(`${field}.name ${nameProblem}`);
  return out;
}

/**
 * Parses a target (`field`: document or targetDocument) of an operation: its format, its location (one the
 * operation may write to, holding that format: spec 4.8 rule 3), its path and name, its save options and
 * the options of its own location. Every problem at once; the target is only meaningful without problems.
 */
export function parseTarget(
  req: TargetRequest,
  at: {
    field: string;
    request: 'generate' | 'manage';
    /** Files that are no document format (a batch's zip): any writing location holds them. */ containers?: readonly string[];
  },
  catalog: LocationCatalog,
): ParsedTarget {
  const { field } = at;
  const options = req.options as Record<string, unknown> | undefined;
  const problems: InnerError[] = [];
  const bad = (message: string) => problems.push(innerError('VALIDATION_ERROR', message));
  const methods = methodsFor(catalog, at.request, 'write');
  const container = at.containers?.includes(req.fileFormat) ?? false;
  const format = isFormat(req.fileFormat) || container ? req.fileFormat : undefined;
  const location = methods.includes(req.deliveryMethod) ? entryOf(catalog, req.deliveryMethod) : undefined;
  if (!format) bad(`${field}.fileFormat must be one of ${ALL_FORMATS.join(', ')}`);
  if (!location) bad(`${field}.deliveryMethod must be one of ${methods.join(', ')}`);
  else if (format && !container && !(location.formats.writes as readonly string[]).includes(format)) {
    bad(
      `${field}.fileFormat ${format} can be delivered to ${methodsFor(catalog, at.request, 'write', format).join(' or ')}, not ${req.deliveryMethod}`,
    );
  }
  for (const message of placeProblems(req, location, field)) bad(message);
  const saved = parseSaveOptions(options, req.fileFormat, `${field}.options`);
  problems.push(...saved.problems);
  const target: Target = { name: req.name, fileFormat: req.fileFormat, deliveryMethod: req.deliveryMethod, path: req.path };
  if (Object.keys(saved.options).length > 0) target.saveOptions = saved.options;
  const needs: LocationNeed[] = [
    {
      method: req.deliveryMethod,
      capability: 'write',
      field: `${field}.deliveryMethod`,
      ...(container ? {} : { fileFormat: req.fileFormat }),
      target: { name: req.name, path: req.path, field },
    },
  ];
  // Only the options object of the target's own location is read (spec 4.8: the other drive's is ignored).
  const own = location?.targetOptions;
  if (own) {
    const optionsField = `${field}.options.${own.key}`;
    const read = own.read(options?.[own.key], { field: optionsField, fileFormat: req.fileFormat });
    problems.push(...read.problems);
    Object.assign(target, read.delivery);
    if (read.delivery.sharing) needs.push({ method: req.deliveryMethod, capability: 'share', field: optionsField });
  }
  return { target, needs, problems };
}
