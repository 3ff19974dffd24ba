#!/usr/bin/env bash
# The README's worked example: yeast from ../shared/data, k = 10, the paper's
# gamma = 1 on standardized features, 2000 iterations.
#   scripts/example.sh [DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
out=${OUT:-out}
mkdir -p "$out"
go run ./cmd/ssnmf solve "$data/yeast.csv" -k 10 -standardize -gamma 1 -max-iter 2000 -seed 0 \
  -out "$out/yeast.w.csv" -summary "$out/yeast.summary.json" -trace "$out/yeast.trace.csv"
