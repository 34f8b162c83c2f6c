// DriveA's registration (registry.ts): OneDrive / SharePoint through the subscription's driveA connection.
import { driveOptions } from '../../core/location-options.ts';
import { OFFICE_FORMATS } from '../../core/formats.ts';
import type { LocationRegistration } from '../location.ts';
import { driveAConnection } from './connection.ts';
import { driveALocation } from './location.ts';
import { driveASettings } from './settings.ts';

export const driveA = {
  method: 'DriveA',
  can: ['readTemplate', 'readData', 'readDocument', 'write', 'share', 'remove', 'delete'],
  formats: { templates: OFFICE_FORMATS, writes: [...OFFICE_FORMATS, 'pdf', 'csv', 'xml'] },
  requests: ['generate', 'manage'],
  connection: driveAConnection,
  transfer: 'remote',
  targetOptions: driveOptions('driveA'),
  settings: driveASettings,
  wording: {
    what: 'OneDrive / SharePoint',
    urn: 'a driveItem id (or driveId!itemId, root:/path:)',
    path: "a folder path from the drive root ('' = the root; folders are created)",
  },
  create: driveALocation,
} satisfies LocationRegistration;
