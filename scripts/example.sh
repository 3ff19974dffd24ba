#!/usr/bin/env bash
# The README's worked example: the built-in yeast data set with the default
# settings (standardized features, the self-tuning kNN graph scaled by the
# mass rule, a k-means start, k = the 10 classes, the relative gap stop),
# at most 1000 iterations, then a plot of the trace.
#   OUT=DIR scripts/example.sh      (default DIR: out)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
if ! GOEXPERIMENT=simd go build -o "$out/ssnmf" ./cmd/ssnmf 2>/dev/null; then
	go build -o "$out/ssnmf" ./cmd/ssnmf
fi
"$out/ssnmf" solve -max-iter 1000 -seed 0 \
	-out "$out/yeast.w.parquet" -summary "$out/yeast.summary.json" -trace "$out/yeast.trace.csv"
"$out/ssnmf" plot -x seconds -y objective -o "$out/yeast.png" "$out/yeast.trace.csv"
