// A lint of Grafana dashboards against @grafana/schema's types, in one strict TypeScript program:
//   - the whole dashboard as `Dashboard` (unknown or misspelled fields, wrong types, missing
//     required fields of the dashboard, its panels, variables, annotations, links, time);
//   - each panel's `options` and `fieldConfig.defaults.custom` as the panel plugin's own
//     `Options` and `FieldConfig` (from @grafana/schema's raw/composable types), every field
//     optional there since Grafana fills in the plugin's defaults.
// Two adaptations of the types to JSON, which are not false positives but the JSON form: a
// string enum is its values (a JSON file cannot name `LegendDisplayMode.Table`, it writes
// "table"), and a numeric enum its numbers (TypeScript already allows that).
// Known false positives, removed from the copy that is checked (KNOWN_FALSE_POSITIVES below):
// fields that Grafana reads but the schema does not declare.
// Not checked by the schema at all: each target of a panel is Record<string, unknown> there
// (the query model belongs to the data source plugin, and @grafana/schema has none for
// Prometheus); dashboard_promql.py checks every target's expr instead.
//   node dashboard_types.mjs FILE...    one line per problem as FILE:LINE: path: message
//   node dashboard_types.mjs --false-positives    the list below
import fs from 'node:fs';
import path from 'node:path';
import { loadDocuments, npmRequire, report, typecheck } from './lib.mjs';

// Each: which objects (`select`), the fields dropped from them before the check, and why.
export const KNOWN_FALSE_POSITIVES = [
  {
    where: 'annotations.list[*] of a prometheus data source',
    select: (d) => (d.annotations?.list ?? []).filter((a) => a?.datasource?.type === 'prometheus'),
    fields: ['expr', 'step', 'titleFormat', 'textFormat', 'tagKeys', 'useValueForTime', 'interval'],
    why: "Grafana's Prometheus data source reads these from the annotation itself (it moves expr " +
      "and step into `target` on load); the schema's AnnotationQuery declares only the generic " +
      'fields and `target`',
  },
  {
    where: 'templating.list[*] of type query',
    select: (d) => (d.templating?.list ?? []).filter((v) => v?.type === 'query'),
    fields: ['definition'],
    why: 'Grafana saves the query as text here, for display and search, in every query variable; ' +
      "the schema's VariableModel does not declare it",
  },
];

const PREAMBLE = `
type Json<T> = T extends string ? \`\${T}\` : T extends readonly (infer E)[] ? Json<E>[]
  : T extends object ? { [K in keyof T]: Json<T[K]> } : T;
type Loose<T> = T extends string ? \`\${T}\` : T extends readonly (infer E)[] ? Loose<E>[]
  : T extends object ? { [K in keyof T]?: Loose<T[K]> } : T;
`;

// The module of a panel type's types and which of Options and FieldConfig it exports, from the
// package's exports map; undefined for a panel type the package has no types for.
const schemaDir = path.dirname(npmRequire.resolve('@grafana/schema/package.json'));
const exportsMap = npmRequire('@grafana/schema/package.json').exports;
function panelTypes(type) {
  const key = Object.keys(exportsMap).find((k) => k.includes(`/raw/composable/${type}/panelcfg/`));
  if (!key) return undefined;
  const dts = fs.readFileSync(path.join(schemaDir, exportsMap[key].types), 'utf8');
  const has = (name) => new RegExp(`^export interface ${name}\\b`, 'm').test(dts);
  return { module: `@grafana/schema/${key.replace(/^\.\//, '')}`, options: has('Options'), fieldConfig: has('FieldConfig') };
}

function withoutFalsePositives(dashboard) {
  const copy = structuredClone(dashboard);
  for (const fp of KNOWN_FALSE_POSITIVES) {
    for (const o of fp.select(copy)) for (const f of fp.fields) delete o[f];
  }
  return copy;
}

if (process.argv[2] === '--false-positives') {
  for (const fp of KNOWN_FALSE_POSITIVES) console.log(`${fp.where}: ${fp.fields.join(', ')}\n    ${fp.why}`);
  process.exit(0);
}

const problems = [];
const units = [];
const ok = [];
for (const file of process.argv.slice(2)) {
  let docs;
  try {
    docs = loadDocuments(file);
  } catch (e) {
    problems.push({ file, line: 1, path: '(file)', message: e.message });
    continue;
  }
  const { value, lineOf } = docs[0];
  const origin = { file, lineOf };
  units.push({
    type: 'Json<Dashboard>', value: withoutFalsePositives(value), origin,
    imports: ["import type { Dashboard } from '@grafana/schema';"],
  });
  const panels = [];
  (value.panels ?? []).forEach((p, i) => {
    panels.push([p, ['panels', i]]);
    (p?.panels ?? []).forEach((q, j) => panels.push([q, ['panels', i, 'panels', j]]));
  });
  const unknown = new Set();
  for (const [p, base] of panels) {
    if (!p || typeof p.type !== 'string' || p.type === 'row') continue;
    const t = panelTypes(p.type);
    if (!t) {
      unknown.add(p.type);
      continue;
    }
    const alias = p.type.replace(/\W/g, '_');
    const check = (exported, name, value, where) => {
      if (!exported || value === undefined) return;
      units.push({
        type: `Loose<${alias}${name}>`, value, origin, base: [...base, ...where],
        imports: [`import type { ${name} as ${alias}${name} } from '${t.module}';`],
      });
    };
    check(t.options, 'Options', p.options, ['options']);
    check(t.fieldConfig, 'FieldConfig', p.fieldConfig?.defaults?.custom, ['fieldConfig', 'defaults', 'custom']);
  }
  const note = unknown.size ? `; options of ${[...unknown].join(', ')} panels unchecked (no types)` : '';
  ok.push([file, `ok ${file}: ${panels.length} panels${note}`]);
}
problems.push(...typecheck(units, PREAMBLE));
const bad = new Set(problems.map((p) => p.file));
process.exit(report(problems, ok.filter(([f]) => !bad.has(f)).map(([, l]) => l)));
