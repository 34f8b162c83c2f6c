// One real Temporal dev server, one real PostgreSQL server and one real S3 server (versitygw) for the whole
// test run.
import type { TestProject } from 'vitest/node';
import { prepareEInvoiceRules } from '../../activities/einvoice-rules.ts';
import { ensureTemporalCli, freePort, startDevServer } from '../../cli/temporal-dev.ts';
import { startPostgres } from './postgres.ts';
import { findVersitygw, type S3Server, startS3Server } from './s3.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    postgresUrl: string;
    /** '' when versitygw is not installed: the S3 suites then fail saying how to install it. */
    s3Endpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const cli = ensureTemporalCli(process.env.TEMPORAL_CLI, (line) => console.log(line));
  // The official e-invoice XSDs and Schematron every e-invoice is checked against (cached in ~/.cache/docgen
  // after the first run, as `docgen start` caches them).
  await prepareEInvoiceRules((line) => console.log(line));
  const [temporal, pg, s3] = await Promise.all([
    startDevServer({ cli, port: await freePort(), headless: true }),
    startPostgres(await freePort()),
    findVersitygw() ? startS3Server(await freePort()) : Promise.resolve<S3Server | undefined>(undefined),
  ]);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalCli', cli);
  project.provide('postgresUrl', pg.url);
  project.provide('s3Endpoint', s3?.endpoint ?? '');
  return async () => {
    await Promise.all([temporal.stop(), pg.stop(), s3?.stop()]);
  };
}
