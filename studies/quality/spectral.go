package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/spectral"
)

// The spectral study of -spectral (studies/spectral/README.md): which
// starts the default runs once the spectral start joins them, and how
// they are compared. Its records are the runs of the candidates defaults
// (the default's k-means starts), spectral-start (-init spectral -starts
// 2) and method-spectral of each set, all on the default's graph and
// scale, so every start's objective is on the one P. A rule keeps one of
// the starts of a set; its ARI is read off the records, and its mean ARI
// is scored leave-sets-out as -lso does.

// spectralStart is one start of a set: its kind, objective, fit and ARI.
type spectralStart struct {
	kind      string // "kmeans" or "spectral"
	index     int
	objective float64
	// misfit is 1 - cos²(P, WWᵀ): the least relative objective
	// ||sP - WWᵀ||²/||WWᵀ||² over the scales s of P, so each start is
	// scored at its own best scale instead of the default's.
	misfit float64
	ari    float64
}

// spectralSet is what the spectral study knows of a data set.
type spectralSet struct {
	name     string
	n, k     int
	scale    float64         // P's scale in the defaults run
	specScal float64         // and in the spectral-start run: the same, or the set is left out
	kmeans   []spectralStart // the default's starts
	spectral []spectralStart // the spectral starts
	method   float64         // -method spectral's ARI, NaN if not run
	def      float64         // the default's ARI
	// cpu is the CPU seconds of the runs by candidate.
	cpu map[string]float64
	// gap is the spectral embedding's relative eigengap (1 - λ_{k+1}) /
	// (1 - λ_k) (+Inf if λ_k is 1: k components), NaN if not recorded.
	gap float64
}

// newSpectralStarts returns the starts of the record r of a run on P of
// squared norm r.PFrobSq.
func newSpectralStarts(kind string, r record) []spectralStart {
	out := make([]spectralStart, 0, len(r.Starts))
	for i, st := range r.Starts {
		s := spectralStart{kind: kind, index: i, objective: st.Objective, misfit: math.NaN(), ari: math.NaN()}
		if st.ARI != nil {
			s.ari = *st.ARI
		}
		if st.Model > 0 && r.PFrobSq > 0 {
			// f = ¼(||P||² - 2⟨P, WWᵀ⟩ + ||WᵀW||²), ||WᵀW||² = 4·model.
			cross := (r.PFrobSq + 4*st.Model - 4*st.Objective) / 2
			s.misfit = 1 - cross*cross/(r.PFrobSq*4*st.Model)
		}
		out = append(out, s)
	}
	return out
}

// spectralRule is a rule of the spectral study: the start it keeps on a
// set (ok false if the set lacks it), or the ARI of a run of its own.
type spectralRule struct {
	name string
	pick func(s spectralSet) (spectralStart, bool)
	// ari, if not nil, is the rule's ARI instead of its pick's.
	ari func(s spectralSet) float64
}

// leastBy returns the start of least key among starts, ties to the
// earlier; false if starts is empty or a key is NaN.
func leastBy(starts []spectralStart, key func(spectralStart) float64) (spectralStart, bool) {
	if len(starts) == 0 {
		return spectralStart{}, false
	}
	best := starts[0]
	for _, s := range starts {
		if math.IsNaN(key(s)) {
			return spectralStart{}, false
		}
		if key(s) < key(best) {
			best = s
		}
	}
	return best, true
}

func byObjective(s spectralStart) float64 { return s.objective }
func byMisfit(s spectralStart) float64    { return s.misfit }

// first returns the first r of starts, all if fewer.
func first(starts []spectralStart, r int) []spectralStart { return starts[:min(r, len(starts))] }

// spectralRules are the rules the study compares.
func spectralRules(gaps []float64, gatedOnly bool) []spectralRule {
	mixed := func(ks, ss int, key func(spectralStart) float64) func(spectralSet) (spectralStart, bool) {
		return func(s spectralSet) (spectralStart, bool) {
			if len(s.spectral) == 0 {
				return spectralStart{}, false
			}
			return leastBy(append(slices.Clone(first(s.kmeans, ks)), first(s.spectral, ss)...), key)
		}
	}
	only := func(kind string, r int) func(spectralSet) (spectralStart, bool) {
		return func(s spectralSet) (spectralStart, bool) {
			if kind == "kmeans" {
				return leastBy(first(s.kmeans, r), byObjective)
			}
			return leastBy(first(s.spectral, r), byObjective)
		}
	}
	rules := []spectralRule{
		{name: "the default (its k-means starts, least f)", pick: only("kmeans", 2)},
		{name: "1 k-means start", pick: only("kmeans", 1)},
		{name: "1 spectral start", pick: only("spectral", 1)},
		{name: "2 spectral starts, least f", pick: only("spectral", 2)},
		{name: "the default's k-means starts + 1 spectral, least f", pick: mixed(2, 1, byObjective)},
		{name: "the default's k-means starts + 1 spectral, least misfit", pick: mixed(2, 1, byMisfit)},
		{name: "the default's k-means starts + 2 spectral, least f", pick: mixed(2, 2, byObjective)},
		{name: "1 k-means + 1 spectral start, least f", pick: mixed(1, 1, byObjective)},
		{name: "-method spectral", ari: func(s spectralSet) float64 { return s.method }},
	}
	if gatedOnly {
		rules = rules[:1]
	}
	if len(gaps) == 0 {
		gaps = spectralGaps
	}
	for _, t := range gaps {
		rules = append(rules, spectralRule{name: fmt.Sprintf("the spectral start if the eigengap >= %g, else the default", t), pick: gated(t)})
	}
	return rules
}

// gated is the rule of -init auto with the threshold t: where the
// eigengap is at least t (the graph has k nearly separate parts, which
// the embedding sees), the spectral starts' least objective, else the
// default's k-means starts', as many starts as the run made (2 up to
// 20,000 rows, 1 above).
func gated(t float64) func(spectralSet) (spectralStart, bool) {
	return func(s spectralSet) (spectralStart, bool) {
		switch {
		case math.IsNaN(s.gap) || len(s.spectral) == 0:
			return spectralStart{}, false
		case s.gap >= t:
			return leastBy(first(s.spectral, 2), byObjective)
		}
		return leastBy(first(s.kmeans, 2), byObjective)
	}
}

// spectralGaps are the eigengap thresholds of the gated rules.
var spectralGaps = []float64{1.5, 2, 3, 5, 10, 20}

// ariOf returns the ARI of rule r on s, NaN if it cannot be read off.
func (r spectralRule) ariOf(s spectralSet) float64 {
	if r.ari != nil {
		return r.ari(s)
	}
	st, ok := r.pick(s)
	if !ok {
		return math.NaN()
	}
	return st.ari
}

// readSpectralSets reads the records of the spectral study: the sets with
// the runs of defaults and spectral-start, in the order first seen; only
// those of only, if not nil.
func readSpectralSets(paths, only []string) ([]spectralSet, error) {
	bySet := map[string]*spectralSet{}
	var names []string
	for _, path := range paths {
		err := readLines(path, func(r record) {
			if r.Error != "" || only != nil && !slices.Contains(only, r.Set) {
				return
			}
			s := bySet[r.Set]
			if s == nil {
				s = &spectralSet{name: r.Set, n: r.N, k: r.K, method: math.NaN(), def: math.NaN(), cpu: map[string]float64{}, gap: math.NaN()}
				bySet[r.Set] = s
				names = append(names, r.Set)
			}
			s.cpu[r.Candidate] = r.CPU
			switch r.Candidate {
			case "defaults":
				s.kmeans, s.def, s.scale = newSpectralStarts("kmeans", r), r.ARI, r.Scale
			case "spectral-start":
				s.spectral, s.specScal = newSpectralStarts("spectral", r), r.Scale
				if r.Spectral != nil {
					s.gap = spectral.Eigengap(r.Spectral.Eigenvalues, r.K, r.Spectral.Components)
				}
			case "method-spectral":
				s.method = r.ARI
			}
		})
		if err != nil {
			return nil, err
		}
	}
	var sets []spectralSet
	for _, name := range names {
		s := bySet[name]
		if len(s.kmeans) > 0 && len(s.spectral) > 0 && s.scale == s.specScal {
			sets = append(sets, *s)
		}
	}
	return sets, nil
}

// spectralReport prints the spectral study of the records o.spectral: the
// leave-sets-out table of the rules against the anchors, the sets where
// SpectralClustering reaches 0.95, and every start's objective set by set.
func spectralReport(o options, out io.Writer) error {
	anchors, err := readAnchors(o.anchors)
	if err != nil {
		return err
	}
	sets, err := readSpectralSets(o.spectral, o.sets)
	if err != nil {
		return err
	}
	if len(sets) < 4 {
		return fmt.Errorf("-spectral: %d sets with the runs of defaults and spectral-start on the one P, want at least 4", len(sets))
	}
	var rules []spectralRule
	for _, r := range spectralRules(o.gaps, o.gatedOnly) {
		if slices.ContainsFunc(sets, func(s spectralSet) bool { return math.IsNaN(r.ariOf(s)) }) {
			fmt.Fprintf(out, "Left out: the rule %q, not known on every set.\n", r.name)
			continue
		}
		rules = append(rules, r)
	}
	anchorARI := func(set, method string) float64 {
		for _, a := range anchors[set] {
			if a.Method == method && a.Error == "" {
				return a.ARI
			}
		}
		return math.NaN()
	}
	fmt.Fprintf(out, "%d sets: %s\n\n", len(sets), strings.Join(spectralNames(sets), ", "))
	var cpu [3]float64
	for _, s := range sets {
		for i, c := range []string{"defaults", "spectral-start", "method-spectral"} {
			cpu[i] += s.cpu[c]
		}
	}
	fmt.Fprintf(out, "CPU seconds over the sets: defaults %.1f, spectral-start (2 starts) %.1f, method-spectral %.1f.\n\n", cpu[0], cpu[1], cpu[2])
	spectralLSO(o, out, sets, rules, anchorARI)
	spectralReach(out, sets, rules, anchorARI)
	spectralTable(out, sets, rules, anchorARI)
	spectralObjectives(out, sets)
	if o.auto != nil {
		return spectralAuto(out, sets, o.auto)
	}
	return nil
}

// spectralAuto checks the runs of the default, -init auto, in the record
// files paths against the rule it implements, read off the study's
// records: on every set, its ARI is that of the gated rule at
// solver.AutoEigengap (the spectral starts' or the k-means starts'). It
// prints the sets, and returns an error naming those where it is not.
func spectralAuto(out io.Writer, sets []spectralSet, paths []string) error {
	ari := map[string]float64{}
	for _, path := range paths {
		err := readLines(path, func(r record) {
			if r.Candidate == "defaults" && r.Error == "" {
				ari[r.Set] = r.ARI
			}
		})
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nThe default, -init auto, against the rule at eigengap %g (%s):\n\n", float64(solver.AutoEigengap), strings.Join(paths, ", "))
	fmt.Fprintln(out, "| data | eigengap | the rule's start | its ARI | the default's ARI |")
	fmt.Fprintln(out, "| --- | ---: | --- | ---: | ---: |")
	var differ []string
	for _, s := range sets {
		got, ok := ari[s.name]
		pick, known := gated(solver.AutoEigengap)(s)
		if !ok || !known {
			continue
		}
		fmt.Fprintf(out, "| %s | %.3g | %s | %.4f | %.4f |\n", s.name, s.gap, pick.kind, pick.ari, got)
		if got != pick.ari {
			differ = append(differ, s.name)
		}
	}
	if differ != nil {
		return fmt.Errorf("-auto: the default's ARI is not the rule's on %s", strings.Join(differ, ", "))
	}
	return nil
}

func spectralNames(sets []spectralSet) []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.name
	}
	return out
}

// spectralLSO prints the leave-sets-out table: in each of o.repeats random
// halves of the sets, every rule's mean ARI in sample and held out, the
// rule of the best in-sample mean picked; and the anchors' held-out means
// on the same halves (over the sets where they ran).
func spectralLSO(o options, out io.Writer, sets []spectralSet, rules []spectralRule, anchorARI func(set, method string) float64) {
	ari := make([][]float64, len(rules)) // ari[rule][set]
	for i, r := range rules {
		for _, s := range sets {
			ari[i] = append(ari[i], r.ariOf(s))
		}
	}
	methods := []string{"kmeans", "gmm", "spectral"}
	anc := make([][]float64, len(methods))
	for i, m := range methods {
		for _, s := range sets {
			anc[i] = append(anc[i], anchorARI(s.name, m))
		}
	}
	mean := func(v []float64, idx []int) float64 {
		sub := make([]float64, len(idx))
		for j, i := range idx {
			sub[j] = v[i]
		}
		return nanMean(sub)
	}
	rng := rand.New(rand.NewPCG(o.lsoSeed, 0))
	train, test := make([][]float64, len(rules)), make([][]float64, len(rules))
	ancTest := make([][]float64, len(methods))
	picked := make([]int, len(rules))
	var held, inSample []float64
	for range o.repeats {
		perm := rng.Perm(len(sets))
		tr, te := perm[:len(sets)/2], perm[len(sets)/2:]
		best := 0
		for i := range rules {
			train[i] = append(train[i], mean(ari[i], tr))
			test[i] = append(test[i], mean(ari[i], te))
			if train[i][len(train[i])-1] > train[best][len(train[best])-1] {
				best = i
			}
		}
		picked[best]++
		inSample = append(inSample, train[best][len(train[best])-1])
		held = append(held, test[best][len(test[best])-1])
		for i := range methods {
			ancTest[i] = append(ancTest[i], mean(anc[i], te))
		}
	}
	all := make([]int, len(sets))
	for i := range all {
		all[i] = i
	}
	fmt.Fprintf(out, "Leave-sets-out: %d repeats; in each, every rule's mean ARI on a random half of the sets (%d, in sample) and on the other half (%d, held out), and the rule of the best in-sample mean picked; seed %d. The anchors' held-out means are over the same halves.\n\n",
		o.repeats, len(sets)/2, len(sets)-len(sets)/2, o.lsoSeed)
	fmt.Fprintln(out, "| rule | mean ARI, all sets | in sample | held out (sd, min to max) | picked |")
	fmt.Fprintln(out, "| --- | ---: | ---: | --- | ---: |")
	for i, r := range rules {
		mi, _, _, _ := stats(train[i])
		m, sd, lo, hi := stats(test[i])
		fmt.Fprintf(out, "| %s | %.4f | %.4f | %.4f (%.4f, %.4f to %.4f) | %d of %d |\n", r.name, mean(ari[i], all), mi, m, sd, lo, hi, picked[i], o.repeats)
	}
	mi, _, _, _ := stats(inSample)
	m, sd, lo, hi := stats(held)
	fmt.Fprintf(out, "| the pick of each repeat | | %.4f | %.4f (%.4f, %.4f to %.4f) | |\n", mi, m, sd, lo, hi)
	for i, name := range methods {
		n := 0 // the sets with the anchor: its row needs all
		for _, v := range anc[i] {
			if !math.IsNaN(v) {
				n++
			}
		}
		if n < len(sets) {
			continue // the halves' means would be over other sets
		}
		m, sd, lo, hi := stats(ancTest[i])
		fmt.Fprintf(out, "| scikit-learn %s | %.4f | | %.4f (%.4f, %.4f to %.4f) | |\n", name, mean(anc[i], all), m, sd, lo, hi)
	}
	fmt.Fprintln(out)
}

// spectralReach prints, for the sets where SpectralClustering's ARI is at
// least 0.95, on how many each rule's is too.
func spectralReach(out io.Writer, sets []spectralSet, rules []spectralRule, anchorARI func(set, method string) float64) {
	var reach []spectralSet
	for _, s := range sets {
		if anchorARI(s.name, "spectral") >= 0.95 {
			reach = append(reach, s)
		}
	}
	fmt.Fprintf(out, "The %d sets where scikit-learn's SpectralClustering has ARI >= 0.95 (%s): on how many each rule's ARI is >= 0.95 too, and its least ARI there.\n\n",
		len(reach), strings.Join(spectralNames(reach), ", "))
	fmt.Fprintln(out, "| rule | ARI >= 0.95 | least ARI |")
	fmt.Fprintln(out, "| --- | ---: | ---: |")
	for _, r := range rules {
		n, least := 0, math.Inf(1)
		for _, s := range reach {
			v := r.ariOf(s)
			if v >= 0.95 {
				n++
			}
			least = min(least, v)
		}
		if len(reach) == 0 {
			least = math.NaN()
		}
		fmt.Fprintf(out, "| %s | %d of %d | %s |\n", r.name, n, len(reach), fmtARI(least))
	}
	fmt.Fprintln(out)
}

// spectralTable prints every rule's ARI set by set, with the anchors'.
func spectralTable(out io.Writer, sets []spectralSet, rules []spectralRule, anchorARI func(set, method string) float64) {
	fmt.Fprintln(out, "ARI set by set: the rules in the order above (R1 to R"+fmt.Sprint(len(rules))+"), then scikit-learn's KMeans, GaussianMixture, SpectralClustering.")
	fmt.Fprintln(out)
	fmt.Fprint(out, "| data | n | k |")
	for i := range rules {
		fmt.Fprintf(out, " R%d |", i+1)
	}
	fmt.Fprintln(out, " KMeans | GMM | spectral |")
	fmt.Fprintln(out, "| --- | ---: | ---: |"+strings.Repeat(" ---: |", len(rules)+3))
	for _, s := range sets {
		fmt.Fprintf(out, "| %s | %d | %d |", s.name, s.n, s.k)
		for _, r := range rules {
			fmt.Fprintf(out, " %s |", fmtARI(r.ariOf(s)))
		}
		for _, m := range []string{"kmeans", "gmm", "spectral"} {
			fmt.Fprintf(out, " %s |", fmtARI(anchorARI(s.name, m)))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out)
}

// spectralObjectives prints every start's objective set by set, on the
// default's P and scale, relative to the least (0 for the least), its
// misfit 1 - cos²(P, WWᵀ) and its ARI.
func spectralObjectives(out io.Writer, sets []spectralSet) {
	fmt.Fprintln(out, "Every start set by set, on the default's graph and scale, with the set's eigengap (1 - λ_{k+1})/(1 - λ_k): its objective f, f/f_min - 1 against the least f of the set's starts, its misfit 1 - cos²(P, WWᵀ) (the least relative objective over P's scales), and its ARI. k-means r is the default's start r, spectral r the spectral start r.")
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| data | scale | eigengap | start | f | f/f_min - 1 | misfit | ARI |")
	fmt.Fprintln(out, "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
	for _, s := range sets {
		starts := append(slices.Clone(s.kmeans), s.spectral...)
		least, _ := leastBy(starts, byObjective)
		for _, st := range starts {
			fmt.Fprintf(out, "| %s | %.6g | %.4g | %s %d | %.10g | %.3g | %.6g | %s |\n", s.name, s.scale, s.gap, st.kind, st.index, st.objective,
				st.objective/least.objective-1, st.misfit, fmtARI(st.ari))
		}
	}
}
