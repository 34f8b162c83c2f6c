// A small HTTP client for tests that talks to the API exactly as a user would.
import type { Credentials } from '../../api/auth/credentials.ts';
import { makeDocx } from './office.ts';

export interface Reply<T = Record<string, any>> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(creds: Pick<Credentials, 'baseUrl' | 'apiKey' | 'accessToken'>) {
  const auth = { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey };
  async function call(
    method: string,
    route: string,
    init: { json?: unknown; form?: FormData; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...auth, ...init.headers };
    let body: FormData | string | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.form) {
      body = init.form;
    }
    const res = await fetch(`${creds.baseUrl}${route}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }
  return {
    call,
    async upload(kind: 'template' | 'data', files: { name: string; bytes: Uint8Array | string; field?: string }[]): Promise<Reply> {
      const form = new FormData();
      for (const f of files)
        form.append(f.field ?? 'file', new Blob([typeof f.bytes === 'string' ? f.bytes : Buffer.from(f.bytes)]), f.name);
      return call('POST', `/documents/${kind}/upload`, { form });
    },
    /** Uploads a template and a data file (by default a one-tag letter and its data) and returns their urns;
     *  an upload that is not 201 fails the test with its answer. The template is named by its extension
     *  (t.docx unless given): the upload refuses a package of another kind than its name says. */
    async uploadPair(
      template: Uint8Array = makeDocx(['Hello {name}']),
      data: unknown = { name: 'World' },
      templateFormat = 'docx',
    ): Promise<{ templateUrn: string; dataUrn: string }> {
      const t = await this.upload('template', [{ name: `t.${templateFormat}`, bytes: template }]);
      const d = await this.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
      for (const r of [t, d]) if (r.status !== 201) throw new Error(`upload answered ${r.status}: ${JSON.stringify(r.body)}`);
      return { templateUrn: t.body.result.data.files[0].id as string, dataUrn: d.body.result.data.files[0].id as string };
    },
    async download(urn: string): Promise<{ status: number; bytes: Uint8Array; headers: Headers }> {
      const res = await fetch(`${creds.baseUrl}/documents/storage/${urn}/content`, { headers: auth });
      return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), headers: res.headers };
    },
  };
}

export function generateBody(
  templateUrn: string,
  dataUrn: string,
  overrides: { document?: Record<string, unknown>; template?: Record<string, unknown> } = {},
) {
  return {
    template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx', ...overrides.template },
    data: { loadMethod: 'Storage', urn: dataUrn },
    document: {
      name: 'letter',
      fileFormat: 'docx',
      deliveryMethod: 'Storage',
      path: 'root',
      timezone: 'Europe/Paris',
      locale: 'fr-FR',
      ...overrides.document,
    },
    externalContext: { correlation: 'abc-123', nested: { n: 1 } },
  };
}
