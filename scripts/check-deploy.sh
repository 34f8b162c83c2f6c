#!/usr/bin/env bash
# The Kubernetes chart and the Prometheus rules, checked without a cluster (called by .ci/run; idempotent):
#   helm lint (strict) and helm template of deploy/helm/docgen with its default values, the production
#   values (deploy/helm/values-production.yaml) and each worker autoscaling mode; every rendered manifest
#   validated by kubeconform -strict against the Kubernetes JSON schemas of two versions and against the
#   KEDA ScaledObject CRD's schema; promtool check rules and promtool test rules on deploy/prometheus.
#
# Tools are built once with `go install` into Go's bin directory (versions below; a different version
# there is rebuilt) and the schemas are cached under ~/.cache/docgen:
#   Kubernetes schemas: the PyPI package kubernetes-validate (it bundles kubernetes-json-schema per version)
#   KEDA CRDs:          the KEDA Go module (go mod download), config/crd/bases, turned into JSON schema by
#                       scripts/crd-schema.mjs
#   scripts/check-deploy.sh            # everything
#   scripts/check-deploy.sh tools      # only build/fetch the tools and schemas (CI starts it early)
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_MODULE=helm.sh/helm/v3/cmd/helm
HELM_VERSION=v3.19.0
KUBECONFORM_MODULE=github.com/yannh/kubeconform/cmd/kubeconform
KUBECONFORM_VERSION=v0.7.0
# Prometheus 3.7.3 (its Go module versions are v0.<major><minor>.<patch>).
PROMTOOL_VERSION=v0.307.3
KEDA_MODULE=github.com/kedacore/keda/v2
KEDA_VERSION=v2.18.0
KUBERNETES_VALIDATE_VERSION=1.37.0
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and a recent one.
KUBE_VERSIONS="1.28.0 1.34.0"

cache="${HOME}/.cache/docgen"
mkdir -p "$cache"
gobin="$(go env GOPATH)/bin"

# go install <module> <version> <binary>, unless Go's bin directory has that version already (the binary's
# embedded build info names its module version).
go_tool() {
  local module=$1 version=$2 bin=$3
  if [ -x "$gobin/$bin" ] && go version -m "$gobin/$bin" 2>/dev/null | awk '$1 == "mod" { print $3 }' | grep -qx "$version"; then
    return 0
  fi
  echo "building $bin $version (go install $module@$version)"
  local start=$SECONDS
  GOFLAGS=-buildvcs=false nice -n 10 go install "$module@$version"
  echo "$bin built in $((SECONDS - start)) s"
}

# promtool cannot be `go install`ed (Prometheus's go.mod has exclude directives, refused outside the main
# module): built inside a copy of the module's source as the main module, with its version stamped in.
promtool_build() {
  local want=${PROMTOOL_VERSION#v0.}
  want="$((10#${want%%.*} / 100)).$((10#${want%%.*} % 100)).${want#*.}"
  if [ -x "$gobin/promtool" ] && "$gobin/promtool" --version 2>/dev/null | grep -q "version $want "; then return 0; fi
  echo "building promtool $want (Prometheus module $PROMTOOL_VERSION, go build ./cmd/promtool)"
  local start=$SECONDS dir src
  dir=$(go mod download -json "github.com/prometheus/prometheus@$PROMTOOL_VERSION" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
  src=$(mktemp -d)
  cp -r "$dir/." "$src" && chmod -R u+w "$src"
  (cd "$src" && GOFLAGS=-buildvcs=false nice -n 10 go build -o "$gobin/promtool.partial" \
    -ldflags "-X github.com/prometheus/common/version.Version=$want -X github.com/prometheus/common/version.Branch=module" ./cmd/promtool)
  mv "$gobin/promtool.partial" "$gobin/promtool"
  rm -rf "$src"
  echo "promtool built in $((SECONDS - start)) s"
}

tools() {
  go_tool "$HELM_MODULE" "$HELM_VERSION" helm
  go_tool "$KUBECONFORM_MODULE" "$KUBECONFORM_VERSION" kubeconform
  promtool_build

  # The Kubernetes schemas: the kubernetes-validate wheel, kept in the cache (made standalone below).
  wheel_dir="$cache/kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}-wheel"
  if ! ls "$wheel_dir"/*.whl >/dev/null 2>&1; then
    rm -rf "$wheel_dir.partial"
    python3 -m pip download --disable-pip-version-check --no-deps --quiet -d "$wheel_dir.partial" "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}"
    rm -rf "$wheel_dir" && mv "$wheel_dir.partial" "$wheel_dir"
  fi

  keda_dir="$(go mod download -json "${KEDA_MODULE}@${KEDA_VERSION}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  local t
  for t in helm kubeconform; do echo "$t $(go version -m "$gobin/$t" | awk '$1 == "mod" { print $3 }') ($gobin/$t)"; done
  promtool --version | sed -n 1p
  echo "Kubernetes schemas: kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} (v${KUBE_VERSIONS// /, v}); KEDA CRD: ${KEDA_MODULE}@${KEDA_VERSION}"
}

export PATH="$gobin:$PATH"
tools
[ "${1:-}" = tools ] && exit 0

# Node from here on (CI starts `tools` before it installs Node 24 and runs npm ci).
# Standalone strict schemas per Kubernetes version (scripts/k8s-schemas.mjs), cached.
k8s_dir="$cache/kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}-schemas"
for v in $KUBE_VERSIONS; do
  [ -f "$k8s_dir/v${v}-standalone-strict/deployment-apps-v1.json" ] && continue
  unpacked=$(mktemp -d)
  (cd "$unpacked" && python3 -m zipfile -e "$wheel_dir"/*.whl . >/dev/null)
  rm -rf "$k8s_dir/v${v}-standalone-strict.partial"
  node scripts/k8s-schemas.mjs "$unpacked/kubernetes_validate/kubernetes-json-schema/v${v}-local-strict" "$k8s_dir/v${v}-standalone-strict.partial"
  mv "$k8s_dir/v${v}-standalone-strict.partial" "$k8s_dir/v${v}-standalone-strict"
  rm -rf "$unpacked"
done

# The KEDA CRD as JSON schema (scripts/crd-schema.mjs reads YAML with the project's `yaml` package: after
# npm ci, hence not in `tools`, which CI starts before it).
crd_dir="$cache/keda-${KEDA_VERSION}-schemas"
if [ ! -f "$crd_dir/scaledobject-keda-v1alpha1.json" ]; then
  rm -rf "$crd_dir.partial"
  node scripts/crd-schema.mjs "$keda_dir/config/crd/bases/keda.sh_scaledobjects.yaml" "$crd_dir.partial"
  mv "$crd_dir.partial" "$crd_dir"
fi

chart=deploy/helm/docgen
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "--- helm lint"
helm lint --strict "$chart"
helm lint --strict "$chart" -f deploy/helm/values-production.yaml

echo "--- helm template"
render() { # name, helm template arguments...
  local name=$1
  shift
  helm template docgen "$chart" --namespace docgen --kube-version 1.34.0 "$@" >"$out/$name.yaml"
  echo "$name: $(grep -c '^kind: ' "$out/$name.yaml") manifests: $(sed -n 's/^kind: //p' "$out/$name.yaml" | sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep=", " }')"
}
render default
render production -f deploy/helm/values-production.yaml
render worker-hpa --set worker.autoscaling.mode=hpa
render worker-fixed --set worker.autoscaling.mode=none --set api.autoscaling.enabled=false
# What the chart must refuse: no Temporal at all, an unknown autoscaling mode.
if helm template docgen "$chart" --set temporalDev.enabled=false >/dev/null 2>&1; then
  echo "the chart rendered without a Temporal address"; exit 1
fi
if helm template docgen "$chart" --set worker.autoscaling.mode=sometimes >/dev/null 2>&1; then
  echo "the chart rendered an unknown worker.autoscaling.mode"; exit 1
fi

echo "--- kubeconform (strict: Kubernetes and KEDA schemas)"
kubeconform_all() { # files...
  local v rc=0
  for v in $KUBE_VERSIONS; do
    kubeconform -strict -summary -kubernetes-version "$v" \
      -schema-location "$k8s_dir/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
      -schema-location "$crd_dir/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
      "$@" || rc=$?
  done
  return $rc
}
kubeconform_all "$out"/*.yaml
# The validators reject what they should (an unknown field in a Deployment's container, a ScaledObject
# trigger without its type), so a pass above means something.
sed 's/^          imagePullPolicy:/          imagePullPolicyy:/' "$out/default.yaml" >"$out/bad-deployment.yaml"
sed 's/^    - type: temporal$/    - kind: temporal/' "$out/default.yaml" >"$out/bad-scaledobject.yaml"
for bad in bad-deployment bad-scaledobject; do
  cmp -s "$out/default.yaml" "$out/$bad.yaml" && { echo "$bad: the edit did not apply"; exit 1; }
  if kubeconform_all "$out/$bad.yaml" >"$out/$bad.log" 2>&1; then
    cat "$out/$bad.log"; echo "kubeconform accepted $bad"; exit 1
  fi
  echo "$bad: rejected as expected ($(grep -c 'is invalid' "$out/$bad.log") invalid)"
done

echo "--- promtool"
promtool check rules deploy/prometheus/alerts.yml
promtool test rules deploy/prometheus/alerts.test.yml
# The dashboard's queries parse as PromQL: each becomes a recording rule of a throw-away rules file, with
# Grafana's variables replaced by what they expand to.
node -e '
  const d = JSON.parse(require("fs").readFileSync("deploy/grafana/docgen.json", "utf8"));
  const rules = d.panels.flatMap((p, i) => p.targets.map((t, j) => ({ record: `dashboard:panel${i}_${j}`, expr: t.expr.replaceAll("$__rate_interval", "5m").replaceAll("$job", ".*") })));
  if (rules.length < 10) throw new Error("the dashboard has " + rules.length + " queries");
  console.log(JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
' >"$out/dashboard-rules.json"
promtool check rules "$out/dashboard-rules.json"
echo "check-deploy: ok"
