#!/usr/bin/env bash
# scale.sh shows how ssnmf scales with n: for each n it generates a Gaussian
# mixture (p = 16, k = 10) as Parquet, runs a fixed small number of
# Frank-Wolfe iterations on it with a memory-mapped work directory, and
# prints a table of seconds per tile pass, kernel entries per second (all n²
# entries counted), peak RSS and work-directory bytes.
#
# Usage: scripts/scale.sh [N ...]        (default: 100000 300000 1000000)
# Environment: ITERS (default 1), WORKERS (default: all cores),
# PRECISION (default float32), SCALE_DIR (default: a temporary directory,
# removed at the end unless given).
#
# It builds ssnmf with GOEXPERIMENT=simd (the AVX-512 kernel) when that
# builds, else the pure-Go kernel; the table says which kernel ran. Each
# run makes ITERS+2 passes (the first P·W, one P·S per iteration, the final
# P·W); at n = 1,000,000 one pass is 10^12 kernel entries. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 300000 1000000)
iters=${ITERS:-1}
workers=${WORKERS:-$(nproc)}
precision=${PRECISION:-float32}
if [ -n "${SCALE_DIR:-}" ]; then
	dir=$SCALE_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi

bin=$dir/ssnmf
if ! GOEXPERIMENT=simd go build -o "$bin" ./cmd/ssnmf 2>/dev/null; then
	go build -o "$bin" ./cmd/ssnmf
fi

field() { # field NAME FILE: a number from the summary JSON
	sed -n "s/^  \"$1\": \([^,]*\),\{0,1\}$/\1/p" "$2"
}

rows=()
for n in "${sizes[@]}"; do
	data=$dir/mix-$n.parquet
	[ -f "$data" ] || "$bin" gen -q -n "$n" -p 16 -k 10 -seed 1 -o "$data"
	work=$dir/work-$n
	rm -rf "$work"
	echo "scale: n=$n: $((iters + 2)) passes of $(awk "BEGIN{printf \"%.3g\", $n*$n}") entries" >&2
	"$bin" solve -q -affinity gaussian -method fw -k 10 -standardize -max-iter "$iters" -refresh 0 -precision "$precision" \
		-workers "$workers" -workdir "$work" -summary "$dir/summary-$n.json" "$data" >/dev/null
	s=$dir/summary-$n.json
	eps=$(field entries_per_second "$s")
	rows+=("$(printf '%9d  %6s  %10.1f  %12.3g  %10.0f  %10.0f  %s' "$n" "$(field passes "$s")" \
		"$(awk "BEGIN{print $n*$n/$eps}")" "$eps" \
		"$(awk "BEGIN{print $(field peak_rss_bytes "$s")/1048576}")" \
		"$(du -sb "$work" | awk '{print $1/1048576}')" \
		"$(sed -n 's/^  "kernel": "\(.*\)",$/\1/p' "$s")")")
	rm -rf "$work"
done

printf '%9s  %6s  %10s  %12s  %10s  %10s  %s\n' n passes "s/pass" "entries/s" "RSS MiB" "work MiB" kernel
printf '%s\n' "${rows[@]}"
echo "p = 16, k = 10, $iters iteration(s), -refresh 0, $workers workers, $(nproc) cores; entries/s counts all n² entries of a pass." 
