package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// The leave-sets-out study of -lso. Its rules are "-starts R -scale S":
// run R starts on P scaled by S and keep the start of least objective. The
// runs of the candidates startsN-S (N = startsStudied) hold every start's
// objective and ARI, start r seeded as in any run with more starts than r,
// so the outcome of a rule with R <= N starts on a set is read off them:
// the ARI of the start of least objective among the first R, ties to the
// lower start, as ssnmf solve -starts R chooses. The runs of a variant
// startsN-S/mtol=X make the rules "-starts R -scale S -rtol 0 -mtol X", and
// of startsN-S/mtol=X/graph=DIR the same rules on the graphs DIR/SET.csv.

// lsoStarts are the values of R the study compares.
var lsoStarts = []int{1, 2, 3, 5, 10}

// lsoRule is a rule of the study.
type lsoRule struct {
	starts int
	scale  string
}

func (r lsoRule) String() string {
	scale, dir, graph := strings.Cut(r.scale, graphVariant)
	scale, tol, mtol := strings.Cut(scale, mtolVariant)
	stop := ""
	if mtol {
		stop = " -rtol 0 -mtol " + tol
	}
	if graph {
		stop += " -affinity " + dir + "/SET.csv"
	}
	if scale == startsDense {
		return fmt.Sprintf("-starts %d -affinity gaussian%s", r.starts, stop)
	}
	return fmt.Sprintf("-starts %d -scale %s%s", r.starts, scale, stop)
}

// lsoScales orders the scale rules of the study: these first, in this
// order, then any other found in the records, by name.
var lsoScales = []string{"mass", "sizes", "sizes:1.5", "sizes:2", "sizes:3", startsDense}

// scaleRules returns the scale rules of which the records hold runs, in
// the order of lsoScales.
func scaleRules(bySet map[string]*lsoSet) []string {
	seen := map[string]bool{}
	for _, s := range bySet {
		for sc := range s.runs {
			seen[sc] = true
		}
	}
	var out []string
	for _, sc := range lsoScales {
		if seen[sc] {
			out = append(out, sc)
			delete(seen, sc)
		}
	}
	rest := make([]string, 0, len(seen))
	for sc := range seen {
		rest = append(rest, sc)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// lsoSet is what the study knows of a data set.
type lsoSet struct {
	name string
	n, k int
	// runs by scale rule: every start's objective and ARI.
	runs map[string][]startRecord
	// kmStart is every start's k-means start (the run with -max-iter 0).
	kmStart []startRecord
	// kmeans is ssnmf -method kmeans's ARI; NaN if not run.
	kmeans float64
}

// choose returns the start rule r chooses on s: the least objective of the
// first r.starts, ties to the lower start; -1 if s lacks the runs.
func (s lsoSet) choose(r lsoRule) int {
	st := s.runs[r.scale]
	if len(st) < r.starts {
		return -1
	}
	best := 0
	for i := 1; i < r.starts; i++ {
		if st[i].Objective < st[best].Objective {
			best = i
		}
	}
	return best
}

// ari returns the ARI of rule r on s, NaN if it cannot be read off.
func (s lsoSet) ari(r lsoRule) float64 {
	i := s.choose(r)
	if i < 0 || s.runs[r.scale][i].ARI == nil {
		return math.NaN()
	}
	return *s.runs[r.scale][i].ARI
}

// startARI returns the ARI of the k-means start of the start rule r
// chooses on s, NaN if not known.
func (s lsoSet) startARI(r lsoRule) float64 {
	i := s.choose(r)
	if i < 0 || i >= len(s.kmStart) || s.kmStart[i].ARI == nil {
		return math.NaN()
	}
	return *s.kmStart[i].ARI
}

// lsoReport reads the records of the starts study and prints the
// leave-sets-out table, the rule it picks, and that rule set by set
// against the anchors.
func lsoReport(o options, out io.Writer) error {
	anchors, err := readAnchors(o.anchors)
	if err != nil {
		return err
	}
	bySet := map[string]*lsoSet{}
	var names []string
	for _, path := range o.lso {
		err := readLines(path, func(r record) {
			if r.Error != "" {
				return
			}
			s := bySet[r.Set]
			if s == nil {
				s = &lsoSet{name: r.Set, n: r.N, k: r.K, runs: map[string][]startRecord{}, kmeans: math.NaN()}
				bySet[r.Set] = s
				names = append(names, r.Set)
			}
			prefix := fmt.Sprintf("starts%d-", startsStudied)
			switch rule, ok := strings.CutPrefix(r.Candidate, prefix); {
			case r.Candidate == "kmeans":
				s.kmeans = r.ARI
			case ok && rule == "kmeans-start":
				s.kmStart = r.Starts
			case ok:
				s.runs[rule] = r.Starts
			}
		})
		if err != nil {
			return err
		}
	}
	// A scale rule takes part if it can be read off on every set that has
	// the runs of the mass and sizes rules; only those sets take part.
	var sets []lsoSet
	for _, name := range names {
		s := *bySet[name]
		if len(s.runs["mass"]) >= startsStudied && len(s.runs["sizes"]) >= startsStudied {
			sets = append(sets, s)
		}
	}
	var rules []lsoRule
	for _, sc := range scaleRules(bySet) {
		if slices.ContainsFunc(sets, func(s lsoSet) bool { return len(s.runs[sc]) < startsStudied }) {
			fmt.Fprintf(out, "Left out: the rule %q, whose runs are not on every set.\n", sc)
			continue
		}
		for _, r := range lsoStarts {
			rules = append(rules, lsoRule{r, sc})
		}
	}
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].n < sets[j].n })
	if len(sets) < 4 {
		return fmt.Errorf("-lso: %d sets with every rule's runs, want at least 4", len(sets))
	}
	fmt.Fprintf(out, "%d sets: %s\n\n", len(sets), strings.Join(setNames(sets), ", "))

	mean := func(r lsoRule, idx []int) float64 {
		var sum float64
		for _, i := range idx {
			sum += sets[i].ari(r)
		}
		return sum / float64(len(idx))
	}
	all := make([]int, len(sets))
	for i := range all {
		all[i] = i
	}
	// Leave-sets-out: pick the rule of the best mean on a random half,
	// score it on the other half.
	rng := rand.New(rand.NewPCG(o.lsoSeed, 0))
	picked := make(map[lsoRule]int)
	trainOf, testOf := make(map[lsoRule][]float64), make(map[lsoRule][]float64)
	var held, inSample []float64
	for range o.repeats {
		perm := rng.Perm(len(sets))
		train, test := perm[:len(sets)/2], perm[len(sets)/2:]
		best := rules[0]
		for _, r := range rules {
			trainOf[r] = append(trainOf[r], mean(r, train))
			testOf[r] = append(testOf[r], mean(r, test))
			if mean(r, train) > mean(best, train) {
				best = r
			}
		}
		picked[best]++
		inSample = append(inSample, mean(best, train))
		held = append(held, mean(best, test))
	}
	fmt.Fprintf(out, "Leave-sets-out: %d repeats; in each, every rule's mean ARI on a random half of the sets (%d, in sample) and on the other half (%d, held out), and the rule of the best in-sample mean picked; seed %d.\n\n",
		o.repeats, len(sets)/2, len(sets)-len(sets)/2, o.lsoSeed)
	fmt.Fprintln(out, "| rule | mean ARI, all sets | in sample | held out (sd, min to max) | picked | >= its k-means start |")
	fmt.Fprintln(out, "| --- | ---: | ---: | --- | ---: | ---: |")
	var winner lsoRule
	bestHeld := math.Inf(-1)
	for _, r := range rules {
		notBelow := 0
		for _, s := range sets {
			if s.ari(r) >= s.startARI(r)-1e-12 {
				notBelow++
			}
		}
		mi, _, _, _ := stats(trainOf[r])
		m, sd, lo, hi := stats(testOf[r])
		if m > bestHeld {
			winner, bestHeld = r, m
		}
		fmt.Fprintf(out, "| %v | %.4f | %.4f | %.4f (%.4f, %.4f to %.4f) | %d of %d | %d of %d |\n", r, mean(r, all), mi, m, sd, lo, hi, picked[r], o.repeats, notBelow, len(sets))
	}
	mi, _, _, _ := stats(inSample)
	m, sd, lo, hi := stats(held)
	fmt.Fprintf(out, "| the pick of each repeat | | %.4f | %.4f (%.4f, %.4f to %.4f) | | |\n", mi, m, sd, lo, hi)
	most := rules[0]
	for _, r := range rules {
		if picked[r] > picked[most] {
			most = r
		}
	}
	fmt.Fprintf(out, "\nBest held-out mean: %v (%.4f). Picked most often: %v (%d of %d repeats).\n\n", winner, bestHeld, most, picked[most], o.repeats)

	anchorARI := func(set, method string) float64 {
		for _, a := range anchors[set] {
			if a.Method == method && a.Error == "" {
				return a.ARI
			}
		}
		return math.NaN()
	}
	base, earlier := lsoRule{1, "mass"}, lsoRule{3, "sizes"}
	fmt.Fprintf(out, "Set by set: %v, its own k-means start, the earlier default (%v), the previous default (%v), ssnmf -method kmeans, scikit-learn's KMeans, GaussianMixture, SpectralClustering.\n\n", winner, earlier, base)
	fmt.Fprintln(out, "| data | n | k | pick | its k-means start | earlier default | previous default | ssnmf kmeans | KMeans | GMM | spectral |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	cols := make([][]float64, 8)
	for _, s := range sets {
		v := []float64{s.ari(winner), s.startARI(winner), s.ari(earlier), s.ari(base), s.kmeans,
			anchorARI(s.name, "kmeans"), anchorARI(s.name, "gmm"), anchorARI(s.name, "spectral")}
		fmt.Fprintf(out, "| %s | %d | %d |", s.name, s.n, s.k)
		for i, x := range v {
			cols[i] = append(cols[i], x)
			fmt.Fprintf(out, " %s |", fmtARI(x))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprint(out, "| mean | | |")
	for _, c := range cols {
		fmt.Fprintf(out, " %s |", fmtARI(nanMean(c)))
	}
	fmt.Fprintln(out)
	notBelow := 0
	for i := range cols[0] {
		if cols[0][i] >= cols[1][i]-1e-12 {
			notBelow++
		}
	}
	fmt.Fprintf(out, "\n%v is at least its own k-means start on %d of %d sets.\n", winner, notBelow, len(sets))
	return nil
}

func setNames(sets []lsoSet) []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.name
	}
	return out
}

// stats returns the mean, the standard deviation, the least and the
// largest of v.
func stats(v []float64) (mean, sd, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		mean += x
		lo, hi = min(lo, x), max(hi, x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(max(1, len(v)-1))), lo, hi
}

// nanMean is the mean of the values of v that are not NaN (NaN if none).
func nanMean(v []float64) float64 {
	var sum float64
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

func fmtARI(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.4f", x)
}
