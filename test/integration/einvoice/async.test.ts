// E-invoices through the asynchronous generate (issue 42): the same steps as the synchronous one (the
// workflow's runGeneration), the Factur-X pdf delivered and its body POSTed to the callback; an invalid
// invoice's error envelope, naming the rule and field, POSTed instead, with nothing metered.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { pdfaIdentification } from '../../../converter/index.ts';
import { keepEInvoice } from '../../support/einvoice-outputs.ts';
import { client, generateBody } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { keepPdfA } from '../../support/pdfa-outputs.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { type Receiver, startReceiver } from '../async/receiver.ts';

const invoice = JSON.parse(fs.readFileSync(new URL('../../fixtures/einvoice/invoice.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>;

describe('asynchronous e-invoices', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([startStack({ outboundAllow: ['127.0.0.1'] }), startReceiver('127.0.0.1')]);
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function post(data: unknown, hook: string) {
    const up = async (kind: 'template' | 'data', name: string, bytes: Uint8Array | string) =>
      (await api.upload(kind, [{ name, bytes }])).body.result.data.files[0].id as string;
    const body = generateBody(
      await up('template', 'i.docx', makeDocx(['Invoice {invoice.number}'])),
      await up('data', 'i.json', JSON.stringify(data)),
      { document: { name: 'invoice', fileFormat: 'pdf', einvoice: { standard: 'zugferd', profile: 'EXTENDED' } } },
    );
    const claims = { sub: `einvoice-${hook}`, iss: `${receiver.url}/hooks`, dest: `/${hook}`, client_id: 'tests' };
    const token = await client(creds).call('POST', '/common/client/token', { json: claims });
    const res = await api.call('POST', '/documents/document/generate/async', {
      json: body,
      headers: { 'x-client-authorization': token.body.result.data.token },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [delivery] = await receiver.waitFor(`/hooks/${hook}`);
    return JSON.parse(delivery!.body) as Record<string, any>;
  }

  it('delivers the ZUGFeRD pdf and POSTs its body to the callback', async () => {
    const body = await post({ invoice }, 'ok');
    expect(body.result.data.document).toMatchObject({ name: 'invoice.pdf', fileFormat: 'pdf' });
    const file = await api.download(body.result.data.document.urn);
    expect(pdfaIdentification(file.bytes)).toEqual({ part: 3, conformance: 'B' });
    expect(Buffer.from(file.bytes).toString('latin1')).toContain('<fx:ConformanceLevel>EXTENDED</fx:ConformanceLevel>');
    keepEInvoice(file.bytes, 'async-zugferd-EXTENDED', 'pdf');
    keepPdfA(file.bytes, 'async-zugferd-EXTENDED');
  });

  it('POSTs the error envelope naming the rule and field of an invalid invoice; nothing metered', async () => {
    const spoiled = structuredClone(invoice);
    spoiled.lines[0].quantity = '5';
    const body = await post({ invoice: spoiled }, 'invalid');
    expect(body.error.statusCode).toBe(400);
    expect(body.error.innerErrors.map((e: { message: string }) => e.message.split(':')[0])).toEqual([
      'BR-CO-10 invoice.totals.lineTotal',
      'BR-CO-13 invoice.totals.taxBasisTotal',
      'BR-CO-14 invoice.totals.taxTotal',
      'BR-CO-15 invoice.totals.grandTotal',
      'BR-CO-16 invoice.totals.duePayable',
    ]);
    expect(body.consumption).toBeUndefined();
  });
});
