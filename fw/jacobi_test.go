package fw

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// denseMul returns P·V for the dense n×n p and the n×k v.
func denseMul(p, v []float64, n, k int) []float64 {
	out := make([]float64, n*k)
	for i := range n {
		for l := range n {
			axpy(out[i*k:(i+1)*k], p[i*n+l], v[l*k:(l+1)*k])
		}
	}
	return out
}

// randomStep returns an n×k matrix with rows summing to 0 that keeps w + v
// within the simplex (v = θ(u - w) for a random simplex row u).
func randomStep(rng *rand.Rand, w []float64, n, k int) []float64 {
	v := make([]float64, n*k)
	u := make([]float64, k)
	for i := range n {
		randomSimplexRow(rng, u, rng.IntN(k))
		th := rng.Float64()
		for c := range k {
			v[i*k+c] = th * (u[c] - w[i*k+c])
		}
	}
	return v
}

// TestSpanModel checks the objective on the span, its line quartics and
// its gradient and Hessian against direct evaluation of f on a dense P.
func TestSpanModel(t *testing.T) {
	const n, k = 70, 4
	_, p := rcdProblem(t, n, 21)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 2, 3} {
		w := make([]float64, n*k)
		Initialize(w, k, StartRandom, uint64(dim))
		j := &jacobi{ctx: context.Background(), n: n, k: k, w: w, pw: denseMul(p, w, n, k), hist: dim - 1}
		j.set.Workers = 1
		var err error
		if j.a, err = gram(j.ctx, 1, w, n, k); err != nil {
			t.Fatal(err)
		}
		for m := range dim {
			j.v[m] = randomStep(rng, w, n, k)
			j.pv[m] = denseMul(p, j.v[m], n, k)
		}
		sm, err := j.model()
		if err != nil {
			t.Fatal(err)
		}
		f0 := denseF(p, w, n, k)
		at := func(x vec) float64 {
			y := slices.Clone(w)
			for m := range dim {
				axpy(y, x[m], j.v[m])
			}
			return denseF(p, y, n, k)
		}
		randVec := func() (x vec) {
			for m := range dim {
				x[m] = rng.Float64()*2 - 0.5
			}
			return x
		}
		for range 5 {
			x, u := randVec(), randVec()
			s := rng.Float64()*1.5 - 0.25
			var xs vec
			for m := range xs {
				xs[m] = x[m] + s*u[m]
			}
			// From 0 along x, and from x along u.
			if got, want := sm.line(vec{}, x).at(1), at(x)-f0; math.Abs(got-want) > 1e-10*f0 {
				t.Errorf("dim %d: model at %v: %.15g, direct %.15g", dim, x, got, want)
			}
			if got, want := sm.line(x, u).at(s), at(xs)-at(x); math.Abs(got-want) > 1e-10*f0 {
				t.Errorf("dim %d: line from %v along %v at %v: %.15g, direct %.15g", dim, x, u, s, got, want)
			}
			// The Newton direction solves H u = -grad, with grad and H
			// read off the exact line quartics: grad·e = q_e'(0) and
			// eᵀHe = q_e''(0).
			nu := sm.newton(x)
			var e vec
			for m := range dim {
				e[m] = rng.Float64() - 0.5
			}
			he := func(a vec) float64 { return 2 * sm.line(x, a).a2 }
			var sumAE vec
			for m := range dim {
				sumAE[m] = nu[m] + e[m]
			}
			// eᵀ H u = (q''_{u+e} - q''_u - q''_e)/2, and for a Newton
			// step that is -grad·e; for steepest descent u = -grad.
			eHu := (he(sumAE) - he(nu) - he(e)) / 2
			ge := sm.line(x, e).a1
			var gu float64
			for m := range dim {
				var em vec
				em[m] = 1
				gu += sm.line(x, em).a1 * nu[m]
			}
			newton := math.Abs(eHu+ge) <= 1e-8*(math.Abs(ge)+math.Abs(eHu))
			steepest := true
			for m := range dim {
				var em vec
				em[m] = 1
				if g := sm.line(x, em).a1; math.Abs(nu[m]+g) > 1e-12*math.Abs(g)+1e-300 {
					steepest = false
				}
			}
			if !newton && !steepest {
				t.Errorf("dim %d at %v: direction %v is neither Newton (eHu %.6g, -g·e %.6g) nor steepest descent", dim, x, nu, eHu, -ge)
			}
			if gu > 0 {
				t.Errorf("dim %d at %v: direction %v ascends (grad·u = %g)", dim, x, nu, gu)
			}
		}
	}
}

// TestJacobiDense runs MinimizeJacobi on dense problems and checks, at
// every iteration, that the tracked objective is f(W) recomputed from P,
// that it never increases, that W stays on the simplex and that the gap is
// >= 0; and at the end the Frank-Wolfe gap against the dense gradient.
func TestJacobiDense(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, k       int
		memory     int
		refresh    int
		iterations int
	}{
		{name: "memory 0", n: 120, k: 3, memory: 0, refresh: 0, iterations: 25},
		{name: "memory 1", n: 120, k: 3, memory: 1, refresh: 7, iterations: 25},
		{name: "memory 2", n: 150, k: 5, memory: 2, refresh: 10, iterations: 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, k := tc.n, tc.k
			d, p := rcdProblem(t, n, 5)
			w := make([]float64, n*k)
			Initialize(w, k, StartRandom, 9)
			set := DefaultJacobiSettings()
			set.Memory, set.Refresh, set.MaxIter, set.GapTol = tc.memory, tc.refresh, tc.iterations, 0
			prev := math.Inf(1)
			set.Recorder = func(it Iteration) error {
				if err := checkSimplex(w, k, 1e-12); err != nil {
					t.Errorf("iteration %d: %v", it.Iter, err)
				}
				if want := denseF(p, w, n, k); math.Abs(it.Objective-want) > 1e-10*want {
					t.Errorf("iteration %d: tracked f %.15g, recomputed %.15g", it.Iter, it.Objective, want)
				}
				if it.Objective > prev*(1+1e-14) {
					t.Errorf("iteration %d: f rose from %.15g to %.15g", it.Iter, prev, it.Objective)
				}
				if it.Gap < 0 {
					t.Errorf("iteration %d: gap %g < 0", it.Iter, it.Gap)
				}
				prev = it.Objective
				return nil
			}
			res, err := MinimizeJacobi(context.Background(), Problem{P: d, K: k}, d, w, &set)
			if err != nil {
				t.Fatal(err)
			}
			var gap float64
			for i := range n {
				g := denseRowGrad(p, w, n, k, i)
				gap += dot(g, w[i*k:(i+1)*k]) - slices.Min(g)
			}
			if math.Abs(res.Gap-gap) > 1e-9*math.Max(1, gap) {
				t.Errorf("gap %.12g, dense %.12g", res.Gap, gap)
			}
			if want := denseF(p, w, n, k); math.Abs(res.Objective-want) > 1e-12*want {
				t.Errorf("objective %.15g, dense %.15g", res.Objective, want)
			}
			wantPasses := 1 + res.Iterations + 1 // first, one an iteration, the end
			if tc.refresh > 0 {
				wantPasses += res.Iterations / tc.refresh
				if res.Iterations%tc.refresh == 0 {
					wantPasses-- // the last refresh is the end's
				}
			}
			if res.Status != IterationLimit || res.Passes != wantPasses {
				t.Errorf("status %v after %d iterations and %d passes, want max-iter after %d passes", res.Status, res.Iterations, res.Passes, wantPasses)
			}
		})
	}
}

// TestJacobiConverges checks that the method reaches the Frank-Wolfe
// optimum of a small problem and stops on the gap.
func TestJacobiConverges(t *testing.T) {
	const n, k = 90, 3
	d, _ := rcdProblem(t, n, 13)
	w0 := make([]float64, n*k)
	Initialize(w0, k, StartRandom, 4)
	wr := slices.Clone(w0)
	rs := DefaultRowCDSettings()
	rs.GapTol, rs.MaxIter = 1e-9, 10000
	rr, err := MinimizeRowCD(context.Background(), Problem{P: d, K: k}, d, wr, &rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, mem := range []int{0, 1, 2} {
		wj := slices.Clone(w0)
		js := DefaultJacobiSettings()
		js.Memory, js.GapTol, js.MaxIter = mem, 1e-6, 2000
		// With memory, the carried products of the last steps lose
		// accuracy near the optimum; refreshing more often forgets them.
		js.Refresh = 20
		rj, err := MinimizeJacobi(context.Background(), Problem{P: d, K: k}, d, wj, &js)
		if err != nil {
			t.Fatal(err)
		}
		if rj.Status != GapTolerance || math.Abs(rj.Objective-rr.Objective) > 1e-9*rr.Objective {
			t.Errorf("memory %d: %v, f = %.12g, gap %g after %d iterations; row-CD f = %.12g", mem, rj.Status, rj.Objective, rj.Gap, rj.Iterations, rr.Objective)
		}
		t.Logf("memory %d: %d iterations, %d passes; row-CD: %d sweeps, %d passes", mem, rj.Iterations, rj.Passes, rr.Iterations, rr.Passes)
	}
}

func TestJacobiWorkersSameBits(t *testing.T) {
	const n, k = 2100, 3 // more rows than a chunk of a row pass
	d, _ := rcdProblem(t, n, 11)
	var first []float64
	var firstRecs []Iteration
	for _, workers := range []int{1, 2, 3} {
		w := make([]float64, n*k)
		Initialize(w, k, StartRandom, 1)
		set := DefaultJacobiSettings()
		set.MaxIter, set.Refresh, set.Workers = 5, 3, workers
		var recs []Iteration
		set.Recorder = func(it Iteration) error {
			it.PassTime, it.Elapsed = 0, 0
			recs = append(recs, it)
			return nil
		}
		if _, err := MinimizeJacobi(context.Background(), Problem{P: d, K: k}, d, w, &set); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first, firstRecs = w, recs
			continue
		}
		if !slices.Equal(w, first) || !slices.Equal(recs, firstRecs) {
			t.Errorf("%d workers give other bits than 1", workers)
		}
	}
}

// brokenTiles fails on every tile.
type brokenTiles struct{ *Dense }

func (brokenTiles) Tile([]float64, int, int, int, int) error { return errors.New("disk gone") }

// TestJacobiAtOptimum checks a start with gap 0 (k = 1) stops at once.
func TestJacobiAtOptimum(t *testing.T) {
	const n = 40
	d, _ := rcdProblem(t, n, 2)
	w := make([]float64, n)
	Initialize(w, 1, StartRandom, 0)
	res, err := MinimizeJacobi(context.Background(), Problem{P: d, K: 1}, d, w, nil)
	if err != nil || res.Status != GapTolerance || res.Passes != 1 || res.Iterations != 0 {
		t.Errorf("got %+v, %v; want a stop on the gap after the first pass", res, err)
	}
}

func TestJacobiErrors(t *testing.T) {
	const n, k = 20, 2
	d, _ := rcdProblem(t, n, 1)
	other, _ := rcdProblem(t, n+1, 1)
	w := make([]float64, n*k)
	Initialize(w, k, StartRandom, 1)
	for _, tc := range []struct {
		name  string
		tiles TileSource
		edit  func(*JacobiSettings)
		want  string
	}{
		{name: "no tiles", want: "no tile source"},
		{name: "other n", tiles: other, want: "n = 21"},
		{name: "memory", tiles: d, edit: func(s *JacobiSettings) { s.Memory = 3 }, want: "Memory = 3"},
		{name: "block", tiles: d, edit: func(s *JacobiSettings) { s.BlockSize = -1 }, want: "negative"},
		{name: "checkpoint", tiles: d, edit: func(s *JacobiSettings) { s.CheckpointEvery, s.Checkpoint = 1, func(*State) error { return nil } }, want: "checkpoints"},
		{name: "tile error", tiles: brokenTiles{d}, want: "tile rows 0:20 cols 0:20: disk gone"},
	} {
		set := DefaultJacobiSettings()
		if tc.edit != nil {
			tc.edit(&set)
		}
		_, err := MinimizeJacobi(context.Background(), Problem{P: d, K: k}, tc.tiles, slices.Clone(w), &set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
