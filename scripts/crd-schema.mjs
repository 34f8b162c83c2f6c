// Writes the JSON schemas kubeconform reads for the custom resources of a CustomResourceDefinition file:
// one file per served version, named as kubeconform's -schema-location template below expects
// ({kind}-{group's first label}-{version}.json, lower case), strict (no property the CRD does not declare,
// as kubeconform -strict does for the Kubernetes schemas).
//   node scripts/crd-schema.mjs <crd.yaml> <out-dir>
//   kubeconform -schema-location '<out-dir>/{{ .ResourceKind }}{{ .KindSuffix }}.json' ...
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const [file, out] = process.argv.slice(2);
if (!file || !out) {
  console.error('usage: node scripts/crd-schema.mjs <crd.yaml> <out-dir>');
  process.exit(2);
}

/** additionalProperties: false wherever an object lists its properties and says nothing of others;
 *  x-kubernetes-preserve-unknown-fields keeps an object open. */
function strict(schema) {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strict(v)]));
  if (copy.properties && copy.additionalProperties === undefined && !copy['x-kubernetes-preserve-unknown-fields'])
    copy.additionalProperties = false;
  return copy;
}

fs.mkdirSync(out, { recursive: true });
let written = 0;
for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
  const crd = doc.toJS();
  if (crd?.kind !== 'CustomResourceDefinition') continue;
  const group = crd.spec.group;
  const kind = crd.spec.names.kind;
  for (const v of crd.spec.versions) {
    if (!v.served || !v.schema?.openAPIV3Schema) continue;
    const schema = strict(v.schema.openAPIV3Schema); // a copy
    // apiVersion and kind must name this resource exactly (a typo in either would otherwise pass).
    schema.properties = {
      ...schema.properties,
      apiVersion: { type: 'string', enum: [`${group}/${v.name}`] },
      kind: { type: 'string', enum: [kind] },
    };
    schema.required = [...new Set([...(schema.required ?? []), 'apiVersion', 'kind'])];
    const name = `${kind.toLowerCase()}-${group.split('.')[0]}-${v.name}.json`;
    fs.writeFileSync(path.join(out, name), `${JSON.stringify(schema, null, 1)}\n`);
    console.log(`${path.join(out, name)}: ${group}/${v.name} ${kind}`);
    written++;
  }
}
if (written === 0) {
  console.error(`${file}: no served CustomResourceDefinition version with a schema`);
  process.exit(1);
}
