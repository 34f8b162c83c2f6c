// Benchmark (not a test): the studio's live preview, edit -> page drawn, for a one-page docx, in headless
// Chromium against `docgen start`. Each edit changes one value in the data editor; the time runs from the
// input event to the moment the page holding the new value is drawn (pdf.js). Two ways of editing:
// after a pause (--pause ms, an author reading the page: the preview starts at once) and back to back
// (each edit right after the previous page is drawn: the editor's 200 ms debounce applies, studio/studio.js).
// Also printed: the preview pipeline alone (uploads, generate to pdf, download, draw) as the page measures it.
//   node bench/studio-preview.ts [--edits 20] [--pause 1500]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { findTemporalCli } from '../cli/temporal-dev.ts';
import { median } from './breakdown.ts';
import { docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { makeDocx } from '../test/support/office.ts';

const { values } = parseArgs({ options: { edits: { type: 'string', default: '20' }, pause: { type: 'string', default: '1500' } } });
const edits = Number(values.edits);
const pause = Number(values.pause);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const ms = (n: number) => `${n.toFixed(0)} ms`;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-bench-studio-'));
const cli = findTemporalCli(process.env.TEMPORAL_CLI);
const svc = await spawnDocgenStart(await docgenStartEnv(dataDir, cli ? { TEMPORAL_CLI: cli } : {}), { pollMs: 20, timeoutMs: 600_000 });
const base = `http://127.0.0.1:${svc.env.PORT}`;
const template = path.join(dataDir, 'letter.docx');
fs.writeFileSync(
  template,
  makeDocx([
    'Dear {customer.name},',
    'Your order {order} of {total | currency:"EUR"} ships on {shipOn | date:"d MMMM yyyy"}.',
    '{#items}',
    '{description}: {qty}',
    '{/items}',
    'Kind regards,',
    '{sender}',
  ]),
);

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
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}/studio`);
  await page.getByText('Signed in.').waitFor({ timeout: 60_000 });
  await page.setInputFiles('#file', template);
  await page.waitForFunction(() => Number(document.body.dataset.previewSeq ?? 0) >= 1, undefined, { timeout: 120_000 });
  const sample = JSON.parse(await page.locator('#data').inputValue()) as { customer: { name: string } };

  /** `edits` timed edits (after 2 warm-up), each `wait` ms after the previous page was drawn. */
  const run = async (wait: number, label: string) => {
    const total: number[] = [];
    const pipeline: number[] = [];
    const stages: Record<string, number[]> = {};
    for (let i = -2; i < edits; i++) {
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const marker = `Customer ${label} ${i + 1000}`;
      const text = JSON.stringify({ ...sample, customer: { ...sample.customer, name: marker } }, null, 2);
      const elapsed = await page.evaluate(
        async ({ text, marker }) => {
          const box = document.getElementById('data') as HTMLTextAreaElement;
          const out = document.getElementById('preview-text') as HTMLElement;
          const drawn = new Promise<number>((resolve) => {
            const seen = new MutationObserver(() => {
              if ((out.textContent ?? '').includes(marker)) {
                seen.disconnect();
                resolve(performance.now());
              }
            });
            seen.observe(out, { childList: true, characterData: true, subtree: true });
          });
          const start = performance.now();
          box.value = text;
          box.dispatchEvent(new Event('input', { bubbles: true }));
          return (await drawn) - start;
        },
        { text, marker },
      );
      const studio = await page.evaluate(
        () => (window as unknown as { studio: { lastPreviewMs: number; lastTimings: Record<string, number> } }).studio,
      );
      if (i < 0) continue;
      total.push(elapsed);
      pipeline.push(studio.lastPreviewMs);
      for (const [k, v] of Object.entries(studio.lastTimings)) (stages[k] ??= []).push(v);
    }
    console.log(
      `  ${label.padEnd(28)} edit -> page drawn median ${ms(median(total))}  p90 ${ms(pct(total, 90))}  min ${ms(Math.min(...total))}`,
    );
    console.log(
      `  ${''.padEnd(28)} pipeline alone     median ${ms(median(pipeline))}  p90 ${ms(pct(pipeline, 90))}  (${Object.entries(stages)
        .map(([k, v]) => `${k} ${ms(median(v))}`)
        .join(', ')})`,
    );
  };
  console.log(`studio preview, one-page docx, ${edits} edits per row (after 2 warm-up), docgen start on this machine:`);
  await run(pause, `after a ${pause} ms pause`);
  await run(0, 'back to back (debounced)');
} finally {
  await browser.close();
  await svc.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
