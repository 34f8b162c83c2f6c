// crm's registration (registry.ts): Salesforce Files through the subscription's crm connection; manage's
// source and target (spec 4.8 names it for manage only).
import { crmOptions } from '../../core/location-options.ts';
import { OFFICE_FORMATS } from '../../core/formats.ts';
import type { LocationRegistration } from '../location.ts';
import { crmConnection } from './connection.ts';
import { crmLocation } from './location.ts';
import { crmSettings } from './settings.ts';

export const crm = {
  method: 'crm',
  can: ['readDocument', 'write', 'remove'],
  formats: { templates: [], writes: [...OFFICE_FORMATS, 'pdf', 'csv', 'xml'] },
  requests: ['manage'],
  connection: crmConnection,
  transfer: 'remote',
  targetOptions: crmOptions,
  settings: crmSettings,
  wording: { what: 'Salesforce Files', urn: 'a ContentVersion id' },
  create: crmLocation,
} satisfies LocationRegistration;
