package solver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/spectral"
)

// AutoEigengap is the relative eigengap (1 - λ_{k+1}) / (1 - λ_k) of the
// graph's normalised affinity from which Init auto takes the spectral
// start, the k-means start below it. The threshold is the one that the
// leave-sets-out study of issue 35 picked most often among the gated
// rules, on the approximate embedding's eigengaps of its 57 sets, and was
// then confirmed on sets made after it was fixed
// (studies/spectral/README.md, "The threshold").
const AutoEigengap = 1.75

// chooseInit resolves Init auto, once: on a sparse P, for a method that
// starts from an initial point, it makes the graph's approximate spectral
// embedding and takes InitSpectral where its eigengap is at least
// AutoEigengap; elsewhere, or where the embedding's heap would not fit
// the memory (its blocks and coarse graphs are in the workspace's scratch
// space, Workspace.ScratchSpace: anonymous memory, then files), or where
// it fails, InitKMeans when the features are at hand, else a random
// start. A canceled ctx or a stop ends it with the embedding's error.
// r.InitRule says why where the graph was looked at.
func (r *Run) chooseInit(ctx context.Context) error {
	o, pr := &r.Options, r.Problem
	if o.Init != InitAuto {
		return nil
	}
	other := InitKMeans
	if pr.Table == nil {
		other = fw.StartRandom.String()
	}
	o.Init = other
	g := pr.Graph()
	if g == nil || r.info.OwnStart || o.K < 2 {
		return nil // no graph to embed, no start to make, or one cluster
	}
	opt := spectral.Options{K: o.K, Sweeps: spectral.StartSweeps}
	need, scratch := spectral.Bytes(int64(pr.N()), g.NNZ(), opt)
	if r.Workspace == nil { // no scratch space: the blocks are on the heap too
		need += scratch
	}
	if have := embedMemory(o.Memory); have > 0 && need > have {
		r.InitRule = fmt.Sprintf("the spectral embedding's %s would not fit the %s of memory", diskio.Size(need), diskio.Size(have))
		return nil
	}
	if _, err := r.spectralStart(ctx); err != nil {
		if ctx.Err() != nil || r.Stop != nil && r.Stop() {
			return err
		}
		// A graph the embedding cannot take (fewer rows with an edge than
		// k+1) still has the start the default had before.
		r.InitRule = fmt.Sprintf("no spectral embedding (%v)", err)
		return nil
	}
	gap, cmp := float64(r.Spectral.Eigengap), "<"
	if gap >= AutoEigengap {
		o.Init, cmp = InitSpectral, ">="
	}
	r.InitRule = fmt.Sprintf("eigengap %.3g %s %g", gap, cmp, float64(AutoEigengap))
	return nil
}

// embedMemory returns the memory the spectral embedding of Init auto may
// take on the heap: the heap's share of the budget of mem bytes
// (NewBudget), or without a budget half the memory available now; 0 if
// neither is known.
func embedMemory(mem int64) int64 {
	b, err := NewBudget(mem)
	switch {
	case err != nil:
		return 0
	case b.Bytes > 0:
		return b.Heap
	}
	return memAvailable() / 2
}

// Eigengap is a relative eigengap (spectral.Eigengap) in the summary's
// JSON: a number, or the string "+Inf" for a graph of k components, or
// "NaN" without k+1 eigenvalues, which JSON numbers cannot hold.
type Eigengap float64

// MarshalJSON writes g as a number, or as "+Inf" or "NaN".
func (g Eigengap) MarshalJSON() ([]byte, error) {
	switch v := float64(g); {
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsNaN(v) || math.IsInf(v, -1):
		return []byte(`"NaN"`), nil
	}
	return json.Marshal(float64(g))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *Eigengap) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"+Inf"`:
		*g = Eigengap(math.Inf(1))
		return nil
	case `"NaN"`:
		*g = Eigengap(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("eigengap: %w", err)
	}
	*g = Eigengap(v)
	return nil
}
