// DriveB's registration (registry.ts): Google Drive through the subscription's driveB connection. Its own
// formats (gdoc, gsheet, gslide) load and deliver only here (spec 4.8 rules 1 and 3).
import { driveOptions } from '../../core/location-options.ts';
import { DRIVEB_NATIVE_FORMATS } from '../../core/formats.ts';
import type { LocationRegistration } from '../location.ts';
import { driveBConnection } from './connection.ts';
import { driveBLocation } from './location.ts';
import { driveBSettings } from './settings.ts';

export const driveB = {
  method: 'DriveB',
  can: ['readTemplate', 'readData', 'readDocument', 'write', 'share', 'remove', 'delete'],
  formats: { templates: DRIVEB_NATIVE_FORMATS, writes: [...DRIVEB_NATIVE_FORMATS, 'pdf', 'csv', 'xml'] },
  requests: ['generate', 'manage'],
  connection: driveBConnection,
  transfer: 'remote',
  targetOptions: driveOptions('driveB'),
  settings: driveBSettings,
  wording: { what: 'Google Drive', urn: 'a file id', path: "a folder path from the drive root ('' = the root; folders are created)" },
  create: (deps) => driveBLocation(deps),
} satisfies LocationRegistration;
