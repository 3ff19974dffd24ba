#!/usr/bin/env bash
# public-data.sh DIR writes the public labelled data sets of the quality
# study that are not in ../shared/data into DIR, as CSV files with a header
# f1,...,fp,label (label an integer 0..C-1, in the order of the source's
# class levels) and one row per point, features as the source has them.
#
# The sets come from Debian packages, installed if missing (as root):
#   python3-sklearn 1.2.1 (BSD-3-Clause), the CSV files in
#   sklearn/datasets/data: iris, wine, breast_cancer, digits (8×8 images);
#   r-cran-mlbench 2.1-3-1 (GPL-2), its .rda data sets: LetterRecognition,
#   Vehicle, Glass, Ionosphere (V2, constant, dropped; V1 as 0/1), Vowel
#   (V1, the speaker, dropped), Sonar, PimaIndiansDiabetes2, BreastCancer
#   (Id dropped), Zoo, DNA, HouseVotes84 (y as 1, n as 0);
#   r-cran-mass 7.3-58.2-1 (GPL-2 | GPL-3): crabs (the class is species ×
#   sex; index dropped); r-cran-mclust 6.0.0-1 (GPL >= 2): thyroid,
#   diabetes, banknote; r-cran-kernlab 0.9-32-1 (GPL-2): spam;
#   r-cran-dslabs 0.7.4-1 (Artistic-2.0): olive (the class is the region;
#   area dropped); r-cran-palmerpenguins 0.1.1-1 (CC0): penguins (the four
#   body measurements, the class is the species); r-cran-rrcov 1.7-2-1
#   (GPL >= 3): olitos.
# Rows with a missing value are dropped (pima 376 of 768, wisconsin 16 of
# 699, votes 203 of 435, penguins 2 of 344); the script prints the counts.
# docs/quality.md lists the sets with their sizes, origins and donors.
set -euo pipefail
out=${1:?usage: public-data.sh DIR}
mkdir -p "$out"

need=()
/usr/bin/python3 -c 'import sklearn' 2>/dev/null || need+=(python3-sklearn)
for pkg in mlbench:r-cran-mlbench MASS:r-cran-mass mclust:r-cran-mclust kernlab:r-cran-kernlab \
  dslabs:r-cran-dslabs palmerpenguins:r-cran-palmerpenguins rrcov:r-cran-rrcov; do
  [ -d "/usr/lib/R/site-library/${pkg%%:*}" ] || [ -d "/usr/lib/R/library/${pkg%%:*}" ] || need+=("${pkg#*:}")
done
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
suppressMessages({
  library(mlbench); library(MASS); library(mclust); library(kernlab)
  library(dslabs); library(palmerpenguins); library(rrcov)
})
out <- commandArgs(trailingOnly = TRUE)[1]
put <- function(name, x, y) {
  x <- as.data.frame(lapply(x, function(v) if (is.factor(v)) as.numeric(as.character(v)) else as.numeric(v)))
  keep <- complete.cases(x) & !is.na(y)
  if (!all(keep)) message(name, ": ", sum(!keep), " of ", length(keep), " rows with a missing value dropped")
  x <- x[keep, , drop = FALSE]; y <- droplevels(as.factor(y)[keep])
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
data(Sonar); put("sonar", Sonar[, -61], Sonar$Class)
data(PimaIndiansDiabetes2); put("pima", PimaIndiansDiabetes2[, -9], PimaIndiansDiabetes2$diabetes)
data(BreastCancer); put("wisconsin", BreastCancer[, -c(1, 11)], BreastCancer$Class)
data(Zoo); put("zoo", Zoo[, -17], Zoo$type)
data(DNA); put("dna", DNA[, -181], DNA$Class)
data(HouseVotes84)
put("votes", as.data.frame(lapply(HouseVotes84[, -1], function(v) ifelse(is.na(v), NA, as.numeric(v == "y")))), HouseVotes84$Class)
data(crabs); put("crabs", crabs[, 4:8], interaction(crabs$sp, crabs$sex))
data(thyroid, package = "mclust"); put("thyroid", thyroid[, -1], thyroid$Diagnosis)
data(diabetes, package = "mclust"); put("diabetes", diabetes[, -1], diabetes$class)
data(banknote); put("banknote", banknote[, -1], banknote$Status)
data(spam); put("spam", spam[, -58], spam$type)
data(olive); put("olive", olive[, -(1:2)], olive$region)
put("penguins", as.data.frame(penguins[, 3:6]), penguins$species)
data(olitos); put("olitos", olitos[, -26], olitos$grp)
R
for f in "$out"/*.csv; do
  printf '%s: %d rows\n' "$(basename "$f")" $(( $(wc -l <"$f") - 1 ))
done
