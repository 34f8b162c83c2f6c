// The interactive API docs (/v1/docs) in a real browser: an upload operation offers a file picker (not a
// JSON box), and the generate operation's example body is the README's walk-through (not "string"
// placeholders). The API is the documentation app (api/openapi-document.ts): nothing behind it is needed.
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentationApp } from '../../api/openapi-document.ts';
import * as examples from '../../api/schemas/examples.ts';

describe('/v1/docs (Swagger UI, headless Chromium)', () => {
  let app: FastifyInstance;
  let browser: Browser;
  let page: Page;
  let base = '';

  beforeAll(async () => {
    app = await documentationApp(() => `${base}/v1`);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      // Flags for a closed network: without them Chromium keeps trying to reach Google's services.
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
    page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    await page.goto(`${base}/v1/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  /** Opens an operation by its operationId and presses "Try it out". */
  async function tryOut(operationId: string) {
    // Swagger UI's id of an operation block: operations-<tag>-<operationId>.
    const op = page.locator(`.opblock[id$="-${operationId}"]`).first();
    await op.locator('.opblock-summary').first().click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    return op;
  }

  it('offers a file picker for the template upload, where the file goes in the field the README uses', async () => {
    const op = await tryOut('uploadTemplates');
    const picker = op.locator('input[type=file]');
    await picker.first().waitFor({ timeout: 10_000 });
    expect(await picker.count()).toBeGreaterThan(0);
    expect(await op.locator('textarea.body-param__text').count()).toBe(0);
    expect(await op.innerText()).toContain('file');
  });

  it('shows the README\'s walk-through as the generate body, not "string" placeholders', async () => {
    const op = await tryOut('generateDocument');
    const body = op.locator('textarea.body-param__text');
    await body.waitFor({ timeout: 10_000 });
    expect(JSON.parse(await body.inputValue())).toEqual(examples.generateRequest);
    expect(await body.inputValue()).not.toContain('"string"');
  });
});
