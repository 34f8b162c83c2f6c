#!/usr/bin/env bash
# Validates Office files against the ECMA-376 transitional schemas (Validate.java, Apache POI's XMLBeans
# types). Usage: bash tools/ooxml-validate/run.sh FILE_OR_DIR...
# Needs Java 17+ and Maven. The first run resolves poi-ooxml-full into ~/.m2 and keeps the class path in
# ~/.cache/docgen (keyed by the pom), so later runs are offline.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${HOME}/.cache/docgen"
mkdir -p "$cache"
key=$(sha256sum "$here/pom.xml" | cut -c1-16)
cp_file="$cache/ooxml-validate-$key.classpath"
if [ ! -s "$cp_file" ] || ! tr ':' '\n' <"$cp_file" | while read -r jar; do [ -f "$jar" ] || exit 1; done; then
  mvn -q -B -Dstyle.color=never -f "$here/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cp_file.partial" >&2
  mv "$cp_file.partial" "$cp_file"
fi
exec java -Xss8m -Dlog4j2.loggerContextFactory=org.apache.logging.log4j.simple.SimpleLoggerContextFactory -cp "$(cat "$cp_file")" "$here/Validate.java" "$@"
