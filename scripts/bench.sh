#!/usr/bin/env bash
# Benchmarks of the tile passes at a given n (default 20,000), p = 16,
# k = 10 and 100, on all cores. Prints go test's benchmark lines, whose
# entries/s column counts all n^2 kernel entries per pass.
#   scripts/bench.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000}
go test ./tile -run '^$' -bench 'BenchmarkPass' -benchtime 3x -args -bench.n "$n"
