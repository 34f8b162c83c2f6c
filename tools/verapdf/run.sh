#!/usr/bin/env bash
# veraPDF 1.28 command line (org.verapdf.apps.GreenfieldCliWrapper), e.g.
#   bash tools/verapdf/run.sh --flavour 3b --format text FILE.pdf
#   bash tools/verapdf/run.sh --flavour ua1 --format json FILE.pdf
# Needs Java 17+ and Maven. The first run resolves greenfield-apps into ~/.m2 and keeps the class path in
# ~/.cache/docgen (keyed by the pom), so later runs are offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${HOME}/.cache/docgen"
mkdir -p "$cache"
key=$(sha256sum "$here/pom.xml" | cut -c1-16)
cp_file="$cache/verapdf-$key.classpath"
if [ ! -s "$cp_file" ] || ! tr ':' '\n' <"$cp_file" | while read -r jar; do [ -f "$jar" ] || exit 1; done; then
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cp_file.partial" >&2
  mv "$cp_file.partial" "$cp_file"
fi
exec java -Xss8m -cp "$(cat "$cp_file")" org.verapdf.apps.GreenfieldCliWrapper "$@"
