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

// rcdProblem is a small dense problem for the row-CD tests: P is the
// Gaussian kernel of n random points in the plane, clustered so that the
// minimizer is not trivial.
func rcdProblem(t testing.TB, n int, seed uint64) (*Dense, []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, 2*n)
	for i := range n {
		c := float64(i % 3)
		x[2*i] = 2*c + rng.NormFloat64()
		x[2*i+1] = c*c - c + rng.NormFloat64()
	}
	p := make([]float64, n*n)
	for i := range n {
		for j := range n {
			dx, dy := x[2*i]-x[2*j], x[2*i+1]-x[2*j+1]
			p[i*n+j] = math.Exp(-0.5 * (dx*dx + dy*dy))
		}
	}
	d, err := NewDense(n, p)
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}

// denseF is f(W) = 1/4 ||P - W Wᵀ||_F^2 by its definition.
func denseF(p, w []float64, n, k int) float64 {
	var f float64
	for i := range n {
		for j := range n {
			d := p[i*n+j] - dot(w[i*k:(i+1)*k], w[j*k:(j+1)*k])
			f += d * d
		}
	}
	return f / 4
}

// denseRowGrad is the gradient of the row objective h_i at v, the row i of w,
// from its definition: -Σ_{l≠i} (P_il - v·w_l) w_l - (P_ii - |v|^2) v.
func denseRowGrad(p, w []float64, n, k, i int) []float64 {
	v := w[i*k : (i+1)*k]
	g := make([]float64, k)
	for l := range n {
		if l == i {
			continue
		}
		wl := w[l*k : (l+1)*k]
		axpy(g, -(p[i*n+l] - dot(v, wl)), wl)
	}
	axpy(g, -(p[i*n+i] - dot(v, v)), v)
	return g
}

// simplexPoint sets v to a point of the simplex: values of draw, which must
// be non-negative and not all 0, divided by their sum.
func simplexPoint(v []float64, draw func() float64) {
	for j := range v {
		v[j] = draw()
	}
	s := sum(v)
	for j := range v {
		v[j] /= s
	}
}

// randomSimplexRow sets v to a random point of the simplex with about zeros
// entries moved to 0.
func randomSimplexRow(rng *rand.Rand, v []float64, zeros int) {
	simplexPoint(v, rng.Float64)
	for z := 0; z < zeros; z++ {
		j := rng.IntN(len(v))
		v[0] += v[j]
		v[j] = 0
		if j == 0 {
			v[0] = 0
			v[1%len(v)] += 1 - sum(v)
		}
	}
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// TestRowQuartic checks the row quartic and the row gradient against f
// evaluated directly, along e_a - e_b from rows in several positions.
func TestRowQuartic(t *testing.T) {
	const n, k = 40, 5
	d, p := rcdProblem(t, n, 1)
	for _, tc := range []struct {
		name string
		row  func(rng *rand.Rand, w, v []float64) // sets the row's start w and current value v
		pick func(v []float64) (a, b int)
	}{
		{name: "random", row: func(rng *rand.Rand, w, v []float64) {
			randomSimplexRow(rng, w, 0)
			randomSimplexRow(rng, v, 0)
		}},
		{name: "v equals w", row: func(rng *rand.Rand, w, v []float64) {
			randomSimplexRow(rng, w, 1)
			copy(v, w)
		}},
		{name: "v_b = 0", row: func(rng *rand.Rand, w, v []float64) {
			randomSimplexRow(rng, w, 0)
			randomSimplexRow(rng, v, 0)
			v[0] += v[4]
			v[4] = 0
		}, pick: func([]float64) (int, int) { return 1, 4 }},
		{name: "at a vertex", row: func(rng *rand.Rand, w, v []float64) {
			clear(w)
			w[2] = 1
			copy(v, w)
		}, pick: func([]float64) (int, int) { return 0, 2 }},
		{name: "w at a vertex, v inside", row: func(rng *rand.Rand, w, v []float64) {
			clear(w)
			w[3] = 1
			randomSimplexRow(rng, v, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, 3))
			for trial := range 20 {
				w := make([]float64, n*k)
				for i := range n {
					randomSimplexRow(rng, w[i*k:(i+1)*k], trial%3)
				}
				i := rng.IntN(n)
				wi, vi := make([]float64, k), make([]float64, k)
				tc.row(rng, wi, vi)
				copy(w[i*k:], wi)
				a, err := gram(context.Background(), 1, w, n, k)
				if err != nil {
					t.Fatal(err)
				}
				pw := make([]float64, n*k)
				if _, err := d.Mul(context.Background(), pw, w, k, nil); err != nil {
					t.Fatal(err)
				}
				// At v = w the row gradient is row i of G = W WᵀW - P W.
				g0 := denseRowGrad(p, w, n, k, i)
				gi := make([]float64, k)
				gradRow(gi, wi, pw[i*k:(i+1)*k], a)
				for j := range k {
					if math.Abs(g0[j]-gi[j]) > 1e-12*(1+math.Abs(gi[j])) {
						t.Fatalf("trial %d: g(w)[%d] = %v, G[%d][%d] = %v", trial, j, g0[j], i, j, gi[j])
					}
				}
				copy(w[i*k:], vi)
				g := denseRowGrad(p, w, n, k, i)
				fa, fb := rng.IntN(k), rng.IntN(k-1)
				if fb >= fa {
					fb++
				}
				if tc.pick != nil {
					fa, fb = tc.pick(vi)
				}
				q := rowQuartic(a, wi, vi, g, p[i*n+i], fa, fb)
				f0 := denseF(p, w, n, k)
				for _, step := range []float64{-0.7, -0.1, 1e-3, 0.05, 0.3, 1, 2.5} {
					x := slices.Clone(w)
					x[i*k+fa] += step
					x[i*k+fb] -= step
					want := denseF(p, x, n, k) - f0
					got := q.at(step)
					if math.Abs(got-want) > 1e-9*(1+f0) {
						t.Fatalf("trial %d (i=%d a=%d b=%d): q(%v) = %v, f changes by %v", trial, i, fa, fb, step, got, want)
					}
				}
			}
		})
	}
}

// TestVisitRow checks one row visit against f evaluated directly: the
// decrease it reports, the row staying on the simplex, the exactness of the
// step (no point of a fine grid on the feasible interval is lower), no move
// when the row is optimal.
func TestVisitRow(t *testing.T) {
	const n, k = 50, 4
	d, p := rcdProblem(t, n, 4)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name  string
		moves int
		zeros int
	}{
		{name: "one move", moves: 1},
		{name: "one move, sparse rows", moves: 1, zeros: 2},
		{name: "three moves", moves: 3},
		{name: "ten moves", moves: 10, zeros: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for trial := range 30 {
				w := make([]float64, n*k)
				for i := range n {
					randomSimplexRow(rng, w[i*k:(i+1)*k], tc.zeros)
				}
				if trial%5 == 0 { // the row at a vertex
					i := trial % n
					clear(w[i*k : (i+1)*k])
					w[i*k+trial%k] = 1
				}
				i := trial % n
				a, _ := gram(context.Background(), 1, w, n, k)
				pw := make([]float64, n*k)
				if _, err := d.Mul(context.Background(), pw, w, k, nil); err != nil {
					t.Fatal(err)
				}
				before := slices.Clone(w)
				f0 := denseF(p, w, n, k)
				vs := newVisitScratch(k, 2*DefaultMoves)
				res := visitRow(w[i*k:(i+1)*k], pw[i*k:(i+1)*k], a, p[i*n+i], tc.moves, vs)
				if err := checkSimplex(w[i*k:(i+1)*k], k, 1e-14); err != nil {
					t.Fatalf("trial %d: %v", trial, err)
				}
				f1 := denseF(p, w, n, k)
				if math.Abs((f1-f0)-res.dec) > 1e-10*(1+f0) || res.dec > 0 {
					t.Fatalf("trial %d: the visit reports a change of %v, f changed by %v", trial, res.dec, f1-f0)
				}
				g := denseRowGrad(p, before, n, k, i)
				gmin := slices.Min(g)
				if want := dot(g, before[i*k:(i+1)*k]) - gmin; math.Abs(res.gap-want) > 1e-10*(1+want) {
					t.Fatalf("trial %d: row gap %v, want %v", trial, res.gap, want)
				}
				if res.moves > tc.moves {
					t.Fatalf("trial %d: %d moves, at most %d allowed", trial, res.moves, tc.moves)
				}
				if tc.moves != 1 {
					continue
				}
				// A single move is the exact minimizer on its interval.
				fa, fb := pairOf(before[i*k:(i+1)*k], g)
				if fb < 0 || g[fb] <= g[fa] {
					if res.moves != 0 {
						t.Fatalf("trial %d: moved with no descent pair", trial)
					}
					continue
				}
				top := before[i*k+fb]
				for s := 0; s <= 200; s++ {
					x := slices.Clone(before)
					step := top * float64(s) / 200
					x[i*k+fa] += step
					x[i*k+fb] -= step
					if fx := denseF(p, x, n, k); fx < f1-1e-10*(1+f0) {
						t.Fatalf("trial %d: f = %v at t = %v beats the exact step's %v", trial, fx, step, f1)
					}
				}
			}
		})
	}
}

// TestVisitRowOptimal: a row whose gradient is flat over the simplex, or
// whose FW and away vertices coincide, does not move.
func TestVisitRowOptimal(t *testing.T) {
	const k = 3
	vs := newVisitScratch(k, 2*DefaultMoves)
	// One row alone (n = 1), P = 1, W = e_0: h(v) = 1/4 (1 - |v|^2)^2 is 0
	// at every vertex, the minimum: a = b = 0 or g_b <= g_a.
	v := []float64{1, 0, 0}
	a := []float64{1, 0, 0, 0, 0, 0, 0, 0, 0}
	pwi := []float64{1, 0, 0}
	res := visitRow(v, pwi, a, 1, 3, vs)
	if res.moves != 0 || res.dec != 0 || !slices.Equal(v, []float64{1, 0, 0}) {
		t.Errorf("the optimal vertex row moved: %+v, v = %v", res, v)
	}
}

// denseSweep is the reference implementation of one sweep, computing every
// quantity from P and W directly (O(n k) a move): the row's gradient, and
// the quartic along e_a - e_b from its expansion
// h(v + t d) - h(v) = t(-Σ e_l δ_l - E u) + t^2 (Σ δ_l^2 / 2 + u^2 - E) + 2u t^3 + t^4,
// e_l = P_il - v·w_l, δ_l = w_la - w_lb (l != i), E = P_ii - |v|^2,
// u = v_a - v_b. It returns the change of f.
func denseSweep(p, w []float64, n, k, moves int) float64 {
	var total float64
	for i := range n {
		v := w[i*k : (i+1)*k]
		for range moves {
			g := denseRowGrad(p, w, n, k, i)
			fa, fb := pairOf(v, g)
			if fb < 0 || !(g[fb] > g[fa]) {
				break
			}
			var c1, c2 float64
			for l := range n {
				if l == i {
					continue
				}
				wl := w[l*k : (l+1)*k]
				e, dl := p[i*n+l]-dot(v, wl), wl[fa]-wl[fb]
				c1 -= e * dl
				c2 += dl * dl / 2
			}
			e, u := p[i*n+i]-dot(v, v), v[fa]-v[fb]
			q := quartic{a1: c1 - e*u, a2: c2 + u*u - e, a3: 2 * u, a4: 1}.scaled(v[fb])
			s := q.argmin()
			if s == 0 {
				break
			}
			total += q.at(s)
			step := v[fb] * s
			v[fa] += step
			if s == 1 {
				v[fb] = 0
			} else {
				v[fb] -= step
			}
		}
	}
	return total
}

// TestRowCDMatchesDense runs sweeps of RowCD (strip and two-pass
// schedules, several block sizes and worker counts) against the dense
// reference, comparing W, the objective the run tracks and the one it
// reports, and the invariants: rows on the simplex, f non-increasing.
func TestRowCDMatchesDense(t *testing.T) {
	const n, k = 157, 4
	d, p := rcdProblem(t, n, 8)
	for _, tc := range []struct {
		name        string
		block       int
		stripMemory int64
		twoPass     bool
		workers     int
		moves       int
		sweeps      int
		start       Start
	}{
		{name: "strip, block 64", block: 64, workers: 1, moves: 3, sweeps: 3},
		{name: "strip, block 64, 3 workers", block: 64, workers: 3, moves: 3, sweeps: 3},
		{name: "two-pass, block 64", block: 64, stripMemory: 1, twoPass: true, workers: 2, moves: 3, sweeps: 3},
		{name: "strip cut to 40 rows", block: 64, stripMemory: 8 * n * 40, workers: 2, moves: 3, sweeps: 3},
		{name: "one block", block: 0, workers: 2, moves: 3, sweeps: 2},
		{name: "blocks of one row", block: 1, workers: 2, moves: 2, sweeps: 2},
		{name: "block 50, one move, corners", block: 50, workers: 2, moves: 1, sweeps: 4, start: StartCorners},
		{name: "one sweep", block: 32, workers: 1, moves: 3, sweeps: 1},
	} {
		for _, products := range []stripProducts{productsDense, productsSparse} {
			name := tc.name + ", sparse"
			if products == productsDense {
				name = tc.name + ", dense"
			}
			t.Run(name, func(t *testing.T) {
				w := make([]float64, n*k)
				if err := Initialize(w, k, tc.start, 3); err != nil {
					t.Fatal(err)
				}
				ref := slices.Clone(w)
				refF := []float64{denseF(p, ref, n, k)}
				for range tc.sweeps {
					denseSweep(p, ref, n, k, tc.moves)
					refF = append(refF, denseF(p, ref, n, k))
				}
				set := Settings{MaxIter: tc.sweeps, GapTol: -1, Refresh: -1, Workers: tc.workers}
				m := &RowCD{Moves: tc.moves, BlockSize: tc.block, StripMemory: tc.stripMemory}
				m.products = products
				var recs []Iteration
				set.Recorder = func(it Iteration) error { recs = append(recs, it); return nil }
				res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, m)
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != IterationLimit || res.Iterations != tc.sweeps {
					t.Errorf("status %v after %d sweeps, want max-iter after %d", res.Status, res.Iterations, tc.sweeps)
				}
				perSweep := 1
				if tc.twoPass {
					perSweep = 2
				}
				if want := 2 + perSweep*tc.sweeps; res.Passes != want {
					t.Errorf("%d passes, want %d", res.Passes, want)
				}
				var diff float64
				for j := range w {
					diff = max(diff, math.Abs(w[j]-ref[j]))
				}
				if diff > 1e-10 {
					t.Errorf("W differs from the dense reference by up to %g", diff)
				}
				if err := checkSimplex(w, k, 1e-12); err != nil {
					t.Error(err)
				}
				if len(recs) != tc.sweeps+1 || !recs[tc.sweeps].Final {
					t.Fatalf("%d records, want %d sweeps and a final one", len(recs), tc.sweeps)
				}
				for s, it := range recs {
					// The tracked objective before sweep s, and the exact one at the end.
					if math.Abs(it.Objective-refF[s]) > 1e-10*refF[s] {
						t.Errorf("record %d: f = %.15g, the dense reference %.15g", s, it.Objective, refF[s])
					}
					if s > 0 && it.Objective > recs[s-1].Objective {
						t.Errorf("f increased in sweep %d: %v -> %v", s-1, recs[s-1].Objective, it.Objective)
					}
					if it.Passes != 1+perSweep*(s+1) && !it.Final {
						t.Errorf("record %d: %d passes, want %d", s, it.Passes, 1+perSweep*(s+1))
					}
				}
				if math.Abs(res.Objective-refF[tc.sweeps]) > 1e-11*res.Objective {
					t.Errorf("objective %.15g, dense %.15g", res.Objective, refF[tc.sweeps])
				}
				pw := make([]float64, n*k)
				d.Mul(context.Background(), pw, w, k, nil)
				pt, _ := evaluate(context.Background(), 1, w, pw, n, k, res.FrobSq, make([]int32, n))
				if math.Abs(res.Gap-pt.gap) > 1e-10*(1+pt.gap) {
					t.Errorf("gap %v, recomputed %v", res.Gap, pt.gap)
				}
			})
		}
	}
}

// TestRowCDWorkersSameBits checks that W, the objective and every record are
// the same bits for any number of workers, in both schedules.
func TestRowCDWorkersSameBits(t *testing.T) {
	const n, k = 300, 6
	d, _ := rcdProblem(t, n, 11)
	for _, mem := range []int64{0, 1} {
		var first []float64
		var firstRecs []Iteration
		for _, workers := range []int{1, 2, 5} {
			w := make([]float64, n*k)
			Initialize(w, k, StartRandom, 1)
			set := Settings{MaxIter: 6, Refresh: 4, Workers: workers}
			var recs []Iteration
			set.Recorder = func(it Iteration) error {
				it.PassTime, it.Elapsed = 0, 0
				recs = append(recs, it)
				return nil
			}
			if _, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &RowCD{BlockSize: 40, StripMemory: mem}); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first, firstRecs = w, recs
				continue
			}
			if !slices.Equal(w, first) || !slices.Equal(recs, firstRecs) {
				t.Errorf("strip memory %d: %d workers give other bits than 1", mem, workers)
			}
		}
	}
}

// TestRowCDStops checks each stopping rule and the pass count of refreshes.
func TestRowCDStops(t *testing.T) {
	const n, k = 60, 3
	d, p := rcdProblem(t, n, 12)
	for _, tc := range []struct {
		name    string
		set     func(*Settings)
		status  Status
		checkFn func(t *testing.T, res *Result, w []float64)
	}{
		{name: "gap", set: func(s *Settings) { s.GapTol, s.MaxIter = 1e-9, 100000 }, status: GapTolerance,
			checkFn: func(t *testing.T, res *Result, w []float64) {
				if res.Gap > 1e-9 {
					t.Errorf("gap %v > 1e-9", res.Gap)
				}
			}},
		{name: "ftol", set: func(s *Settings) { s.FuncTol, s.GapTol, s.MaxIter = 1e-6, -1, 100000 }, status: FunctionConvergence},
		{name: "max-iter with refreshes", set: func(s *Settings) { s.GapTol, s.MaxIter, s.Refresh = -1, 7, 3 }, status: IterationLimit,
			checkFn: func(t *testing.T, res *Result, w []float64) {
				// first pass, 7 sweeps, refreshes after sweeps 3 and 6, final refresh
				if res.Passes != 1+7+2+1 {
					t.Errorf("%d passes, want 11", res.Passes)
				}
			}},
		{name: "max-iter 0", set: func(s *Settings) { s.MaxIter = -1 }, status: IterationLimit,
			checkFn: func(t *testing.T, res *Result, w []float64) {
				if res.Passes != 1 || res.Iterations != 0 {
					t.Errorf("%d passes, %d sweeps, want 1 and 0", res.Passes, res.Iterations)
				}
			}},
		{name: "stop", set: func(s *Settings) {
			calls := 0
			s.Stop = func() bool { calls++; return calls > 2 }
		}, status: Stopped,
			checkFn: func(t *testing.T, res *Result, w []float64) {
				if res.Iterations != 2 {
					t.Errorf("%d sweeps, want 2", res.Iterations)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]float64, n*k)
			Initialize(w, k, StartRandom, 2)
			set := Settings{}
			tc.set(&set)
			res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &RowCD{BlockSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Errorf("status %v, want %v", res.Status, tc.status)
			}
			if f := denseF(p, w, n, k); math.Abs(f-res.Objective) > 1e-11*f {
				t.Errorf("objective %v, f(W) = %v", res.Objective, f)
			}
			if tc.checkFn != nil {
				tc.checkFn(t, res, w)
			}
		})
	}
}

// TestRowCDReachesFWOptimum: from the same start, row-CD converges (gap
// 1e-9) to an objective no worse than a long Frank-Wolfe run's.
func TestRowCDReachesFWOptimum(t *testing.T) {
	const n, k = 90, 3
	d, _ := rcdProblem(t, n, 13)
	w0 := make([]float64, n*k)
	Initialize(w0, k, StartRandom, 4)
	wf := slices.Clone(w0)
	fs := Settings{MaxIter: 3000}
	rf, err := Minimize(context.Background(), Problem{P: d, K: k}, wf, &fs, &FrankWolfe{})
	if err != nil {
		t.Fatal(err)
	}
	wr := slices.Clone(w0)
	rs := Settings{GapTol: 1e-9, MaxIter: 10000}
	rr, err := Minimize(context.Background(), Problem{P: d, K: k}, wr, &rs, &RowCD{})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Status != GapTolerance || rr.Objective > rf.Objective*(1+1e-9) {
		t.Errorf("row-CD: %v, f = %.12g after %d sweeps; FW f = %.12g (gap %g) after %d iterations",
			rr.Status, rr.Objective, rr.Iterations, rf.Objective, rf.Gap, rf.Iterations)
	}
	if rr.Passes >= rf.Passes {
		t.Errorf("row-CD took %d passes, FW %d", rr.Passes, rf.Passes)
	}
}

// TestRowCDErrors checks that bad input is refused with a clear error.
func TestRowCDErrors(t *testing.T) {
	const n, k = 10, 2
	d, _ := rcdProblem(t, n, 14)
	good := func() []float64 { w := make([]float64, n*k); Initialize(w, k, StartRandom, 0); return w }
	p := Problem{P: d, K: k}
	testRefusals(t, func() *RowCD { return &RowCD{} }, []refusal[*RowCD]{
		{name: "no affinity", p: Problem{K: k}, w: good(), want: "no affinity"},
		{name: "negative moves", p: p, w: good(), set: func(s *Settings, m *RowCD) { m.Moves = -1 }, want: "Moves = -1"},
		{name: "too many moves", p: p, w: good(), set: func(s *Settings, m *RowCD) { m.Moves = 101 }, want: "Moves = 101"},
		{name: "negative block", p: p, w: good(), set: func(s *Settings, m *RowCD) { m.BlockSize = -1 }, want: "negative"},
		{name: "negative checkpoint interval", p: p, w: good(), set: func(s *Settings, m *RowCD) { s.CheckpointEvery = -1 }, want: "negative"},
		{name: "infeasible start", p: p, w: make([]float64, n*k), want: "initial point"},
		{name: "short PW", p: p, w: good(), set: func(s *Settings, m *RowCD) { s.PW = make([]float64, 3) }, want: "P·W storage"},
		{name: "NaN tolerance", p: p, w: good(), set: func(s *Settings, m *RowCD) { s.GapTol = math.NaN() }, want: "NaN"},
		{name: "short visits", p: p, w: good(), set: func(s *Settings, m *RowCD) { m.Visit = make([]int32, n-1) }, want: "visits of 9 rows"},
		{name: "visit twice", p: p, w: good(), set: func(s *Settings, m *RowCD) { m.Visit = make([]int32, n) }, want: "comes twice"},
		{name: "visit out of block", p: p, w: good(), set: func(s *Settings, m *RowCD) {
			m.BlockSize, m.Visit = 5, []int32{5, 1, 2, 3, 4, 0, 6, 7, 8, 9}
		}, want: "not a row of its block"},
	})
}

// TestRowCDVisit checks that a run on permuted rows, visited in the order
// of the rows before the permutation (RowCD.Visit), is the run on the rows
// unmoved, to rounding: the sums over a row's entries are added in another
// order. Without Visit it takes another path.
func TestRowCDVisit(t *testing.T) {
	const n, k = 240, 4
	_, p := rcdProblem(t, n, 21)
	perm := rand.New(rand.NewPCG(3, 4)).Perm(n) // row q of the moved problem is row perm[q]
	pp := make([]float64, n*n)
	for q, i := range perm {
		for r, j := range perm {
			pp[q*n+r] = p[i*n+j]
		}
	}
	moved, err := NewDense(n, pp)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewDense(n, p)
	w := make([]float64, n*k)
	Initialize(w, k, StartRandom, 2)
	wp := make([]float64, n*k)
	visit := make([]int32, n)
	for q, i := range perm {
		copy(wp[q*k:(q+1)*k], w[i*k:(i+1)*k])
		visit[i] = int32(q)
	}
	set := Settings{MaxIter: 8, Refresh: 3, Workers: 2}
	want, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &RowCD{BlockSize: n})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		visit []int32
		same  bool
	}{{visit, true}, {nil, false}} {
		wq := slices.Clone(wp)
		got, err := Minimize(context.Background(), Problem{P: moved, K: k}, wq, &set, &RowCD{BlockSize: n, Visit: tc.visit})
		if err != nil {
			t.Fatal(err)
		}
		var diff float64
		for q, i := range perm {
			for c := range k {
				diff = max(diff, math.Abs(wq[q*k+c]-w[i*k+c]))
			}
		}
		rel := math.Abs(got.Objective-want.Objective) / want.Objective
		if same := diff < 1e-9 && rel < 1e-12; same != tc.same {
			t.Errorf("visits given %v: W differs by %.3g, objective by %.3g (relative), want the same run %v", tc.visit != nil, diff, rel, tc.same)
		}
	}
}

// failingTiles fails on the tile that contains row 7. Its passes are the
// Dense's; Tiled makes an Affinity whose sweeps read its tiles.
type failingTiles struct{ *Dense }

func (f failingTiles) Tile(dst []float64, r0, r1, c0, c1 int) error {
	if r0 <= 7 && 7 < r1 && c0 > r0 {
		return errors.New("disk gone")
	}
	return f.Dense.Tile(dst, r0, r1, c0, c1)
}

// TestRowCDTileErrorAndCancel checks that a failing tile and a canceled
// context end the run with an error.
func TestRowCDTileErrorAndCancel(t *testing.T) {
	const n, k = 30, 2
	d, _ := rcdProblem(t, n, 15)
	w := make([]float64, n*k)
	Initialize(w, k, StartRandom, 0)
	set := Settings{}
	_, err := Minimize(context.Background(), Problem{P: Tiled(failingTiles{d}), K: k}, w, &set, &RowCD{BlockSize: 8})
	if err == nil || !strings.Contains(err.Error(), "disk gone") || !strings.Contains(err.Error(), "rows 0:8") {
		t.Errorf("error %v, want the tile's error with its rows", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	set.Recorder = func(Iteration) error { cancel(); return nil }
	_, err = Minimize(ctx, Problem{P: d, K: k}, w, &set, &RowCD{BlockSize: 8})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestDenseTile checks Dense.Tile and its bounds.
func TestDenseTile(t *testing.T) {
	d, p := rcdProblem(t, 9, 16)
	dst := make([]float64, 6)
	if err := d.Tile(dst, 2, 4, 5, 8); err != nil {
		t.Fatal(err)
	}
	if want := []float64{p[2*9+5], p[2*9+6], p[2*9+7], p[3*9+5], p[3*9+6], p[3*9+7]}; !slices.Equal(dst, want) {
		t.Errorf("tile %v, want %v", dst, want)
	}
	if err := d.Tile(dst, 2, 4, 5, 10); err == nil {
		t.Error("columns past n accepted")
	}
	if err := d.Tile(dst[:5], 2, 4, 5, 8); err == nil {
		t.Error("short dst accepted")
	}
}

// TestRowCDTiny runs the edge cases k = 1 (nothing can move: the start is
// the solution) and n = 1.
func TestRowCDTiny(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
	}{
		{name: "k = 1", n: 20, k: 1},
		{name: "n = 1", n: 1, k: 3},
		{name: "n = 2, k = 2", n: 2, k: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, p := rcdProblem(t, tc.n, 17)
			w := make([]float64, tc.n*tc.k)
			Initialize(w, tc.k, StartRandom, 0)
			set := Settings{GapTol: 1e-12, MaxIter: 1000}
			res, err := Minimize(context.Background(), Problem{P: d, K: tc.k}, w, &set, &RowCD{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != GapTolerance {
				t.Errorf("status %v (gap %v after %d sweeps), want gap", res.Status, res.Gap, res.Iterations)
			}
			if f := denseF(p, w, tc.n, tc.k); math.Abs(f-res.Objective) > 1e-12*(1+f) {
				t.Errorf("objective %v, f(W) = %v", res.Objective, f)
			}
			if err := checkSimplex(w, tc.k, 1e-12); err != nil {
				t.Error(err)
			}
		})
	}
}
