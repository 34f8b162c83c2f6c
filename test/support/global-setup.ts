// One real Temporal dev server and one real PostgreSQL server for the whole test run.
import type { TestProject } from 'vitest/node';
import { ensureTemporalCli, freePort, startDevServer } from '../../cli/temporal-dev.ts';
import { startPostgres } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalCli: string;
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const cli = ensureTemporalCli(process.env.TEMPORAL_CLI, (line) => console.log(line));
  const [temporal, pg] = await Promise.all([
    startDevServer({ cli, port: await freePort(), headless: true }),
    startPostgres(await freePort()),
  ]);
  project.provide('temporalAddress', temporal.address);
  project.provide('temporalCli', cli);
  project.provide('postgresUrl', pg.url);
  return async () => {
    await Promise.all([temporal.stop(), pg.stop()]);
  };
}
