import { type OutboundPolicy, outboundPolicy } from '../connectors/http/address-policy.ts';
import type { ConnectorSettings } from '../connectors/connections.ts';
import type { LocationRegistry } from '../connectors/registry.ts';
import type { Converter } from '../converter/index.ts';
import type { BlobStore } from '../connectors/storage/blob-store.ts';
import type { Db } from '../store/db.ts';
import type { MergePool } from './merge-pool.ts';

/** The worker's outbound HTTP settings (OUTBOUND_ALLOW, OUTBOUND_TIMEOUT_MS, OUTBOUND_MAX_BYTES): every
 *  activity that leaves the service (callbacks, GraphQL data, images from URLs) uses these, never a value
 *  carried in a workflow input, so the allow-list is the one of the process that makes the request. */
export interface OutboundDeps {
  policy: OutboundPolicy;
  /** One fetch for generation (GraphQL, one image), connect to last byte. */
  timeoutMs: number;
  /** Largest response of one fetch for generation. */
  maxResponseBytes: number;
}

/** What activities need from the process that hosts them. */
export interface ActivityDeps {
  db: Db;
  blobs: BlobStore;
  /** Absent = public addresses only, with the default limits. */
  outbound?: OutboundDeps;
  /** Where files come from and go to; built from db, blobs and `connectors` unless given. */
  locations?: LocationRegistry;
  /** Endpoints of the drive and CRM connectors (config/env.ts); absent = the public services' defaults. */
  connectors?: ConnectorSettings;
  /** The converter the conversion and page-count steps use; absent = the converter module's default. */
  converter?: Converter;
  /** How docx/xlsx pages are metered (PAGE_COUNT): auto (default), exact or document; see converter/pages.ts. */
  pageCount?: 'auto' | 'exact' | 'document';
  /** Where merges run; absent = a shared pool with the default limits, created on first use. */
  merge?: MergePool;
}

/** ActivityDeps with everything resolved, as the activity factories receive it. */
export type ResolvedActivityDeps = ActivityDeps & { locations: LocationRegistry };

const DEFAULT_OUTBOUND: OutboundDeps = { policy: outboundPolicy([]), timeoutMs: 15_000, maxResponseBytes: 10 * 1024 * 1024 };

export function outboundOf(deps: ActivityDeps): OutboundDeps {
  return deps.outbound ?? DEFAULT_OUTBOUND;
}
