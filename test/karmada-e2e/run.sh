#!/usr/bin/env bash
# make karmada-e2e: Karmada's own end-to-end suite (test/e2e/suites/base of
# the Karmada version go.mod pins) against `atoll up --members 3`.
#
# It builds bin/atoll and the suite's test binary, starts atoll in a fresh
# data directory, writes the kubeconfig the suite reads (contexts
# karmada-apiserver, karmada-host, member1..3), runs the suite with the skip
# list below and writes the summary. Everything lands in $OUT
# (default _output/karmada-e2e): report.json, summary.md, suite.log, atoll/.
# Takes about half an hour on 2 cores (each failing spec adds up to 7 min);
# not part of `make test`.
#
# Harness-only settings (docs/karmada-compat.md lists them): the contexts
# above, members of one node each (Karmada's e2e members' shape),
# --poll-timeout 180s (Karmada's default is 300s; $POLL_TIMEOUT sets it),
# and the skips. Karmada's assertions are not changed.
#
# For partial runs: FOCUS=REGEX runs only the matching specs (ginkgo
# --focus; the skips still apply unless SKIPS=none), ATOLL_ARGS adds flags
# to `atoll up` (e.g. --when-no-cluster-fits=Withdraw to check Karmada's
# behaviour where atoll's default differs).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/_output/karmada-e2e}
GO=${GO:-go}
# The commit under test, taken before anything runs (commits made during
# the hour-long run must not be credited with its result).
COMMIT=$(git describe --always --dirty)
cd "$ROOT"

# Whole files skipped: components atoll replaces or has not built.
# docs/karmada-compat.md gives the reason for each.
SKIP_FILES=(
  aggregatedapi_test.go        # cluster proxy through the aggregated API: gap
  clustertaintpolicy_test.go   # ClusterTaintPolicy: gap
  cronfederatedhpa_test.go     # CronFederatedHPA: gap
  estimator_test.go            # karmada-scheduler-estimator: gap
  federatedhpa_test.go         # FederatedHPA + metrics adapter: gap (member HPAs stay)
  federatedresourcequota_test.go # FederatedResourceQuota: gap
  karmadactl_test.go           # karmadactl: replaced by the atoll CLI
  mcs_test.go                  # MultiClusterService: gap
  preemption_test.go           # policy preemption: deliberately not done (no preemption)
  metrics_test.go              # Karmada components' metric names: replaced by atoll_* metrics
  remedy_test.go               # Remedy: gap
  search_test.go               # karmada-search: gap
  workloadrebalancer_test.go   # WorkloadRebalancer: replaced by atoll's Rebalance
)
# Specs skipped by text.
SKIP_SPECS=(
  'Resource interpreter webhook testing'   # interpreter webhooks: gap (customizations run)
  # They read Work objects, which atoll does not have (bindings are applied
  # directly); counted as failures in docs/karmada-compat.md unless an atoll
  # e2e test named there checks the same behaviour.
  'suspend the CPP dispatching'
  'suspend the PP dispatching'
  'adds dispatching event with a dispatching message'
  '\[BasicCase\] PropagationPolicy testing (Deployment|Service) propagation testing (deployment|service) propagation testing'
  'creates work with permanent ID label'
  # Member HPAs share a Divided workload's HPA range (docs/rebalance.md):
  # Karmada gives every member the whole range; deliberate.
  'deployment replicas syncer testing when policy is Divided schedule type, each cluster have more that one replica'
  'deployment replicas syncer testing when policy is Divided schedule type, propagate 1 replica but hpa minReplicas is 2'
  # A PVC no workload needs any more stays in its members until its own
  # template is deleted (never lose a volume); deliberate.
  'persistentVolumeClaim automatically propagation testing'
  # No cluster matches any more: atoll keeps the placement (never removes a
  # workload because nothing else fits); deliberate.
  'change labels to testing deployment reschedule'
  # Each member allocates its own node ports; deliberate.
  'NodePort service apply status collection testing'
  # Overflow affinities need the estimator's view of member ResourceQuotas: gap.
  '\[OverflowAffinities\]'
  # Policy preemption: deliberately not done.
  'Combined Case 3 \(Policy preemption\)'
  'Lazy activation policy testing.*Policy preemption'
)
# Specs that create kind clusters (docker) cannot run here.
LABEL_FILTER='!needCreateCluster'

mkdir -p "$OUT"
echo "building bin/atoll and the Karmada suite"
make -s build
(cd test/karmada-e2e && $GO build -o "$OUT/harness" ./harness &&
  $GO test -c -o "$OUT/karmada-e2e.test" github.com/karmada-io/karmada/test/e2e/suites/base)

DATA=$OUT/atoll
rm -rf "$DATA"
mkdir -p "$DATA"
# shellcheck disable=SC2086 # ATOLL_ARGS is a list of flags
bin/atoll up --data-dir "$DATA" --members 3 --member-args=--nodes=1 ${ATOLL_ARGS:-} >"$OUT/up.log" 2>&1 &
ATOLL_PID=$!
stop() { kill -INT "$ATOLL_PID" 2>/dev/null || true; wait "$ATOLL_PID" 2>/dev/null || true; }
trap stop EXIT

for _ in $(seq 1 300); do
  grep -q "atoll ready" "$OUT/up.log" && break
  kill -0 "$ATOLL_PID" 2>/dev/null || { cat "$OUT/up.log"; exit 1; }
  sleep 1
done
grep -q "atoll ready" "$OUT/up.log" || { echo "atoll did not become ready"; exit 1; }
export KUBECONFIG=$OUT/kubeconfig
members=()
for m in member1 member2 member3; do members+=("$m=$DATA/members/$m/kubeconfig"); done
"$OUT/harness" kubeconfig "$KUBECONFIG" "$DATA/kubeconfig" "${members[@]}"
kubectl wait --for=condition=Ready --timeout=300s clusters.cluster.karmada.io --all

skip_file=$(IFS='|'; echo "${SKIP_FILES[*]}")
skip_spec=$(IFS='|'; echo "${SKIP_SPECS[*]}")
if [ "${SKIPS:-}" = none ]; then skip_file='^$' skip_spec='^$'; fi
focus=()
if [ -n "${FOCUS:-}" ]; then focus=(--ginkgo.focus="$FOCUS"); fi
echo "running the suite (log: $OUT/suite.log)"
set +e
(cd "$OUT" && ./karmada-e2e.test \
  --ginkgo.label-filter="$LABEL_FILTER" \
  --ginkgo.skip-file="$skip_file" \
  --ginkgo.skip="$skip_spec" \
  "${focus[@]}" \
  --ginkgo.timeout=3h \
  --ginkgo.json-report="$OUT/report.json" \
  --ginkgo.v \
  --poll-timeout="${POLL_TIMEOUT:-180s}") >"$OUT/suite.log" 2>&1
rc=$?
set -e
"$OUT/harness" summary "$OUT/report.json" "$COMMIT" >"$OUT/summary.md"
head -3 "$OUT/summary.md"
echo "summary: $OUT/summary.md (suite exit $rc)"
