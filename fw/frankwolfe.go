package fw

import (
	"context"
	"fmt"
	"math"
	"time"
)

// FrankWolfe is the method of Zhao & Gordon: an iteration moves W to
// W + λ(S - W), where S is the vertex of the linear minimization oracle (a
// one-hot row per row of W) and λ is chosen by Step.
//
// Because P (W + λ(S - W)) = (1-λ) P W + λ P S and S is one-hot, an
// iteration costs a single pass over P (for P·S, a scatter-add with no
// factor k); P·W is carried from step to step and recomputed by a full pass
// every Settings.Refresh iterations and before the final report. The objective
// along the step is a quartic in λ whose coefficients come from k×k Gram
// matrices and the same pass, so the exact line search is free. The
// iteration's record has the step λ.
//
// The zero value is the method with the exact line search. A FrankWolfe is a Checkpointer; its
// Payload is a FrankWolfeState.
type FrankWolfe struct {
	// Step is the step rule.
	Step StepRule
	// PS is storage for the n×k matrix P·S; nil allocates it.
	PS []float64

	run   *Run
	ps    []float64
	sel   []int32   // the LMO's vertex: s_i per row
	a     []float64 // WᵀW
	acc   *lmoSums  // the LMO's sums at the iterate
	fresh bool      // P·W was computed by a pass at the current W
}

func (s *FrankWolfe) setup(r *Run) error {
	if s.Step < StepExact || s.Step > StepOpenLoop {
		return fmt.Errorf("fw: unknown step rule %v", s.Step)
	}
	ps, err := storage(s.PS, r.N*r.K, "P·S")
	if err != nil {
		return err
	}
	s.run, s.ps, s.sel = r, ps, make([]int32, r.N)
	return nil
}

// Init computes P·W, WᵀW and the oracle at the starting point.
func (s *FrankWolfe) Init(ctx context.Context, r *Run) error {
	if err := s.setup(r); err != nil {
		return err
	}
	if err := r.FirstPass(ctx); err != nil {
		return err
	}
	return s.fromPass(ctx)
}

// Resume restores a run from a *FrankWolfeState.
func (s *FrankWolfe) Resume(ctx context.Context, r *Run, p Payload) error {
	st, ok := p.(*FrankWolfeState)
	if !ok {
		return fmt.Errorf("a %s payload, not fw", p.Method())
	}
	if len(st.Gram) != r.K*r.K {
		return fmt.Errorf("Gram has %d values, want k×k = %d", len(st.Gram), r.K*r.K)
	}
	if err := s.setup(r); err != nil {
		return err
	}
	s.a, s.fresh = append([]float64(nil), st.Gram...), st.Fresh
	var err error
	s.acc, err = s.lmo(ctx)
	return err
}

// Save returns the run's FrankWolfeState, which shares WᵀW with it.
func (s *FrankWolfe) Save() Payload { return &FrankWolfeState{Fresh: s.fresh, Gram: s.a} }

// Estimate returns the objective and the gap from the carried P·W, exact
// when it was computed by a pass at W.
func (s *FrankWolfe) Estimate() Estimate {
	return Estimate{Objective: s.objective(s.acc), Gap: s.acc.gw - s.acc.gmin, Model: dot(s.a, s.a) / 4, Exact: s.fresh}
}

// Iterate computes P·S by a pass, chooses λ and takes the step.
func (s *FrankWolfe) Iterate(ctx context.Context, it *Iteration) (Status, error) {
	r := s.run
	passStart := time.Now()
	if err := r.P.MulOneHot(ctx, s.ps, s.sel, r.K); err != nil {
		return NotTerminated, err
	}
	r.Passes++
	it.PassTime = time.Since(passStart)
	q, err := s.quartic(ctx, s.acc, it.Gap)
	if err != nil {
		return NotTerminated, err
	}
	lam := s.stepSize(it.Iter, it.Gap, q)
	it.Step = lam
	s.updateGram(s.acc, lam)
	s.acc, err = s.step(ctx, lam, true, true)
	s.fresh = lam == 0 && s.fresh
	return NotTerminated, err
}

// Refresh rescales every row of W to sum 1, recomputes P·W by a full pass
// and WᵀW from W, discarding the rounding errors the incremental updates
// have gathered, and runs the oracle.
func (s *FrankWolfe) Refresh(ctx context.Context) error {
	if err := s.run.repass(ctx); err != nil {
		return err
	}
	return s.fromPass(ctx)
}

// fromPass sets WᵀW from W and runs the oracle, with P·W fresh from a pass.
func (s *FrankWolfe) fromPass(ctx context.Context) error {
	r := s.run
	var err error
	if s.a, err = gram(ctx, r.Workers, r.W, r.N, r.K); err != nil {
		return err
	}
	s.fresh = true
	s.acc, err = s.lmo(ctx)
	return err
}

// objective is f = 1/4 (||P||_F^2 - 2 <W, PW> + ||WᵀW||_F^2).
func (s *FrankWolfe) objective(acc *lmoSums) float64 {
	return (s.run.FrobSq - 2*acc.wpw + dot(s.a, s.a)) / 4
}

// lmo runs the linear minimization oracle over all rows.
func (s *FrankWolfe) lmo(ctx context.Context) (*lmoSums, error) {
	return s.step(ctx, 0, false, true)
}

// step moves every row to W + λ(S - W); if carry, it updates P·W by
// P·W' = (1-λ) P·W + λ P·S, and if withLMO, it runs the oracle on the new
// rows with the Gram matrix already updated by updateGram. λ = 0 leaves W
// as it is.
func (s *FrankWolfe) step(ctx context.Context, lam float64, carry, withLMO bool) (*lmoSums, error) {
	r := s.run
	k := r.K
	total := newLMOSums(k)
	err := rowPass(ctx, r.Workers, r.N,
		func() *lmoSums { return newLMOSums(k) },
		func(lo, hi int, acc *lmoSums) {
			if lam != 0 {
				for i := lo; i < hi; i++ {
					wi := r.W[i*k : (i+1)*k]
					for j := range wi {
						wi[j] *= 1 - lam
					}
					wi[s.sel[i]] += lam
					if carry {
						pwi, psi := r.PW[i*k:(i+1)*k], s.ps[i*k:(i+1)*k]
						for j, v := range psi {
							pwi[j] = float64((1-lam)*pwi[j]) + float64(lam*v)
						}
					}
				}
				checkRows(r.W[lo*k:hi*k], k)
			}
			acc.reset()
			if withLMO {
				lmoRows(lo, hi, k, r.W, r.PW, s.a, s.sel, acc)
			}
		},
		total.add)
	return total, err
}

// quartic returns the coefficients of f(W + λD) - f(W), D = S - W (see
// the package doc): with M = WᵀD, E = DᵀD and PD = PS - PW,
//
//	a1 = <G, D> = -gap
//	a2 = 1/2 (<WᵀW, E> + tr(M M) + ||M||_F^2 - <D, PD>)
//	a3 = <M, E>
//	a4 = 1/4 ||E||_F^2.
//
// M = WᵀS - WᵀW and E = SᵀS - SᵀW - WᵀS + WᵀW come from the LMO pass's
// sums; <D, PD> = <S,PS> - <S,PW> - <W,PS> + <W,PW> takes one row pass.
func (s *FrankWolfe) quartic(ctx context.Context, acc *lmoSums, gap float64) (quartic, error) {
	run := s.run
	type inner struct{ sps, spw, wps float64 }
	var tot inner
	k := run.K
	err := rowPass(ctx, run.Workers, run.N,
		func() *inner { return new(inner) },
		func(lo, hi int, b *inner) {
			*b = inner{}
			for i := lo; i < hi; i++ {
				c := int(s.sel[i])
				psi, pwi := s.ps[i*k:(i+1)*k], run.PW[i*k:(i+1)*k]
				b.sps += psi[c]
				b.spw += pwi[c]
				b.wps += dot(run.W[i*k:(i+1)*k], psi)
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
			aE += float64(a[r*k+c] * e)
			trMM += float64(m * mt)
			mm += float64(m * m)
			mE += float64(m * e)
			ee += float64(e * e)
		}
	}
	return quartic{a1: -gap, a2: (aE + trMM + mm - dpd) / 2, a3: mE, a4: ee / 4}, nil
}

func (s *FrankWolfe) stepSize(t int, gap float64, q quartic) float64 {
	switch s.Step {
	case StepCurvature:
		n := float64(s.run.N)
		c := 2 * n * (float64(3*n) + s.run.MaxRowSum)
		return math.Min(gap/c, 1)
	case StepOpenLoop:
		return 2 / float64(t+2)
	default:
		return q.argmin()
	}
}

// updateGram sets WᵀW for W' = W + λ(S - W):
// W'ᵀW' = (1-λ)^2 WᵀW + λ(1-λ)(WᵀS + SᵀW) + λ^2 SᵀS.
func (s *FrankWolfe) updateGram(acc *lmoSums, lam float64) {
	k, a, ws := s.run.K, s.a, acc.ws
	for r := range k {
		for c := range k {
			a[r*k+c] = float64((1-lam)*(1-lam)*a[r*k+c]) + float64(lam*(1-lam)*(ws[r*k+c]+ws[c*k+r]))
		}
		a[r*k+r] += float64(lam * lam * acc.counts[r])
	}
}
