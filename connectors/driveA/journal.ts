// Exactly one file per write across retries: the file is made under a temporary name, journaled
// (store/location-writes.ts, its session or monitor URL sealed), then placed under its final name.
import type { Db } from '../../store/db.ts';
import { deleteLocationWrite, getLocationWrite, type LocationWrite, putLocationWrite } from '../../store/location-writes.ts';
import { isSealed, seal, unseal } from '../../security/sealed.ts';
import type { LocationContext, SharingRequest, Written } from '../location.ts';
import { type DriveItem, type GraphClient, GraphError } from './graph.ts';
import type { Conflict } from './names.ts';
import { share } from './share.ts';

export const JOURNAL = 'DriveA';
/** Graph's answers that refuse a name for good (invalid, too long, taken with conflict fail). */
const REFUSALS = new Set([400, 409, 413]);

/** Runs `place` once per urn: the journal says what an earlier attempt did. */
export async function journaled(
  db: Db,
  ctx: LocationContext,
  urn: string,
  graph: GraphClient,
  drive: string,
  steps: {
    /** Makes the file under its temporary name (or finds it); journaled as uploaded. */
    make(journal: { write(w: LocationWrite): Promise<void>; resume?: string }): Promise<DriveItem>;
    /** Gives it its final name (and folder). */
    place(item: DriveItem): Promise<DriveItem>;
    temporaryName: string;
  },
): Promise<DriveItem> {
  const write = async (w: LocationWrite) =>
    putLocationWrite(db, ctx.subscriptionId, JOURNAL, urn, {
      ...w,
      uploadUrl: w.uploadUrl ? await seal(db, ctx.subscriptionId, w.uploadUrl) : null,
    });
  const earlier = await openedJournal(db, ctx, urn);
  let item: DriveItem | undefined;
  if (earlier?.itemId) {
    try {
      item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(earlier.itemId)}`);
    } catch (err) {
      if (!(err instanceof GraphError && err.status === 404)) throw err; // removed meanwhile: write again
    }
  }
  if (item && earlier?.state === 'placed') return item;
  if (!item) {
    item = await steps.make({ write, ...(earlier?.state === 'uploading' && earlier.uploadUrl ? { resume: earlier.uploadUrl } : {}) });
    await write({ state: 'uploaded', itemId: item.id, uploadUrl: null });
  }
  // Renamed already when it no longer has the temporary name (the answer to that PATCH was lost).
  if (item.name === steps.temporaryName) {
    try {
      item = await steps.place(item);
    } catch (err) {
      if (err instanceof GraphError && REFUSALS.has(err.status)) {
        // The final name is refused (or taken, with conflict fail): nothing stays behind, the temporary
        // file goes for good and the journal forgets it.
        await graph.request('POST', `${drive}/items/${encodeURIComponent(item.id)}/permanentDelete`).catch(() => undefined);
        await deleteLocationWrite(db, ctx.subscriptionId, JOURNAL, urn);
      }
      throw err;
    }
  }
  await write({ state: 'placed', itemId: item.id, uploadUrl: null });
  return item;
}

/** What a write, copy or move answers: the item in its folder, shared as asked. */
export async function placed(
  graph: GraphClient,
  drive: string,
  item: DriveItem,
  segments: string[],
  sharing: SharingRequest | undefined,
): Promise<Written> {
  const shared = sharing ? await share(graph, `${drive}/items/${encodeURIComponent(item.id)}`, item, sharing) : {};
  return { urn: item.id, name: item.name, path: segments.join('/'), ...(item.webUrl ? { uri: item.webUrl } : {}), ...shared };
}

/** Gives `item` its final name (and folder), with the clash policy. */
export async function placeAs(
  graph: GraphClient,
  drive: string,
  item: DriveItem,
  name: string,
  conflict: Conflict,
  parentId?: string,
): Promise<DriveItem> {
  return graph.json<DriveItem>('PATCH', `${drive}/items/${encodeURIComponent(item.id)}`, {
    json: { name, ...(parentId ? { parentReference: { id: parentId } } : {}) },
    query: { '@microsoft.graph.conflictBehavior': conflict },
  });
}

/** The journal entry of a write, its URL opened (rows of older versions hold it in plain text). */
export async function openedJournal(db: Db, ctx: LocationContext, urn: string): Promise<LocationWrite | undefined> {
  const w = await getLocationWrite(db, ctx.subscriptionId, JOURNAL, urn);
  if (!w?.uploadUrl || !isSealed(w.uploadUrl)) return w;
  return { ...w, uploadUrl: await unseal(db, ctx.subscriptionId, w.uploadUrl) };
}

export const temporaryName = (urn: string, format: string) => `.docgen-${urn.replace(/[^A-Za-z0-9-]/g, '')}.${format}`;
