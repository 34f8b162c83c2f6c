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
// V8 settings first: they must be in place before any WebAssembly is compiled (cli/node-runtime.ts).
await import('./node-runtime.ts');
await import('./main.ts');
