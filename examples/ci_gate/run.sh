#!/usr/bin/env bash
# Release gates on the bundled demo knowledge base: evaluate a baseline and two candidates, gate each
# candidate against the baseline, record everything in a run history and plot it.
#   examples/ci_gate/run.sh                    (uses the `ragaudit` on PATH; RAGAUDIT=... to override)
# Expected: candidate A passes (exit 0), candidate B is blocked (exit 1); the script exits 0 when the
# gates decide exactly that, so it doubles as a check of the gate itself.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/reports/ci_gate}"
ragaudit="${RAGAUDIT:-ragaudit}"
python="$(dirname "$(command -v "$ragaudit")")/python"
[ -x "$python" ] || python=python3
kb="$("$python" -c 'from importlib.resources import files; print(files("ragaudit") / "demo_data" / "kb")')"
export RAGAUDIT_HISTORY="${RAGAUDIT_HISTORY:-$out/history.sqlite}"
mkdir -p "$out"

evaluate() {  # evaluate NAME PIPELINE: a JSON report in $out/NAME.json
  "$ragaudit" eval --dataset "$kb/golden.jsonl" --corpus "$kb/corpus.jsonl" --pipeline "$2" \
    --name "$1" --metrics nDCG@10,R@5,R@10,MRR@10 --no-progress --out "$out/$1.json" >/dev/null
  echo "evaluated $1 -> $out/$1.json"
}

audit() {  # audit NAME PIPELINE: the cross-tenant audit in $out/audit-NAME.json (only it verifies isolation)
  local code=0
  "$ragaudit" audit-tenants --corpus "$kb/corpus.jsonl" --pipeline "$2" --canaries "$kb/canaries.jsonl" \
    --no-progress --out "$out/audit-$1.json" >/dev/null || code=$?
  echo "audited $1 -> $out/audit-$1.json (exit $code)"
}

gate() {  # gate NAME: the verdict of candidate NAME against the baseline; prints it, returns its exit code
  local code=0
  "$ragaudit" gate "$out/$1.json" --policy "$here/gates.toml" --baseline "$out/baseline.json" \
    --audit "$out/audit-$1.json" --out "$out/verdict-$1.json" || code=$?
  return "$code"
}

echo "== evaluate the released system (baseline) and two candidates on the demo knowledge base"
evaluate baseline bm25
evaluate candidate-a "$here/bm25_binary_tf.toml"
evaluate candidate-b "$here/chunked_24.toml"
audit candidate-a "$here/bm25_binary_tf.toml"
audit candidate-b "$here/chunked_24.toml"

echo
echo "== gate candidate A (expected: PASS, exit 0)"
code_a=0; gate candidate-a || code_a=$?
echo
echo "== gate candidate B (expected: FAIL, exit 1)"
code_b=0; gate candidate-b || code_b=$?

echo
"$ragaudit" history --record "$out/baseline.json" "$out/candidate-a.json" "$out/candidate-b.json" \
  --metric nDCG@10,R@5 --html "$out/history.html" | grep -v '^recorded'

echo
if [ "$code_a" -eq 0 ] && [ "$code_b" -eq 1 ]; then
  echo "OK: candidate A released (exit $code_a), candidate B blocked (exit $code_b); verdicts in $out"
else
  echo "UNEXPECTED: candidate A exit $code_a (want 0), candidate B exit $code_b (want 1)" >&2
  exit 1
fi
