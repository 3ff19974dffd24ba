// Command quality is the study behind ssnmf's defaults: it clusters labelled
// data sets with candidate affinities and settings, each run a separate
// `ssnmf solve` process, and reports how well the clusters match the labels,
// the time, the peak memory, how calibrated the memberships are and how
// many sweeps the runs needed.
//
// Usage:
//
//	go run ./studies/quality [-ssnmf BIN] [-data ../shared/data,DIR] [-sets a,b]
//	    [-candidates name,...] [-dense-max-n 60000] [-max-iter 300]
//	    [-timeout 30m] [-raw results.jsonl] [-anchors sklearn.jsonl]
//	go run ./studies/quality -report results.jsonl[,more.jsonl] -anchors sklearn.jsonl
//	    [-stop-candidate defaults]
//	go run ./studies/quality -lso results.jsonl[,more.jsonl] -anchors sklearn.jsonl
//	    [-repeats 100] [-lso-seed 1]
//	go run ./studies/quality -spectral results.jsonl[,more.jsonl] -anchors sklearn.jsonl
//	    [-repeats 100] [-lso-seed 1]
//
// Every CSV file in the -data directories (NAME.csv or NAME.csv.gz, with a
// label column) is a data set; -sets picks some. k is the number of
// classes. studies/quality/public-data.sh writes the public sets that are
// not in ../shared/data, and studies/quality/anchors.py runs
// scikit-learn's k-means, GaussianMixture and SpectralClustering on them
// for -anchors.
//
// The candidates (-candidates lists them by name; all by default) are
//
//   - dense-neighbor, dense-mass: the Gaussian kernel (-affinity gaussian) with -gamma neighbor
//     or mass (not run above -dense-max-n rows: a pass is n² entries);
//   - knn-M-W-S: the kNN graph of M neighbours (10, 15, 30, 50, or log,
//     ⌈log₂ n⌉+1), weights W (conn or st, self-tuning), scale S (1, or
//     mass);
//   - knn-M-conn-xF: the connectivity graph of M neighbours (10, 15 or 30)
//     with scale F·n/(k·M), F times the mass rule's (0.5, 2 or 4): the
//     connectivity graph's entries sum to n·M;
//   - kmeans: ssnmf -method kmeans (10 starts of k-means++ and Lloyd);
//   - defaults: ssnmf solve with no flags but -k; defaults-exact and
//     defaults-approx: the same with -knn exact or -knn approx, the exact
//     or the approximate kNN search whatever n;
//   - unstopped: the defaults with one start (-starts 1), run as the
//     candidates below are, to -max-iter with no relative stop rule, for
//     the table of stops;
//   - NAME+sN: the candidate NAME with -init-starts N, the k-means start
//     the best of N k-means++ runs (only when -candidates names it);
//   - NAME/mtol=X: a candidate NAME that keeps the defaults' stop rules
//     (starts10-S, previous-default) with the stop rule -rtol 0 -mtol X
//     instead of -rtol's (only when -candidates names it);
//   - NAME/graph=DIR: the same for P the edge list DIR/SET.csv, another
//     graph of each set made beforehand (for example by
//     studies/quality/normgraph.py); last, after any /mtol=X;
//   - starts10-S for S = mass, sizes, sizes:1.5, sizes:2, sizes:3: -starts 10
//     -scale S, with the defaults' stop rules; the summary lists every
//     start's objective and ARI, from which -lso reads the rules of 1 to 10
//     starts; starts10-gaussian: the same on the dense Gaussian kernel
//     (-affinity gaussian, not run above -dense-max-n rows);
//     starts10-kmeans-start: -starts 10 -max-iter 0, every start's k-means
//     start; previous-default: -starts 1 -scale mass;
//   - spectral-start: -init spectral -starts 2 with the defaults' stop
//     rules, on the defaults' graph and scale; method-spectral: -method
//     spectral, the spectral clustering itself (studies/spectral).
//
// -args adds arguments to every run (for example "-workers 1", to run two
// studies side by side on two cores).
//
// Every run uses -seed 0, the given -max-iter, and no relative stop rule
// (-rtol 0 -mtol 0 -frtol 0), so that its trace shows the whole descent; the
// defaults run uses the defaults' stop rules. The table has ARI, NMI, the
// mean largest membership of the points clustered right and wrong, the
// Brier score, the wall-clock seconds and peak RSS of the process, the
// sweeps run, the sweep after which the objective stayed within 0.01% of
// its final value, and the last sweep that changed a cluster. -raw
// appends every run's record as a JSON line.
//
// With -report, it runs nothing: it reads the records of earlier runs and
// prints, for every candidate, its mean ARI over the sets, on how many sets
// its ARI is at least the best of scikit-learn's k-means and
// GaussianMixture and at least SpectralClustering's, and its worst margin
// against the first; then, for the runs of -stop-candidate, the sweeps at
// which each relative tolerance on the objective's change would have
// stopped them and the rows that moved after that sweep, and the same for
// each relative tolerance on the gap. A record found
// twice (same set and candidate) counts once, the later one.
//
// With -lso, it runs nothing either: it reads the records of the starts
// candidates and runs the leave-sets-out study of the rules "-starts R
// -scale S" (lso.go): in each of -repeats random halves of the sets, every
// rule's mean ARI in sample and held out, and the rule of the best
// in-sample mean picked; then the rule of the best held-out mean set by set
// against its own k-means start, the previous default and the anchors.
//
// With -spectral, it runs nothing either: it reads the records of the
// candidates defaults, spectral-start and method-spectral and runs the
// same leave-sets-out study on the rules that mix the defaults' k-means
// starts with spectral starts (spectral.go): least objective on the
// defaults' scale, or least misfit 1 - cos²(P, WWᵀ), each start at its own
// best scale; then the sets where SpectralClustering reaches 0.95, every
// rule set by set, and every start's objective; -sets keeps only those
// sets.
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ssnmf/ssnmf/trace"
)

type options struct {
	bin        string
	data       []string
	sets       []string
	candidates []string
	denseMaxN  int
	maxIter    int
	timeout    time.Duration
	raw        string
	anchors    string
	// report, if not empty, lists record files to report on instead of
	// running; stopCandidate is the candidate of the stop-rule table.
	report        []string
	stopCandidate string
	// extra are arguments added to every run (-args).
	extra []string
	// lso, if not empty, lists the records of the starts study to run the
	// leave-sets-out study on (lso.go), with repeats random halves drawn
	// from the seed lsoSeed.
	lso     []string
	repeats int
	lsoSeed uint64
	// spectral, if not empty, lists the records of the spectral study to
	// report on (spectral.go), with -repeats, -lso-seed and -anchors.
	spectral []string
	// auto, with spectral, lists the records of the default -init auto,
	// checked against the rule of its eigengap (spectralAuto).
	auto []string
	// gaps are the eigengap thresholds of the gated rules (spectralGaps
	// if empty); gatedOnly leaves the other rules out of the -spectral
	// report, so that its leave-sets-out picks a threshold.
	gaps      []float64
	gatedOnly bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := options{}
	flag.StringVar(&o.bin, "ssnmf", "", "the ssnmf binary (default: go build ./cmd/ssnmf into a temporary directory)")
	data := flag.String("data", "../shared/data", "comma-separated directories of labelled CSV data sets")
	sets := flag.String("sets", "", "comma-separated data sets (default: every CSV in -data)")
	cands := flag.String("candidates", "", "comma-separated candidates (default: all; see the package doc)")
	flag.IntVar(&o.denseMaxN, "dense-max-n", 60000, "leave out the dense candidates for sets with more rows")
	flag.IntVar(&o.maxIter, "max-iter", 300, "sweeps of each run")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "kill a run after this long")
	flag.StringVar(&o.raw, "raw", "", "append every run's record to this JSON-lines file")
	flag.StringVar(&o.anchors, "anchors", "", "JSON lines of studies/quality/anchors.py to add to the table")
	report := flag.String("report", "", "comma-separated record files (-raw) to report on instead of running")
	flag.StringVar(&o.stopCandidate, "stop-candidate", "defaults", "-report: the candidate of the stop-rule table")
	lso := flag.String("lso", "", "comma-separated record files of the starts study (candidates starts10-*, kmeans) to run the leave-sets-out study on, with -anchors")
	flag.IntVar(&o.repeats, "repeats", 100, "-lso: random halves of the sets")
	flag.Uint64Var(&o.lsoSeed, "lso-seed", 1, "-lso: the seed of the halves")
	spectral := flag.String("spectral", "", "comma-separated record files of the spectral study (candidates defaults, spectral-start, method-spectral) to report on, with -anchors")
	auto := flag.String("auto", "", "-spectral: comma-separated record files of the default -init auto (candidate defaults) to check against the rule of its eigengap")
	gaps := flag.String("gaps", "", "-spectral: comma-separated eigengap thresholds of the gated rules (default 1.5,2,3,5,10,20)")
	flag.BoolVar(&o.gatedOnly, "gated-only", false, "-spectral: report the gated rules alone, so that the leave-sets-out picks among thresholds")
	extra := flag.String("args", "", "space-separated arguments added to every run, for example \"-workers 1\"")
	flag.Parse()
	o.extra = strings.Fields(*extra)
	if *lso != "" {
		o.lso = strings.Split(*lso, ",")
	}
	if *report != "" {
		o.report = strings.Split(*report, ",")
	}
	if *spectral != "" {
		o.spectral = strings.Split(*spectral, ",")
	}
	if *auto != "" {
		o.auto = strings.Split(*auto, ",")
	}
	for _, g := range strings.FieldsFunc(*gaps, func(r rune) bool { return r == ',' }) {
		t, err := strconv.ParseFloat(g, 64)
		if err != nil || !(t > 1) {
			fmt.Fprintf(os.Stderr, "quality: -gaps: %q is not a threshold above 1\n", g)
			os.Exit(2)
		}
		o.gaps = append(o.gaps, t)
	}
	o.data = strings.Split(*data, ",")
	if *sets != "" {
		o.sets = strings.Split(*sets, ",")
	}
	if *cands != "" {
		o.candidates = strings.Split(*cands, ",")
	}
	if err := run(ctx, o, os.Stdout); err != nil {
		slog.Error("quality", "err", err)
		os.Exit(1)
	}
}

// dataset is a labelled CSV file.
type dataset struct {
	name, path string
	n, k       int
}

// record is the outcome of one run, as -raw writes it.
type record struct {
	Set       string   `json:"set"`
	N         int      `json:"n"`
	K         int      `json:"k"`
	Candidate string   `json:"candidate"`
	Args      []string `json:"args"`
	Error     string   `json:"error,omitempty"`
	Seconds   float64  `json:"seconds"`
	// CPU is the user and system time of the process, in seconds: unlike
	// Seconds, it does not grow when other jobs share the cores.
	CPU   float64 `json:"cpu_seconds"`
	RSSkB int64   `json:"maxrss_kB"`
	// From the summary.
	ARI        float64  `json:"ari"`
	NMI        float64  `json:"nmi"`
	Right      *float64 `json:"confidence_correct"`
	Wrong      *float64 `json:"confidence_wrong"`
	Brier      float64  `json:"brier"`
	Objective  float64  `json:"objective"`
	Gamma      float64  `json:"gamma"`
	Scale      float64  `json:"scale"`
	PFrobSq    float64  `json:"p_frobenius_sq"`
	Iterations int      `json:"iterations"`
	Stop       string   `json:"stop_reason"`
	// Every start of a run of several (-starts), in order, and the one
	// chosen.
	Starts    []startRecord `json:"starts"`
	BestStart int           `json:"best_start"`
	KNN       string        `json:"knn"`
	KNNRecall *float64      `json:"knn_recall"`
	// Spectral is the spectral embedding's report, where the run made one.
	Spectral *spectralRecord `json:"spectral,omitempty"`
	// From the trace: the first sweep from which the objective stays
	// within 0.01% of its final value, and the last sweep that moved a
	// point to another cluster (0 if none did).
	Settled   int `json:"settled"`
	LastMoved int `json:"last_moved"`
	// The sweeps after which the relative rules would have stopped the
	// run, by tolerance, and the rows that moved after them.
	FrtolStop map[string][2]int `json:"frtol_stop"`
	// The same for the relative gap rule, gap <= tol·f, on the gaps of
	// the trace (for rowcd, the estimates made during each sweep).
	RtolStop map[string][2]int `json:"rtol_stop"`
	// The same for the gap relative to the model's term, gap <=
	// tol·¼||WᵀW||² (-mtol), on traces that have the model column.
	MtolStop map[string][2]int `json:"mtol_stop,omitempty"`
}

// startRecord is one start of a run, from the summary's starts.
type startRecord struct {
	Objective float64  `json:"objective"`
	ARI       *float64 `json:"ari"`
	// Model is ¼||WᵀW||² of the start's W (0 in records of before it).
	Model float64 `json:"model_term"`
}

// spectralRecord is the summary's report of a spectral embedding: the
// K+1 leading eigenvalues of D^-½PD^-½, descending, the graph's connected
// components (0 in records made before they were reported), and its
// products with P and seconds.
type spectralRecord struct {
	Eigenvalues []float64 `json:"eigenvalues"`
	Components  int       `json:"components"`
	Passes      int       `json:"passes"`
	Seconds     float64   `json:"seconds"`
}

// candidate is a named setting of ssnmf solve.
type candidate struct {
	name  string
	args  func(d dataset) []string
	dense bool
	// stops: the run keeps the defaults' stop rules (and -max-iter).
	stops bool
}

func candidates() []candidate {
	cs := []candidate{
		{name: "defaults", args: func(dataset) []string { return nil }},
		{name: "defaults-exact", args: func(dataset) []string { return []string{"-knn", "exact"} }},
		{name: "defaults-approx", args: func(dataset) []string { return []string{"-knn", "approx"} }},
		{name: "unstopped", args: func(dataset) []string { return []string{"-starts", "1"} }},
		{name: "dense-neighbor", dense: true, args: func(dataset) []string { return []string{"-affinity", "gaussian", "-gamma", "neighbor"} }},
		{name: "dense-mass", dense: true, args: func(dataset) []string { return []string{"-affinity", "gaussian", "-gamma", "mass"} }},
		{name: "kmeans", args: func(dataset) []string {
			return []string{"-method", "kmeans", "-affinity", "knn", "-neighbors", "10"}
		}},
	}
	// The starts study: every start's objective and ARI, of which -lso
	// makes the rules "-starts R -scale S" for R <= startsStudied.
	for _, sc := range []string{"mass", "sizes", "sizes:1.5", "sizes:2", "sizes:3"} {
		cs = append(cs, startsCandidate(sc))
	}
	cs = append(cs, startsCandidate(startsDense))
	// The spectral study (studies/spectral/README.md): the default's stop
	// rules from 2 spectral starts, on the default's graph and scale, of
	// which -spectral reads the rules that mix them with the defaults'
	// k-means starts; and the spectral clustering itself.
	cs = append(cs, candidate{name: "spectral-start", stops: true, args: func(dataset) []string {
		return []string{"-init", "spectral", "-starts", "2"}
	}})
	cs = append(cs, candidate{name: "method-spectral", stops: true, args: func(dataset) []string {
		return []string{"-method", "spectral"}
	}})
	cs = append(cs, candidate{name: "previous-default", stops: true, args: func(dataset) []string {
		return []string{"-starts", "1", "-scale", "mass"}
	}})
	cs = append(cs, candidate{name: fmt.Sprintf("starts%d-kmeans-start", startsStudied), stops: true, args: func(dataset) []string {
		return []string{"-starts", fmt.Sprint(startsStudied), "-max-iter", "0"}
	}})
	for _, m := range []string{"10", "15", "30", "50", "log"} {
		for _, w := range []string{"conn", "st"} {
			for _, s := range []string{"1", "mass"} {
				weights := map[string]string{"conn": "connectivity", "st": "self-tuning"}[w]
				cs = append(cs, candidate{name: fmt.Sprintf("knn-%s-%s-%s", m, w, s), args: func(d dataset) []string {
					neighbors := m
					if m == "log" {
						neighbors = fmt.Sprint(int(math.Ceil(math.Log2(float64(d.n)))) + 1)
					}
					return []string{"-affinity", "knn", "-neighbors", neighbors, "-weights", weights, "-scale", s}
				}})
			}
		}
	}
	for _, m := range []int{10, 15, 30} {
		for _, f := range []float64{0.5, 2, 4} {
			cs = append(cs, candidate{name: fmt.Sprintf("knn-%d-conn-x%g", m, f), args: func(d dataset) []string {
				scale := f * float64(d.n) / float64(d.k*m)
				return []string{"-affinity", "knn", "-neighbors", fmt.Sprint(m), "-weights", "connectivity", "-scale", fmt.Sprint(scale)}
			}})
		}
	}
	return cs
}

// startsStudied is the starts of the starts study's runs.
const startsStudied = 10

// startsDense is the rule of the starts study that solves the dense
// Gaussian kernel (-affinity gaussian, its default bandwidth) instead of
// the kNN graph.
const startsDense = "gaussian"

// startsCandidate is the starts study's candidate of a scale rule (a
// value of -scale, or startsDense): startsStudied starts with the
// defaults' stop rules.
func startsCandidate(rule string) candidate {
	c := candidate{name: fmt.Sprintf("starts%d-%s", startsStudied, rule), stops: true, args: func(dataset) []string {
		return []string{"-starts", fmt.Sprint(startsStudied), "-scale", rule}
	}}
	if rule == startsDense {
		c.dense = true
		c.args = func(dataset) []string {
			return []string{"-starts", fmt.Sprint(startsStudied), "-affinity", "gaussian"}
		}
	}
	return c
}

// pick returns the candidates of names, in that order, with the variants
// NAME+sN, NAME/mtol=X and NAME/graph=DIR.
func pick(all []candidate, names []string) ([]candidate, error) {
	var out []candidate
	for _, name := range names {
		if base, dir, ok := strings.Cut(name, graphVariant); ok {
			cs, err := pick(all, []string{base})
			if err != nil || dir == "" || strings.Contains(dir, mtolVariant) || !cs[0].stops || cs[0].dense {
				return nil, fmt.Errorf("-candidates: unknown candidate %q (NAME%sDIR needs a candidate of a sparse P that keeps the stop rules)", name, graphVariant)
			}
			c := cs[0]
			args := c.args
			c.name, c.args = name, func(d dataset) []string {
				return append(args(d), "-affinity", filepath.Join(dir, d.name+".csv"))
			}
			out = append(out, c)
			continue
		}
		if base, tol, ok := strings.Cut(name, mtolVariant); ok {
			v, err := strconv.ParseFloat(tol, 64)
			cs, perr := pick(all, []string{base})
			if err != nil || !(v > 0) || perr != nil || !cs[0].stops {
				return nil, fmt.Errorf("-candidates: unknown candidate %q (NAME%sX needs a candidate that keeps the stop rules and X > 0)", name, mtolVariant)
			}
			c := cs[0]
			args := c.args
			c.name, c.args = name, func(d dataset) []string { return append(args(d), "-rtol", "0", "-mtol", tol) }
			out = append(out, c)
			continue
		}
		base, starts, variant := strings.Cut(name, "+s")
		i := slices.IndexFunc(all, func(c candidate) bool { return c.name == base })
		n, err := strconv.Atoi(starts)
		if i < 0 || variant && (err != nil || n < 1) {
			return nil, fmt.Errorf("-candidates: unknown candidate %q", name)
		}
		c := all[i]
		if variant {
			args := c.args
			c.name, c.args = name, func(d dataset) []string { return append(args(d), "-init-starts", starts) }
		}
		out = append(out, c)
	}
	return out, nil
}

// mtolVariant marks the variant NAME/mtol=X of a candidate: its stop rule
// the gap relative to the model's term, -rtol 0 -mtol X.
const mtolVariant = "/mtol="

// graphVariant marks the variant NAME/graph=DIR of a candidate: its P the
// edge list DIR/SET.csv instead of the kNN graph of the features, which
// still give the k-means start and the sizes rule (the variant comes last,
// after any /mtol=X).
const graphVariant = "/graph="

// frtols, rtols and mtols are the relative tolerances on the objective's
// change, on the gap relative to the objective and on the gap relative to
// the model's term whose stops the study reports.
var (
	frtols = []float64{1e-3, 1e-4, 1e-5, 1e-6}
	rtols  = []float64{1e-4, 1e-5, 1e-6, 1e-7}
	mtols  = []float64{3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4}
)

func run(ctx context.Context, o options, out io.Writer) error {
	if o.report != nil {
		return reportRecords(o, out)
	}
	if o.lso != nil || o.spectral != nil {
		if o.repeats < 1 {
			return errors.New("-repeats must be >= 1")
		}
		if o.spectral != nil {
			return spectralReport(o, out)
		}
		return lsoReport(o, out)
	}
	if o.maxIter < 1 {
		return errors.New("-max-iter must be >= 1")
	}
	chosen := candidates()
	if o.candidates != nil {
		var err error
		if chosen, err = pick(chosen, o.candidates); err != nil {
			return err
		}
	}
	sets, err := findSets(o)
	if err != nil {
		return err
	}
	if o.bin == "" {
		dir, err := os.MkdirTemp("", "quality-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.bin = filepath.Join(dir, "ssnmf")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", o.bin, "github.com/ssnmf/ssnmf/cmd/ssnmf")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}

	var raw io.Writer
	if o.raw != "" {
		f, err := os.OpenFile(o.raw, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		raw = f
	}
	anchors, err := readAnchors(o.anchors)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "| data | n | k | candidate | ARI | NMI | right | wrong | Brier | seconds | RSS MB | sweeps | settled | last moved |")
	fmt.Fprintln(out, "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, d := range sets {
		for _, c := range chosen {
			if c.dense && d.n > o.denseMaxN {
				fmt.Fprintf(out, "| %s | %d | %d | %s | not run: n > -dense-max-n %d (%.2g entries a pass) |\n", d.name, d.n, d.k, c.name, o.denseMaxN, float64(d.n)*float64(d.n))
				continue
			}
			r := solve(ctx, o, d, c)
			if raw != nil {
				b, err := json.Marshal(r)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", d.name, c.name, err)
				}
				if _, err := fmt.Fprintf(raw, "%s\n", b); err != nil {
					return err
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			printRecord(out, r)
		}
		for _, a := range anchors[d.name] {
			if a.Error != "" {
				fmt.Fprintf(out, "| %s | %d | %d | sklearn %s | %s |\n", d.name, d.n, d.k, a.Method, a.Error)
				continue
			}
			fmt.Fprintf(out, "| %s | %d | %d | sklearn %s | %.4f | %.4f | - | - | - | %.1f | %.0f | - | - | - |\n",
				d.name, d.n, d.k, a.Method, a.ARI, a.NMI, a.Seconds, float64(a.RSSkB)/1024)
		}
	}
	return nil
}

func printRecord(out io.Writer, r record) {
	if r.Error != "" {
		fmt.Fprintf(out, "| %s | %d | %d | %s | %s |\n", r.Set, r.N, r.K, r.Candidate, r.Error)
		return
	}
	f := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.3f", *v)
	}
	fmt.Fprintf(out, "| %s | %d | %d | %s | %.4f | %.4f | %s | %s | %.3f | %.1f | %.0f | %d | %d | %d |\n",
		r.Set, r.N, r.K, r.Candidate, r.ARI, r.NMI, f(r.Right), f(r.Wrong), r.Brier, r.Seconds, float64(r.RSSkB)/1024,
		r.Iterations, r.Settled, r.LastMoved)
}

// findSets returns the data sets of o.
func findSets(o options) ([]dataset, error) {
	var sets []dataset
	var err error
	for _, dir := range o.data {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".csv")
			if !ok {
				name, ok = strings.CutSuffix(e.Name(), ".csv.gz")
			}
			if !ok || strings.HasSuffix(name, ".labels") || o.sets != nil && !slices.Contains(o.sets, name) {
				continue
			}
			sets = append(sets, dataset{name: name, path: filepath.Join(dir, e.Name())})
		}
	}
	if o.sets != nil && len(sets) != len(o.sets) {
		return nil, fmt.Errorf("-sets %s: found %d of them in %s", strings.Join(o.sets, ","), len(sets), strings.Join(o.data, ","))
	}
	for i := range sets {
		if sets[i].n, sets[i].k, err = countLabeled(sets[i].path); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].n < sets[j].n })
	return sets, nil
}

// countLabeled returns the rows and the classes of the label column of the
// CSV file (plain or gzip-compressed) at path, reading it as a stream: the
// study's process stays small, because Linux counts the peak RSS of a
// process that starts a child in the child's peak RSS.
func countLabeled(path string) (n, k int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	col := slices.Index(head, "label")
	if col < 0 {
		return 0, 0, fmt.Errorf("%s: no label column to score against", path)
	}
	classes := make(map[string]bool)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		classes[rec[col]] = true
		n++
	}
	return n, len(classes), nil
}

// solve runs ssnmf solve on d with the candidate c and reads its summary
// and trace.
func solve(ctx context.Context, o options, d dataset, c candidate) record {
	r := record{Set: d.name, N: d.n, K: d.k, Candidate: c.name, Args: c.args(d)}
	dir, err := os.MkdirTemp("", "quality-run-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	sum, tr := filepath.Join(dir, "s.json"), filepath.Join(dir, "t.csv")
	args := []string{"solve", "-q", "-seed", "0", "-summary", sum, "-trace", tr, "-workdir", filepath.Join(dir, "work")}
	if !strings.HasPrefix(c.name, "defaults") && !c.stops {
		args = append(args, "-max-iter", fmt.Sprint(o.maxIter), "-rtol", "0", "-mtol", "0", "-frtol", "0")
	}
	args = append(append(append(args, r.Args...), o.extra...), d.path)
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	begin := time.Now()
	err = cmd.Run()
	r.Seconds = time.Since(begin).Seconds()
	if cmd.ProcessState != nil { // nil if the binary could not be started
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.RSSkB = ru.Maxrss
		}
		r.CPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.Error = fmt.Sprintf("timeout after %v", o.timeout)
		return r
	case err != nil:
		r.Error = strings.ReplaceAll(strings.TrimSpace(stderr.String()), "\n", " ")
		if r.Error == "" { // not started, or killed without a word
			r.Error = err.Error()
		}
		return r
	}
	b, err := os.ReadFile(sum)
	if err == nil {
		// The summary's own "seconds" (the run's time in ssnmf) must not
		// replace the process's wall-clock seconds.
		wall := r.Seconds
		err = json.Unmarshal(b, &r)
		r.Seconds = wall
	}
	if err == nil {
		err = r.readTrace(tr)
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// readTrace sets the sweep counts of r from the trace at path: from the
// rows of the start the run chose, r.BestStart (read from the summary).
func (r *record) readTrace(path string) error {
	t, err := trace.ReadFile(path)
	if err != nil {
		return err
	}
	f, _ := t.Column(trace.Objective)
	mv, _ := t.Column(trace.Moved)
	gap, _ := t.Column(trace.Gap)
	model, _ := t.Column(trace.Model)
	// A run of several starts: the rows of the start chosen.
	if start, _ := t.Column(trace.Start); len(start) == len(f) {
		keep := func(col []float64) []float64 {
			var out []float64
			for i, v := range col {
				if int(start[i]) == r.BestStart {
					out = append(out, v)
				}
			}
			return out
		}
		f, mv, gap, model = keep(f), keep(mv), keep(gap), keep(model)
	}
	if len(f) == 0 {
		return fmt.Errorf("%s: no rows of start %d", path, r.BestStart)
	}
	final := f[len(f)-1]
	r.Settled = 0
	for i := len(f) - 1; i >= 0; i-- {
		if math.Abs(f[i]-final) > 1e-4*math.Abs(final) {
			r.Settled = i + 1
			break
		}
	}
	for i, m := range mv {
		if m > 0 {
			r.LastMoved = i + 1
		}
	}
	// stops returns, for each tolerance, the first row i >= from at which
	// met(i, tol) holds (the last row if none) and the rows moved after it.
	stops := func(tols []float64, from int, met func(i int, tol float64) bool) map[string][2]int {
		out := make(map[string][2]int)
		for _, tol := range tols {
			stop := len(f) - 1
			for i := from; i < len(f); i++ {
				if met(i, tol) {
					stop = i
					break
				}
			}
			after := 0
			for _, m := range mv[stop:] {
				after += int(m)
			}
			out[fmt.Sprint(tol)] = [2]int{stop, after}
		}
		return out
	}
	r.FrtolStop = stops(frtols, 1, func(i int, tol float64) bool { return math.Abs(f[i]-f[i-1]) <= tol*math.Abs(f[i]) })
	r.RtolStop = stops(rtols, 0, func(i int, tol float64) bool { return gap[i] <= tol*math.Abs(f[i]) })
	if slices.ContainsFunc(model, func(v float64) bool { return v > 0 }) { // a trace with the model column
		r.MtolStop = stops(mtols, 0, func(i int, tol float64) bool { return gap[i] <= tol*model[i] })
	}
	return nil
}

// stopGroup is a stop rule's columns in a table of stops: its name, its
// tolerances and where a record keeps their stops.
type stopGroup struct {
	name string
	tols []float64
	at   func(record) map[string][2]int
}

// stopTable prints, for every set whose record rec finds, the sweeps run,
// the sweep the objective settled, the last sweep that moved a row, and for
// every tolerance of the groups the sweep it stops at and the rows moved
// after it ("-" if the record lacks it).
func stopTable(out io.Writer, sets []string, rec func(set string) (record, bool), groups []stopGroup) {
	fmt.Fprint(out, "| data | n | sweeps | settled | last moved |")
	cols := 0
	for _, g := range groups {
		for _, tol := range g.tols {
			fmt.Fprintf(out, " %s %g |", g.name, tol)
			cols++
		}
	}
	fmt.Fprint(out, "\n| --- | ---: | ---: | ---: | ---: |"+strings.Repeat(" ---: |", cols)+"\n")
	for _, s := range sets {
		r, ok := rec(s)
		if !ok || r.Error != "" {
			continue
		}
		fmt.Fprintf(out, "| %s | %d | %d | %d | %d |", s, r.N, r.Iterations, r.Settled, r.LastMoved)
		for _, g := range groups {
			for _, tol := range g.tols {
				if st, ok := g.at(r)[fmt.Sprint(tol)]; ok {
					fmt.Fprintf(out, " %d (%d) |", st[0], st[1])
				} else {
					fmt.Fprint(out, " - |")
				}
			}
		}
		fmt.Fprintln(out)
	}
}

// anchor is a line of anchors.py.
type anchor struct {
	Set     string  `json:"set"`
	Method  string  `json:"method"`
	ARI     float64 `json:"ARI"`
	NMI     float64 `json:"NMI"`
	Seconds float64 `json:"seconds"`
	RSSkB   int64   `json:"maxrss_kB"`
	Error   string  `json:"error"`
}

// readAnchors reads the JSON lines of anchors.py at path, by set; none if
// path is empty.
func readAnchors(path string) (map[string][]anchor, error) {
	out := make(map[string][]anchor)
	if path == "" {
		return out, nil
	}
	err := readLines(path, func(a anchor) { out[a.Set] = append(out[a.Set], a) })
	return out, err
}

// readLines calls add with every line of the JSON-lines file at path,
// decoded as a T.
func readLines[T any](path string, add func(T)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		add(v)
	}
	return sc.Err()
}

// reportRecords prints the cross-set summary of the records in o.report.
func reportRecords(o options, out io.Writer) error {
	anchors, err := readAnchors(o.anchors)
	if err != nil {
		return err
	}
	type key struct{ set, cand string }
	recs := make(map[key]record)
	var order []key
	for _, path := range o.report {
		err := readLines(path, func(r record) {
			k := key{r.Set, r.Candidate}
			if _, ok := recs[k]; !ok {
				order = append(order, k)
			}
			recs[k] = r
		})
		if err != nil {
			return err
		}
	}
	anchorARI := func(set, method string) (float64, bool) {
		for _, a := range anchors[set] {
			if a.Method == method && a.Error == "" {
				return a.ARI, true
			}
		}
		return 0, false
	}
	var sets, cands []string
	for _, k := range order {
		if !slices.Contains(sets, k.set) {
			sets = append(sets, k.set)
		}
		if !slices.Contains(cands, k.cand) {
			cands = append(cands, k.cand)
		}
	}
	type line struct {
		cand                   string
		ran, beat, spectral    int
		mean, worst            float64
		worstSet               string
		missing                []string
		compared, spectralSeen int
	}
	var lines []line
	for _, c := range cands {
		l := line{cand: c, worst: math.Inf(1)}
		var sum float64
		for _, s := range sets {
			r, ok := recs[key{s, c}]
			if !ok || r.Error != "" {
				l.missing = append(l.missing, s)
				continue
			}
			l.ran++
			sum += r.ARI
			km, ok1 := anchorARI(s, "kmeans")
			gmm, ok2 := anchorARI(s, "gmm")
			if ok1 && ok2 {
				l.compared++
				best := max(km, gmm)
				if r.ARI >= best {
					l.beat++
				}
				if r.ARI-best < l.worst {
					l.worst, l.worstSet = r.ARI-best, s
				}
			}
			if sp, ok := anchorARI(s, "spectral"); ok {
				l.spectralSeen++
				if r.ARI >= sp {
					l.spectral++
				}
			}
		}
		if l.ran > 0 {
			l.mean = sum / float64(l.ran)
		}
		lines = append(lines, l)
	}
	sort.SliceStable(lines, func(i, j int) bool {
		if len(lines[i].missing) != len(lines[j].missing) {
			return len(lines[i].missing) < len(lines[j].missing)
		}
		return lines[i].mean > lines[j].mean
	})
	fmt.Fprintf(out, "%d sets: %s\n\n", len(sets), strings.Join(sets, ", "))
	fmt.Fprintln(out, "| candidate | sets | mean ARI | >= best of k-means, GMM | >= spectral | worst margin vs k-means, GMM | not run on |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, l := range lines {
		worst := "-"
		if l.compared > 0 {
			worst = fmt.Sprintf("%+.3f (%s)", l.worst, l.worstSet)
		}
		fmt.Fprintf(out, "| %s | %d | %.4f | %d of %d | %d of %d | %s | %s |\n", l.cand, l.ran, l.mean, l.beat, l.compared,
			l.spectral, l.spectralSeen, worst, strings.Join(l.missing, ", "))
	}
	for _, m := range []string{"kmeans", "gmm", "spectral"} {
		var sum float64
		var have []string
		for _, s := range sets {
			if v, ok := anchorARI(s, m); ok {
				sum += v
				have = append(have, s)
			}
		}
		if len(have) > 0 {
			fmt.Fprintf(out, "| sklearn %s | %d | %.4f | | | | |\n", m, len(have), sum/float64(len(have)))
		}
	}

	fmt.Fprintf(out, "\nStops of %s: sweeps run, the sweep from which f stays within 0.01%% of its final value, the last sweep that moved a row; then, per relative tolerance on |Δf|/f, and on the gap relative to f, the sweep it stops at and the rows moved after it.\n\n", o.stopCandidate)
	frtol := func(r record) map[string][2]int { return r.FrtolStop }
	rtol := func(r record) map[string][2]int { return r.RtolStop }
	mtol := func(r record) map[string][2]int { return r.MtolStop }
	rec := func(s string) (record, bool) { r, ok := recs[key{s, o.stopCandidate}]; return r, ok }
	stopTable(out, sets, rec, []stopGroup{{"frtol", frtols, frtol}, {"rtol", rtols, rtol}})
	fmt.Fprintf(out, "\nThe same for the gap relative to ¼||WᵀW||² (-mtol), with the default's -rtol %g for comparison.\n\n", rtols[1])
	stopTable(out, sets, rec, []stopGroup{{"rtol", rtols[1:2], rtol}, {"mtol", mtols, mtol}})
	return nil
}
