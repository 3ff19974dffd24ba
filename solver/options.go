package solver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

// The defaults of the stop rules and of rowcd, as ssnmf solve's flags
// have them (-tol, -mtol, -max-iter, -refresh, -moves, -strip-memory);
// docs/quality.md gives the measurements behind the relative ones.
const (
	DefaultTol         = 1e-6
	DefaultMtol        = 1e-3
	DefaultMaxIter     = 1000
	DefaultRefresh     = 100
	DefaultMoves       = 3
	DefaultStripMemory = 512 << 20
)

// DefaultScaleTimes is the multiple of the default scale of a sparse P:
// twice the sizes rule's factor (twice the mass rule's without the
// features), which the leave-sets-out study of docs/quality.md chose.
const DefaultScaleTimes = 2

// Input is the table to cluster: exactly one of Rows, Record, Path and
// CSV, or none when Options.File gives P without the features.
type Input struct {
	// Rows are the feature rows, each of the same length; they are
	// copied, never changed.
	Rows [][]float64
	// Record is an Arrow record batch of numeric feature columns and an
	// optional label column.
	Record arrow.RecordBatch
	// Path is a CSV (optionally gzipped), Parquet or Arrow file in
	// Format, one of store/input's (input.Formats): "" or input.Auto tells
	// it by the file's first bytes, then its extension.
	Path   string
	Format string
	// CSV is a CSV table read from a stream (store.ParseCSV).
	CSV io.Reader
	// Features lists the feature columns of Record, Path or CSV; nil
	// means every column but the label.
	Features []string
	// Label names the ground-truth column of Record, Path or CSV, never a
	// feature; "" means "label" if there is one.
	Label string
	// Name names the input in errors; "rows", "record", Path or "csv" if
	// "".
	Name string
}

// Options are the settings of a solve, as ssnmf solve's flags of the same
// names have them. The zero value is the command's defaults: k-means
// starts on the self-tuning kNN graph of the standardized features, scaled
// to twice the mass of the k-means start's clusters, solved by rowcd until
// the gap is at most DefaultMtol of ¼||WᵀW||². A stop rule or bound whose
// zero is its default is turned off by a negative value.
type Options struct {
	// K is the number of clusters, fewer than the rows; 0 takes the
	// number of classes of the input's label column.
	K int
	// Method names the method (methods.List); "" is methods.Default.
	// spectral, like Init spectral, needs a sparse P (not Gaussian).
	Method string
	// Gaussian makes P the Gaussian kernel of the features, with the
	// neighbor rule's bandwidth, instead of their kNN graph.
	Gaussian bool
	// Neighbors is the kNN graph's neighbours of a row, the row itself
	// included; 0 is graph.DefaultNeighbors.
	Neighbors int
	// Raw keeps the features as they are; by default each is z-scored.
	Raw bool
	// Starts is the number of seeded starts, the least objective kept;
	// 0 is StartsFor's.
	Starts int
	// Seed seeds the starts and the bandwidth's sample.
	Seed uint64
	// Workers is the goroutines of the passes; 0 is GOMAXPROCS. Any
	// number gives the same bits.
	Workers int
	// MaxIter is the most iterations of a start; 0 is DefaultMaxIter, a
	// negative value no limit.
	MaxIter int
	// Tol stops a start when the gap is at most Tol; 0 is DefaultTol, a
	// negative value only at a gap of 0 (the smallest above it).
	Tol float64
	// Mtol stops a start when the gap is at most Mtol·¼||WᵀW||²; 0 is
	// DefaultMtol, a negative value turns the rule off.
	Mtol float64
	// Workdir is the directory of the memory-mapped matrices and the
	// kNN graph, which no other run may use at the same time; "" makes a
	// temporary one, removed before Solve returns.
	Workdir string
	// Model, if not "", is the directory a model of the solve is saved
	// in, for model.Open and Predict. Solve refuses, before it reads the
	// input, a Model that no model could be saved in, as ssnmf solve
	// refuses its -model: a run whose model could not predict
	// (ModelNeeds), a Workdir that is the Model or inside it, a parent
	// that is not a directory, or a directory that model.CanSave refuses.
	Model string
	// Memory is the memory budget in bytes, as -mem (NewBudget): 0 takes
	// the memory cgroup's limit, or none. Its scratch share holds the kNN
	// search's scratch, then the Workspace, in anonymous memory; what does
	// not fit goes to files of the work directory. Solve does not hold the
	// Go heap to its share (Budget.Apply).
	Memory int64
	// Init is the initial point of a start: InitAuto (the default ""),
	// InitKMeans (the soft memberships of a seeded k-means of the
	// features), InitSpectral (of a seeded k-means of a sparse P's
	// approximate spectral embedding), or a fw.Start by name (random,
	// corners). InitAuto is InitSpectral on a sparse P whose eigengap is
	// at least AutoEigengap, else InitKMeans, or random without the
	// features (Run.InitRule says which).
	Init string
	// InitStarts is the k-means++ starts of each k-means initial point,
	// the one of least inertia kept; 0 is KMeansStart's.
	InitStarts int
	// Step is fw's step rule; the zero value is fw.StepExact.
	Step fw.StepRule
	// Ftol stops a start when the objective changes by less than Ftol
	// between iterations; Rtol when the gap is at most Rtol times the
	// objective; Frtol when the objective changes by at most Frtol times
	// its value. 0 turns each off.
	Ftol, Rtol, Frtol float64
	// MaxTime stops the run once it has run this long, counted from
	// Run.Begin (Solve: its call), the best W so far the answer; 0 is no
	// limit.
	MaxTime time.Duration
	// Refresh recomputes P·W by a full pass every Refresh iterations (fw,
	// rowcd); 0 is DefaultRefresh, a negative value only when a stop is
	// checked and at the end.
	Refresh int
	// Moves is rowcd's pairwise moves per row visit; 0 is DefaultMoves.
	Moves int
	// StripMemory is the bytes of a strip of a dense P for rowcd; 0 is
	// DefaultStripMemory, a negative value no bound.
	StripMemory int64
	// SweepOrder is the order of rowcd's visits on rows the approximate
	// kNN search moved: SweepPartition, SweepInput, or SweepAuto (the
	// default "": the input's up to graph.ApproxMinRows rows).
	SweepOrder string
	// Scale is the rule of a sparse P's scale; the zero Scale is
	// DefaultScaleTimes times the sizes rule's factor.
	Scale Scale
	// CheckpointEvery saves a checkpoint of fw and rowcd in the work
	// directory every this many iterations, and at MaxTime (0: none but a
	// Run's when stopped).
	CheckpointEvery int
	// Resume goes on from the checkpoint of a Solve in Workdir, of a run
	// of the same input and settings, to the bits of a run never stopped.
	// The checkpoint keeps the Options that shape the result (Saved.Args),
	// and Resume refuses, before it reads the input, a call whose Options
	// differ, naming the first field that does and both values: only
	// Workers, Memory, Kernel, MaxIter, MaxTime, CheckpointEvery and Model
	// may change, as ssnmf solve -resume allows its flags of them, and K
	// may be 0 (the checkpoint's). The fields are compared with their
	// defaults filled in but as given: a Starts of 0 or an Init of auto
	// is not the value it resolves to. A checkpoint of ssnmf solve, whose
	// settings are a command line, is refused (ssnmf solve -resume goes on
	// from it), as is one that keeps no Options (a Run's, or a Solve's of
	// an earlier release); ssnmf solve -resume refuses a checkpoint of
	// Solve in turn.
	Resume bool

	// File, if not "", is P's file, a tile file (ssnmf tiles) or an edge
	// list, instead of the features' kNN graph or Gaussian kernel; Rows
	// is an edge list's rows without the features, 0 taking them from
	// its ids.
	File string
	Rows int
	// Gamma is the Gaussian kernel's bandwidth; 0 takes it from GammaRule
	// (whose zero value is affinity.Neighbor), which also gives the
	// bandwidth of the k-means start's memberships on any P.
	Gamma     float64
	GammaRule affinity.Rule
	// Precision is the Gaussian kernel's values' (zero: float64), and
	// BlockSize the edge of its tiles (0: tile.DefaultBlockSize).
	Precision tile.Precision
	BlockSize int
	// Kernel is the family of the vector kernels; the zero value is the
	// fastest this CPU runs.
	Kernel tile.ISA
	// Connectivity makes the kNN graph's weights 1 instead of self-tuning.
	Connectivity bool
	// KNN is the kNN graph's search (zero: graph.Auto). KNNRecall,
	// KNNProbes and KNNRounds are the approximate search's recall target,
	// effort and most rounds, 0 their graph.Default values; KNNDescent is
	// its leaf rounds before neighbour descent, 0 graph.DefaultLeafRounds,
	// a negative value no descent.
	KNN                              graph.KNNMethod
	KNNRecall                        float64
	KNNProbes, KNNRounds, KNNDescent int
}

// ErrNoLabels is the error of Options.K 0 on an input without a label
// column to take the number of classes from.
var ErrNoLabels = errors.New("no label column to take the number of classes from")

// Clusters returns the number of clusters of o on the input tab: K, or if
// K is 0 the number of classes of tab's label column; ErrNoLabels if it
// has none (or tab is nil, P's file read without the features).
func (o Options) Clusters(tab *store.Table) (int, error) {
	switch {
	case o.K != 0:
		return o.K, nil
	case tab == nil || tab.Labels == nil:
		return 0, ErrNoLabels
	}
	return len(tab.Classes), nil
}

// The initial points of Options.Init that are not a fw.Start.
const (
	InitAuto     = "auto"
	InitKMeans   = "kmeans"
	InitSpectral = "spectral"
)

// The orders of Options.SweepOrder.
const (
	SweepAuto      = "auto"
	SweepPartition = "partition"
	SweepInput     = "input"
)

// The rules of Scale.Rule: ScaleSizes makes P's mass Σ_j n_j², that of the
// clusters of the k-means start of the run's seed; ScaleMass n²/k, that of
// k balanced clusters (applied as P is built); ScaleAuto is ScaleSizes
// for a sparse P whose features are at hand, else ScaleMass.
const (
	ScaleMass  = "mass"
	ScaleSizes = "sizes"
	ScaleAuto  = "auto"
)

// Scale is the scale of a sparse P, as ssnmf solve's -scale: a factor, or
// a rule and a multiple of its factor. The zero Scale is ScaleAuto times
// DefaultScaleTimes.
type Scale struct {
	// Factor, if > 0, is the factor itself, applied as P is built; the
	// rules are then off.
	Factor float64
	// Rule is ScaleAuto, ScaleSizes or ScaleMass; "" is the default.
	Rule string
	// Times multiplies the rule's factor; 0 is 1, or DefaultScaleTimes
	// with the default Rule.
	Times float64
}

// ParseScale parses a Scale as ssnmf solve's -scale has it: a factor
// F > 0, or a rule (ScaleMass, ScaleSizes or ScaleAuto) optionally
// followed by ":F", F > 0 times the rule's factor.
func ParseScale(s string) (Scale, error) {
	rule, times, multiple := strings.Cut(s, ":")
	v := Scale{Rule: rule}
	switch rule {
	case ScaleMass, ScaleSizes, ScaleAuto:
	default:
		x, ok := positive(s)
		if !ok {
			return Scale{}, fmt.Errorf("want a positive number, mass, sizes or auto, each rule optionally followed by :F (F > 0 times its factor), have %q", s)
		}
		return Scale{Factor: x}, nil
	}
	if multiple {
		x, ok := positive(times)
		if !ok {
			return Scale{}, fmt.Errorf("want %s:F with a number F > 0, the multiple of the rule's factor, have %q", rule, s)
		}
		v.Times = x
	}
	return v, nil
}

// positive parses s as a finite number > 0.
func positive(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && v > 0 && !math.IsInf(v, 0)
}

// rules returns whether s applies the sizes rule, whether only where it
// can (auto), and the multiple of the rule's factor.
func (s Scale) rules() (sizes, auto bool, times float64) {
	times = cmp.Or(s.Times, 1)
	switch {
	case s.Factor > 0:
		return false, false, 1
	case s.Rule == "":
		return true, true, cmp.Or(s.Times, DefaultScaleTimes)
	}
	return s.Rule != ScaleMass, s.Rule == ScaleAuto, times
}

// withDefaults returns o with its zero fields set to their defaults (the
// negative values that turn a rule off stay: the settings' users take
// them as 0, off), or an error naming the field that is out of range.
// Resolved Options resolve to themselves.
func (o Options) withDefaults() (Options, error) {
	if err := o.Check(); err != nil {
		return o, err
	}
	o.Method = cmp.Or(o.Method, methods.Default)
	o.Neighbors = cmp.Or(o.Neighbors, graph.DefaultNeighbors)
	o.MaxIter = cmp.Or(o.MaxIter, DefaultMaxIter)
	o.Tol = cmp.Or(o.Tol, DefaultTol)
	o.Mtol = cmp.Or(o.Mtol, DefaultMtol)
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o.runDefaults(), nil
}

// runDefaults sets the defaults of the fields of o that shape the solve
// of P.
func (o Options) runDefaults() Options {
	o.Init = cmp.Or(o.Init, InitAuto)
	o.SweepOrder = cmp.Or(o.SweepOrder, SweepAuto)
	o.Moves = cmp.Or(o.Moves, DefaultMoves)
	o.Refresh = cmp.Or(o.Refresh, DefaultRefresh)
	o.StripMemory = cmp.Or(o.StripMemory, DefaultStripMemory)
	o.BlockSize = cmp.Or(o.BlockSize, tile.DefaultBlockSize)
	o.KNNRecall = cmp.Or(o.KNNRecall, graph.DefaultRecall)
	o.KNNProbes = cmp.Or(o.KNNProbes, graph.DefaultProbes)
	o.KNNRounds = cmp.Or(o.KNNRounds, graph.DefaultRounds)
	o.KNNDescent = cmp.Or(o.KNNDescent, graph.DefaultLeafRounds)
	return o
}

// Table reads the input into a table, its features on the heap or mapped
// into dir (a file's, if large); the table must be closed. An Input of
// none of Rows, Record, Path and CSV reads none: nil.
func (in Input) Table(dir string) (*store.Table, error) { return in.table(dir, 1) }

// table is Table with a Parquet file's columns decoded on up to workers
// goroutines.
func (in Input) table(dir string, workers int) (*store.Table, error) {
	opt := store.TableOptions{Features: in.Features, Label: in.Label, Workers: workers}
	switch n := in.given(); {
	case n == 0:
		return nil, nil
	case n > 1:
		return nil, fmt.Errorf("Input: give exactly one of Rows, Record, Path and CSV, have %d", n)
	case in.Rows != nil:
		return rowsTable(in.Rows, in.name("rows"))
	case in.CSV != nil:
		return store.ParseCSV(in.CSV, in.name("csv"), opt)
	case in.Record != nil:
		rr, err := array.NewRecordReader(in.Record.Schema(), []arrow.RecordBatch{in.Record})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.name("record"), err)
		}
		defer rr.Release()
		return store.ReadRecords(rr, in.name("record"), opt)
	}
	return input.Open(in.Path, cmp.Or(in.Format, input.Auto), opt, dir)
}

// given returns how many of Rows, Record, Path and CSV the input gives.
func (in Input) given() int {
	n := 0
	for _, g := range []bool{in.Rows != nil, in.Record != nil, in.Path != "", in.CSV != nil} {
		if g {
			n++
		}
	}
	return n
}

// display is the input's name in errors; "" for an input of none.
func (in Input) display() string {
	switch {
	case in.Path != "" && in.Name == "":
		return in.Path
	case in.Rows != nil:
		return in.name("rows")
	case in.CSV != nil:
		return in.name("csv")
	case in.Record != nil:
		return in.name("record")
	}
	return in.Name
}

func (in Input) name(def string) string {
	if in.Name != "" {
		return in.Name
	}
	return def
}

// rowsTable copies rows into a table, refusing rows of unequal length and
// values that are not finite, named by row and column.
func rowsTable(rows [][]float64, name string) (*store.Table, error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, fmt.Errorf("%s: no rows or no columns", name)
	}
	n, p := len(rows), len(rows[0])
	t := &store.Table{Features: make([]float64, 0, n*p), N: n, P: p}
	for i, r := range rows {
		if len(r) != p {
			return nil, fmt.Errorf("%s: row %d has %d values, row 0 has %d", name, i, len(r), p)
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: row %d, column %d: %v is not a finite number", name, i, j, v)
			}
		}
		t.Features = append(t.Features, r...)
	}
	for j := range p {
		t.Names = append(t.Names, fmt.Sprintf("x%d", j+1))
	}
	return t, nil
}

// workdir returns the work directory of o and a function that releases
// it: Options.Workdir, locked for this run (where the file system can
// lock), or a temporary one, removed.
func (o Options) workdir() (string, func(), error) {
	dir, temp, err := MakeWorkdir(o.Workdir, "")
	switch {
	case err != nil && o.Workdir != "":
		return "", nil, fmt.Errorf("Options.Workdir: %w", err)
	case err != nil:
		return "", nil, err
	case temp:
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	l, err := LockWorkdir(dir)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return dir, func() {}, nil
	case err != nil:
		return "", nil, fmt.Errorf("Options.Workdir %s: %w", dir, err)
	}
	return dir, func() { l.Close() }, nil
}

// ctxErr is ctx's error, if any, else err.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Spec returns the affinity.Spec of P of o, its zero fields their
// defaults: the Gaussian
// kernel, the kNN graph or the file of o, whose sparse P is kept in dir's
// GraphFile (and an edge list's mapped files in dir's "edges"), named name
// in errors, with scratch bytes of memory for the kNN search's scratch.
// The caller adds its hooks (Progress, the kNN graph's Round) and its
// Engine.
func (o Options) Spec(dir, name string, scratch int64) (affinity.Spec, error) {
	o, err := o.withDefaults()
	if err != nil {
		return affinity.Spec{}, err
	}
	spec := affinity.Spec{Gamma: o.Gamma, GammaRule: o.GammaRule, Clusters: o.K, Scale: o.Scale.Factor, Standardize: !o.Raw,
		Precision: o.Precision, BlockSize: o.BlockSize, Workers: o.Workers, Seed: o.Seed, Kernel: o.Kernel, Name: name}
	switch {
	case o.File != "":
		spec.File, spec.MapDir, spec.GraphFile, spec.Rows = o.File, filepath.Join(dir, "edges"), filepath.Join(dir, GraphFile), o.Rows
		if err := os.MkdirAll(spec.MapDir, 0o755); err != nil {
			return spec, err
		}
	case !o.Gaussian:
		spec.Graph = &graph.KNNOptions{Neighbors: o.Neighbors, Weights: o.Weights(), Method: o.KNN,
			Recall: o.KNNRecall, Probes: o.KNNProbes, Rounds: o.KNNRounds, LeafRounds: o.KNNDescent,
			ScratchMemory: scratch, Kernel: o.Kernel}
		spec.GraphFile = filepath.Join(dir, GraphFile)
	}
	return spec, nil
}

// Weights returns the kNN graph's weights of o.
func (o Options) Weights() graph.Weights {
	if o.Connectivity {
		return graph.Connectivity
	}
	return graph.SelfTuning
}
