#!/usr/bin/env bash
# Compares controller-manager binaries on restarts of one held benchmark
# federation (docs/benchmarks.md, "Comparing restarts").
#
#   ATOLL_BENCH_HOLD=/tmp/hold ATOLL_BENCH_TEMPLATES=20000 ATOLL_BIN=... \
#     go test -run '^$' -bench Templates100k -benchtime 1x -timeout 3h ./bench/ &
#   # once /tmp/hold exists (the benchmark is holding):
#   hack/restart-ab.sh /tmp/hold 3 /tmp/a/atoll /tmp/b/atoll
#
# Each round restarts the controller-manager once with each binary in turn,
# with the benchmark's command line, and prints for every restart: seconds
# until ready (/readyz) and until idle (no queued, busy or parked work),
# the process's CPU-seconds until idle, the machine's CPU-seconds in that
# time, the executor's cluster syncs (parked among them) and reconciles,
# writes that changed nothing, and RSS 20 s after idle and at its peak.
# Single benchmark runs of the same code differ by a quarter in restart
# time and CPU; alternating binaries on the same objects separates a
# change from the machine's mood. A binary may be a wrapper script that
# execs atoll with a different environment (GOGC=50, say); the directory
# name is the label. Remove the hold file afterwards: the benchmark then
# ends. The last controller-manager is left running; its pid is printed.
# PID=<pid> names the process to stop first when the hold file's is gone.
set -o nounset -o pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 HOLD-FILE ROUNDS BINARY..." >&2
	exit 2
fi
hold=$1 rounds=$2
shift 2
cmline=$(grep '^controller-manager=' "$hold" | cut -d= -f2-)
metrics=$(grep -o -- '--metrics-bind-address [^ ]*' <<<"$cmline" | awk '{print $2}')
health=$(grep -o -- '--health-probe-bind-address [^ ]*' <<<"$cmline" | awk '{print $2}')
# The command line without the binary and its log file.
args=$(sed 's/^[^ ]* //; s/--log-file [^ ]*//' <<<"$cmline")
pid=${PID:-$(grep '^controller-manager-pid=' "$hold" | cut -d= -f2)}
logs=$(mktemp -d)
hz=$(getconf CLK_TCK)

# metric NAME [FILTER]: the sum of a metric's series containing FILTER.
metric() {
	curl -s "http://$metrics/metrics" |
		awk -v n="$1" -v f="${2:-}" '(index($0, n "{") == 1 || index($0, n " ") == 1) && (f == "" || index($0, f)) {s += $NF} END {printf "%.0f", s}'
}
# Whether pid is gone (a zombie counts: the benchmark reaps its own child
# only when it ends).
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat")" = Z ]; }
cpuTicks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
machineTicks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
rssMB() { awk -v k="$2:" '$1 == k {print int($2 / 1024)}' "/proc/$1/status"; }

for round in $(seq "$rounds"); do
	for bin in "$@"; do
		label=$(basename "$(dirname "$bin")")
		kill "$pid" 2>/dev/null
		until gone "$pid"; do sleep 0.2; done
		sleep 3
		machine0=$(machineTicks) start=$(date +%s.%N)
		# shellcheck disable=SC2086 # args is a command line
		"$bin" $args --log-file "$logs/$label-$round.log" >/dev/null 2>&1 &
		pid=$!
		until curl -sf "http://$health/readyz" >/dev/null; do sleep 0.1; done
		ready=$(date +%s.%N)
		until [ "$(metric workqueue_depth)$(metric controller_runtime_active_workers)$(metric atoll_detector_active_workers)$(metric atoll_executor_parked_bindings)" = 0000 ]; do
			sleep 0.25
		done
		idle=$(date +%s.%N) cpu=$(cpuTicks "$pid") machine1=$(machineTicks)
		syncs=$(metric atoll_executor_cluster_syncs_total 'kind="resourcebinding"')
		parked=$(metric atoll_executor_cluster_syncs_total 'outcome="parked"')
		reconciles=$(metric controller_runtime_reconcile_total 'controller="executor-resourcebinding"')
		unchanged=$(metric atoll_controller_unchanged_writes_total)
		sleep 20
		printf '%s round %d: ready %.1f s, idle %.1f s, controller-manager CPU %.1f s, machine CPU %.1f s, cluster syncs %s (parked %s), executor reconciles %s, unchanged writes %s, RSS 20 s after idle %s MB, peak %s MB\n' \
			"$label" "$round" "$(bc <<<"$ready - $start")" "$(bc <<<"$idle - $start")" "$(bc -l <<<"$cpu / $hz")" "$(bc -l <<<"($machine1 - $machine0) / $hz")" \
			"$syncs" "$parked" "$reconciles" "$unchanged" "$(rssMB "$pid" VmRSS)" "$(rssMB "$pid" VmHWM)"
	done
done
echo "controller-manager left running: pid $pid (logs in $logs)"
