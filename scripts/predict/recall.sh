#!/bin/bash
# The recall of predict's approximate search at its defaults, old build
# beside new (docs/predict.md, "The recall of the approximate search"):
#
#   scripts/predict/recall.sh train SSNMF DATADIR WORKDIR [SET...]
#   scripts/predict/recall.sh predict OLD NEW WORKDIR [SET...]
#
# train: for each set, the 80/20 split of run.sh (compare.py split, numpy
# default_rng(0)) and a solve of the train rows with the defaults, -seed 0,
# -max-iter ${MAXITER:-100} and -model WORKDIR/SET/train.model; a set
# genN:M is `ssnmf gen -n N+M -p 16 -k 10 -seed 1`, its first N rows the
# train rows and the last M the test rows (one stream: the same mixture,
# whose centres depend on the seed, so another seed is another mixture).
# A train.model already in place is kept.
#
# predict: for each set, predict of the test rows with each build at its
# defaults, and one Markdown row: the build's search, probes and sampled
# recall@M (from its progress line), the wall seconds, rows a second, and
# the ARI of the predicted clusters on the test rows. Logs in WORKDIR/SET.
set -euo pipefail
py=/usr/bin/python3 # Debian's, with python3-sklearn
here=$(dirname "$0")
cmd=$1
shift
case $cmd in
train)
	bin=$1 data=$2 work=$3
	shift 3
	for s in "$@"; do
		d=$work/$s
		mkdir -p "$d"
		if [[ $s == gen* ]]; then
			IFS=: read -r n m <<< "${s#gen}"
			if [ ! -f "$d/test.csv" ]; then
				"$bin" gen -n $((n + m)) -p 16 -k 10 -seed 1 -o "$d/all.csv" 2> /dev/null
				head -n $((n + 1)) "$d/all.csv" > "$d/train.csv"
				{ head -n 1 "$d/all.csv"; tail -n "$m" "$d/all.csv"; } > "$d/test.csv"
				rm "$d/all.csv"
			fi
			k=10
		else
			f=$data/$s.csv
			[ -f "$f" ] || f=$data/$s.csv.gz
			k=$($py "$here/compare.py" split "$f" "$d" 0)
		fi
		[ -d "$d/train.model" ] || "$bin" solve -q -seed 0 -k "$k" -max-iter "${MAXITER:-100}" -model "$d/train.model" "$d/train.csv" > "$d/train.log" 2>&1
		echo "$s: trained" >&2
	done
	;;
predict)
	old=$1 new=$2 work=$3
	shift 3
	for s in "$@"; do
		d=$work/$s
		for b in old new; do
			bin=${!b}
			t0=$(date +%s.%N)
			"$bin" predict -model "$d/train.model" -out "$d/test.$b.csv" "$d/test.csv" 2> "$d/test.$b.log"
			t1=$(date +%s.%N)
			rows=$(($(wc -l < "$d/test.csv") - 1))
			train=$(($(wc -l < "$d/train.csv") - 1))
			line=$(tail -n 1 "$d/test.$b.log")
			search=$(grep -o '[a-z]* search' <<< "$line" || true)
			probes=$(grep -o '([0-9]* probes)' <<< "$line" | grep -o '[0-9]*' || true)
			recall=$(grep -o 'recall@[0-9]* [0-9.]* on [0-9]* rows' <<< "$line" || true)
			ari=$($py "$here/compare.py" ari "$d/test.csv" "$d/test.$b.csv")
			secs=$($py -c "print(f'{$t1 - $t0:.1f}')")
			# The old build does not print its probes: the default, 8.
			[ "$search" = "approx search" ] && probes=${probes:-8} || probes=-
			printf '| %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %s |\n' "$s" "$train" "$rows" "$b" "$search" "$probes" "${recall:--}" \
				"$secs" "$($py -c "print($rows / ($t1 - $t0))")" "$ari"
		done
	done
	;;
*)
	echo "usage: $0 train SSNMF DATADIR WORKDIR [SET...] | predict OLD NEW WORKDIR [SET...]" >&2
	exit 2
	;;
esac
