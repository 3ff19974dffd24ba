#!/usr/bin/env bash
# public-data.sh DIR writes the public labelled data sets of the quality
# study that are not in ../shared/data into DIR, as CSV files with a header
# f1,...,fp,label (label an integer 0..C-1, in the order of the source's
# class levels) and one row per point, features as the source has them.
#
# The sets come from two Debian packages, installed if missing (as root):
#   python3-sklearn 1.2.1 (BSD-3-Clause), the CSV files in
#   sklearn/datasets/data: iris, wine, breast_cancer, digits (8×8 images);
#   r-cran-mlbench 2.1-3-1 (GPL-2), its .rda data sets: LetterRecognition,
#   Vehicle, Glass, Ionosphere (V2, constant, dropped; V1 as 0/1), Vowel
#   (V1, the speaker, dropped).
# All nine originate in the UCI Machine Learning Repository (CC BY 4.0);
# docs/quality.md lists them with their sizes and donors.
set -euo pipefail
out=${1:?usage: public-data.sh DIR}
mkdir -p "$out"

need=()
/usr/bin/python3 -c 'import sklearn' 2>/dev/null || need+=(python3-sklearn)
[ -d /usr/lib/R/site-library/mlbench ] || need+=(r-cran-mlbench)
if [ ${#need[@]} -gt 0 ]; then
  sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

/usr/bin/python3 - "$out" <<'PY'
import csv, gzip, os, sys
import sklearn.datasets as d
src = os.path.join(os.path.dirname(d.__file__), "data")
out = sys.argv[1]
def header_csv(name, path):
    # sklearn's files: a first line "n,p,class names...", then rows of p
    # features and the class index.
    op = gzip.open if path.endswith(".gz") else open
    with op(os.path.join(src, path), "rt") as f:
        rows = list(csv.reader(f))
    if name == "digits":  # no header line; 64 pixels and the digit
        body = rows
    else:
        body = rows[1:]
    p = len(body[0]) - 1
    write(name, [r[:p] for r in body], [int(float(r[p])) for r in body])
def write(name, feats, labels):
    p = len(feats[0])
    tmp = os.path.join(out, name + ".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([f"f{j+1}" for j in range(p)] + ["label"])
        for x, y in zip(feats, labels):
            w.writerow(list(x) + [y])
    os.replace(tmp, os.path.join(out, name + ".csv"))
for name, path in [("iris", "iris.csv"), ("wine", "wine_data.csv"),
                   ("breast_cancer", "breast_cancer.csv"), ("digits", "digits.csv.gz")]:
    header_csv(name, path)
PY

Rscript --vanilla - "$out" <<'R'
suppressMessages(library(mlbench))
out <- commandArgs(trailingOnly = TRUE)[1]
put <- function(name, x, y) {
  x <- as.data.frame(lapply(x, function(v) if (is.factor(v)) as.numeric(as.character(v)) else v))
  names(x) <- paste0("f", seq_along(x))
  x$label <- as.integer(y) - 1L
  tmp <- file.path(out, paste0(name, ".csv.tmp"))
  write.csv(x, tmp, row.names = FALSE, quote = FALSE)
  invisible(file.rename(tmp, file.path(out, paste0(name, ".csv"))))
}
data(LetterRecognition); put("letter", LetterRecognition[, -1], LetterRecognition$lettr)
data(Vehicle); put("vehicle", Vehicle[, -19], Vehicle$Class)
data(Glass); put("glass", Glass[, -10], Glass$Type)
data(Ionosphere); put("ionosphere", Ionosphere[, -c(2, 35)], Ionosphere$Class)
data(Vowel); put("vowel", Vowel[, -c(1, 11)], Vowel$Class)
R
for f in "$out"/*.csv; do
  printf '%s: %d rows\n' "$(basename "$f")" $(( $(wc -l <"$f") - 1 ))
done
