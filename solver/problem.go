package solver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

// Problem is what a run solves: its input table and the P built of it.
type Problem struct {
	// Table is the input; nil when P was read from a file without the
	// features.
	Table *store.Table
	*affinity.Built
	// InputSum is the CRC-32C of the features as read, before any were
	// standardized, which a checkpoint keeps; 0 if not taken.
	InputSum uint32
	// Mean and Std are the standardization of the raw features, kept for
	// a model (NewProblem's moments); nil otherwise.
	Mean, Std []float64
	// Read is the time Open took to read the input.
	Read time.Duration
	// ownTable: the problem's Close closes Table (Open read it).
	ownTable bool
}

// Close releases P and, for a problem Open made, the table it read.
func (pr *Problem) Close() error {
	err := pr.Built.Close()
	if pr.ownTable && pr.Table != nil {
		err = errors.Join(err, pr.Table.Close())
	}
	return err
}

// NewProblem builds P of tab for spec (affinity.Build, which standardizes
// the features in place if spec says so); with moments, it first keeps
// the features' means and deviations, for a model. tab may be nil when
// spec.File is given.
func NewProblem(ctx context.Context, tab *store.Table, spec affinity.Spec, moments bool) (*Problem, error) {
	pr := &Problem{Table: tab}
	if moments && tab != nil {
		pr.Mean, pr.Std = tile.Moments(tab.Features, tab.N, tab.P)
	}
	var err error
	if pr.Built, err = affinity.Build(ctx, tab, spec); err != nil {
		return nil, err
	}
	return pr, nil
}

// Setup is where and with what hooks a run builds its problem
// (Options.Problem).
type Setup struct {
	// Dir is the work directory (Options.Spec), Name names the input in
	// errors, and Scratch is the bytes of the kNN search's scratch in
	// memory (Budget.Scratch).
	Dir, Name string
	Scratch   int64
	// Saved, for a resumed run, is its checkpoint's settings: the features
	// as read are checked against them (Saved.CheckInput) before P is
	// built, a *CheckpointError if they differ.
	Saved *Saved
	// Moments keeps the standardization of the features, for a model
	// (NewProblem).
	Moments bool
	// InputRead, if not nil, is called once the input is read and
	// checked, before P is built; its error ends the set-up.
	InputRead func(tab *store.Table) error
	// Progress, Round and Engine are the caller's hooks of P's passes and
	// of the approximate kNN search's rounds, and the engine P's O(n²)
	// work runs on (affinity.Spec.Progress, graph.KNNOptions.Round,
	// affinity.Spec.Engine); nil for none, and the local engine.
	Progress func(pass string, done, total int)
	Round    func(round int, r graph.KNNRound)
	Engine   affinity.Engine
}

// Problem builds the problem of o on tab (nil when P is read from
// o.File without the features) as s says: it takes the CRC-32C of the
// features as read (Problem.InputSum), checks it against s.Saved's, and
// builds P of o.Spec with the hooks of s (NewProblem), K of the mass rules
// resolved (Options.Clusters).
func (o Options) Problem(ctx context.Context, tab *store.Table, s Setup) (*Problem, error) {
	var sum uint32
	if tab != nil {
		sum = InputSum(tab) // of the features before Build standardizes them
		if s.Saved != nil {
			if err := s.Saved.CheckInput(sum, tab.N); err != nil {
				return nil, &CheckpointError{err}
			}
		}
		o.K, _ = o.Clusters(tab) // 0 without labels: the mass rules' error
	}
	if s.InputRead != nil {
		if err := s.InputRead(tab); err != nil {
			return nil, err
		}
	}
	spec, err := o.Spec(s.Dir, s.Name, s.Scratch)
	if err != nil {
		return nil, err
	}
	spec.Progress, spec.Engine = s.Progress, s.Engine
	if spec.Graph != nil {
		spec.Graph.Round = s.Round
	}
	pr, err := NewProblem(ctx, tab, spec, s.Moments)
	if err != nil {
		return nil, err
	}
	pr.InputSum = sum
	return pr, nil
}

// An InputError is the error of an input that Open cannot read as a
// table (store/input's Error).
type InputError = input.Error

// Open reads the input in into the work directory s.Dir (Input.Table;
// no table when o.File gives P without the features) and builds its
// problem as Problem does; a table that cannot be read is an *InputError.
// The problem owns the table: its Close closes both.
func (o Options) Open(ctx context.Context, in Input, s Setup) (*Problem, error) {
	begin := time.Now()
	tab, err := in.table(s.Dir, o.Workers)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	read := time.Since(begin)
	pr, err := o.Problem(ctx, tab, s)
	if err != nil {
		if tab != nil {
			tab.Close()
		}
		return nil, err
	}
	pr.Read, pr.ownTable = read, true
	return pr, nil
}

// SaveModel saves the model of the run, whose W is the answer, in the
// directory dir, atomically (model.Build, model.Save), the record's input
// named input; an error names the directory.
func (r *Run) SaveModel(ctx context.Context, dir, input string) (*model.Meta, error) {
	meta, arrays, err := model.Build(ctx, r.Training(input))
	if err != nil {
		return nil, fmt.Errorf("model directory %s: %w", dir, err)
	}
	return meta, model.Save(dir, meta, arrays)
}

// Training returns what a model of the run needs (package model): the
// features as P used them, the standardization, W (in P's order of the
// rows), the affinity's settings, and the record's input (named input)
// and method.
func (r *Run) Training(input string) model.Training {
	o, pr, tab := r.Options, r.Problem, r.Problem.Table
	t := model.Training{X: tab.Features, N: tab.N, P: tab.P, W: r.Workspace.W, K: o.K, Names: tab.Names,
		Mean: pr.Mean, Std: pr.Std, Seed: o.Seed, Workers: o.Workers, Input: input, Method: o.Method}
	if g := pr.Graph(); g != nil {
		t.Graph, t.Neighbors, t.Weights, t.Scale = g, o.Neighbors, o.Weights(), pr.Scale
		t.Search = pr.DescribeSearch()
		if pr.KNN.Method == graph.Approximate {
			t.Leaf = cmp.Or(pr.KNN.Leaf, graph.DefaultLeaf)
		}
	} else {
		t.Gamma = pr.Gamma
	}
	return t
}
