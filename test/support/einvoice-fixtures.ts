import fs from 'node:fs';
import { inflateSync } from 'node:zlib';
import { expect } from 'vitest';
import type { client } from './http.ts';
import type { Stack } from './stack.ts';

/** A file of test/fixtures/einvoice. */
export const einvoiceFixture = (name: string): Buffer => fs.readFileSync(new URL(`../fixtures/einvoice/${name}`, import.meta.url));

/** The model's invoice (invoice.json) with what the XML template invoice-cii.xml takes as given rather than
 *  computes: the lines' net amounts and the VAT breakdown (the model accepts and checks both). */
export function templateInvoice(): Record<string, any> {
  const invoice = JSON.parse(einvoiceFixture('invoice.json').toString('utf8')) as Record<string, any>;
  const net = ['359.60', '160.00', '127.50', '187.50'];
  invoice.lines.forEach((line: Record<string, unknown>, i: number) => (line.netAmount = net[i]));
  invoice.vatBreakdown = [{ category: 'S', rate: '20', taxableAmount: '834.60', taxAmount: '166.92' }];
  return invoice;
}

/** Uploads one file (a template or data) and answers its id; the upload must succeed. */
export async function uploadFile(
  api: ReturnType<typeof client>,
  kind: 'template' | 'data',
  name: string,
  bytes: Uint8Array | string,
): Promise<string> {
  const r = await api.upload(kind, [{ name, bytes }]);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.result.data.files[0].id as string;
}

/** How many document records the subscription has (a refused e-invoice records none). */
export async function documentCount(stack: Stack, subscriptionId: string): Promise<number> {
  const r = await stack.service.db.query<{ n: string }>('SELECT count(*) AS n FROM documents WHERE subscription_guid = $1', [
    subscriptionId,
  ]);
  return Number(r.rows[0]!.n);
}

/** The embedded file of a pdf (the first /EmbeddedFile stream), inflated. */
export function embeddedXml(pdf: Uint8Array): string {
  const text = Buffer.from(pdf).toString('latin1');
  const at = text.indexOf('/Type /EmbeddedFile');
  const len = Number(/\/Length (\d+)/.exec(text.slice(at))![1]);
  const start = text.indexOf('stream\n', at) + 7;
  return inflateSync(Buffer.from(text.slice(start, start + len), 'latin1')).toString('utf8');
}
