// DriveB sharing of a written file (document.options.driveB): permissions for the sharing options, a
// refused one reported in externalErrors, never fatal; and what a write answers.
import type { SharingRequest, Written } from '../location.ts';
import { googleError } from './client.ts';
import type { DriveFile, DriveOps } from './drive.ts';
import { asLocationError } from './errors.ts';

/** Permissions for the sharing options; a refused one is reported, never fatal. */
export async function share(
  ops: DriveOps,
  file: DriveFile,
  sharing: SharingRequest | undefined,
): Promise<Pick<Written, 'links' | 'emails' | 'externalErrors'>> {
  if (!sharing) return {};
  const link = file.webViewLink ?? '';
  const notify = sharing.sendInvitation === true;
  const links: NonNullable<Written['links']> = {};
  const emails = { succeededView: [] as string[], succeededEdit: [] as string[], failedView: [] as string[], failedEdit: [] as string[] };
  const externalErrors: unknown[] = [];
  const attempt = async (p: Parameters<DriveOps['share']>[1]): Promise<boolean> => {
    try {
      await ops.share(file.id!, p, notify);
      return true;
    } catch (err) {
      const g = googleError(err);
      if (g.auth || g.status === 401) throw asLocationError(g, 'CONNECTION_ERROR', 'sharing');
      externalErrors.push({ target: p.emailAddress ?? 'anyone', role: p.role, status: g.status, reason: g.reason, message: g.message });
      return false;
    }
  };
  // Drive has one link per file: the anonymous flags differ only by the `anyone` permission's role.
  if (sharing.editAnonymous) {
    if (await attempt({ type: 'anyone', role: 'writer' })) {
      links.editAnonymousLink = link;
      if (sharing.viewAnonymous) links.viewAnonymousLink = link;
    }
  } else if (sharing.viewAnonymous && (await attempt({ type: 'anyone', role: 'reader' }))) {
    links.viewAnonymousLink = link;
  }
  for (const email of sharing.viewUsers ?? [])
    ((await attempt({ type: 'user', role: 'reader', emailAddress: email })) ? emails.succeededView : emails.failedView).push(email);
  for (const email of sharing.editUsers ?? [])
    ((await attempt({ type: 'user', role: 'writer', emailAddress: email })) ? emails.succeededEdit : emails.failedEdit).push(email);
  if (emails.succeededView.length > 0) links.viewUserLink = link;
  if (emails.succeededEdit.length > 0) links.editUserLink = link;
  const anyUsers = (sharing.viewUsers?.length ?? 0) + (sharing.editUsers?.length ?? 0) > 0;
  return { links, ...(anyUsers ? { emails } : {}), ...(externalErrors.length > 0 ? { externalErrors } : {}) };
}

export function written(file: DriveFile, path: string, extra: Pick<Written, 'links' | 'emails' | 'externalErrors'> = {}): Written {
  return { urn: file.id!, name: file.name ?? '', path, ...(file.webViewLink ? { uri: file.webViewLink } : {}), ...extra };
}
