#!/usr/bin/env bash
# A production Temporal server on PostgreSQL, without containers: the operator's script for docgen's
# scale-out (README "Scale out"). The same steps as docker-compose.yml's temporal-schema, temporal and
# temporal-namespace services, driven by the same environment variables.
#
#   scripts/temporal-server.sh install     go install the server and its SQL tool (v1.32.1; ~15 min cold, cached)
#   scripts/temporal-server.sh schema      create or upgrade the two databases' schemas (idempotent)
#   scripts/temporal-server.sh start       run the server in the foreground (exec; SIGTERM stops it)
#   scripts/temporal-server.sh namespace   register TEMPORAL_NAMESPACE (idempotent; waits for the frontend)
#   scripts/temporal-server.sh up          schema, then start in the background, then namespace; prints the pid
#
# Settings (environment; defaults in brackets). Database: POSTGRES_SEEDS [127.0.0.1], DB_PORT [5432],
# POSTGRES_USER [temporal], POSTGRES_PWD [temporal], DBNAME [temporal], VISIBILITY_DBNAME
# [temporal_visibility]. Server: BIND_ON_IP [127.0.0.1], TEMPORAL_BROADCAST_ADDRESS (this host's IP when
# BIND_ON_IP is 0.0.0.0), FRONTEND_GRPC_PORT [7233], FRONTEND_HTTP_PORT [7243], HISTORY_GRPC_PORT [7234],
# MATCHING_GRPC_PORT [7235], WORKER_GRPC_PORT [7239], *_MEMBERSHIP_PORT [693x], NUM_HISTORY_SHARDS [4;
# permanent once the schema holds data: use 512 or more in production], PROMETHEUS_ENDPOINT (host:port of
# the server's metrics), LOG_LEVEL [info], DYNAMIC_CONFIG_FILE_PATH [deploy/temporal/dynamicconfig/docgen.yaml].
# Namespace: TEMPORAL_NAMESPACE [default], TEMPORAL_RETENTION [7d]. Binaries: TEMPORAL_SERVER,
# TEMPORAL_SQL_TOOL, TEMPORAL_CLI (found on PATH or in Go's bin directory otherwise). The server reads these
# variables through its embedded configuration template (no config file).
set -euo pipefail

SERVER_VERSION=v1.32.1
here="$(cd "$(dirname "$0")/.." && pwd)"

export DB=postgres12
export POSTGRES_SEEDS="${POSTGRES_SEEDS:-127.0.0.1}"
export DB_PORT="${DB_PORT:-5432}"
export POSTGRES_USER="${POSTGRES_USER:-temporal}"
export POSTGRES_PWD="${POSTGRES_PWD:-temporal}"
export DBNAME="${DBNAME:-temporal}"
export VISIBILITY_DBNAME="${VISIBILITY_DBNAME:-temporal_visibility}"
export BIND_ON_IP="${BIND_ON_IP:-127.0.0.1}"
export NUM_HISTORY_SHARDS="${NUM_HISTORY_SHARDS:-4}"
export LOG_LEVEL="${LOG_LEVEL:-info}"
export DYNAMIC_CONFIG_FILE_PATH="${DYNAMIC_CONFIG_FILE_PATH:-$here/deploy/temporal/dynamicconfig/docgen.yaml}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${TEMPORAL_RETENTION:-7d}"

gobin() { local d; d="$(go env GOBIN 2>/dev/null || true)"; [ -n "$d" ] || d="$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"; echo "$d"; }
# find VAR_VALUE NAME... : the explicit path, else the first NAME on PATH or in Go's bin directory.
find_bin() {
  local explicit="$1"; shift
  if [ -n "$explicit" ]; then echo "$explicit"; return; fi
  local n
  for n in "$@"; do
    if command -v "$n" >/dev/null 2>&1; then command -v "$n"; return; fi
    if command -v go >/dev/null 2>&1 && [ -x "$(gobin)/$n" ]; then echo "$(gobin)/$n"; return; fi
  done
  echo "scripts/temporal-server.sh: none of $* found; run: scripts/temporal-server.sh install" >&2
  exit 1
}
# `go install` names the binaries after their directories: server and sql.
server_bin() { find_bin "${TEMPORAL_SERVER:-}" temporal-server server; }
sql_bin() { find_bin "${TEMPORAL_SQL_TOOL:-}" temporal-sql-tool sql; }
cli_bin() { find_bin "${TEMPORAL_CLI:-}" temporal; }
frontend() { echo "${TEMPORAL_BROADCAST_ADDRESS:-$([ "$BIND_ON_IP" = 0.0.0.0 ] && echo 127.0.0.1 || echo "$BIND_ON_IP")}:${FRONTEND_GRPC_PORT:-7233}"; }

cmd_install() {
  if [ -x "$(gobin)/server" ] && "$(gobin)/server" --version 2>/dev/null | grep -q "${SERVER_VERSION#v}" && [ -x "$(gobin)/sql" ]; then
    echo "temporal server ${SERVER_VERSION} already installed in $(gobin)"
    return
  fi
  GOTOOLCHAIN=local go install "go.temporal.io/server/cmd/server@${SERVER_VERSION}" "go.temporal.io/server/cmd/tools/sql@${SERVER_VERSION}"
}

cmd_schema() {
  local sql; sql="$(sql_bin)"
  local t=("$sql" --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD")
  # create ignores an existing database; setup-schema -v 0.0 skips a versioned schema; update-schema applies
  # only the missing versions (the schemas are embedded in the tool).
  "${t[@]}" --db "$DBNAME" create
  "${t[@]}" --db "$DBNAME" setup-schema -v 0.0
  "${t[@]}" --db "$DBNAME" update-schema --schema-name postgresql/v12/temporal
  "${t[@]}" --db "$VISIBILITY_DBNAME" create
  "${t[@]}" --db "$VISIBILITY_DBNAME" setup-schema -v 0.0
  "${t[@]}" --db "$VISIBILITY_DBNAME" update-schema --schema-name postgresql/v12/visibility
  echo "temporal schema ready ($DBNAME, $VISIBILITY_DBNAME on $POSTGRES_SEEDS:$DB_PORT)"
}

cmd_start() {
  exec "$(server_bin)" start
}

cmd_namespace() {
  local cli address i=0; cli="$(cli_bin)"; address="$(frontend)"
  until "$cli" operator cluster health --address "$address" >/dev/null 2>&1; do
    i=$((i + 1)); [ "$i" -ge 120 ] && { echo "Temporal frontend at $address not healthy after 60 s" >&2; exit 1; }
    sleep 0.5
  done
  if "$cli" operator namespace describe -n "$NAMESPACE" --address "$address" >/dev/null 2>&1; then
    echo "namespace $NAMESPACE exists"
  else
    # A concurrent registration may win between describe and create: accept "already exists".
    "$cli" operator namespace create -n "$NAMESPACE" --retention "$RETENTION" --address "$address" 2>&1 | grep -v -i "already" || true
    "$cli" operator namespace describe -n "$NAMESPACE" --address "$address" >/dev/null
    echo "namespace $NAMESPACE registered"
  fi
}

cmd_up() {
  cmd_schema
  "$(server_bin)" start >"${TEMPORAL_LOG_FILE:-/dev/null}" 2>&1 &
  local pid=$!
  cmd_namespace
  echo "temporal server running: pid $pid, frontend $(frontend)"
}

case "${1:-}" in
  install) cmd_install ;;
  schema) cmd_schema ;;
  start) cmd_start ;;
  namespace) cmd_namespace ;;
  up) cmd_up ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
