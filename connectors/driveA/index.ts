// DriveA's registration (registry.ts): OneDrive / SharePoint through the subscription's driveA connection.
import { driveOptions } from '../../core/location-options.ts';
import { OFFICE_FORMATS } from '../../core/formats.ts';
import type { LocationRegistration } from '../location.ts';
import { driveAConnection } from './connection.ts';
import { driveALocation } from './location.ts';

export const driveA: LocationRegistration = {
  method: 'DriveA',
  can: ['readTemplate', 'readData', 'readDocument', 'write', 'share', 'remove', 'delete'],
  formats: { templates: OFFICE_FORMATS, writes: [...OFFICE_FORMATS, 'pdf', 'csv'] },
  requests: ['generate', 'manage'],
  connection: driveAConnection,
  transfer: 'remote',
  targetOptions: driveOptions('driveA'),
  create: driveALocation,
};
