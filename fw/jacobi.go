package fw

import (
	"context"
	"fmt"
	"math"
	"time"
)

// This file holds the parallel (Jacobi) variant of row-wise pairwise
// coordinate descent: every row takes its pairwise step at once, and the
// step is then chosen in the span of that direction and the last steps. See
// MinimizeJacobi.

// JacobiSettings control a run of MinimizeJacobi. Start from
// DefaultJacobiSettings.
type JacobiSettings struct {
	// Settings holds the stopping rules, Workers, the Recorder, Stop and
	// the storage PW for P·W; Step, PS, Checkpoint and Resume are not used
	// (Checkpoint and Resume must be nil). Refresh is the number of
	// iterations between full P·W passes (0: only to confirm a stop and at
	// the end).
	Settings

	// Memory is the number of earlier steps whose span the search adds
	// to the new direction: 0, 1 or 2.
	Memory int
	// BlockSize is the edge of the diagonal tiles that give the diagonal
	// of P; DefaultRowCDBlock if 0.
	BlockSize int
}

// DefaultJacobiSettings returns the stopping rules of DefaultSettings and a
// memory of 2 steps.
func DefaultJacobiSettings() JacobiSettings {
	return JacobiSettings{Settings: DefaultSettings(), Memory: 2}
}

// maxMemory is the largest JacobiSettings.Memory.
const maxMemory = 2

// newtonSteps bounds the Newton-directed segment searches of an iteration
// after the search along the Jacobi direction.
const newtonSteps = 8

// MinimizeJacobi minimizes f(W) = 1/4 ||P - W Wᵀ||_F^2 over row-stochastic
// W >= 0 from the feasible point w, which it overwrites with the solution,
// by Jacobi pairwise steps with a search over a small span.
//
// An iteration gives every row i, at once, the step of one visit of
// MinimizeRowCD with one move: t_i (e_a - e_b), where a and b are the row's
// Frank-Wolfe and away vertices and t_i the exact minimizer of the
// objective restricted to the row with all other rows fixed. These steps
// form the direction D, whose product P·D is one pass over P. The next
// iterate is W + x_0 D + x_1 S_1 + x_2 S_2, where S_1 and S_2 are the last
// two steps taken (Memory of them) and their products with P are carried.
// On that span the objective is a quartic polynomial of x, known exactly
// from P·W, P·D, the carried products and k×k matrices that one pass over
// the rows gives; x is found by an exact search along D followed by up to
// eight Newton-directed exact searches, each over the segment on which W
// stays nonnegative. The objective never increases and is tracked without
// a pass.
//
// An iteration costs one pass over P, counted in Result.Passes and
// Iteration.Passes, and row passes of O(n k^2) work. The diagonal of P comes
// from the diagonal tiles of tiles, which must give the same matrix as p.P.
// Besides P·W, the run keeps 2 + 2·Memory n×k matrices in memory. The
// Recorder gets one record an iteration, with Step the weight x_0 of D; the
// final record and the Result carry the objective and Frank-Wolfe gap from
// a P·W pass at the returned W. A run gives the same bits for any number of
// workers.
func MinimizeJacobi(ctx context.Context, p Problem, tiles TileSource, w []float64, settings *JacobiSettings) (*Result, error) {
	const method = "jacobi"
	n, k, err := checkProblem(method, p, w)
	if err != nil {
		return nil, err
	}
	if tiles == nil {
		return nil, fmt.Errorf("%s: no tile source", method)
	}
	if tiles.N() != n {
		return nil, fmt.Errorf("%s: the tile source has n = %d, the affinity n = %d", method, tiles.N(), n)
	}
	set := DefaultJacobiSettings()
	if settings != nil {
		set = *settings
	}
	if err := checkStops(method, &set.Settings); err != nil {
		return nil, err
	}
	switch {
	case set.Memory < 0 || set.Memory > maxMemory:
		return nil, fmt.Errorf("%s: Memory = %d, want 0 to %d", method, set.Memory, maxMemory)
	case set.BlockSize < 0 || set.Refresh < 0:
		return nil, fmt.Errorf("%s: negative BlockSize or Refresh", method)
	case set.Checkpoint != nil || set.Resume != nil:
		return nil, fmt.Errorf("%s: checkpoints are not supported", method)
	}
	j := &jacobi{ctx: ctx, p: p.P, n: n, k: k, w: w, set: set, start: time.Now(), sel: make([]int32, n)}
	if j.pw, err = storage(set.PW, n*k, "jacobi: P·W"); err != nil {
		return nil, err
	}
	if j.pii, err = diagonal(tiles, set.BlockSize); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	for m := range 1 + set.Memory {
		j.v[m], j.pv[m] = make([]float64, n*k), make([]float64, n*k)
	}
	return j.run()
}

// diagonal returns the diagonal of P, read from its diagonal tiles of edge
// b (DefaultRowCDBlock if 0).
func diagonal(tiles TileSource, b int) ([]float64, error) {
	n := tiles.N()
	if b == 0 {
		b = DefaultRowCDBlock
	}
	b = min(b, n)
	d := make([]float64, n)
	buf := make([]float64, b*b)
	for r0 := 0; r0 < n; r0 += b {
		r1 := min(n, r0+b)
		h := r1 - r0
		if err := tiles.Tile(buf[:h*h], r0, r1, r0, r1); err != nil {
			return nil, fmt.Errorf("tile rows %d:%d cols %d:%d: %w", r0, r1, r0, r1, err)
		}
		for i := range h {
			d[r0+i] = buf[i*h+i]
		}
	}
	return d, nil
}

// jacobi is the state of a MinimizeJacobi run.
type jacobi struct {
	ctx   context.Context
	p     Affinity
	n, k  int
	w, pw []float64
	pii   []float64 // the diagonal of P
	a     []float64 // WᵀW
	f     float64   // the tracked objective
	set   JacobiSettings
	sel   []int32

	// v[0] holds the rows' Jacobi steps as an n×k matrix, v[1:1+hist] the
	// last steps taken, newest first, and pv their products with P.
	v, pv [1 + maxMemory][]float64
	hist  int

	start time.Time
	res   Result
}

func (j *jacobi) run() (*Result, error) {
	res, set := &j.res, &j.set
	if err := firstPass(j.ctx, j.p, j.pw, j.w, j.k, res); err != nil {
		return j.fail(err)
	}
	cur, err := evaluate(j.ctx, set.Workers, j.w, j.pw, j.n, j.k, res.FrobSq, j.sel)
	if err != nil {
		return j.fail(err)
	}
	j.a, j.f = cur.a, cur.f
	fresh, fprev := true, math.NaN()
	t := 0
	for ; ; t++ {
		if math.IsNaN(j.f) || math.IsInf(j.f, 0) {
			return j.fail(fmt.Errorf("jacobi: iteration %d: %w", t, errNonFinite))
		}
		gap, err := j.steps()
		if err != nil {
			return j.fail(err)
		}
		if gap <= set.GapTol && !fresh {
			// Confirm the stop on a P·W free of the carried rounding.
			if err := j.refresh(); err != nil {
				return j.fail(err)
			}
			if gap, err = j.steps(); err != nil {
				return j.fail(err)
			}
			fresh = true
		}
		res.Status = stopStatus(&set.Settings, t, j.f, fprev, gap)
		if res.Status == NotTerminated && set.Stop != nil && set.Stop() {
			res.Status = Stopped
		}
		if res.Status != NotTerminated {
			if !fresh {
				if err := j.refresh(); err != nil {
					return j.fail(err)
				}
				if gap, err = j.steps(); err != nil {
					return j.fail(err)
				}
			}
			res.Objective, res.Gap = j.f, gap
			if err := j.record(Iteration{Iter: t, Objective: j.f, Gap: gap, Final: true}); err != nil {
				return j.fail(err)
			}
			break
		}
		begin := time.Now()
		if _, err := j.p.Mul(j.ctx, j.pv[0], j.v[0], j.k, nil); err != nil {
			return j.fail(err)
		}
		res.Passes++
		passTime := time.Since(begin)
		sm, err := j.model()
		if err != nil {
			return j.fail(err)
		}
		x, dec, err := j.search(sm)
		if err != nil {
			return j.fail(err)
		}
		if err := j.record(Iteration{Iter: t, Objective: j.f, Gap: gap, Step: x[0], PassTime: passTime}); err != nil {
			return j.fail(err)
		}
		if err := j.apply(x); err != nil {
			return j.fail(err)
		}
		fprev = j.f
		j.f += dec
		fresh = false
		res.Iterations = t + 1
		if set.Refresh > 0 && (t+1)%set.Refresh == 0 {
			if err := j.refresh(); err != nil {
				return j.fail(err)
			}
			fresh = true
		}
	}
	res.Runtime = time.Since(j.start)
	return res, nil
}

func (j *jacobi) fail(err error) (*Result, error) {
	j.res.Runtime = time.Since(j.start)
	return &j.res, err
}

func (j *jacobi) record(it Iteration) error {
	return emit(j.set.Recorder, it, j.res.Passes, j.start)
}

// refresh rescales every row of W to sum 1, recomputes P·W by a full pass
// and evaluates the objective and WᵀW. It forgets the last steps: their
// products with P are carried by a recurrence, x_1 P·S_1 + x_2 P·S_2, that
// can amplify rounding errors.
func (j *jacobi) refresh() error {
	j.hist = 0
	k := j.k
	err := rowPass(j.ctx, j.set.Workers, j.n, func() struct{} { return struct{}{} },
		func(lo, hi int, _ struct{}) {
			for i := lo; i < hi; i++ {
				wi := j.w[i*k : (i+1)*k]
				var sum float64
				for _, v := range wi {
					sum += v
				}
				for c := range wi {
					wi[c] /= sum
				}
			}
		}, func(struct{}) {})
	if err != nil {
		return err
	}
	if _, err := j.p.Mul(j.ctx, j.pw, j.w, k, nil); err != nil {
		return err
	}
	j.res.Passes++
	cur, err := evaluate(j.ctx, j.set.Workers, j.w, j.pw, j.n, k, j.res.FrobSq, j.sel)
	if err != nil {
		return err
	}
	j.a, j.f = cur.a, cur.f
	return nil
}

// stepSums are the sums of the rows' Jacobi steps.
type stepSums struct {
	gw, gmin float64   // <G, W> and sum_i min_j G_ij
	g        []float64 // scratch gradient row
}

// steps forms every row's gradient G_i = w_i A - (PW)_i and its Jacobi
// step into v[0], and returns the Frank-Wolfe gap.
func (j *jacobi) steps() (float64, error) {
	k := j.k
	var gw, gmin float64
	err := rowPass(j.ctx, j.set.Workers, j.n,
		func() *stepSums { return &stepSums{g: make([]float64, k)} },
		func(lo, hi int, s *stepSums) {
			s.gw, s.gmin = 0, 0
			g := s.g
			for i := lo; i < hi; i++ {
				wi, pwi := j.w[i*k:(i+1)*k], j.pw[i*k:(i+1)*k]
				for c := range g {
					g[c] = -pwi[c]
				}
				for r, v := range wi {
					if v != 0 {
						axpy(g, v, j.a[r*k:(r+1)*k])
					}
				}
				low := g[0]
				for _, v := range g {
					low = min(low, v)
				}
				s.gw += dot(g, wi)
				s.gmin += low
				di := j.v[0][i*k : (i+1)*k]
				clear(di)
				fa, fb := pairOf(wi, g)
				if fb < 0 || !(g[fb] > g[fa]) {
					continue
				}
				// g(w) = G_i: the row quartic at the row's own value.
				q := rowQuartic(j.a, wi, wi, g, j.pii[i], fa, fb).scaled(wi[fb])
				step := wi[fb] * q.argmin()
				di[fa], di[fb] = step, -step
			}
		},
		func(s *stepSums) {
			gw += s.gw
			gmin += s.gmin
		})
	return gw - gmin, err
}

// spanModel is the objective on the span of the active directions V_m
// (m < dim: the Jacobi step, then the last steps): with X(x) = W + Σ x_m V_m,
//
//	f(X(x)) - f(W) = -Σ_m x_m c_m - 1/2 xᵀ Q x + 1/4 (||M(x)||_F^2 - ||A||_F^2),
//	M(x) = X(x)ᵀX(x) = A + Σ_m x_m B_m + Σ_{m,l} x_m x_l C_ml,
//
// with c_m = <V_m, PW>, Q_ml = <V_m, P V_l>, A = WᵀW, B_m = V_mᵀW + WᵀV_m and
// C_ml = V_mᵀV_l.
type spanModel struct {
	dim, k int
	a      []float64
	b      [1 + maxMemory][]float64
	c      [1 + maxMemory][1 + maxMemory][]float64
	lin    [1 + maxMemory]float64
	q      [1 + maxMemory][1 + maxMemory]float64
}

// vec is a point or direction in the span.
type vec = [1 + maxMemory]float64

// mat returns M(x) + Σ_m u_m ∂M/∂x_m (x) · s1 + (Σ_{m,l} u_m u_l C_ml) · s2,
// which for s1 = s2 = 0 is M(x); for the line x + s u, M = M0 + s M1 + s^2 M2
// with M1 and M2 from s1 = 1 or s2 = 1 alone (see line).
func (sm *spanModel) mat(x, u vec, part int) []float64 {
	kk := sm.k * sm.k
	out := make([]float64, kk)
	switch part {
	case 0: // M(x)
		copy(out, sm.a)
		for m := range sm.dim {
			axpy(out, x[m], sm.b[m])
			for l := range sm.dim {
				axpy(out, x[m]*x[l], sm.c[m][l])
			}
		}
	case 1: // Σ_m u_m (B_m + Σ_l x_l (C_ml + C_lm))
		for m := range sm.dim {
			axpy(out, u[m], sm.b[m])
			for l := range sm.dim {
				axpy(out, u[m]*x[l], sm.c[m][l])
				axpy(out, u[m]*x[l], sm.c[l][m])
			}
		}
	case 2: // Σ_{m,l} u_m u_l C_ml
		for m := range sm.dim {
			for l := range sm.dim {
				axpy(out, u[m]*u[l], sm.c[m][l])
			}
		}
	}
	return out
}

// line returns the quartic q(s) = f(X(x + s u)) - f(X(x)).
func (sm *spanModel) line(x, u vec) quartic {
	m0, m1, m2 := sm.mat(x, u, 0), sm.mat(x, u, 1), sm.mat(x, u, 2)
	var cu, xqu, uqu float64
	for m := range sm.dim {
		cu += sm.lin[m] * u[m]
		for l := range sm.dim {
			xqu += x[m] * sm.q[m][l] * u[l]
			uqu += u[m] * sm.q[m][l] * u[l]
		}
	}
	return quartic{
		a1: -(cu + xqu) + dot(m0, m1)/2,
		a2: -uqu/2 + (dot(m1, m1)+2*dot(m0, m2))/4,
		a3: dot(m1, m2) / 2,
		a4: dot(m2, m2) / 4,
	}
}

// newton returns the Newton direction of the model at x, or the steepest
// descent direction where the Hessian is not positive definite.
func (sm *spanModel) newton(x vec) vec {
	d := sm.dim
	var grad vec
	var hess [1 + maxMemory][1 + maxMemory]float64
	mx := sm.mat(x, vec{}, 0)
	var dm [1 + maxMemory][]float64
	for m := range d {
		var e vec
		e[m] = 1
		dm[m] = sm.mat(x, e, 1)
	}
	for m := range d {
		var qx float64
		for l := range d {
			qx += sm.q[m][l] * x[l]
		}
		grad[m] = -(sm.lin[m] + qx) + dot(mx, dm[m])/2
		for l := range d {
			hess[m][l] = -sm.q[m][l] + (dot(dm[l], dm[m])+dot(mx, sm.c[m][l])+dot(mx, sm.c[l][m]))/2
		}
	}
	// Cholesky factorization H = L Lᵀ, then L Lᵀ u = -grad.
	var l [1 + maxMemory][1 + maxMemory]float64
	var scale float64
	for m := range d {
		scale = max(scale, math.Abs(hess[m][m]))
	}
	pd := scale > 0
	for m := 0; m < d && pd; m++ {
		for c := 0; c <= m; c++ {
			s := hess[m][c]
			for e := range c {
				s -= l[m][e] * l[c][e]
			}
			if c < m {
				l[m][c] = s / l[c][c]
				continue
			}
			if s <= 1e-12*scale {
				pd = false
				break
			}
			l[m][m] = math.Sqrt(s)
		}
	}
	var u vec
	if !pd {
		for m := range d {
			u[m] = -grad[m]
		}
		return u
	}
	var y vec
	for m := range d {
		s := -grad[m]
		for e := range m {
			s -= l[m][e] * y[e]
		}
		y[m] = s / l[m][m]
	}
	for m := d - 1; m >= 0; m-- {
		s := y[m]
		for e := m + 1; e < d; e++ {
			s -= l[e][m] * u[e]
		}
		u[m] = s / l[m][m]
	}
	return u
}

// modelSums are one chunk's part of a spanModel.
type modelSums struct {
	y   [1 + maxMemory][]float64                // V_mᵀ W
	c   [1 + maxMemory][1 + maxMemory][]float64 // V_mᵀ V_l
	lin [1 + maxMemory]float64
	q   [1 + maxMemory][1 + maxMemory]float64
}

// model builds the objective on the span of the Jacobi step and the last
// steps, by one pass over the rows.
func (j *jacobi) model() (*spanModel, error) {
	k, dim := j.k, 1+j.hist
	newSums := func() *modelSums {
		s := &modelSums{}
		for m := range dim {
			s.y[m] = make([]float64, k*k)
			for l := range dim {
				s.c[m][l] = make([]float64, k*k)
			}
		}
		return s
	}
	tot := newSums()
	err := rowPass(j.ctx, j.set.Workers, j.n, newSums,
		func(lo, hi int, s *modelSums) {
			for m := range dim {
				clear(s.y[m])
				s.lin[m] = 0
				for l := range dim {
					clear(s.c[m][l])
					s.q[m][l] = 0
				}
			}
			for i := lo; i < hi; i++ {
				wi, pwi := j.w[i*k:(i+1)*k], j.pw[i*k:(i+1)*k]
				for m := range dim {
					vm := j.v[m][i*k : (i+1)*k]
					s.lin[m] += dot(vm, pwi)
					for r, x := range vm {
						if x == 0 {
							continue
						}
						axpy(s.y[m][r*k:(r+1)*k], x, wi)
						for l := range dim {
							axpy(s.c[m][l][r*k:(r+1)*k], x, j.v[l][i*k:(i+1)*k])
						}
					}
					for l := range dim {
						s.q[m][l] += dot(vm, j.pv[l][i*k:(i+1)*k])
					}
				}
			}
		},
		func(s *modelSums) {
			for m := range dim {
				addTo(tot.y[m], s.y[m])
				tot.lin[m] += s.lin[m]
				for l := range dim {
					addTo(tot.c[m][l], s.c[m][l])
					tot.q[m][l] += s.q[m][l]
				}
			}
		})
	if err != nil {
		return nil, err
	}
	sm := &spanModel{dim: dim, k: k, a: j.a, lin: tot.lin, c: tot.c}
	for m := range dim {
		b := make([]float64, k*k)
		for r := range k {
			for c := range k {
				b[r*k+c] = tot.y[m][r*k+c] + tot.y[m][c*k+r]
			}
		}
		sm.b[m] = b
		for l := range dim {
			// P is symmetric: <V_m, P V_l> = <V_l, P V_m> up to rounding.
			sm.q[m][l] = (tot.q[m][l] + tot.q[l][m]) / 2
		}
	}
	return sm, nil
}

// reach returns the largest s such that W + Σ_m (x_m + s u_m) V_m >= 0, or
// +Inf if there is none.
func (j *jacobi) reach(x, u vec, dim int) (float64, error) {
	k := j.k
	best := math.Inf(1)
	err := rowPass(j.ctx, j.set.Workers, j.n,
		func() *float64 { return new(float64) },
		func(lo, hi int, r *float64) {
			*r = math.Inf(1)
			for e := lo * k; e < hi*k; e++ {
				var du float64
				xe := j.w[e]
				for m := range dim {
					v := j.v[m][e]
					xe += x[m] * v
					du += u[m] * v
				}
				if du < 0 {
					*r = min(*r, max(xe, 0)/-du)
				}
			}
		},
		func(r *float64) { best = min(best, *r) })
	return best, err
}

// search returns the point x of the span at which the iteration steps,
// and the change of the objective there.
func (j *jacobi) search(sm *spanModel) (vec, float64, error) {
	var x vec
	var dec float64
	u := vec{0: 1}
	for it := range 1 + newtonSteps {
		if it > 0 {
			u = sm.newton(x)
		}
		top, err := j.reach(x, u, sm.dim)
		if err != nil {
			return x, dec, err
		}
		if math.IsInf(top, 1) || top <= 0 {
			break
		}
		q := sm.line(x, u).scaled(top)
		s := q.argmin()
		d := q.at(s)
		if s == 0 || !(d < 0) {
			break
		}
		for m := range sm.dim {
			x[m] += top * s * u[m]
		}
		dec += d
		if it > 0 && -d <= 1e-15*math.Abs(j.f) {
			break
		}
	}
	return x, dec, nil
}

// apply moves W to X(x), carries P·W and the products of the steps, and
// makes the step the newest of the last steps. Entries that the rounding of
// the step leaves below 0 are set to 0.
func (j *jacobi) apply(x vec) error {
	dim, mem := 1+j.hist, j.set.Memory
	// The step goes into the oldest history slot, read before it is written.
	slot := mem
	err := rowPass(j.ctx, j.set.Workers, j.n, func() struct{} { return struct{}{} },
		func(lo, hi int, _ struct{}) {
			for e := lo * j.k; e < hi*j.k; e++ {
				var d, pd float64
				for m := range dim {
					d += x[m] * j.v[m][e]
					pd += x[m] * j.pv[m][e]
				}
				old := j.w[e]
				nw := max(old+d, 0)
				j.w[e] = nw
				j.pw[e] += pd
				if slot > 0 {
					j.v[slot][e], j.pv[slot][e] = nw-old, pd
				}
			}
		}, func(struct{}) {})
	if err != nil {
		return err
	}
	if slot > 0 {
		// Rotate: the slot just written becomes the newest step.
		for m := slot; m > 1; m-- {
			j.v[m], j.v[m-1] = j.v[m-1], j.v[m]
			j.pv[m], j.pv[m-1] = j.pv[m-1], j.pv[m]
		}
		j.hist = min(j.hist+1, mem)
	}
	j.a, err = gram(j.ctx, j.set.Workers, j.w, j.n, j.k)
	return err
}
