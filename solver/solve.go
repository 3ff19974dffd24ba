package solver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/tile"
)

// GraphFile is the name of a sparse P's CSR file in a work directory, where
// a resumed run finds its kNN graph.
const GraphFile = "graph.csr"

// Result is the outcome of a solve: the memberships of the best start and
// the record of every start.
type Result struct {
	N, K int
	// W holds the memberships, n×k row-major, in the input's order of the
	// rows: row i sums to 1 (but for the penalty method's).
	W []float64
	// Objective, Gap, Iterations and Status are the best start's.
	Objective, Gap float64
	Iterations     int
	Status         fw.Status
	// Passes counts the passes over P of every start.
	Passes int
	// Starts are the starts that ended, in order; Best indexes the one
	// whose W is the answer.
	Starts []Start
	Best   int
	// Scale is the factor P was scaled by (a sparse P's), and Affinity
	// describes P as the command's progress line does.
	Scale    float64
	Affinity string
	// Trace holds the record of every iteration of every start, in order.
	Trace []Record
}

// Start is the outcome of one start.
type Start struct {
	Seed       uint64
	Objective  float64
	Gap        float64
	Iterations int
	Status     fw.Status
}

// Record is the record of one iteration of a start.
type Record struct {
	Start int
	fw.Iteration
}

// Cluster returns the cluster of row i, its largest membership (the lowest
// cluster on ties).
func (r *Result) Cluster(i int) int { return store.Argmax(r.Row(i)) }

// Row returns the memberships of row i, a slice of W.
func (r *Result) Row(i int) []float64 { return r.W[i*r.K : (i+1)*r.K] }

// Solve clusters the rows of in by simplicial symmetric NMF with the
// settings of opt: it builds P (package affinity), scales it, solves from
// every start and returns the memberships of the least objective. It is
// ssnmf solve without the files, the checkpoints and the progress lines:
// the same input and options give the command's bits.
func Solve(ctx context.Context, in Input, opt Options) (_ *Result, err error) {
	if opt, err = opt.withDefaults(); err != nil {
		return nil, err
	}
	dir, remove, err := opt.workdir()
	if err != nil {
		return nil, err
	}
	defer remove()
	tab, err := in.table(dir)
	if err != nil {
		return nil, err
	}
	defer tab.Close()
	s, err := newSolve(ctx, tab, opt, dir, in.display())
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.run(ctx)
}

// solve is one run of Solve: the table, P and the workspace.
type solve struct {
	opt       Options
	info      methods.Method
	tab       *store.Table
	built     *affinity.Built
	meter     *Meter
	ws        *Workspace
	mean, std []float64 // the standardization, for a model
	sizesKM   *kmeans.Result
	res       *Result
	name      string // the input's, for errors and the model
}

// newSolve builds P of tab and scales it, and makes the workspace in dir.
func newSolve(ctx context.Context, tab *store.Table, opt Options, dir, name string) (*solve, error) {
	if opt.K == 0 {
		if tab.Labels == nil {
			return nil, errors.New("Options.K is required: the input has no label column to take the number of classes from")
		}
		opt.K = len(tab.Classes)
	}
	if opt.K >= tab.N {
		return nil, fmt.Errorf("Options.K = %d is not below the %d rows: a clustering needs fewer clusters than rows", opt.K, tab.N)
	}
	s := &solve{opt: opt, tab: tab, name: name, res: &Result{N: tab.N, K: opt.K}}
	s.info, _ = methods.Lookup(opt.Method)
	if s.info.Graph {
		return nil, fmt.Errorf("Options.Method %s is not available in package solver yet: use ssnmf solve", opt.Method)
	}
	if opt.Model != "" && !opt.Raw {
		s.mean, s.std = tile.Moments(tab.Features, tab.N, tab.P)
	}
	budget, err := NewBudget(opt.Memory)
	if err != nil {
		return nil, fmt.Errorf("Options.Memory: %w", err)
	}
	spec := affinity.Spec{GammaRule: affinity.Neighbor, Clusters: opt.K, Standardize: !opt.Raw,
		BlockSize: tile.DefaultBlockSize, Workers: opt.Workers, Seed: opt.Seed, Name: name}
	if !opt.Gaussian {
		spec.Graph = &graph.KNNOptions{Neighbors: opt.Neighbors, Weights: graph.SelfTuning,
			Recall: graph.DefaultRecall, Probes: graph.DefaultProbes, Rounds: graph.DefaultRounds, LeafRounds: graph.DefaultLeafRounds,
			ScratchMemory: budget.Scratch}
		spec.GraphFile = filepath.Join(dir, GraphFile)
	}
	if s.built, err = affinity.Build(ctx, tab, spec); err != nil {
		return nil, err
	}
	if err := s.scale(ctx); err != nil {
		s.built.Close()
		return nil, err
	}
	s.meter = &Meter{Affinity: s.built.Affinity}
	if s.ws, err = NewWorkspace(dir, tab.N, opt.K, budget.Scratch); err != nil {
		s.built.Close()
		return nil, err
	}
	return s, nil
}

func (s *solve) close() {
	s.ws.Close()
	s.built.Close()
}

// scale scales a sparse P to twice the mass of the clusters of the
// k-means start of the run's seed, the command's default (-scale auto:2).
func (s *solve) scale(ctx context.Context) error {
	if s.built.Graph() == nil {
		return nil
	}
	km, err := kmeans.Cluster(ctx, s.tab.Features, s.tab.N, s.tab.P, s.opt.K, s.kmeansStart(s.opt.Seed))
	if err != nil {
		return fmt.Errorf("the scale's k-means start: %w", err)
	}
	s.sizesKM = km
	if err := s.built.ScaleToSizes(km.Sizes, fmt.Sprintf("the k-means start of seed %d", s.opt.Seed)); err != nil {
		return err
	}
	return s.built.MultiplyScale(DefaultScaleTimes)
}

func (s *solve) kmeansStart(seed uint64) kmeans.Settings {
	return KMeansStart(s.tab.N, s.tab.P, s.opt.K, 0, s.opt.Workers, seed, s.built.Order)
}

// run solves from every start, keeps the least objective (ties to the
// lower start) and saves the model if asked.
func (s *solve) run(ctx context.Context) (*Result, error) {
	st := &Starts{N: s.opt.Starts, Seed: s.opt.Seed, Start: s.start, Ended: s.ended,
		KeepBest: func(i int, _ *fw.Result) error { s.res.Best = i; return s.ws.KeepBest() }}
	switch {
	case s.info.OwnStart:
		st.N = 1 // the method's starts are its clustering's
	case st.N == 0:
		st.N = StartsFor(s.info, s.built.Graph() != nil, s.tab.N)
	}
	res, err := st.Run(ctx)
	switch {
	case err != nil:
		return nil, ctxErr(ctx, err)
	case res.Status == fw.Stopped:
		return nil, errors.New("the solve was stopped")
	}
	if st.N > 1 {
		copy(s.ws.W, s.ws.Best)
	}
	return s.finish(ctx)
}

// ended records start i, seeded by seed, which ended in res.
func (s *solve) ended(_ int, seed uint64, res *fw.Result) {
	s.res.Starts = append(s.res.Starts, Start{Seed: seed, Objective: res.Objective, Gap: res.Gap, Iterations: res.Iterations, Status: res.Status})
}

// start solves start i, seeded by seed, from its initial point.
func (s *solve) start(ctx context.Context, i int, seed uint64) (*fw.Result, error) {
	o, ws := s.opt, s.ws
	if s.info.OwnStart {
		if err := fw.Initialize(ws.W, o.K, fw.StartCorners, o.Seed); err != nil {
			return nil, err
		}
	} else if err := s.initialize(ctx, seed); err != nil {
		return nil, err
	}
	set := methods.Settings(o.Tol, 0, o.MaxIter, DefaultRefresh)
	set.Workers, set.PW, set.ModelGapTol = o.Workers, ws.PW, o.Mtol
	set.Recorder = func(it fw.Iteration) error {
		s.res.Trace = append(s.res.Trace, Record{Start: i, Iteration: it})
		return nil
	}
	p := methods.Params{Moves: DefaultMoves, BlockSize: s.built.BlockSize, StripMemory: DefaultStripMemory, Scratch: ws.PS,
		Features: s.tab.Features, Dim: s.tab.P}
	if s.tab.N <= graph.ApproxMinRows {
		p.Visit = InputOrderVisits(s.built.Order)
	}
	p.KMeans = kmeans.Settings{Starts: cmpStarts(o.Starts), Seed: o.Seed, Workers: o.Workers, MaxIter: o.MaxIter, Order: s.built.Order}
	return fw.Minimize(ctx, fw.Problem{P: s.meter, K: o.K}, ws.W, &set, s.info.New(p))
}

// cmpStarts is the k-means starts of a method that makes its own W: the
// starts given, KMeansStarts if 0 or 1.
func cmpStarts(starts int) int {
	if starts <= 1 {
		return KMeansStarts
	}
	return starts
}

// initialize sets W to the soft memberships of the k-means start seeded by
// seed, with the bandwidth of the neighbor rule; the scale's clustering
// serves the start of the run's seed.
func (s *solve) initialize(ctx context.Context, seed uint64) error {
	km := s.sizesKM
	if km == nil || seed != s.opt.Seed {
		var err error
		if km, err = kmeans.Cluster(ctx, s.tab.Features, s.tab.N, s.tab.P, s.opt.K, s.kmeansStart(seed)); err != nil {
			return fmt.Errorf("the k-means start: %w", err)
		}
	}
	return km.Soft(s.ws.W, s.tab.Features, s.built.Gamma)
}

// finish fills the result from the best W, in the input's order, and
// saves the model.
func (s *solve) finish(ctx context.Context) (*Result, error) {
	r := s.res
	b := r.Starts[r.Best]
	r.Objective, r.Gap, r.Iterations, r.Status = b.Objective, b.Gap, b.Iterations, b.Status
	r.Passes, r.Scale, r.Affinity = s.meter.Passes, s.built.Scale, s.built.Describe()
	w, err := s.ws.InputOrder(s.built.Order)
	if err != nil {
		return nil, err
	}
	r.W = append([]float64(nil), w...)
	if s.opt.Model == "" {
		return r, nil
	}
	t := Training(s.tab, s.built, s.ws.W, s.opt.K, s.opt.Neighbors, graph.SelfTuning)
	t.Mean, t.Std, t.Seed, t.Workers, t.Input, t.Method = s.mean, s.std, s.opt.Seed, s.opt.Workers, s.name, s.opt.Method
	meta, arrays, err := model.Build(ctx, t)
	if err == nil {
		err = model.Save(s.opt.Model, meta, arrays)
	}
	if err != nil {
		return nil, fmt.Errorf("Options.Model %s: %w", s.opt.Model, err)
	}
	return r, nil
}

// Training returns what a model of the solve of tab on P needs (package
// model): the features as P used them, W (n×k, in P's order of the rows)
// and the affinity's settings; the caller sets the standardization, the
// seed, the workers and the record's input and method.
func Training(tab *store.Table, p *affinity.Built, w []float64, k, neighbors int, weights graph.Weights) model.Training {
	t := model.Training{X: tab.Features, N: tab.N, P: tab.P, W: w, K: k, Names: tab.Names}
	if g := p.Graph(); g != nil {
		t.Graph, t.Neighbors, t.Weights, t.Scale = g, neighbors, weights, p.Scale
		t.Search = p.DescribeSearch()
		if p.KNN.Method == graph.Approximate {
			t.Leaf = cmp.Or(p.KNN.Leaf, graph.DefaultLeaf)
		}
	} else {
		t.Gamma = p.Gamma
	}
	return t
}
