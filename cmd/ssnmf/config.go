package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/tile"
)

// defaultRule is the bandwidth rule of -gamma auto.
const defaultRule = affinity.Neighbor

// The values of -affinity that are not files: P is the kNN graph of the
// features, or their Gaussian kernel.
const (
	affinityKNN      = "knn"
	affinityGaussian = "gaussian"
)

// defaultAffinity is the affinity of a run without -affinity;
// docs/quality.md gives the study behind it.
const defaultAffinity = affinityKNN

// defaultWeights are the kNN graph's weights of solve and graph.
const defaultWeights = graph.SelfTuning

// kernelConfig is what defines P: the input's features and the Gaussian
// kernel over them, or a tile file. The tiles command shares it with solve.
type kernelConfig struct {
	// run holds the settings that flags fill directly (k, the method, the
	// initial point, the starts, the stop rules that 0 does not turn off,
	// -max-time, rowcd's, -checkpoint-every, -workdir, -model, and P's
	// that solver.Options has as the flags do: -rows, -neighbors, the
	// search's, -tile, -workers, -seed, -mem; the precision and the
	// kernel family that runs, resolved); options adds the rest. Init
	// "auto" and Starts 0 are resolved by solving.resolve.
	run            solver.Options
	input          string // "" for the built-in data set
	format         string // input format: a value of -format
	features       []string
	label          string
	gamma          gammaFlag
	scale          scaleFlag // a sparse P's factor
	standardize    bool
	affinity       string        // tile file of P, or affinityKNN; "" to generate P from the features
	neighborsGiven bool          // -neighbors was given: a clamp to n is reported
	weights        graph.Weights // -affinity knn: the edges' weights
	knn            knnFlag       // -affinity knn: the search
	knnDescent     int           // -knn approx: leaf rounds before neighbour descent; 0 for none
	kernel         kernelFlag    // -kernel, as given (or SSNMF_KERNEL)
	quiet          bool
	moments        bool // keep the standardization's means and deviations (for -model)

	// Where the O(n²) work runs (solve's -engine, -tasks, -retries).
	engine  string
	tasks   int
	retries int
	// log prints a line of a coordinator's retries, or of the rounds of
	// an approximate kNN search, on stderr.
	log    func(msg string)
	budget solver.Budget // of -mem or the memory cgroup, set by checkGraph
	// budgetShown: the budget's line is printed (showBudget).
	budgetShown bool
	// disk splits the run's storage I/O into phases (input, kNN rounds,
	// affinity, ...); nil: not measured.
	disk *diskio.Meter

	// fsys is the file system of the outputs, the checkpoints and a
	// coordinator's files; vfs.OS{} if nil (the fault tests put errorfs
	// here).
	fsys vfs.FS
	// saved, for a resumed solve, is its checkpoint's settings: the
	// input is checked against them before P is built (solver.Setup), so
	// that a changed input is refused before the set-up is spent on it.
	saved *solver.Saved
}

// config is the parsed command line of solve.
type config struct {
	kernelConfig
	start       fw.Start // the start of the random or corners init
	tol, mtol   float64  // the gap tolerances, absolute and relative to ¼||WᵀW||²; 0 off
	maxIter     int      // 0: no limit
	refresh     int      // 0: only when a stop is checked and at the end
	stripMemory int64    // rowcd: bytes for a strip of P; 0 no bound
	resume      string
	out         string
	summary     string
	trace       string

	// flags are the flags c was parsed from: their values are c's
	// settings, as resolved (a checkpoint records them, canonicalArgs).
	flags *flag.FlagSet
	marks flagMarks
}

// kernelFlags defines on fs the flags of kc that solve and tiles share,
// marking them with marks.
func kernelFlags(fs *flag.FlagSet, kc *kernelConfig, marks *flagMarks) (features, precision *string) {
	kc.gamma = gammaFlag{auto: true}
	fs.Var(&kc.gamma, marks.needs("gamma", needGaussian), "-affinity gaussian: the kernel bandwidth `G` > 0, or a rule: neighbor (1/(4 s), s the median squared distance of a row to its 10th nearest distinct neighbour, docs/bandwidth.md), mass (P has the mass of k balanced clusters, docs/quality.md); auto is "+defaultRule.String()+" (with another affinity the k-means start's memberships take the bandwidth of the "+defaultRule.String()+" rule)")
	fs.BoolVar(&kc.standardize, marks.needs("standardize", needFeatures), true, "z-score each feature (population std; a constant feature becomes 0); -standardize=false keeps the raw features")
	precision = fs.String(marks.needs("precision", needGaussian), "float64", "-affinity gaussian: the kernel values: float64, or float32 (sums are accumulated in float64 either way)")
	fs.IntVar(&kc.run.BlockSize, marks.atLeast(1, "tile"), tile.DefaultBlockSize, "tile edge `B`: P is produced in B×B tiles (at most n; each worker holds about 2 tiles of 8·B² bytes)")
	fs.IntVar(&kc.run.Workers, marks.atLeast(1, marks.mutable("workers")), runtime.GOMAXPROCS(0), "goroutines for the tile and row passes (the default is GOMAXPROCS)")
	fs.Uint64Var(&kc.run.Seed, "seed", 0, "seed of the initial point and of the gamma sample")
	fs.StringVar(&kc.format, marks.needs("format", needInput), input.Auto, "input format: "+input.Formats+" (auto: by the file's first bytes, then its extension)")
	features = fs.String(marks.needs(marks.optionalFlag("features"), needFeatures), "", "comma-separated feature columns (default: every column but the label)")
	fs.StringVar(&kc.label, marks.needs("label", needFeatures), "", "ground-truth column, never a feature (default: \"label\" if present); a row whose label is missing ("+store.MissingLabels+") is refused")
	return features, precision
}

// graphFlags defines the flags of the kNN graph, which solve and graph
// share, each usage starting with prefix; checkGraph resolves them.
func graphFlags(fs *flag.FlagSet, kc *kernelConfig, marks *flagMarks, prefix string) (weights *string) {
	fs.IntVar(&kc.run.Neighbors, marks.needs("neighbors", needKNN), graph.DefaultNeighbors, prefix+"neighbours of a row, the row itself included (at least 2)")
	fs.Var(&kc.knn, marks.needs("knn", needKNN), prefix+fmt.Sprintf("the neighbour search: exact (O(n²) distances), approx (a partition tree and rounds of neighbour descent, its recall measured on sampled rows), or auto: approx above %d rows", graph.ApproxMinRows))
	fs.Float64Var(&kc.run.KNNRecall, marks.needs("knn-recall", needApprox), graph.DefaultRecall, prefix+"-knn approx: the sampled recall@M at which the search stops refining (at most -knn-rounds rounds)")
	fs.IntVar(&kc.run.KNNProbes, marks.atLeast(1, marks.needs("knn-probes", needApprox)), graph.DefaultProbes, prefix+"-knn approx: the effort, leaves searched with each leaf in a round")
	fs.IntVar(&kc.run.KNNRounds, marks.atLeast(1, marks.needs("knn-rounds", needApprox)), graph.DefaultRounds, prefix+"-knn approx: the most rounds")
	fs.IntVar(&kc.knnDescent, marks.atLeast(0, marks.needs("knn-descent", needApprox)), graph.DefaultLeafRounds, prefix+"-knn approx: after this many rounds of leaf pairs, once a round cuts the sampled misses less than 2.5-fold, rounds of neighbour descent row by row, which reach recall 0.99 at 10⁷ rows where leaf rounds alone do not (docs/knn.md); 0: no descent, every round searches leaf pairs")
	fs.Var((*byteSize)(&kc.run.Memory), marks.mutable("mem"), "the memory budget `BYTES` (a number with an optional unit: kB, MB, GB, TB, or KiB, MiB, GiB, TiB): the Go heap is held to half of it and the kNN search's scratch in memory to a quarter, which the solve's W, P·W and P·S take when they fit, the rest is for the mapped files' pages (default: the memory cgroup's limit, if any; none otherwise)")
	return fs.String(marks.needs("weights", needKNN), defaultWeights.String(), prefix+"the edges' weights: connectivity (1) or self-tuning (exp(-d²/(σ_i σ_j)), σ_i the distance to the 7th neighbour)")
}

// checkGraph checks -neighbors and -knn-recall, whose 0 is not their
// default as solver.Options has it (the other ranges are marked where the
// flags are defined: checkRanges, checkOptions), parses -weights and
// applies the memory budget.
func (kc *kernelConfig) checkGraph(weights string) error {
	switch {
	case kc.run.Neighbors < 2:
		// A row's own self-loop is not a neighbour.
		return usagef("-neighbors must be >= 2, have %d: the neighbours of a row include the row itself, so fewer than 2 leave it no other", kc.run.Neighbors)
	case !(kc.run.KNNRecall > 0 && kc.run.KNNRecall <= 1):
		return usagef("-knn-recall must be in (0, 1], have %v", kc.run.KNNRecall)
	}
	var err error
	if kc.weights, err = graph.ParseWeights(weights); err != nil {
		return usagef("-weights: %v", err)
	}
	if kc.budget, err = newMemoryBudget(kc.run.Memory); err != nil {
		return err
	}
	kc.budget.Apply()
	return nil
}

// kernelEnv is the environment variable that sets -kernel when the flag
// is not given.
const kernelEnv = "SSNMF_KERNEL"

// kernelFlag is -kernel, the family of the vector kernels by name
// (tile.ISA); set records that the flag was given.
type kernelFlag struct {
	tile.ISA
	set bool
}

func (f *kernelFlag) Set(s string) (err error) {
	f.ISA, err = tile.ParseISA(s)
	f.set = true
	return err
}

// kernelFlagVar defines -kernel on fs, mutable on resume: a resumed run
// may go on with another CPU's kernels.
func kernelFlagVar(fs *flag.FlagSet, f *kernelFlag, marks *flagMarks) {
	fs.Var(f, marks.mutable("kernel"), "the vector kernels: auto (the fastest this CPU runs), go (portable), avx2, avx512 or neon; a family the CPU lacks is an error (default $"+kernelEnv+", else auto)")
}

// resolveKernel sets kc.run.Kernel to the family -kernel (or $SSNMF_KERNEL)
// names, resolved on this CPU. A family the CPU lacks is an error, except
// on a resumed run (resumed set), which goes on with the fastest family
// the CPU has and returns a line that says so.
func (kc *kernelConfig) resolveKernel(resumed bool) (note string, err error) {
	what := "-kernel " + kc.kernel.String()
	if !kc.kernel.set {
		if env := os.Getenv(kernelEnv); env != "" {
			if kc.kernel.ISA, err = tile.ParseISA(env); err != nil {
				return "", usagef("$%s: %v", kernelEnv, err)
			}
			what = kernelEnv + "=" + env
		}
	}
	isa, err := kc.kernel.Resolve()
	switch {
	case err == nil:
		kc.run.Kernel = isa
		return "", nil
	case !resumed:
		return "", usagef("%s: %v", what, err)
	}
	kc.run.Kernel, _ = kc.kernel.Fallback()
	return fmt.Sprintf("%s of the checkpoint's run: this CPU (%s) lacks it; going on with %s, whose results differ in rounding", what, tile.CPUFeatures(), kc.run.Kernel), nil
}

// knnFlag is -knn, the neighbour search: a graph.KNNMethod by name.
type knnFlag struct{ graph.KNNMethod }

func (f *knnFlag) Set(s string) (err error) {
	f.KNNMethod, err = graph.ParseKNNMethod(s)
	return err
}

// options returns the solver's settings of the flags, as resolved: run
// and P's that the flags have otherwise (config.options adds the run's).
func (kc *kernelConfig) options() solver.Options {
	o := kc.run
	o.Gaussian, o.Raw, o.Gamma, o.Scale = kc.gaussian(), !kc.standardize, kc.gamma.value, kc.scale.Scale
	o.Connectivity, o.KNN, o.KNNDescent = kc.weights == graph.Connectivity, kc.knn.KNNMethod, cmp.Or(kc.knnDescent, -1)
	if kc.fromFile() {
		o.File = kc.affinity
	}
	return o
}

// check validates the kernel flags after parsing.
func (kc *kernelConfig) check(features, precision string) error {
	if features != "" {
		for f := range strings.SplitSeq(features, ",") {
			kc.features = append(kc.features, strings.TrimSpace(f))
		}
	}
	var err error
	if kc.run.Precision, err = tile.ParsePrecision(precision); err != nil {
		return usagef("-precision: %v", err)
	}
	if kc.format, err = input.ParseFormat(kc.format); err != nil {
		return usagef("-format: %v", err)
	}
	return nil
}

// parseSolve parses the command line of solve. The flags that a resumed run
// may change are marked mutable where they are defined.
func parseSolve(args []string, stdout io.Writer) (*config, error) {
	c, fs, fl := solveFlagSet()
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if err := c.marks.checkRanges(fs); err != nil {
		return nil, err
	}
	if err := c.kernelConfig.check(*fl.features, *fl.precision); err != nil {
		return nil, err
	}
	if c.run.Step, err = fw.ParseStepRule(*fl.step); err != nil {
		return nil, usagef("-step: %v", err)
	}
	if err := c.checkGraph(*fl.weights); err != nil {
		return nil, err
	}
	// The flags hold the values as resolved, for a checkpoint to record.
	*fl.features, *fl.precision, *fl.step = strings.Join(c.features, ","), c.run.Precision.String(), c.run.Step.String()
	set := map[string]bool{} // -k 0 is an error; no -k means "the number of classes"
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["k"] && c.run.K < 1 {
		return nil, usagef("-k must be >= 1, have %d", c.run.K)
	}
	if err := c.marks.checkOptions(c.run); err != nil {
		return nil, err
	}
	switch c.run.Init {
	case solver.InitAuto, solver.InitKMeans, solver.InitSpectral:
	default:
		if c.start, err = fw.ParseStart(c.run.Init); err != nil {
			return nil, usagef("-init: %w", err)
		}
	}
	if err := c.checkValues(pos); err != nil {
		return nil, err
	}
	if len(pos) == 1 {
		c.input = pos[0]
	}
	if err := c.checkEngine(); err != nil {
		return nil, err
	}
	if err := c.checkMethod(set); err != nil {
		return nil, err
	}
	if err := c.checkModel(); err != nil {
		return nil, err
	}
	c.moments = c.run.Model != "" && c.standardize
	return c, nil
}

// solveFlags are the flags of solve whose values parseSolve checks and
// resolves before they become the config's.
type solveFlags struct{ features, precision, weights, step *string }

// solveFlagSet defines the flags of solve on a new flag set, over a new
// config: the flags that a resumed run may change are marked mutable.
func solveFlagSet() (*config, *flag.FlagSet, solveFlags) {
	c := &config{}
	m := &c.marks
	fs := newFlagSet("ssnmf solve", "Usage: ssnmf solve [flags] [INPUT.csv | INPUT.csv.gz | INPUT.parquet | INPUT.arrow]\n"+
		"       ssnmf solve -resume DIR [flags]\n\n"+
		"Clusters the rows of INPUT (the built-in yeast data set if none) into k soft clusters\n"+
		"on min 1/4 ||P - W Wᵀ||² over row-stochastic W >= 0 (by row-wise coordinate\n"+
		"descent unless -method says otherwise), where P is the kNN graph of the rows\n"+
		"(self-tuning weights, scaled to the mass of k clusters), or with -affinity gaussian\n"+
		"P_ij = exp(-gamma ||x_i - x_j||²), or P is read from a tile file or an edge list.")
	c.flags = fs
	features, precision := kernelFlags(fs, &c.kernelConfig, m)
	kernelFlagVar(fs, &c.kernel, m)
	fs.IntVar(&c.run.K, "k", 0, "number of clusters, fewer than the rows (default: the number of classes in the label column); above half the rows a warning: clusters of a single row are forced, and an iteration costs about n·k² multiply-adds")
	fs.StringVar(&c.affinity, m.file("affinity"), defaultAffinity, "P: knn, the kNN graph of the features (-neighbors, -weights, -scale); gaussian, their Gaussian kernel (-gamma), generated tile by tile; or a tile file `FILE.arrow` (written by ssnmf tiles) or an edge list (Parquet, Arrow or CSV with src,dst[,weight])")
	weights := graphFlags(fs, &c.kernelConfig, m, "-affinity knn: ")
	c.scale = scaleFlag{solver.Scale{Rule: solver.ScaleAuto, Times: solver.DefaultScaleTimes}}
	fs.Var(&c.scale, m.needs("scale", needSparse), "factor `S` > 0 of a sparse P (-affinity knn or an edge list); mass: n²/(k·ΣP), the mass of k balanced clusters; sizes: Σ_j n_j²/ΣP, the mass of the k-means start's clusters; auto: sizes for a sparse P whose features are at hand, else mass; RULE:F, F > 0 times the rule's factor (docs/quality.md)")
	fs.IntVar(&c.run.Rows, m.option("Rows", m.needs("rows", needEdgesAlone)), 0, "-affinity EDGES without INPUT: the number of rows `N`, rows without an edge included (default: the largest id + 1, refused when far above the rows the edges name)")
	fs.StringVar(&c.run.Method, m.option("Method", "method"), methods.Default, methodUsage())
	fs.IntVar(&c.run.Moves, m.atLeast(1, m.needs("moves", needRowCD)), solver.DefaultMoves, "rowcd: pairwise moves per row visit")
	fs.Int64Var(&c.stripMemory, m.atLeast(0, m.needs("strip-memory", needDenseRowCD)), solver.DefaultStripMemory, "rowcd on a dense P (-affinity gaussian or a tile file): bytes for a strip of P (8·tile·n); when less, strips get fewer rows, down to 32, then each sweep takes two passes (0: no bound)")
	fs.StringVar(&c.run.SweepOrder, m.option("SweepOrder", m.needs("sweep-order", needApproxRowCD)), solver.SweepAuto, "rowcd on the rows the approximate kNN search moves into the order of its partition: the order of a sweep's visits, partition (reads near each other), input (the input's order, as a run on the exact graph visits them: the same run where the graphs agree, 3.5 times slower a sweep at 10⁶ rows, docs/quality.md) or auto (input up to 50,000 rows, where the default search is the exact one and a sweep's reads fit the caches, partition above); with the exact search the rows are in the input's order either way")
	fs.StringVar(&c.run.Workdir, "workdir", "", "`DIR` for the checkpoint, and the memory-mapped W, P·W and P·S files when they do not fit in memory (-mem), which a new run there replaces (default: a temporary directory, removed after a successful run)")
	step := fs.String(m.needs("step", needFW), "exact", "step rule of fw: exact (quartic line search), curvature (the paper's min(g/C, 1)) or open-loop (2/(t+2))")
	fs.StringVar(&c.run.Init, m.option("Init", m.needs("init", needStart)), solver.InitAuto, "initial point: kmeans (soft memberships of a seeded k-means), spectral (soft memberships of a seeded k-means of the normalised rows of the sparse P's leading eigenvectors, docs/spectral.md), random (uniform rows, normalized), corners (random one-hot rows), or auto: spectral on a sparse P whose eigengap (1-λ_{k+1})/(1-λ_k) is at least "+fmt.Sprint(solver.AutoEigengap)+", else kmeans when the features are at hand, else random (docs/spectral.md)")
	fs.Float64Var(&c.tol, m.atLeast(0, "tol"), solver.DefaultTol, "stop when the Frank-Wolfe gap is <= this")
	fs.Float64Var(&c.run.Ftol, m.option("Ftol", "ftol"), 0, "stop when the objective changes by less than this between iterations (0: off)")
	fs.Float64Var(&c.run.Rtol, m.option("Rtol", "rtol"), 0, "stop when the Frank-Wolfe gap is <= this times the objective (0: off)")
	fs.Float64Var(&c.mtol, m.atLeast(0, "mtol"), solver.DefaultMtol, "stop when the Frank-Wolfe gap is <= this times ¼||WᵀW||_F², the objective's term in W alone, which unlike the objective grows as n²/k (0: off)")
	fs.Float64Var(&c.run.Frtol, m.option("Frtol", "frtol"), 0, "stop when the objective changes by at most this times its value over an iteration (0: off)")
	fs.Var(durationFlag{&c.run.MaxTime}, m.option("MaxTime", m.mutable("max-time")), "stop after `DURATION` (for example 30m), with a checkpoint to resume from and the best W so far as the answer (0: no limit)")
	fs.IntVar(&c.maxIter, m.atLeast(0, m.mutable("max-iter")), solver.DefaultMaxIter, "stop after this many iterations")
	fs.IntVar(&c.refresh, m.atLeast(0, m.needs("refresh", needRefresh)), solver.DefaultRefresh, "fw, rowcd: recompute P·W by a full pass every this many iterations (0: only when a stop is checked and at the end)")
	fs.IntVar(&c.run.Starts, m.option("Starts", "starts"), 0, fmt.Sprintf("solve from `R` seeded initial points on the one P and keep the lowest objective, ties to the lower start (0: for a sparse P %d up to %d rows, fewer above, see docs/quality.md; for the dense kernel 1; -method kmeans: k-means starts, %d if 0 or 1)", solver.DefaultStartsMax, solver.StartsFullRows, solver.KMeansStarts))
	fs.IntVar(&c.run.Starts, "restarts", 0, "the former name of -starts (not both)")
	fs.IntVar(&c.run.InitStarts, m.option("InitStarts", m.needs("init-starts", needKMStart)), 0, fmt.Sprintf("-init kmeans: k-means++ starts of each initial point; the one of least inertia gives the start (0: 1, or, above %d rows, %d on a sample of %d rows, the best refined over all rows)", solver.SampleStarts*solver.InitSampleRows, solver.SampleStarts, solver.InitSampleRows))
	fs.IntVar(&c.run.CheckpointEvery, m.option("CheckpointEvery", m.mutable("checkpoint-every")), 0, "fw and rowcd: save a checkpoint in the work directory every `N` iterations (0: only when stopped by a signal)")
	fs.StringVar(&c.out, m.mutable(m.file("out")), "", "write memberships to `FILE.csv`, FILE.parquet or FILE.arrow (Arrow IPC file): id, w1..wk, cluster")
	fs.StringVar(&c.run.Model, m.needs(m.mutable(m.file("model")), needModel), "", "save the model in `DIR` (written atomically; read-only to any number of readers), for ssnmf predict to assign new rows: the features, W, WᵀW and the affinity's settings")
	fs.StringVar(&c.summary, m.mutable(m.file("summary")), "", "write the run summary to `FILE.json`")
	fs.StringVar(&c.trace, m.mutable(m.file("trace")), "", "write one row per iteration to `FILE.csv`")
	fs.BoolVar(&c.quiet, m.mutable("q"), false, "no progress on stderr")
	// Last: its usage lists the flags marked mutable, in the order defined.
	engineFlags(fs, &c.kernelConfig, m, m.mutable)
	fs.StringVar(&c.resume, "resume", "", "continue the fw or rowcd run whose checkpoint is in `DIR`, with its settings (a run that has finished is reported, and nothing is rewritten); only "+
		m.mutableList()+" may change")
	return c, fs, solveFlags{features, precision, weights, step}
}

// checkValues checks the values of solve that solver.Options.Check
// (checkOptions) leaves, and that at most one INPUT (pos) is given.
func (c *config) checkValues(pos []string) error {
	info, _ := methods.Lookup(c.run.Method)
	switch {
	case len(pos) > 1:
		return usagef("solve takes at most one INPUT, have %d: %s", len(pos), strings.Join(pos, " "))
	case c.run.CheckpointEvery > 0 && !info.Checkpoints:
		return usagef("-checkpoint-every: -method %s saves no checkpoints (%s do)", c.run.Method, checkpointers())
	case c.out != "" && input.TableFormat(c.out) == "":
		return usagef("-out %s: unknown extension, want .csv, .parquet or .arrow", c.out)
	}
	return nil
}

// methodUsage returns the usage of -method, from the table of methods.
func methodUsage() string {
	var b strings.Builder
	for i, m := range methods.All() {
		switch {
		case i == len(methods.All())-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", m.Name, m.Doc)
	}
	return b.String()
}

// checkpointers returns the names of the methods that save checkpoints,
// as "fw and rowcd".
func checkpointers() string {
	names := methods.With(func(m methods.Method) bool { return m.Checkpoints })
	slices.Sort(names)
	return strings.Join(names, " and ")
}

// The engines of -engine.
const (
	engineLocal = "local"
	engineSlurm = "slurm"
)

// engineFlags defines -engine, -tasks and -retries on fs, their names
// passed through mark.
func engineFlags(fs *flag.FlagSet, kc *kernelConfig, marks *flagMarks, mark func(string) string) {
	fs.StringVar(&kc.engine, mark("engine"), engineLocal, "where the O(n²) work runs: local, on -workers goroutines, or slurm, as job steps of the Slurm allocation (salloc or sbatch) this runs in: the kNN search (the approximate one's rounds of leaf pairs), or the passes of -affinity gaussian with -method fw (docs/guide/slurm.md)")
	fs.IntVar(&kc.tasks, marks.needs(mark("tasks"), needSlurm), envInt("SLURM_NTASKS"), "-engine slurm: the tasks of each step ($SLURM_NTASKS in an allocation)")
	fs.IntVar(&kc.retries, marks.needs(mark("retries"), needSlurm), 2, "-engine slurm: launch a failed step again up to this many times")
}

// checkEngine checks -engine, -tasks and -retries.
func (kc *kernelConfig) checkEngine() error {
	switch {
	case kc.engine == engineLocal:
		return nil
	case kc.engine != engineSlurm:
		return usagef("-engine %q: want %s or %s", kc.engine, engineLocal, engineSlurm)
	case os.Getenv("SLURM_JOB_ID") == "":
		return usagef("-engine slurm runs inside a Slurm allocation, and SLURM_JOB_ID is not set: start it with salloc or sbatch")
	case kc.tasks < 1:
		return usagef("-engine slurm: -tasks is %d and SLURM_NTASKS is not set: give -tasks", kc.tasks)
	case kc.retries < 0:
		return usagef("-retries must be >= 0, have %d", kc.retries)
	}
	return nil
}

// slurmCheckpointEvery is -checkpoint-every of a run whose passes are
// steps, unless given: a step that fails for good ends the run, which then
// resumes from the last checkpoint.
const slurmCheckpointEvery = 5

// checkMethod checks -engine against the method, given the flags set. With
// -engine slurm the Gaussian kernel's passes run as steps, which have no
// row sweeps: the method is then fw unless -method says otherwise, and a
// checkpoint is saved every slurmCheckpointEvery iterations unless
// -checkpoint-every says otherwise.
func (c *config) checkMethod(set map[string]bool) error {
	if c.engine != engineSlurm || !c.gaussian() {
		return nil
	}
	if !set["method"] {
		c.run.Method = "fw"
	}
	if !set["checkpoint-every"] && c.run.Method == "fw" {
		c.run.CheckpointEvery = slurmCheckpointEvery
	}
	if c.run.Method == "rowcd" {
		return usagef("-engine slurm with -affinity gaussian: -method rowcd needs row sweeps, and the steps give whole passes: use -method fw (docs/guide/slurm.md)")
	}
	return nil
}

// envInt returns the integer in the environment variable name, 0 if it is
// not set or not an integer.
func envInt(name string) int { return envIntOr(name, 0) }

// envIntOr returns the integer in the environment variable name, or def if
// it is not set or not an integer.
func envIntOr(name string, def int) int {
	v, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return def
	}
	return v
}

// fs returns the file system of the outputs and checkpoints.
func (kc *kernelConfig) fs() vfs.FS {
	if kc.fsys == nil {
		return vfs.OS{}
	}
	return kc.fsys
}
