#!/usr/bin/env node
// The package mirror these machines use does not serve every platform build of @swc/core (a dependency
// of @temporalio/worker): `npm install` then leaves those optional, platform-gated packages out of
// package-lock.json and `npm ci` refuses the lock as out of sync. This records them with their os/cpu
// gates, so `npm ci` accepts the lock and skips them on Linux x64 exactly as it would with a full lock.
// Run after any `npm install` that rewrites the lock: `node scripts/lock-platform-stubs.mjs`.
import fs from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const gates = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm-gnueabihf': { os: ['linux'], cpu: ['arm'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'linux-ppc64-gnu': { os: ['linux'], cpu: ['ppc64'], libc: ['glibc'] },
  'linux-s390x-gnu': { os: ['linux'], cpu: ['s390x'], libc: ['glibc'] },
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'win32-arm64-msvc': { os: ['win32'], cpu: ['arm64'] },
  'win32-ia32-msvc': { os: ['win32'], cpu: ['ia32'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
};
let added = 0;
for (const [pkgPath, entry] of Object.entries(lock.packages)) {
  const optional = entry.optionalDependencies ?? {};
  for (const [name, version] of Object.entries(optional)) {
    const m = /^@swc\/core-(.+)$/.exec(name);
    if (!m || !gates[m[1]]) continue;
    const key = `${pkgPath ? `${pkgPath}/` : ''}node_modules/${name}`.replace(/^\/+/, '');
    const hoisted = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[hoisted]) continue;
    lock.packages[hoisted] = { version, ...gates[m[1]], license: entry.license ?? 'Apache-2.0', optional: true };
    added++;
  }
}
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platform-stubs: added ${added} platform-gated entr${added === 1 ? 'y' : 'ies'}`);
