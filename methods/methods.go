// Package methods is the table of the solver's methods by name. The
// command line and the scripts turn a name into an fw.Method here, so that
// a new method is added in one place: a row of the table.
package methods

import (
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/internal/enum"
	"github.com/ssnmf/ssnmf/kmeans"
)

// Params are the parameters a method may take from the command line; each
// method reads those that apply to it and ignores the rest.
type Params struct {
	Step        fw.StepRule    // fw: the step rule
	Moves       int            // rowcd: pairwise moves a row visit
	BlockSize   int            // rowcd: rows of a strip
	StripMemory int64          // rowcd: bytes of a strip; 0 no bound
	Progress    func(rows int) // rowcd: progress within a sweep
	Visit       []int32        // rowcd: the order of the visits (fw.RowCD.Visit); nil in order
	Window      int            // rowcd: the rows of P·W a sweep keeps current at once (fw.RowCD.Window); 0 all
	Dir         string         // rowcd: where a sweep in windows sets changes aside
	// Scratch is storage for the method's second n×k matrix (fw's P·S,
	// pgd's trial P·W, penalty's projection); nil allocates it.
	Scratch []float64

	// Features are the n×Dim feature rows, for kmeans.
	Features []float64
	Dim      int
	KMeans   kmeans.Settings // kmeans, spectral: its starts, seed, iterations and workers

	// Spectral are the normalised rows of the graph's spectral embedding
	// (n×SpectralDim, spectral.Start.Rows) and SpectralBeta the
	// bandwidth of their clusters' soft memberships, for spectral.
	Spectral     []float64
	SpectralDim  int
	SpectralBeta float64
}

// Method is a row of the table.
type Method struct {
	Name string
	// Doc is a short description, for usage texts.
	Doc string
	// Checkpoints reports whether the method saves checkpoints and
	// resumes (an fw.Checkpointer).
	Checkpoints bool
	// Features reports whether the method needs the feature rows.
	Features bool
	// Infeasible reports whether the method's W may end off the simplex
	// (negative entries, rows not summing to 1), as the penalty method's
	// does: no model can be saved from it.
	Infeasible bool
	// Graph reports whether the method needs the spectral embedding of a
	// sparse P (Params.Spectral).
	Graph bool
	// OwnStart reports whether the method makes its W itself from a
	// clustering, which replaces the start it is given: a run solves it
	// once, and its starts are the clustering's (kmeans.Settings.Starts).
	OwnStart bool
	// New returns the method with the parameters p.
	New func(p Params) fw.Method
}

// Default is the name of the default method.
const Default = "rowcd"

var table = [...]Method{
	{Name: "rowcd", Doc: "row-wise pairwise coordinate descent: an iteration is a sweep over the rows", Checkpoints: true,
		New: func(p Params) fw.Method {
			return &fw.RowCD{Moves: p.Moves, BlockSize: p.BlockSize, StripMemory: p.StripMemory, Progress: p.Progress, Visit: p.Visit, Window: p.Window, Dir: p.Dir}
		}},
	{Name: "fw", Doc: "Frank-Wolfe, the paper's method", Checkpoints: true,
		New: func(p Params) fw.Method { return &fw.FrankWolfe{Step: p.Step, PS: p.Scratch} }},
	{Name: "pgd", Doc: "projected gradient, a baseline",
		New: func(p Params) fw.Method { return &fw.PGD{PTrial: p.Scratch} }},
	{Name: "penalty", Doc: "the SOF penalty method, a baseline", Infeasible: true,
		New: func(p Params) fw.Method { return &fw.Penalty{Proj: p.Scratch} }},
	{Name: "kmeans", Doc: "k-means in feature space, a baseline", Features: true, OwnStart: true,
		New: func(p Params) fw.Method { return &fw.KMeans{X: p.Features, Dim: p.Dim, Settings: p.KMeans} }},
	{Name: "spectral", Doc: "spectral clustering of the sparse P: k-means of the rows of its normalised leading eigenvectors, with soft memberships", Graph: true, OwnStart: true,
		New: func(p Params) fw.Method {
			return &fw.KMeans{X: p.Spectral, Dim: p.SpectralDim, Settings: p.KMeans, Beta: p.SpectralBeta}
		}},
}

// All returns the methods, the default first.
func All() []Method { return table[:] }

// Names returns the methods' names, the default first.
func Names() []string {
	names := make([]string, len(table))
	for i, m := range table {
		names[i] = m.Name
	}
	return names
}

// With returns the names of the methods that have has, the default first.
func With(has func(Method) bool) []string {
	var names []string
	for _, m := range table {
		if has(m) {
			names = append(names, m.Name)
		}
	}
	return names
}

// Lookup returns the method called name.
func Lookup(name string) (Method, error) {
	for _, m := range table {
		if m.Name == name {
			return m, nil
		}
	}
	return Method{}, fmt.Errorf("unknown method %q: want %s", name, List())
}

// Settings returns the fw.Settings of stopping rules given as a command
// line gives them, where 0 means what it says rather than a default: tol 0
// stops only at a zero gap, maxIter 0 takes no iteration (the start is only
// evaluated) and refresh 0 refreshes P·W only to confirm a stop and at the
// end.
func Settings(tol, ftol float64, maxIter, refresh int) fw.Settings {
	set := fw.Settings{GapTol: tol, FuncTol: ftol, MaxIter: maxIter, Refresh: refresh}
	if tol == 0 {
		set.GapTol = math.SmallestNonzeroFloat64
	}
	if maxIter == 0 {
		set.MaxIter = -1
	}
	if refresh == 0 {
		set.Refresh = -1
	}
	return set
}

// List returns the names as "rowcd, fw, pgd, penalty, kmeans or spectral".
func List() string { return enum.List(Names()) }
