package fw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Minimize runs Frank-Wolfe on p from the feasible point w (n×k, row-major,
// every row on the simplex), overwriting w with the solution. It returns an
// error if the inputs are inconsistent, if a pass over P fails or if ctx is
// canceled; the Result then counts the iterations and passes completed, and
// w may be caught between two iterates.
func Minimize(ctx context.Context, p Problem, w []float64, settings *Settings) (*Result, error) {
	if p.P == nil {
		return nil, errors.New("fw: no affinity")
	}
	n, k := p.P.N(), p.K
	if k < 1 {
		return nil, fmt.Errorf("fw: k = %d, want k >= 1", k)
	}
	if len(w) != n*k {
		return nil, fmt.Errorf("fw: W has %d values, want n×k = %d×%d", len(w), n, k)
	}
	if err := checkSimplex(w, k, 1e-9); err != nil {
		return nil, fmt.Errorf("fw: initial point: %w", err)
	}
	set := DefaultSettings()
	if settings != nil {
		set = *settings
	}
	if set.MaxIter < 0 || set.Refresh < 0 || set.CheckpointEvery < 0 || set.GapTol < 0 || set.FuncTol < 0 || math.IsNaN(set.GapTol) || math.IsNaN(set.FuncTol) {
		return nil, errors.New("fw: negative or NaN setting")
	}
	if set.Workers < 1 {
		set.Workers = 1
	}
	pw, ps := set.PW, set.PS
	if pw == nil {
		pw = make([]float64, n*k)
	}
	if ps == nil {
		ps = make([]float64, n*k)
	}
	if len(pw) != n*k || len(ps) != n*k {
		return nil, fmt.Errorf("fw: P·W or P·S storage has the wrong size, want %d", n*k)
	}
	if r := set.Resume; r != nil {
		if len(r.Gram) != k*k || r.Iter < 0 || r.Passes < 0 {
			return nil, fmt.Errorf("fw: resume state for k = %d: Gram has %d values, iteration %d", k, len(r.Gram), r.Iter)
		}
		if set.PW == nil {
			return nil, errors.New("fw: resuming needs the saved P·W in Settings.PW")
		}
	}
	s := &solver{ctx: ctx, p: p.P, n: n, k: k, w: w, pw: pw, ps: ps, set: set,
		sel: make([]int32, n), start: time.Now()}
	return s.run()
}

type solver struct {
	ctx    context.Context
	p      Affinity
	n, k   int
	w      []float64
	pw, ps []float64
	sel    []int32   // the LMO's vertex: s_i per row
	a      []float64 // WᵀW
	set    Settings
	start  time.Time
	res    Result
}

func (s *solver) run() (*Result, error) {
	res := &s.res
	fresh := true // P·W was computed by a pass at the current W
	fprev := math.NaN()
	t0 := 0
	var err error
	if r := s.set.Resume; r != nil {
		t0, fresh, fprev = r.Iter, r.Fresh, r.Prev
		res.Iterations, res.Passes, res.FrobSq, res.MaxRowSum = r.Iter, r.Passes, r.FrobSq, r.MaxRowSum
		s.a = append([]float64(nil), r.Gram...)
		s.start = s.start.Add(-r.Elapsed)
	} else {
		if err := firstPass(s.ctx, s.p, s.pw, s.w, s.k, res); err != nil {
			return s.fail(err)
		}
		if s.a, err = gram(s.ctx, s.set.Workers, s.w, s.n, s.k); err != nil {
			return s.fail(err)
		}
	}
	acc, err := s.lmo()
	if err != nil {
		return s.fail(err)
	}
	for t := t0; ; t++ {
		f, gap := s.objective(acc), acc.gw-acc.gmin
		if gap <= s.set.GapTol && !fresh {
			// Confirm the stop on a P·W free of the carried rounding.
			if err := s.refresh(); err != nil {
				return s.fail(err)
			}
			if acc, err = s.lmo(); err != nil {
				return s.fail(err)
			}
			fresh = true
			f, gap = s.objective(acc), acc.gw-acc.gmin
		}
		switch {
		case gap <= s.set.GapTol:
			res.Status = GapTolerance
		case t > 0 && math.Abs(f-fprev) < s.set.FuncTol:
			res.Status = FunctionConvergence
		case t >= s.set.MaxIter:
			res.Status = IterationLimit
		}
		if res.Status != NotTerminated {
			if err := s.record(Iteration{Iter: t, Objective: f, Gap: gap, Final: true}); err != nil {
				return s.fail(err)
			}
			break
		}
		stop := s.set.Stop != nil && s.set.Stop()
		every := s.set.CheckpointEvery
		if s.set.Checkpoint != nil && (stop || every > 0 && t > t0 && t%every == 0) {
			st := &State{Iter: t, Passes: res.Passes, FrobSq: res.FrobSq, MaxRowSum: res.MaxRowSum,
				Prev: fprev, Fresh: fresh, Elapsed: time.Since(s.start), Gram: s.a, W: s.w, PW: s.pw}
			if err := s.set.Checkpoint(st); err != nil {
				return s.fail(fmt.Errorf("checkpoint at iteration %d: %w", t, err))
			}
		}
		if stop {
			res.Status = Stopped
			res.Objective, res.Gap = f, gap
			return s.fail(nil)
		}
		passStart := time.Now()
		if err := s.p.MulOneHot(s.ctx, s.ps, s.sel, s.k); err != nil {
			return s.fail(err)
		}
		res.Passes++
		passTime := time.Since(passStart)
		q, err := s.quartic(acc, gap)
		if err != nil {
			return s.fail(err)
		}
		lam := s.stepSize(t, gap, q)
		if err := s.record(Iteration{Iter: t, Objective: f, Gap: gap, Step: lam, PassTime: passTime}); err != nil {
			return s.fail(err)
		}
		s.updateGram(acc, lam)
		fprev = f
		if s.set.Refresh > 0 && (t+1)%s.set.Refresh == 0 {
			if _, err := s.step(lam, false, false); err != nil {
				return s.fail(err)
			}
			if err := s.refresh(); err != nil {
				return s.fail(err)
			}
			acc, err = s.lmo()
			fresh = true
		} else {
			acc, err = s.step(lam, true, true)
			fresh = lam == 0 && fresh
		}
		if err != nil {
			return s.fail(err)
		}
		res.Iterations = t + 1
	}
	if !fresh {
		if err := s.refresh(); err != nil {
			return s.fail(err)
		}
		if acc, err = s.lmo(); err != nil {
			return s.fail(err)
		}
	}
	res.Objective, res.Gap = s.objective(acc), acc.gw-acc.gmin
	res.Runtime = time.Since(s.start)
	return res, nil
}

func (s *solver) fail(err error) (*Result, error) {
	s.res.Runtime = time.Since(s.start)
	return &s.res, err
}

func (s *solver) record(it Iteration) error {
	return emit(s.set.Recorder, it, s.res.Passes, s.start)
}

// emit passes it to rec, if not nil, with the tile passes so far and the
// time since start: the Recorder call of every method.
func emit(rec func(Iteration) error, it Iteration, passes int, start time.Time) error {
	if rec == nil {
		return nil
	}
	it.Passes = passes
	it.Elapsed = time.Since(start)
	return rec(it)
}

// firstPass computes P·W into pw by the pass that also gives P's row sums
// and ||P||_F^2, the first pass of every method, and records the pass,
// ||P||_F^2 and the largest row sum in res.
func firstPass(ctx context.Context, p Affinity, pw, w []float64, k int, res *Result) error {
	rows := make([]float64, p.N())
	frob, err := p.Mul(ctx, pw, w, k, rows)
	if err != nil {
		return err
	}
	res.FrobSq = frob
	res.Passes++
	for _, v := range rows {
		res.MaxRowSum = max(res.MaxRowSum, v)
	}
	return nil
}

// objective is f = 1/4 (||P||_F^2 - 2 <W, PW> + ||WᵀW||_F^2).
func (s *solver) objective(acc *lmoSums) float64 {
	return (s.res.FrobSq - 2*acc.wpw + dot(s.a, s.a)) / 4
}

// refresh rescales every row of W to sum 1 and recomputes P·W by a full
// pass and WᵀW from W, discarding the rounding errors the incremental
// updates have gathered.
func (s *solver) refresh() error {
	if err := normalizeRows(s.ctx, s.set.Workers, s.w, s.n, s.k); err != nil {
		return err
	}
	if _, err := s.p.Mul(s.ctx, s.pw, s.w, s.k, nil); err != nil {
		return err
	}
	s.res.Passes++
	a, err := gram(s.ctx, s.set.Workers, s.w, s.n, s.k)
	s.a = a
	return err
}

// lmo runs the linear minimization oracle over all rows.
func (s *solver) lmo() (*lmoSums, error) {
	return s.step(0, false, true)
}

// step moves every row to W + λ(S - W); if carry, it updates P·W by
// P·W' = (1-λ) P·W + λ P·S, and if withLMO, it runs the oracle on the new
// rows with the Gram matrix already updated by updateGram. λ = 0 leaves W
// as it is.
func (s *solver) step(lam float64, carry, withLMO bool) (*lmoSums, error) {
	k := s.k
	total := newLMOSums(k)
	err := rowPass(s.ctx, s.set.Workers, s.n,
		func() *lmoSums { return newLMOSums(k) },
		func(lo, hi int, acc *lmoSums) {
			if lam != 0 {
				for i := lo; i < hi; i++ {
					wi := s.w[i*k : (i+1)*k]
					for j := range wi {
						wi[j] *= 1 - lam
					}
					wi[s.sel[i]] += lam
					if carry {
						pwi, psi := s.pw[i*k:(i+1)*k], s.ps[i*k:(i+1)*k]
						for j, v := range psi {
							pwi[j] = (1-lam)*pwi[j] + lam*v
						}
					}
				}
				checkRows(s.w[lo*k:hi*k], k)
			}
			acc.reset()
			if withLMO {
				lmoRows(lo, hi, k, s.w, s.pw, s.a, s.sel, acc)
			}
		},
		total.add)
	return total, err
}

// quartic returns the coefficients of f(W + λD) - f(W), D = S - W (see
// DESIGN.md): with M = WᵀD, E = DᵀD and PD = PS - PW,
//
//	a1 = <G, D> = -gap
//	a2 = 1/2 (<WᵀW, E> + tr(M M) + ||M||_F^2 - <D, PD>)
//	a3 = <M, E>
//	a4 = 1/4 ||E||_F^2.
//
// M = WᵀS - WᵀW and E = SᵀS - SᵀW - WᵀS + WᵀW come from the LMO pass's
// sums; <D, PD> = <S,PS> - <S,PW> - <W,PS> + <W,PW> takes one row pass.
func (s *solver) quartic(acc *lmoSums, gap float64) (quartic, error) {
	type inner struct{ sps, spw, wps float64 }
	var tot inner
	k := s.k
	err := rowPass(s.ctx, s.set.Workers, s.n,
		func() *inner { return new(inner) },
		func(lo, hi int, b *inner) {
			*b = inner{}
			for i := lo; i < hi; i++ {
				c := int(s.sel[i])
				psi, pwi := s.ps[i*k:(i+1)*k], s.pw[i*k:(i+1)*k]
				b.sps += psi[c]
				b.spw += pwi[c]
				b.wps += dot(s.w[i*k:(i+1)*k], psi)
			}
		},
		func(b *inner) { tot.sps += b.sps; tot.spw += b.spw; tot.wps += b.wps })
	if err != nil {
		return quartic{}, err
	}
	dpd := tot.sps - tot.spw - tot.wps + acc.wpw
	a, ws := s.a, acc.ws
	var aE, trMM, mm, mE, ee float64
	for r := range k {
		for c := range k {
			m := ws[r*k+c] - a[r*k+c]
			e := a[r*k+c] - ws[r*k+c] - ws[c*k+r]
			if r == c {
				e += acc.counts[r]
			}
			mt := ws[c*k+r] - a[c*k+r]
			aE += a[r*k+c] * e
			trMM += m * mt
			mm += m * m
			mE += m * e
			ee += e * e
		}
	}
	return quartic{a1: -gap, a2: (aE + trMM + mm - dpd) / 2, a3: mE, a4: ee / 4}, nil
}

func (s *solver) stepSize(t int, gap float64, q quartic) float64 {
	switch s.set.Step {
	case StepCurvature:
		c := 2 * float64(s.n) * (3*float64(s.n) + s.res.MaxRowSum)
		return math.Min(gap/c, 1)
	case StepOpenLoop:
		return 2 / float64(t+2)
	default:
		return q.argmin()
	}
}

// updateGram sets WᵀW for W' = W + λ(S - W):
// W'ᵀW' = (1-λ)^2 WᵀW + λ(1-λ)(WᵀS + SᵀW) + λ^2 SᵀS.
func (s *solver) updateGram(acc *lmoSums, lam float64) {
	k, a, ws := s.k, s.a, acc.ws
	for r := range k {
		for c := range k {
			a[r*k+c] = (1-lam)*(1-lam)*a[r*k+c] + lam*(1-lam)*(ws[r*k+c]+ws[c*k+r])
		}
		a[r*k+r] += lam * lam * acc.counts[r]
	}
}

// checkSimplex reports the first row of w (k columns) that has a negative
// entry or does not sum to 1 within tol.
func checkSimplex(w []float64, k int, tol float64) error {
	for i := 0; i*k < len(w); i++ {
		var sum float64
		for j, v := range w[i*k : (i+1)*k] {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("row %d, column %d is %v, want a finite value >= 0", i, j, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > tol {
			return fmt.Errorf("row %d sums to %v, want 1", i, sum)
		}
	}
	return nil
}
