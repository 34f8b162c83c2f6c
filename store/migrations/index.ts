// Versioned migrations, applied in order at start-up inside one transaction each. Never edit a shipped
// migration: add a new one.
import { m001 } from './001-initial.ts';
import { m002 } from './002-records.ts';
import { m003 } from './003-common.ts';
import { m004 } from './004-connections.ts';
import { m005 } from './005-document-initiator.ts';
import { m006 } from './006-location-writes.ts';
import { m007 } from './007-consumed-by.ts';
import { m008 } from './008-upload-sweep.ts';
import { m009 } from './009-batches.ts';
import { m010 } from './010-batch-cancel.ts';
import { m011 } from './011-rate-buckets.ts';
import { m012 } from './012-batch-row-warnings.ts';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const migrations: readonly Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012];
