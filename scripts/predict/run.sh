#!/bin/bash
# Out-of-sample memberships on the shared data sets (docs/predict.md):
#
#   scripts/predict/run.sh SSNMF DATADIR WORKDIR [SET...]
#
# For each set: a solve on all rows with -model, and predict of all rows
# against it (the training rows reproduce their W: mean L1 difference and
# the share of rows whose cluster changes); an 80/20 split seeded by 0, a
# solve of the train rows with -model, predict of the test rows, and
# scripts/predict/compare.py's ARI table (predict, the all-rows solve on the
# test rows, scikit-learn KMeans and GaussianMixture fitted on train).
# Every solve runs with the defaults, -seed 0, and -max-iter ${MAXITER:-1000}.
# Prints two Markdown tables' rows on stdout as it goes; logs in WORKDIR.
set -euo pipefail
bin=$1 data=$2 work=$3
shift 3
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(blood yeast satimage pendigits shuttle kddcup99_10pct fashion_mnist)
py=/usr/bin/python3 # Debian's, with python3-sklearn
here=$(dirname "$0")
maxiter=${MAXITER:-1000}
for s in "${sets[@]}"; do
	f=$data/$s.csv
	[ -f "$f" ] || f=$data/$s.csv.gz
	d=$work/$s
	mkdir -p "$d"
	k=$($py "$here/compare.py" split "$f" "$d" 0)
	t0=$(date +%s.%N)
	"$bin" solve -q -seed 0 -k "$k" -max-iter "$maxiter" -model "$d/all.model" -out "$d/all.w.csv" -summary "$d/all.json" "$f" > "$d/all.log" 2>&1
	t1=$(date +%s.%N)
	"$bin" predict -model "$d/all.model" -out "$d/all.pred.csv" "$f" 2> "$d/all.pred.log"
	t2=$(date +%s.%N)
	read -r l1 moved l1max < <($py "$here/compare.py" reproduce "$d/all.w.csv" "$d/all.pred.csv")
	search=$(grep -o '[a-z]* search[^)]*' "$d/all.pred.log" | head -1 || true)
	n=$(grep -o '"n": *[0-9]*' "$d/all.json" | grep -o '[0-9]*$')
	printf '| %s | %s | %s | %s | %s | %.1f | %.1f | %s |\n' "$s" "$n" "$l1" "$moved" "$l1max" \
		"$($py -c "print($t1 - $t0)")" "$($py -c "print($t2 - $t1)")" "$search" | tee -a "$work/reproduce.md"
	"$bin" solve -q -seed 0 -k "$k" -max-iter "$maxiter" -model "$d/train.model" -out "$d/train.w.csv" "$d/train.csv" > "$d/train.log" 2>&1
	"$bin" predict -model "$d/train.model" -out "$d/test.pred.csv" "$d/test.csv" 2> "$d/test.pred.log"
	$py "$here/compare.py" score "$s" "$f" "$d" | tee -a "$work/split.md"
done
