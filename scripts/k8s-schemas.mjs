// Makes kubeconform-readable schemas out of the Kubernetes JSON schemas that the PyPI package
// kubernetes-validate bundles: its `v<version>-local-strict` files refer to one shared
// `/api/_definitions.json` (a path kubeconform cannot resolve); each file written here carries the
// definitions it reaches under its own `$defs` instead (standalone), names unchanged
// ({kind}-{group}-{version}.json), so kubeconform's usual -schema-location template finds them.
//   node scripts/k8s-schemas.mjs <kubernetes-json-schema/v1.34.0-local-strict> <out-dir>
import fs from 'node:fs';
import path from 'node:path';

const [src, out] = process.argv.slice(2);
if (!src || !out) {
  console.error('usage: node scripts/k8s-schemas.mjs <v<version>-local-strict dir> <out-dir>');
  process.exit(2);
}
const REF = '/api/_definitions.json#/$defs/';
/** How the definitions refer to each other inside _definitions.json. */
const LOCAL = '#/$defs/';
const defs = JSON.parse(fs.readFileSync(path.join(src, '_definitions.json'), 'utf8')).$defs;

/** The schema with every shared reference pointing into its own $defs; `reached` collects their names. */
function localise(node, reached) {
  if (Array.isArray(node)) return node.map((n) => localise(n, reached));
  if (node === null || typeof node !== 'object') return node;
  const copy = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && (v.startsWith(REF) || v.startsWith(LOCAL))) {
      const name = v.slice(v.startsWith(REF) ? REF.length : LOCAL.length);
      if (!defs[name]) throw new Error(`${v}: no such definition`);
      reached.add(name);
      copy.$ref = `#/$defs/${name}`;
    } else copy[k] = localise(v, reached);
  }
  return copy;
}

fs.mkdirSync(out, { recursive: true });
let n = 0;
for (const file of fs.readdirSync(src)) {
  if (!file.endsWith('.json') || file === '_definitions.json' || file === 'all.json') continue;
  const reached = new Set();
  const schema = localise(JSON.parse(fs.readFileSync(path.join(src, file), 'utf8')), reached);
  const own = {};
  for (const name of reached) {
    const queue = [name];
    while (queue.length) {
      const d = queue.pop();
      if (own[d]) continue;
      const found = new Set();
      own[d] = localise(defs[d], found);
      for (const f of found) if (!own[f]) queue.push(f);
    }
  }
  const standalone = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...schema,
    ...(Object.keys(own).length ? { $defs: own } : {}),
  };
  fs.writeFileSync(path.join(out, file), JSON.stringify(standalone));
  n++;
}
console.log(`${out}: ${n} standalone schemas`);
