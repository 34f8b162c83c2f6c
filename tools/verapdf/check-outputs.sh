#!/usr/bin/env bash
# Runs veraPDF over the accessible pdfs the tests kept (test/support/pdf-outputs.ts) and fails on any rule a
# file breaks:
#   DIR/pdfua1/*.pdf  the PDF/UA-1 profile (ISO 14289-1)
#   DIR/pdfa2a/*.pdf  the PDF/A-2a profile,  DIR/pdfa3a/*.pdf  the PDF/A-3a profile
#   bash tools/verapdf/check-outputs.sh "$DOCGEN_TEST_OUTPUTS"
# A missing pdfua1 directory is a failure too: the accessible tests did not run, or kept nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:?usage: check-outputs.sh DIR}"
if ! compgen -G "$dir/pdfua1/*.pdf" >/dev/null; then
  echo "no accessible pdfs in $dir/pdfua1: the tests kept none (test/integration/accessible.test.ts)" >&2
  exit 1
fi
failed=0
for pair in pdfua1:ua1 pdfa2a:2a pdfa3a:3a; do
  sub="${pair%%:*}"
  flavour="${pair##*:}"
  compgen -G "$dir/$sub/*.pdf" >/dev/null || continue
  report="$(mktemp)"
  # veraPDF exits non-zero when a file is not compliant; the report says which and why.
  bash "$here/run.sh" --flavour "$flavour" --format json "$dir/$sub"/*.pdf >"$report" || true
  python3 - "$report" "$flavour" <<'EOF' || failed=1
import json, sys
report, flavour = sys.argv[1], sys.argv[2]
try:
    jobs = json.load(open(report))['report']['jobs']
except Exception as e:  # noqa: BLE001
    print('veraPDF gave no report (%s): %s' % (e, open(report).read()[:2000]))
    sys.exit(1)
bad = 0
for job in jobs:
    name = job['itemDetails']['name'].rsplit('/', 1)[-1]
    results = job.get('validationResult') or []
    if not results:
        print('%s: not validated (%s)' % (name, job.get('taskException') or job.get('processingTime')))
        bad += 1
        continue
    for vr in results:
        d = vr['details']
        ok = vr.get('compliant') and d['failedRules'] == 0
        print('%-70s %s: %s, rules failed %d, checks failed %d' % (name, vr.get('profileName', flavour), 'compliant' if ok else 'NOT compliant', d['failedRules'], d['failedChecks']))
        if not ok:
            bad += 1
            for r in d['ruleSummaries']:
                if r.get('ruleStatus') == 'FAILED':
                    print('    %s %s-%s (%d): %s' % (r['specification'], r['clause'], r['testNumber'], r['failedChecks'], r['description']))
print('%s: %d file(s), %d not compliant' % (flavour, len(jobs), bad))
sys.exit(1 if bad else 0)
EOF
  rm -f "$report"
done
exit "$failed"
