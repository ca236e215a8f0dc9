#!/usr/bin/env bash
# A/B timing of two gpu_bench builds on the same GPU, runs alternated (A B A B ...), so that a
# change is judged against its baseline on one machine in one call (docs/perf-log.md).
#
#   bench/gpu/ab.sh A/gpu_bench B/gpu_bench [rounds] [section args...]
#   e.g. bench/gpu/ab.sh new/gpu_bench base/gpu_bench 3 ntt-bench 11
#
# Logs go to $OUT (default ./gpu-out) as ab_<A|B>_<round>.log; the last lines printed are, per
# RESULT name, the median over rounds of each build's medians, and B/A.
set -u
A=$1 B=$2
ROUNDS=${3:-3}
shift 3 || shift $#
ARGS=("$@")
[ ${#ARGS[@]} -eq 0 ] && ARGS=(ntt-bench 11)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
status=0
for r in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    bin=$A
    [ $side = B ] && bin=$B
    timeout "${AB_TIMEOUT:-300}" "$bin" "${ARGS[@]}" >"$OUT/ab_${side}_$r.log" 2>&1 || { status=1; echo "FAIL $side round $r"; tail -3 "$OUT/ab_${side}_$r.log"; }
  done
done
echo "A = $A, B = $B, $ROUNDS rounds of: ${ARGS[*]}"
for side in A B; do
  cat "$OUT"/ab_${side}_*.log | grep '^RESULT' | sed "s/^RESULT /$side /"
done | awk '
  { side = $1; unit = $NF; v = $(NF-1); $1 = ""; $NF = ""; $(NF-1) = ""; gsub(/^ +| +$/, ""); name = $0;
    vals[side, name] = vals[side, name] " " v; names[name] = 1 }
  function med(s,   a, n, i, j, t) { n = split(s, a, " ");
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  END { printf "%-40s %10s %10s %8s   %s\n", "benchmark (median of rounds)", "A ms", "B ms", "B/A", "A rounds | B rounds";
    for (n in names) { a = med(vals["A", n]); b = med(vals["B", n]);
      printf "%-40s %10.2f %10.2f %8.3f  %s |%s\n", n, a, b, (a > 0 ? b / a : 0), vals["A", n], vals["B", n] } }'
exit $status
