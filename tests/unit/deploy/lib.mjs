// Shared by the deploy checks (k8s_models.mjs, k8s_types.mjs, dashboard_types.mjs): the pinned
// npm packages of tests/unit/deploy/npm, source documents with line numbers, and one TypeScript
// program per run whose diagnostics are reported as FILE:LINE: path: message.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const npmDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'npm');
// The packages live in npm/node_modules, not on this file's resolution path.
export const npmRequire = createRequire(path.join(npmDir, 'package.json'));
const YAML = npmRequire('yaml');

// Every document of a YAML (or JSON, which is YAML) file, each with a lineOf(path) that finds
// the line of the deepest key or item of `path` that the document has.
export function loadDocuments(file) {
  const text = fs.readFileSync(file, 'utf8');
  const lines = new YAML.LineCounter();
  const docs = YAML.parseAllDocuments(text, { lineCounter: lines });
  return docs
    .filter((d) => d.contents !== null)
    .map((doc, index) => {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0].message}`);
      const lineOf = (p) => {
        let node = doc.contents;
        let offset = node?.range?.[0] ?? 0;
        for (const seg of p) {
          if (YAML.isMap(node)) {
            const pair = node.items.find((it) => String(it.key?.value ?? it.key) === String(seg));
            if (!pair) break;
            offset = pair.key?.range?.[0] ?? offset;
            node = pair.value;
          } else if (YAML.isSeq(node) && Number.isInteger(Number(seg))) {
            node = node.items[Number(seg)];
            if (!node) break;
            offset = node.range?.[0] ?? offset;
          } else {
            break;
          }
        }
        return lines.linePos(offset).line;
      };
      return { file, index, value: doc.toJS(), lineOf };
    });
}

export function formatPath(p) {
  return p.map((s, i) => (typeof s === 'number' ? `[${s}]` : i ? `.${s}` : s)).join('') || '(top)';
}

// Type-checks `units` ({type, value, imports, origin: {file, lineOf}, base: [path prefix]}) as
// `export const uN: type = <value as JSON>;` in one strict TypeScript program. Returns one
// {file, line, path, message} per diagnostic, attributed to the unit (and the property inside
// it) where TypeScript reports it. `preamble` holds shared type declarations.
export function typecheck(units, preamble = '') {
  const ts = npmRequire('typescript');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dimctl-tscheck-'));
  try {
    // Plain node resolution from the generated file, package "exports" included.
    fs.symlinkSync(path.join(npmDir, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const imports = [...new Set(units.flatMap((u) => u.imports))].join('\n');
    let text = `${imports}\n${preamble}\n`;
    const spans = [];
    units.forEach((u, i) => {
      text += `export const u${i}: ${u.type} = `;
      const start = text.length;
      text += JSON.stringify(u.value, null, 2);
      spans.push({ start, end: text.length, unit: u });
      text += ';\n';
    });
    const file = path.join(dir, 'checked.ts');
    fs.writeFileSync(file, text);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts'],
      types: [],
      // The packages' own declarations are theirs to check; ours is the generated file.
      skipLibCheck: true,
    });
    const source = program.getSourceFile(file);
    const out = [];
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const span = d.file === source && spans.find((s) => d.start >= s.start && d.start < s.end);
      if (!span) {
        // A diagnostic outside every unit is the generator's or the packages' fault: report it
        // as such rather than pinning it on a manifest.
        const where = d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
        out.push({ file: '(generated)', line: 0, path: where, message });
        continue;
      }
      const decl = source.statements
        .flatMap((s) => (ts.isVariableStatement(s) ? s.declarationList.declarations : []))
        .find((v) => v.initializer && v.initializer.getStart(source) === span.start);
      const inner = decl ? pathAt(ts, source, decl.initializer, d.start) : [];
      const full = [...(span.unit.base ?? []), ...inner];
      out.push({
        file: span.unit.origin.file,
        line: span.unit.origin.lineOf(full),
        path: formatPath(full),
        message,
      });
    }
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// The property names and array indices leading from a JSON literal to the node at `pos`.
function pathAt(ts, source, node, pos, out = []) {
  if (ts.isObjectLiteralExpression(node)) {
    for (const p of node.properties) {
      if (pos < p.getStart(source) || pos >= p.end) continue;
      out.push(p.name.text);
      if (ts.isPropertyAssignment(p) && pos >= p.initializer.getStart(source)) {
        return pathAt(ts, source, p.initializer, pos, out);
      }
      return out;
    }
  } else if (ts.isArrayLiteralExpression(node)) {
    const i = node.elements.findIndex((e) => pos >= e.getStart(source) && pos < e.end);
    if (i >= 0) {
      out.push(i);
      return pathAt(ts, source, node.elements[i], pos, out);
    }
  }
  return out;
}

// Prints one "FILE:LINE: path: message" block per problem (message lines indented), then
// returns the exit status: 1 when there was any.
export function report(problems, okLines) {
  for (const l of okLines) console.log(l);
  for (const p of problems) {
    // TypeScript spells out whole object types; the path already says which object.
    const message = p.message.replace(/'\{[^']{60,}'/g, "'{...}'");
    const [first, ...rest] = message.split('\n');
    console.log(`${p.file}:${p.line}: ${p.path}: ${first}`);
    for (const r of rest.slice(-6)) console.log(`    ${r.trim()}`);
  }
  return problems.length ? 1 : 0;
}
