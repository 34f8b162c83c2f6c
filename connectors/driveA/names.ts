// DriveA's urns and names: the urn forms a request may give (see location.ts) and the names OneDrive and
// SharePoint refuse, checked by the API before anything is queued (nameProblem) and again by a write.
import type { ErrorCode } from '../../core/errors.ts';
import { outputFileName } from '../../core/formats.ts';
import { LocationError } from '../location.ts';

export type Conflict = 'rename' | 'replace' | 'fail';
export type Reading = 'template' | 'data' | 'document';

export const NOT_FOUND: Record<Reading, { code: ErrorCode; field: string }> = {
  template: { code: 'TEMPLATE_NOT_FOUND', field: 'template.urn' },
  data: { code: 'DATA_NOT_FOUND', field: 'data.urn' },
  document: { code: 'TEMPLATE_NOT_FOUND', field: 'sourceDocument.urn' },
};

/** The Graph address of a urn (see the forms above), or a LocationError naming the field. */
export function itemAddress(drive: string, urn: string, reading: Reading): string {
  const u = urn.trim();
  const { code, field } = NOT_FOUND[reading];
  const bad = (why: string) =>
    new LocationError(code, `${field} ${JSON.stringify(urn)} ${why}: DriveA takes an item id, driveId!itemId or root:/Folder/file.docx:`);
  const path = /^root:(\/.*?):?$/.exec(u);
  if (path) {
    const segments = path[1]!.split('/').filter(Boolean);
    if (segments.length === 0 || segments.some((s) => s === '.' || s === '..')) throw bad('is not a file path');
    return `${drive}/root:/${segments.map(encodeURIComponent).join('/')}:`;
  }
  const bang = u.lastIndexOf('!');
  if (bang > 0 && bang < u.length - 1)
    return `/drives/${encodeURIComponent(u.slice(0, bang))}/items/${encodeURIComponent(u.slice(bang + 1))}`;
  if (!/^[A-Za-z0-9._~-]+$/.test(u)) throw bad('is not a DriveA urn');
  return `${drive}/items/${encodeURIComponent(u)}`;
}

/** Why OneDrive / SharePoint refuse a file or folder name (Microsoft's "Restrictions and limitations in
 *  OneDrive and SharePoint"), or undefined. CON, PRN, ... are refused with an extension too ("CON.docx"),
 *  as Windows does: a synced copy of such a file could not exist on a Windows machine. */
export function driveANameRule(name: string): string | undefined {
  if (name === '' || /["*:<>?/\\|]/.test(name) || /[\u0000-\u001f]/.test(name))
    return 'OneDrive and SharePoint refuse the characters " * : < > ? / \\ | (and control characters) in names';
  if (name !== name.trim()) return 'OneDrive and SharePoint refuse names that start or end with a space';
  if (/^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i.test(name) || /^(\.lock|desktop\.ini)$/i.test(name)) {
    return `${name} is a name OneDrive and SharePoint reserve (.lock, CON, PRN, AUX, NUL, COM0-COM9, LPT0-LPT9, desktop.ini)`;
  }
  if (name.startsWith('~$')) return 'OneDrive and SharePoint refuse names that start with ~$';
  if (/_vti_/i.test(name)) return 'OneDrive and SharePoint refuse names that contain _vti_';
  if (name === '.' || name === '..') return '. and .. are not names';
  return undefined;
}

/** SharePoint's limit for a decoded path, the site and library included: a path from the drive root
 *  longer than this is refused whatever the site. */
const MAX_PATH = 400;

/** Why a folder of document.path is refused, or undefined. */
function folderRule(name: string, depth: number): string | undefined {
  const why = driveANameRule(name) ?? (name.startsWith('~') ? 'SharePoint refuses folder names that start with ~' : undefined);
  if (why) return why;
  return depth === 0 && name.toLowerCase() === 'forms' ? 'SharePoint reserves forms at the root of a library' : undefined;
}

const segmentsOf = (path: string) =>
  path
    .split('/')
    .map((s) => s.trim())
    .filter(Boolean);

/** document.path: folders below the drive root, "/"-separated; empty text is the root. */
export function folderSegments(path: string, field = 'document.path'): string[] {
  const segments = segmentsOf(path);
  for (const [i, s] of segments.entries()) {
    const why = folderRule(s, i);
    if (why)
      throw new LocationError(
        'VALIDATION_ERROR',
        `${field} ${JSON.stringify(path)}: the folder name ${JSON.stringify(s)} is not allowed in DriveA: ${why}`,
      );
  }
  return segments;
}

/** Location.nameProblem of DriveA: the file's name (with its extension) and its folders. */
export function driveANameProblem(target: {
  name: string;
  path: string;
  fileFormat: string;
}): { field: 'name' | 'path'; reason: string } | undefined {
  const segments = segmentsOf(target.path);
  for (const [i, s] of segments.entries()) {
    const why = folderRule(s, i);
    if (why) return { field: 'path', reason: `the folder name ${JSON.stringify(s)} is not allowed in DriveA: ${why}` };
  }
  const file = outputFileName(target.name, target.fileFormat);
  const why = driveANameRule(file);
  if (why) return { field: 'name', reason: `the file name ${JSON.stringify(file)} is not allowed in DriveA: ${why}` };
  const length = [...segments, file].join('/').length;
  if (length > MAX_PATH)
    return {
      field: 'name',
      reason: `folders and file name make a path of ${length} characters, over the ${MAX_PATH} OneDrive and SharePoint allow`,
    };
  return undefined;
}
