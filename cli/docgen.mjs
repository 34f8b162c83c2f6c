#!/usr/bin/env node
// Entry point of the `docgen` command. The code is TypeScript run by Node's built-in type stripping,
// which needs Node 24; say so plainly instead of failing with a syntax error.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `docgen needs Node.js 24 or later (this is ${process.version}). Run it through npm (\`npm start\`, \`npx docgen\`) ` +
      'after `npm ci`, which installs Node 24 into node_modules on linux-x64, or install Node 24.',
  );
  process.exit(1);
}
// The service commands run with a smaller V8 young generation (V8_SEMI_SPACE_MB, config/env.ts): V8 sizes it
// from the heap limit, up to 128 MB committed on a machine with a 4 GB heap limit, for a process whose live heap
// is ~100 MB. And with glibc's malloc kept to MALLOC_ARENA_MAX=2 arenas unless the environment says otherwise:
// by default it makes up to 8 per core for the process's many threads (libuv, V8, the Temporal SDK's core,
// merge and workflow threads), ~100 MB of RSS under a soak (`npm run bench:memory`). Only a flag given at
// start-up sets the one, and glibc reads the other once, so the process replaces itself (same pid and stdio;
// process.execve, Node >= 23.11) with one started so, once, before anything else ran.
const SERVICE_COMMANDS = new Set(['start', 'api', 'worker']);
const semiSpaceMb = process.env.V8_SEMI_SPACE_MB ?? '8';
const semiSpaceFlag =
  /^[1-9]\d{0,3}$/.test(semiSpaceMb) && !process.execArgv.some((a) => a.startsWith('--max-semi-space-size'))
    ? [`--max-semi-space-size=${semiSpaceMb}`]
    : [];
if (
  SERVICE_COMMANDS.has(process.argv[2] ?? '') &&
  (semiSpaceFlag.length > 0 || process.env.MALLOC_ARENA_MAX === undefined) &&
  typeof process.execve === 'function'
) {
  process.execve(process.execPath, [process.execPath, ...semiSpaceFlag, ...process.execArgv, ...process.argv.slice(1)], {
    MALLOC_ARENA_MAX: '2',
    ...process.env,
  });
}
// V8 settings first: they must be in place before any WebAssembly is compiled (cli/node-runtime.ts).
await import('./node-runtime.ts');
await import('./main.ts');
