// DriveA sharing of a written file (document.options.driveA): anonymous links (createLink) and invitations
// (invite); a refusal of one request is reported in externalErrors, not thrown.
import type { SharingRequest, Written } from '../location.ts';
import { type DriveItem, type GraphClient, GraphError } from './graph.ts';

export async function share(
  graph: GraphClient,
  address: string,
  item: DriveItem,
  sharing: SharingRequest,
): Promise<Pick<Written, 'links' | 'emails' | 'externalErrors'>> {
  const links: NonNullable<Written['links']> = {};
  const emails = { succeededView: [] as string[], succeededEdit: [] as string[], failedView: [] as string[], failedEdit: [] as string[] };
  const externalErrors: unknown[] = [];
  const refusedOrThrow = (err: unknown, option: string) => {
    // 401 after a refresh and 404 are the connection's problem; a refusal of this one request is recorded.
    if (err instanceof GraphError && (err.status === 400 || err.status === 403 || err.status === 409 || err.status === 422)) {
      externalErrors.push({ option: `document.options.driveA.${option}`, status: err.status, code: err.code, message: err.message });
      return;
    }
    throw err;
  };
  for (const [flag, type, key] of [
    ['viewAnonymous', 'view', 'viewAnonymousLink'],
    ['editAnonymous', 'edit', 'editAnonymousLink'],
  ] as const) {
    if (!sharing[flag]) continue;
    try {
      const p = await graph.json<{ link?: { webUrl?: string } }>('POST', `${address}/createLink`, { json: { type, scope: 'anonymous' } });
      links[key] = p.link?.webUrl ?? '';
    } catch (err) {
      links[key] = '';
      refusedOrThrow(err, flag);
    }
  }
  for (const [list, role, ok, failed, key] of [
    ['viewUsers', 'read', 'succeededView', 'failedView', 'viewUserLink'],
    ['editUsers', 'write', 'succeededEdit', 'failedEdit', 'editUserLink'],
  ] as const) {
    const recipients = (sharing[list] ?? []).filter((e) => typeof e === 'string' && e.trim() !== '');
    if (recipients.length === 0) continue;
    type Entry = {
      error?: { code?: string; message?: string };
      invitation?: { email?: string };
      grantedToV2?: { user?: { email?: string } };
    };
    let value: Entry[] = [];
    try {
      const res = await graph.request('POST', `${address}/invite`, {
        json: {
          recipients: recipients.map((email) => ({ email })),
          roles: [role],
          requireSignIn: true,
          sendInvitation: sharing.sendInvitation === true,
        },
      });
      value = ((await res.json()) as { value?: Entry[] }).value ?? [];
    } catch (err) {
      refusedOrThrow(err, list);
      const body = err instanceof GraphError ? (err.body as { value?: Entry[] }) : undefined;
      value = body?.value ?? recipients.map(() => ({ error: { code: (err as GraphError).code, message: (err as GraphError).message } }));
    }
    recipients.forEach((email, i) => {
      const entry =
        value.find((v) => (v.invitation?.email ?? v.grantedToV2?.user?.email ?? '').toLowerCase() === email.toLowerCase()) ??
        (value.length === recipients.length ? value[i] : undefined);
      if (entry && !entry.error) emails[ok].push(email);
      else {
        emails[failed].push(email);
        externalErrors.push({
          option: `document.options.driveA.${list}`,
          email,
          code: entry?.error?.code ?? 'notInvited',
          message: entry?.error?.message ?? 'not in the answer',
        });
      }
    });
    if (emails[ok].length > 0 && item.webUrl) links[key] = item.webUrl;
  }
  return { links, emails, ...(externalErrors.length > 0 ? { externalErrors } : {}) };
}
