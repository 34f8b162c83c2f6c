// A URL as it may be shown in workflow summaries, histories and error messages: without user-info, query or
// fragment, which can carry credentials (signed URLs, tokens in query strings). Pure: workflows use it.
export function displayUrl(raw: string): string {
  const hash = raw.indexOf('#');
  const noFragment = hash < 0 ? raw : raw.slice(0, hash);
  const q = noFragment.indexOf('?');
  const noQuery = q < 0 ? noFragment : noFragment.slice(0, q);
  return noQuery.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1') + (q < 0 ? '' : '?…');
}
