#!/usr/bin/env bash
# The Mustang project's CLI (org.mustangproject:Mustang-CLI, a fat jar from Maven Central), e.g.
#   bash tools/mustang/run.sh --action validate --source FILE.pdf      (Factur-X / ZUGFeRD: PDF/A-3 + XML)
#   bash tools/mustang/run.sh --action validate --source FILE.xml      (XRechnung CII or UBL, Factur-X XML)
#   bash tools/mustang/run.sh --check-dir DIR                          (every .pdf and .xml in DIR; fails on any invalid one)
# Needs Java 17+ and Maven. The first run copies the jar into ~/.m2 (dependency:get) and keeps its path in
# ~/.cache/docgen (keyed by this script's version), so later runs are offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=$(sed -n 's:.*<mustang.version>\(.*\)</mustang.version>.*:\1:p' "$here/pom.xml")
jar="${HOME}/.m2/repository/org/mustangproject/Mustang-CLI/${version}/Mustang-CLI-${version}.jar"
if [ ! -s "$jar" ]; then
  mvn -q -B -Dstyle.color=never dependency:get -Dartifact="org.mustangproject:Mustang-CLI:${version}" -Dtransitive=false >&2
fi
if [ "${1:-}" != "--check-dir" ]; then
  exec java -Xss8m -jar "$jar" --no-notices "$@"
fi
dir="${2:?--check-dir needs a directory}"
failed=0
count=0
shopt -s nullglob
for f in "$dir"/*.pdf "$dir"/*.xml; do
  count=$((count + 1))
  out=$(java -Xss8m -jar "$jar" --no-notices --action validate --source "$f" 2>&1 || true)
  # Mustang prints an XML report whose summary is <summary status="valid"/> or "invalid".
  if grep -q '<summary status="valid"' <<<"$out"; then
    echo "VALID   $f"
  else
    echo "INVALID $f"
    grep -E '<error|<warning|status=' <<<"$out" | head -20 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done
echo "mustang ${version}: ${count} e-invoices, ${failed} invalid"
[ "$count" -gt 0 ] && [ "$failed" -eq 0 ]
