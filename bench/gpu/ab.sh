#!/usr/bin/env bash
# A/B timing of gpu_bench builds on the same GPU, runs alternated (A B C A B C ...), so that a
# change is judged against its baseline on one machine in one call (docs/perf-log.md).
#
#   bench/gpu/ab.sh [-r rounds] BUILD_A BUILD_B [BUILD_C ...] [-- section args]
#   e.g. bench/gpu/ab.sh -r 3 base/gpu_bench new/gpu_bench -- ntt-bench 11
#
# Logs go to $OUT (default ./gpu-out) as ab_<i>_<round>.log; the last lines printed are, per
# RESULT name, each build's median over rounds (of its per-run medians) and its ratio to A's.
set -u
ROUNDS=3
[ "${1:-}" = -r ] && { ROUNDS=$2; shift 2; }
BINS=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do BINS+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
ARGS=("$@")
[ ${#ARGS[@]} -eq 0 ] && ARGS=(ntt-bench 11)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
status=0
for r in $(seq 1 "$ROUNDS"); do
  for i in "${!BINS[@]}"; do
    log="$OUT/ab_${i}_$r.log"
    timeout "${AB_TIMEOUT:-300}" "${BINS[$i]}" "${ARGS[@]}" >"$log" 2>&1 ||
      { status=1; echo "FAIL ${BINS[$i]} round $r"; tail -3 "$log"; }
  done
done
echo "$ROUNDS rounds of: ${ARGS[*]}"
for i in "${!BINS[@]}"; do echo "  build $i: ${BINS[$i]}"; done
for i in "${!BINS[@]}"; do
  cat "$OUT"/ab_${i}_*.log | grep '^RESULT' | sed "s/^RESULT /$i /"
done | awk -v nb=${#BINS[@]} '
  { b = $1; v = $(NF-1); $1 = ""; $NF = ""; $(NF-1) = ""; gsub(/^ +| +$/, ""); name = $0;
    vals[b, name] = vals[b, name] " " v; if (!(name in seen)) { seen[name] = 1; order[++nn] = name } }
  function med(s,   a, n, i, j, t) { n = split(s, a, " ");
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  END { printf "%-34s", "benchmark (ms, median of rounds)";
    for (b = 0; b < nb; b++) printf " %9s", "build " b; for (b = 1; b < nb; b++) printf " %7s", b "/0"; printf "\n";
    for (k = 1; k <= nn; k++) { n = order[k]; printf "%-34s", n;
      for (b = 0; b < nb; b++) { m[b] = med(vals[b, n]); printf " %9.2f", m[b] }
      for (b = 1; b < nb; b++) printf " %7.3f", (m[0] > 0 ? m[b] / m[0] : 0);
      printf "\n" }
    for (k = 1; k <= nn; k++) for (b = 0; b < nb; b++) printf "  rounds %s build %d:%s\n", order[k], b, vals[b, order[k]] }'
exit $status
