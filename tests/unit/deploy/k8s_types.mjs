// Type-checks every Kubernetes object in the given YAML files as a TypeScript literal of its
// kubernetes-types type (strict): unknown or misspelled fields (excess properties), wrong types
// and missing required fields. Objects of groups outside kubernetes-types (the Prometheus
// operator's ServiceMonitor) use the interfaces of their kubernetes-models package.
//   node k8s_types.mjs FILE...    one line per problem as FILE:LINE: path: message; exit 1 if any
import fs from 'node:fs';
import path from 'node:path';
import { loadDocuments, npmDir, report, typecheck } from './lib.mjs';

// kubernetes-types names a group's folder by its first label, with these exceptions.
const folders = { '': 'core', 'internal.apiserver.k8s.io': 'apiserverinternal' };
const crdPackages = { 'monitoring.coreos.com': '@kubernetes-models/prometheus-operator' };

// {module, name} of the TypeScript type of apiVersion/kind, or undefined.
function typeFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (crdPackages[group]) {
    const module = `${crdPackages[group]}/${group}/${version}/${kind}`;
    const dts = path.join(npmDir, 'node_modules', `${module}.d.ts`);
    return fs.existsSync(dts) ? { module, name: `I${kind}` } : undefined;
  }
  const module = `kubernetes-types/${folders[group] ?? group.split('.')[0]}/${version}`;
  const dts = path.join(npmDir, 'node_modules', `${module}.d.ts`);
  if (!fs.existsSync(dts)) return undefined;
  // An exported interface of that name: the kinds and their parts share the file.
  return new RegExp(`^export interface ${kind} \\{`, 'm').test(fs.readFileSync(dts, 'utf8'))
    ? { module, name: kind } : undefined;
}

const problems = [];
const units = [];
const files = new Map();
for (const file of process.argv.slice(2)) {
  files.set(file, []);
  let docs;
  try {
    docs = loadDocuments(file);
  } catch (e) {
    problems.push({ file, line: 1, path: '(file)', message: e.message });
    continue;
  }
  for (const { value, index, lineOf } of docs) {
    const t = value?.apiVersion && value?.kind && typeFor(value.apiVersion, value.kind);
    if (!t) {
      problems.push({
        file, line: lineOf(['kind']), path: `document ${index}`,
        message: `no type for apiVersion ${value?.apiVersion} kind ${value?.kind}: not a Kubernetes object, or a group tests/unit/deploy/k8s_types.mjs does not know`,
      });
      continue;
    }
    const alias = `T${units.length}`;
    units.push({
      type: alias, value, origin: { file, lineOf },
      imports: [`import type { ${t.name} as ${alias} } from '${t.module}';`],
    });
    files.get(file).push(`${value.kind} ${value.metadata?.name ?? '?'}`);
  }
}
problems.push(...typecheck(units));
const bad = new Set(problems.map((p) => p.file));
const ok = [...files].filter(([f]) => !bad.has(f)).map(([f, kinds]) => `ok ${f}: ${kinds.join(', ')}`);
process.exit(report(problems, ok));
