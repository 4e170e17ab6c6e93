// Validates every Kubernetes object in the given YAML files against the API's OpenAPI schema,
// with kubernetes-models and @kubernetes-models/validate (ajv): wrong types, missing required
// fields, bad enum or format values. Unknown fields pass here (the schemas allow them):
// k8s_types.mjs catches those.
//   node k8s_models.mjs FILE...    one line per problem as FILE:LINE: path: message; exit 1 if any
import { formatPath, loadDocuments, npmRequire, report } from './lib.mjs';

// The packages that hold a group's models; the core group ("v1") and every other built-in
// group are in kubernetes-models itself.
const packages = { 'monitoring.coreos.com': '@kubernetes-models/prometheus-operator' };

function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const module = group
    ? `${packages[group] ?? 'kubernetes-models'}/${group}/${version}/${kind}`
    : `kubernetes-models/${version}/${kind}`;
  try {
    return npmRequire(module)[kind];
  } catch {
    return undefined;
  }
}

const problems = [];
const ok = [];
for (const file of process.argv.slice(2)) {
  let docs;
  try {
    docs = loadDocuments(file);
  } catch (e) {
    problems.push({ file, line: 1, path: '(file)', message: e.message });
    continue;
  }
  for (const { value, index, lineOf } of docs) {
    const what = `${value?.kind ?? '?'} ${value?.metadata?.name ?? '?'}`;
    const Model = value?.apiVersion && value?.kind && modelFor(value.apiVersion, value.kind);
    if (!Model) {
      problems.push({
        file, line: lineOf(['kind']), path: `document ${index}`,
        message: `no schema for apiVersion ${value?.apiVersion} kind ${value?.kind}: not a Kubernetes object, or a group tests/unit/deploy/k8s_models.mjs does not know`,
      });
      continue;
    }
    try {
      new Model(value).validate();
      ok.push(`ok ${file}: ${what}`);
    } catch (e) {
      if (!e.errors) throw e;
      for (const err of e.errors) {
        const p = err.instancePath.split('/').slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
        problems.push({ file, line: lineOf(p), path: `${what}: ${formatPath(p)}`, message: err.message });
      }
    }
  }
}
process.exit(report(problems, ok));
