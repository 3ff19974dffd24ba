#!/bin/sh
# The first measurement of the spectral start (studies/spectral/README.md):
# on rings, moons and spirals of N rows (seed 1), the ARI and objective of
# the default, of -method spectral and of -init spectral, all three on the
# default's graph and scale, and the embedding's passes and seconds.
#
#   studies/spectral/run.sh [N] [SSNMF]
set -eu
n=${1:-3000}
bin=${2:-ssnmf}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go run ./studies/spectral -n "$n" -seed 1 -o "$dir"
echo "| set | n | run | ARI | objective | scale | embedding passes | embedding s |"
echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"
for s in rings moons spirals; do
	for run in default "-method spectral" "-init spectral"; do
		flags=$run
		[ "$run" = default ] && flags=
		# shellcheck disable=SC2086
		"$bin" solve -q $flags -summary "$dir/s.json" "$dir/$s.csv" >/dev/null
		python3 - "$dir/s.json" "$s" "$n" "$run" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sp = s.get("spectral") or {}
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {s['ari']:.4f} | {s['objective']:.10g} | {s['scale']:.6g} | {sp.get('passes', '-')} | {sp.get('seconds', 0):.2f} |")
PY
	done
done
