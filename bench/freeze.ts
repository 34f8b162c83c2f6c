// What callers are told when the Temporal server stops longer than their deadline (issue 28 §1): `docgen
// start` on embedded defaults, synchronous generates and manage moves sent while its dev server is paused
// (SIGSTOP) and then continued; every answer that is not final is retried with its key. Prints the first
// answers, how many said "nothing was delivered", the final answers, and what exists: document records,
// files, metering, move sources removed, scratch left (test/support/freeze.ts). Loopback only.
//
//   node bench/freeze.ts [--generates 80] [--keyless 20] [--moves 150] [--deadline-ms 15000] [--freeze-ms 20000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { docgenCredentials, docgenStartEnv, spawnDocgenStart } from '../test/support/docgen-start.ts';
import { freezeScenario } from '../test/support/freeze.ts';

const { values } = parseArgs({
  options: {
    generates: { type: 'string', default: '80' },
    keyless: { type: 'string', default: '20' },
    moves: { type: 'string', default: '150' },
    'deadline-ms': { type: 'string', default: '15000' },
    'freeze-ms': { type: 'string', default: '20000' },
  },
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-freeze-'));
const svc = await spawnDocgenStart(
  await docgenStartEnv(dataDir, {
    GENERATE_TIMEOUT_MS: values['deadline-ms'],
    CONVERTER: 'none',
    PAGE_COUNT: 'document',
    RATE_LIMIT_PER_MINUTE: '0',
  }),
);
let paused: number | undefined;
try {
  const { pid } = JSON.parse(fs.readFileSync(path.join(dataDir, 'temporal', 'dev-server.json'), 'utf8')) as { pid: number };
  const freezeMs = Number(values['freeze-ms']);
  const plan = {
    generates: Number(values.generates),
    keyless: Number(values.keyless),
    moves: Number(values.moves),
    sendOverMs: 4_000,
    freezeAfterMs: 1_000,
    freezeMs,
    retries: 120,
  };
  const out = await freezeScenario(await docgenCredentials(svc.env), dataDir, plan, (stop) => {
    process.kill(pid, stop ? 'SIGSTOP' : 'SIGCONT');
    paused = stop ? pid : undefined;
  });
  console.log(
    `Temporal dev server paused ${freezeMs} ms, GENERATE_TIMEOUT_MS ${values['deadline-ms']}: ${plan.generates} generates (${plan.keyless} without a key), ${plan.moves} moves`,
  );
  console.log(JSON.stringify(out, null, 1));
} finally {
  if (paused) process.kill(paused, 'SIGCONT');
  await svc.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
