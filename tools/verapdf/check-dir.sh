#!/usr/bin/env bash
# veraPDF over a directory of PDF/A files sorted by the flavour they declare (DIR/1a, DIR/2b, DIR/3b...:
# test/support/pdfa-outputs.ts), each judged against its own flavour. Fails when any file fails.
#   bash tools/verapdf/check-dir.sh DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:?usage: check-dir.sh DIR}"
failed=0
count=0
shopt -s nullglob
for sub in "$dir"/*/; do
  flavour=$(basename "$sub")
  files=("$sub"*.pdf)
  [ "${#files[@]}" -gt 0 ] || continue
  out=$(bash "$here/run.sh" --flavour "$flavour" --format text "${files[@]}" 2>&1 || true)
  echo "$out" | grep -E '^(PASS|FAIL)' || true
  count=$((count + ${#files[@]}))
  passed=$(grep -c '^PASS' <<<"$out" || true)
  failed=$((failed + ${#files[@]} - passed))
done
echo "veraPDF: ${count} PDF/A files, ${failed} not passing their declared flavour"
[ "$count" -gt 0 ] && [ "$failed" -eq 0 ]
