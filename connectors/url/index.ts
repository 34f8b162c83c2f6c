// template.url's registration (registry.ts): no method field names it; generate's template.url reads
// through it, in the workflow task as an upload is read.
import { OFFICE_FORMATS } from '../../core/formats.ts';
import type { LocationRegistration } from '../location.ts';
import { urlLocation } from './location.ts';

export const url: LocationRegistration = {
  method: 'url',
  can: ['readTemplate'],
  formats: { templates: OFFICE_FORMATS, writes: [] },
  requests: [],
  transfer: 'local',
  create: urlLocation,
};
