package solver

import (
	"cmp"
	"context"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/store"
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
