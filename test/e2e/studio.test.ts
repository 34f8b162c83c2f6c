// The template studio (/studio) in a real browser (Chromium through playwright-core) against `docgen start`:
// signed in with the development credentials, drop a template, see its tags and schema, edit the data and
// see the preview's text change, see a missing field, save a template record and run the copied curl,
// which delivers the document the preview showed. Screenshots at 1280x800 (UPDATE_SCREENSHOTS=1 writes them
// into docs/, as the quick start test does).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDocx } from '../support/office.ts';
import { repoRoot, type StartedService, startDocgen } from '../support/service-process.ts';

const screenshotDir = process.env.UPDATE_SCREENSHOTS
  ? path.join(repoRoot, 'docs')
  : fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-screenshots-'));
const invoice = path.join(repoRoot, 'examples', 'invoice.docx');

/** The text of a PDF as the studio reads it: each page's text items joined by spaces, pages by newlines. */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const doc = await getDocument({ data: bytes.slice(), verbosity: 0 }).promise;
  const pages: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const content = await (await doc.getPage(n)).getTextContent();
    pages.push(
      content.items
        .map((it) => ('str' in it ? it.str : ''))
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  await doc.cleanup();
  return pages.join('\n');
}

/** A GET with the Host header a browser sends for another name of this address (fetch keeps its own). */
function statusWithHost(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', reject);
  });
}

describe('the template studio', () => {
  let svc: StartedService;
  let base: string;
  beforeAll(async () => {
    svc = await startDocgen();
    base = `http://127.0.0.1:${svc.env.PORT}`;
  }, 180_000);
  afterAll(async () => {
    await svc?.stop();
    if (svc) fs.rmSync(svc.dataDir, { recursive: true, force: true });
  });

  it('is linked from the banner and serves every asset itself, the credentials only to the local operator', async () => {
    expect(svc.output()).toMatch(new RegExp(`Studio\\s+http://127\\.0\\.0\\.1:${svc.env.PORT}/studio`));
    const page = await fetch(`${base}/studio`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    // Nothing from another origin.
    expect(html).not.toMatch(/(src|href)="https?:/);
    for (const asset of ['/studio/studio.js', '/studio/studio.css', '/studio/vendor/pdf.min.mjs', '/studio/vendor/pdf.worker.min.mjs']) {
      expect((await fetch(`${base}${asset}`)).status, asset).toBe(200);
    }
    expect((await fetch(`${base}/studio/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${base}/studio/vendor/pdf.mjs`)).status).toBe(404);
    const creds = await fetch(`${base}/studio/dev-credentials`);
    expect(creds.status).toBe(200);
    expect(Object.keys((await creds.json()) as object)).toEqual(expect.arrayContaining(['apiKey', 'accessToken']));
    // Not through a proxy, not under another host name (DNS rebinding).
    expect((await fetch(`${base}/studio/dev-credentials`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(404);
    expect(await statusWithHost(`${base}/studio/dev-credentials`, `attacker.example:${svc.env.PORT}`)).toBe(404);
    expect(await statusWithHost(`${base}/studio/dev-credentials`, `localhost:${svc.env.PORT}`)).toBe(200);
    const docs = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { info: { description: string } };
    expect(docs.info.description).toContain('(/studio)');
  });

  it('takes an author from a template to a saved record and the call that makes the same document', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-studio-'));
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const offOrigin: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(base) && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) offOrigin.push(r.url());
      });
      const consoleErrors: string[] = [];
      page.on('pageerror', (e) => consoleErrors.push(e.message));
      // Console errors too: a Content-Security-Policy violation or a missing asset shows there.
      page.on('console', (m) => {
        if (m.type() === 'error') consoleErrors.push(m.text());
      });
      await page.goto(`${base}/studio`);

      // Signed in with the development credentials, prefilled.
      await page.getByText('Signed in.').waitFor({ timeout: 30_000 });
      expect(await page.getByLabel('API key').inputValue()).not.toBe('');

      // Every control has a label.
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll('input, select, textarea, button')]
          .filter((el) => {
            const c = el as HTMLInputElement;
            return (
              (c.labels?.length ?? 0) === 0 &&
              !c.getAttribute('aria-label') &&
              !(el.tagName === 'BUTTON' && (el.textContent ?? '').trim() !== '')
            );
          })
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unlabelled).toEqual([]);

      // Drop the template: its tags with their places, no problems, the schema and the sample data.
      await page.setInputFiles('#file', invoice);
      await page.locator('#template-status', { hasText: 'invoice.docx: docx' }).waitFor({ timeout: 30_000 });
      const tags = await page.locator('#tags').innerText();
      expect(tags).toContain('{customer.name}');
      expect(tags).toMatch(/\{#items\}\s*word\/document\.xml, paragraph \d+/);
      expect(await page.locator('#problems').innerText()).toContain('No problems.');
      const schema = JSON.parse((await page.locator('#schema').textContent()) ?? '{}') as { properties: Record<string, { type?: string }> };
      expect(schema.properties.items?.type).toBe('array');
      const sample = JSON.parse(await page.locator('#data').inputValue()) as { customer: { name: string; country: string } };
      expect(sample.customer.name).toBe('Ada Lovelace');

      // The first preview: pages drawn from the sample.
      await page.waitForFunction(() => Number(document.body.dataset.previewSeq ?? 0) >= 1, undefined, { timeout: 60_000 });
      expect(await page.locator('#pages canvas').count()).toBeGreaterThanOrEqual(1);
      expect(await page.locator('#preview-text').textContent()).toContain('Ada Lovelace');
      expect(await page.locator('#missing').innerText()).toContain('None');

      // Edit the data (as typed): the preview follows.
      const edited = { ...sample, customer: { ...sample.customer, name: 'Studio Test Customer' } };
      await page.locator('#data').fill(JSON.stringify(edited, null, 2));
      await page.waitForFunction(
        () => (document.getElementById('preview-text')?.textContent ?? '').includes('Studio Test Customer'),
        undefined,
        { timeout: 60_000 },
      );
      await page.screenshot({ path: path.join(screenshotDir, 'studio.png') });

      // A field removed: the missing-field warning names it and its tag.
      const { country: _gone, ...customer } = edited.customer;
      // The page's own check (from the schema) shows at once; the service's warning (the generate's
      // MISSING_VALUE) replaces it when the preview answers.
      await page.evaluate(() => {
        const list = document.getElementById('missing') as HTMLElement;
        const seen: string[] = [];
        (window as unknown as { missingSeen: string[] }).missingSeen = seen;
        new MutationObserver(() => seen.push(list.innerText)).observe(list, { childList: true, subtree: true, characterData: true });
      });
      await page.locator('#data').fill(JSON.stringify({ ...edited, customer }, null, 2));
      await page.locator('#missing', { hasText: 'no value for tag "customer.country"' }).waitFor({ timeout: 60_000 });
      expect(await page.locator('#missing').innerText()).toMatch(
        /no value for tag "customer\.country" \(word\/document\.xml, paragraph \d+\)/,
      );
      const seen = await page.evaluate(() => (window as unknown as { missingSeen: string[] }).missingSeen);
      expect(seen.some((t) => /customer\.country is missing: \{customer\.country\} \(word\/document\.xml, paragraph \d+\)/.test(t))).toBe(
        true,
      );
      await page.waitForFunction(
        () => !(document.getElementById('preview-text')?.textContent ?? '').includes('United Kingdom'),
        undefined,
        { timeout: 60_000 },
      );
      // Back to the complete data, in another locale: the preview shown is what the saved call makes.
      await page.locator('#data').fill(JSON.stringify(edited, null, 2));
      await page.selectOption('#locale', 'fr-FR');
      await page.selectOption('#timezone', 'Europe/Paris');
      await page.waitForFunction(
        () => /fr-FR, Europe\/Paris/.test(document.getElementById('preview-status')?.textContent ?? ''),
        undefined,
        { timeout: 60_000 },
      );
      const previewText = (await page.locator('#preview-text').textContent()) ?? '';
      expect(previewText).toContain('Studio Test Customer');
      expect(previewText).toContain('United Kingdom');

      // An accessible pdf: the service's accessibility warnings show beside the missing values (the sample's
      // logo is a picture without alt text), and go when the box is cleared.
      await page.locator('#accessible').check();
      await page.locator('#missing', { hasText: 'has no alternative text' }).waitFor({ timeout: 60_000 });
      expect(await page.locator('#missing').innerText()).toMatch(
        /the picture "Picture \d+" in word\/document\.xml has no alternative text/,
      );
      await page.locator('#accessible').uncheck();
      await page.locator('#missing', { hasText: 'None' }).waitFor({ timeout: 60_000 });

      // Download in a format the template allows.
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download docx' }).click()]);
      expect(file.suggestedFilename()).toMatch(/\.docx$/);
      expect(
        fs
          .readFileSync(await file.path())
          .subarray(0, 2)
          .toString(),
      ).toBe('PK');

      // Use it: a template record, and the exact curl.
      await page.getByLabel('Template name').fill('Studio invoice');
      await page.getByRole('button', { name: 'Save as a template record' }).click();
      await page.locator('#save-status', { hasText: 'Saved as template record' }).waitFor({ timeout: 30_000 });
      const recordId = await page.evaluate(() => document.body.dataset.recordId);
      const curl = await page.locator('#curl').inputValue();
      expect(await page.locator('#sdk').inputValue()).toContain('docgen.generation.generate(');

      // Narrow window: nothing wider than the window.
      await page.setViewportSize({ width: 420, height: 800 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(screenshotDir, 'studio-narrow.png') });
      expect(offOrigin).toEqual([]);
      expect(consoleErrors).toEqual([]);

      // The record names the upload the call uses.
      const creds = await svc.credentials();
      const auth = { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey };
      const record = (await (await fetch(`${base}/v1/documents/template/${recordId}/get`, { headers: auth })).json()) as {
        result: { data: { documentTemplate: { name: string; urn: string } } };
      };
      expect(record.result.data.documentTemplate.name).toBe('Studio invoice');
      expect(curl).toContain(record.result.data.documentTemplate.urn);

      // The copied curl, run as a user would: the same document as the preview.
      await promisify(execFile)('bash', ['-c', curl], {
        cwd: work,
        env: {
          ...process.env,
          PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          DOCGEN_TOKEN: creds.accessToken,
          DOCGEN_API_KEY: creds.apiKey,
        },
        timeout: 120_000,
      });
      const pdf = new Uint8Array(fs.readFileSync(path.join(work, 'Studio invoice.pdf')));
      expect(Buffer.from(pdf.subarray(0, 5)).toString()).toBe('%PDF-');
      expect(await pdfText(pdf)).toBe(previewText);
      // Run again, it fails (the generate consumed the upload the record names) and says so by its exit
      // status (curl -f), leaving the pdf of the first run as it was, no error body written over it.
      const again = await promisify(execFile)('bash', ['-c', curl], {
        cwd: work,
        env: {
          ...process.env,
          PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          DOCGEN_TOKEN: creds.accessToken,
          DOCGEN_API_KEY: creds.apiKey,
        },
        timeout: 120_000,
      }).then(
        () => 0,
        (err: { code: number }) => err.code,
      );
      expect(again).not.toBe(0);
      expect(new Uint8Array(fs.readFileSync(path.join(work, 'Studio invoice.pdf')))).toEqual(pdf);
      for (const name of ['studio.png', 'studio-narrow.png'])
        expect(fs.statSync(path.join(screenshotDir, name)).size).toBeGreaterThan(10_000);

      // A template with a problem: listed at its place, in plain words; Enter on it (keyboard only) moves the
      // focus to the tag there.
      await page.setViewportSize({ width: 1280, height: 800 });
      const broken = path.join(work, 'broken.docx');
      fs.writeFileSync(broken, makeDocx(['Dear {name},', '{#items}{sku}', 'never closed']));
      await page.setInputFiles('#file', broken);
      await page.locator('#template-status', { hasText: 'broken.docx: docx' }).waitFor({ timeout: 30_000 });
      const problem = page.locator('#problems button').first();
      expect(await problem.innerText()).toMatch(/^word\/document\.xml, paragraph 2: .*never closed/);
      await problem.focus();
      await page.keyboard.press('Enter');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.where)).toBe(
        'word/document.xml, paragraph 2',
      );
      // No preview of a template the service would refuse to render, and why.
      await page.locator('#preview-status', { hasText: 'No preview: the template has 1 problem' }).waitFor({ timeout: 30_000 });

      // A workbook: its tags by sheet and cell, and its preview.
      const seq = await page.evaluate(() => Number(document.body.dataset.previewSeq ?? 0));
      await page.setInputFiles('#file', path.join(repoRoot, 'examples', 'monthly-report.xlsx'));
      await page.locator('#template-status', { hasText: 'monthly-report.xlsx: xlsx' }).waitFor({ timeout: 30_000 });
      expect(await page.locator('#tags').innerText()).toMatch(/\{#regions\}\s*sheet "[^"]+", cell A\d+/);
      await page.waitForFunction((before) => Number(document.body.dataset.previewSeq ?? 0) > before, seq, { timeout: 60_000 });
      expect(await page.locator('#preview-text').textContent()).toContain('Region 1');
      expect(await page.locator('#downloads').innerText()).toMatch(/xlsx[\s\S]*pdf[\s\S]*csv/);
      expect(consoleErrors).toEqual([]);
    } finally {
      await browser.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 300_000);

  it('shows the e-invoice problems of the data while the author edits (issue 42)', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${base}/studio`);
      await page.getByText('Signed in.').waitFor({ timeout: 30_000 });
      await page.setInputFiles('#file', invoice);
      await page.locator('#template-status', { hasText: 'invoice.docx: docx' }).waitFor({ timeout: 30_000 });
      const data = JSON.parse(fs.readFileSync(path.join(repoRoot, 'examples', 'invoice-einvoice.json'), 'utf8')) as {
        einvoice: { totals: { grandTotal: string } };
      };
      await page.getByLabel('Invoice at').fill('einvoice');
      await page.locator('#einvoice').selectOption('facturx|EN16931');
      await page.locator('#data').fill(JSON.stringify(data, null, 2));
      await page.locator('#einvoice-problems', { hasText: 'None: the e-invoice passes' }).waitFor({ timeout: 60_000 });
      // A wrong total: the preview is refused and the rule, with its field, is listed.
      data.einvoice.totals.grandTotal = '1001.53';
      await page.locator('#data').fill(JSON.stringify(data, null, 2));
      await page.locator('#einvoice-problems', { hasText: 'BR-CO-15 einvoice.totals.grandTotal' }).waitFor({ timeout: 60_000 });
      // The status line follows the same answer; it may be drawn a moment after the list.
      await page.locator('#preview-status', { hasText: 'the e-invoice breaks 1 rule' }).waitFor({ timeout: 30_000 });
    } finally {
      await browser.close();
    }
  }, 180_000);
});
