// Storage's registration (registry.ts): the service's own location, for uploads and delivered documents.
import { OFFICE_FORMATS } from '../../core/formats.ts';
import type { LocationRegistration } from '../location.ts';
import { storageLocation } from './location.ts';

export const storage: LocationRegistration = {
  method: 'Storage',
  can: ['readTemplate', 'readData', 'readDocument', 'write', 'remove'],
  formats: { templates: OFFICE_FORMATS, writes: [...OFFICE_FORMATS, 'pdf', 'csv', 'xml'] },
  requests: ['generate', 'manage'],
  // Its reads and writes are the database and the blob store: steps of the workflow task.
  transfer: 'local',
  uploads: true,
  wording: {
    what: "the service's own storage",
    urn: 'an upload id (template, data) or a delivered document urn (download with GET /documents/storage/{urn}/content)',
    path: "'root' or 'root/<folder>'",
  },
  pathProblem: (path) => (path === 'root' || path.startsWith('root/') ? undefined : "must be 'root' or start with 'root/' for Storage"),
  create: storageLocation,
};
