#!/usr/bin/env bash
# The Kubernetes manifests and the Grafana dashboard read by real schemas and tools (label unit),
# each check also run on deliberately broken copies, which it must refuse for the right reason:
#   k8s_models        every object in deploy/kubernetes/ against the API's OpenAPI schema
#                     (kubernetes-models + @kubernetes-models/validate): types, required fields
#   k8s_types         every object as a strict TypeScript literal of its kubernetes-types type:
#                     unknown and misspelled fields too
#   dashboard_types   dashboards/*.json against @grafana/schema's Dashboard and the panel
#                     plugins' Options/FieldConfig (a lint; known false positives are listed by
#                     `node dashboard_types.mjs --false-positives`)
#   dashboard_promql  every PromQL query of dashboards/*.json, variables substituted, through
#                     `promtool check rules`
# usage: schema_test.sh CHECK
# The npm packages are those of npm/package-lock.json, installed by scripts/deps.sh. A missing
# tool or package is a SKIP (exit 77) saying what is missing, and a FAIL when CI=true.
# Prints one PASS/FAIL line per case and "N passed, N failed".
set -uo pipefail
CHECK=${1:?usage: schema_test.sh k8s_models|k8s_types|dashboard_types|dashboard_promql}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
tmp=$(mktemp -d /tmp/dimctl-schema.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

missing() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL $CHECK: $1 (CI=true: scripts/deps.sh must have installed it)"
    exit 1
  fi
  echo "SKIP: $1 (sudo scripts/deps.sh installs it)"
  exit 77
}

need_node() {
  command -v node >/dev/null || missing "node is not installed"
  local stamp="$HERE/npm/node_modules/.dimctl-lock.sha256"
  [ -f "$stamp" ] || missing "the npm packages of tests/unit/deploy/npm are not installed"
  [ "$(cat "$stamp")" = "$(sha256sum "$HERE/npm/package-lock.json" | cut -d' ' -f1)" ] ||
    missing "tests/unit/deploy/npm/node_modules is not what package-lock.json pins"
}

# CASES: one broken copy per line, "name|source|operation|path|argument|expected", where
# operation, path and argument are break_copy.py's and `expected` is an extended regex that the
# check's report on that copy must match (so it fails for the reason the case breaks).
case "$CHECK" in
  k8s_models | k8s_types)
    need_node
    mapfile -t FILES < <(find "$ROOT/deploy/kubernetes" -type f \( -name '*.yaml' -o -name '*.yml' \) | sort)
    run() { node "$HERE/$CHECK.mjs" "$@"; }
    ;;&
  k8s_models)
    CASES="wrong_type|deploy/kubernetes/daemonset.yaml|set|spec.template.spec.containers.0.ports.0.containerPort|\"9977\"|containerPort: must be integer
missing_required|deploy/kubernetes/daemonset.yaml|delete|spec.selector||spec: must have required property '?selector
wrong_type_service|deploy/kubernetes/service.yaml|set|spec.ports.0.port|\"metrics\"|ports\\[0\\]\\.port: must be integer
wrong_type_configmap|deploy/kubernetes/configmap.yaml|set|data|[\"dimctl.yaml\"]|data: must be object"
    ;;
  k8s_types)
    CASES="misspelled_field|deploy/kubernetes/daemonset.yaml|rename|spec.template.spec.containers.0.imagePullPolicy|imagePullPolicyy|imagePullPolicyy: .*does not exist in type 'Container'
misspelled_top_field|deploy/kubernetes/configmap.yaml|rename|data|dta|dta: .*does not exist in type 'ConfigMap'
wrong_type|deploy/kubernetes/daemonset.yaml|set|spec.template.spec.containers.0.ports.0.containerPort|\"9977\"|containerPort: Type 'string' is not assignable to type 'number'
missing_required|deploy/kubernetes/daemonset.yaml|delete|spec.selector||Property 'selector' is missing"
    ;;
  dashboard_types)
    need_node
    mapfile -t FILES < <(find "$ROOT/dashboards" -maxdepth 1 -type f -name '*.json' | sort)
    run() { node "$HERE/dashboard_types.mjs" "$@"; }
    CASES="misspelled_panel_field|dashboards/dimctl.json|rename|panels.1.gridPos|gridPosition|panels\\[1\\]\\.gridPosition: .*does not exist
misspelled_variable_field|dashboards/dimctl.json|rename|templating.list.1.includeAll|includeAl|templating\\.list\\[1\\]\\.includeAl: .*does not exist
wrong_type|dashboards/dimctl.json|set|panels.1.id|\"2\"|panels\\[1\\]\\.id: Type 'string' is not assignable to type 'number'
missing_required|dashboards/dimctl.json|delete|panels.1.type||Property 'type' is missing
misspelled_option|dashboards/dimctl.json|rename|panels.6.options.legend.displayMode|displayMod|panels\\[6\\]\\.options\\.legend\\.displayMod: .*does not exist
bad_option_value|dashboards/dimctl.json|set|panels.6.options.legend.displayMode|\"tabel\"|options\\.legend\\.displayMode: Type '\"tabel\"' is not assignable"
    ;;
  dashboard_promql)
    command -v python3 >/dev/null || missing "python3 is not installed"
    PROMTOOL=${PROMTOOL:-$(command -v promtool || true)}
    [ -n "$PROMTOOL" ] || missing "promtool (Debian's prometheus package) is not installed"
    mapfile -t FILES < <(find "$ROOT/dashboards" -maxdepth 1 -type f -name '*.json' | sort)
    # Each file on its own: promtool names only the generated rules file.
    run() {
      local f rc=0 n=0
      for f in "$@"; do
        n=$((n + 1))
        local rules="$tmp/rules.$n.yml" frc=0
        python3 "$HERE/dashboard_promql.py" rules "$f" "$rules" 2>&1 || frc=1
        if [ -s "$rules" ]; then
          "$PROMTOOL" check rules "$rules" >"$rules.out" 2>&1 || frc=1
          [ "$frc" -eq 0 ] || sed "s|$rules|$f (as rules)|" "$rules.out"
        fi
        if [ "$frc" -eq 0 ]; then
          echo "ok $f: $(grep -o '[0-9]* rules found' "$rules.out") by promtool check rules"
        fi
        [ "$frc" -eq 0 ] || rc=1
      done
      return "$rc"
    }
    CASES="syntax_error|dashboards/dimctl.json|set|panels.1.targets.0.expr|\"sum(rate(dimctl_loops_total{instance=~\\\"\$instance\\\"}[\$__rate_interval])\"|dashboard:panel_2_A.*unclosed left parenthesis
unknown_variable|dashboards/dimctl.json|set|panels.6.targets.0.expr|\"rate(dimctl_napi_packets_total{device=~\\\"\$dev\\\"}[\$__rate_interval])\"|panel_7_A .*\\\$dev is not a variable
misspelled_builtin|dashboards/dimctl.json|set|panels.6.targets.0.expr|\"rate(dimctl_napi_packets_total[\$__rate_intervall])\"|panel_7_A .*\\\$__rate_intervall is not a variable
bad_variable_query|dashboards/dimctl.json|set|templating.list.2.query.query|\"label_values(dimctl_build_info{job=~\\\"\$job\\\", instance)\"|dashboard:variable_instance.*(parse error|unexpected)
bad_function|dashboards/dimctl.json|set|panels.1.targets.0.expr|\"rate(dimctl_ready)\"|dashboard:panel_2_A.*(range vector|expected type)"
    ;;
  *)
    echo "schema_test.sh: unknown check $CHECK" >&2
    exit 2
    ;;
esac

[ "${#FILES[@]}" -gt 0 ] || {
  echo "FAIL $CHECK: no files to check"
  exit 1
}

# The broken copies, made first: the shipped files and the copies go through one run of the
# check (one TypeScript program, one node start), and each file's report is read from it.
copies=() names=() expects=()
while IFS='|' read -r name src op path arg expect; do
  [ -n "$name" ] || continue
  mkdir -p "$tmp/$name"
  copy="$tmp/$name/$(basename "$src")"
  if ! err=$(python3 "$HERE/break_copy.py" "$ROOT/$src" "$copy" "$op" "$path" ${arg:+"$arg"} 2>&1); then
    fail "broken_$name" "cannot make the broken copy ($op $path of $src): $(tail -n 1 <<<"$err")"
    continue
  fi
  copies+=("$copy") names+=("$name") expects+=("$expect")
done <<<"$CASES"

out=$(run "${FILES[@]}" "${copies[@]}" 2>&1)
rc=$?
# report_of TEXT: the lines naming TEXT and the indented lines under each (the rest of a
# TypeScript message), without the "ok" line.
report_of() {
  awk -v d="$1" 'index($0, d) && !/^ok / { on = 1; print; next } on && /^    / { print; next } { on = 0 }' <<<"$out"
}

# The shipped files: each reported ok, nothing else said about it.
for f in "${FILES[@]}"; do
  rel=${f#"$ROOT"/}
  mine=$(report_of "$f" | sed "s|$ROOT/||g")
  okline=$(grep -E "^ok $f(:|$)" <<<"$out" | sed "s|$ROOT/||g")
  if [ -z "$mine" ] && [ -n "$okline" ]; then
    pass "$CHECK $rel (${okline#ok "$rel": })"
  else
    fail "$CHECK $rel" "${mine:-no report on it: $(tail -n 5 <<<"$out")}"
  fi
done

# Each broken copy: refused, for the reason its case breaks.
for i in "${!copies[@]}"; do
  mine=$(report_of "$tmp/${names[$i]}/" | sed "s|$tmp/||g")
  if [ "$rc" -eq 0 ]; then
    fail "broken_${names[$i]}" "the check exited 0 on the broken copies"
  elif grep -qE "${expects[$i]}" <<<"$mine"; then
    pass "broken_${names[$i]}: $(grep -E "${expects[$i]}" <<<"$mine" | head -n 1 | sed 's/^ *//')"
  else
    fail "broken_${names[$i]}" "expected /${expects[$i]}/ in the report on the copy; got: ${mine:-nothing}"
  fi
done
if grep -q '^(generated)' <<<"$out"; then
  fail generated "a diagnostic outside every checked document: $(grep '^(generated)' <<<"$out")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
