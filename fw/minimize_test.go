package fw

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// This file tests the driver, Minimize, across the methods.

// driverMethods are the four methods, each made afresh by its function, with
// parameters that keep a run on a small problem short.
var driverMethods = []struct {
	name string
	new  func() Method
}{
	{name: "fw", new: func() Method { return &FrankWolfe{} }},
	{name: "rowcd", new: func() Method { return &RowCD{BlockSize: 16} }},
	{name: "pgd", new: func() Method { return &PGD{} }},
	{name: "penalty", new: func() Method { return &Penalty{InnerIter: 10} }},
}

// driverRun is a run of Minimize: the point it returns, its Result and the
// records without their times.
type driverRun struct {
	w    []float64
	res  *Result
	recs []Iteration
}

func runDriver(t *testing.T, p Problem, w []float64, set *Settings, m Method) driverRun {
	t.Helper()
	r := driverRun{w: w}
	if set != nil {
		set.Recorder = func(it Iteration) error {
			it.PassTime, it.Elapsed = 0, 0
			r.recs = append(r.recs, it)
			return nil
		}
	}
	res, err := Minimize(context.Background(), p, w, set, m)
	if err != nil {
		t.Fatal(err)
	}
	r.res = res
	return r
}

// sameBits reports how two runs differ, or "" if they give the same bits.
func (r driverRun) sameBits(o driverRun) string {
	a, b := *r.res, *o.res
	a.Runtime, b.Runtime = 0, 0
	if math.Float64bits(a.Objective) != math.Float64bits(b.Objective) || math.Float64bits(a.Gap) != math.Float64bits(b.Gap) {
		return "objective or gap"
	}
	if a.Objective, a.Gap, b.Objective, b.Gap = 0, 0, 0, 0; a != b {
		return "result"
	}
	for i := range r.w {
		if math.Float64bits(r.w[i]) != math.Float64bits(o.w[i]) {
			return "W"
		}
	}
	if r.recs != nil || o.recs != nil {
		if len(r.recs) != len(o.recs) {
			return "number of records"
		}
		for i, it := range r.recs {
			ot := o.recs[i]
			if math.Float64bits(it.Objective) != math.Float64bits(ot.Objective) || math.Float64bits(it.Gap) != math.Float64bits(ot.Gap) ||
				math.Float64bits(it.Step) != math.Float64bits(ot.Step) || it.Iter != ot.Iter || it.Final != ot.Final || it.Passes != ot.Passes {
				return "records"
			}
		}
	}
	return ""
}

// refusal is a run that Minimize must refuse: the problem, the start, and
// set's edits (if set is not nil) of zero Settings and of a fresh method;
// want is a part of the error, "" for any.
type refusal[M Method] struct {
	name string
	p    Problem
	w    []float64
	set  func(*Settings, M)
	want string
}

// testRefusals checks that Minimize refuses each run of cases with an
// error, each by a method that method makes afresh.
func testRefusals[M Method](t *testing.T, method func() M, cases []refusal[M]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set, m := Settings{}, method()
			if tc.set != nil {
				tc.set(&set, m)
			}
			_, err := Minimize(context.Background(), tc.p, tc.w, &set, m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// testWorkersSameW checks that runs of fresh methods from the random start
// seed, with set and each of the worker counts, end at W equal to the
// first's.
func testWorkersSameW(t *testing.T, p Problem, seed uint64, set Settings, method func() Method, workers ...int) {
	t.Helper()
	var first []float64
	for _, wk := range workers {
		w := randomW(p.P.N(), p.K, seed)
		s := set
		s.Workers = wk
		if _, err := Minimize(context.Background(), p, w, &s, method()); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = w
		} else if !slices.Equal(w, first) {
			t.Fatalf("%d workers give other bits than %d", wk, workers[0])
		}
	}
}

// The zero value of Settings is the documented defaults: a run with
// Settings{} (or nil settings) gives the same bits as one with GapTol 1e-6,
// MaxIter 1000, Refresh 100 and one worker, for every method; and a nil
// method is RowCD with its defaults.
func TestSettingsZeroValueIsTheDefaults(t *testing.T) {
	if DefaultGapTol != 1e-6 || DefaultMaxIter != 1000 || DefaultRefresh != 100 {
		t.Fatalf("defaults %v, %v, %v; documented 1e-6, 1000, 100", DefaultGapTol, DefaultMaxIter, DefaultRefresh)
	}
	const n, k = 24, 3
	d, _ := NewDense(n, kernel(n, 71))
	p := Problem{P: d, K: k}
	explicit := Settings{GapTol: 1e-6, MaxIter: 1000, Refresh: 100, Workers: 1}
	for _, tc := range []struct {
		name string
		new  func() Method
		// status is the end the run must reach, so that the default it
		// stops on is the one tested.
		status Status
	}{
		// 1000 iterations with a refresh every 100: 1 + 1000 + 10 passes.
		{name: "fw", new: func() Method { return &FrankWolfe{} }, status: IterationLimit},
		{name: "rowcd", new: func() Method { return &RowCD{} }, status: GapTolerance},
		{name: "pgd", new: func() Method { return &PGD{} }, status: GapTolerance},
		// Never feasible, so never a gap stop: 1000 rounds. One inner
		// iteration a round keeps them cheap.
		{name: "penalty", new: func() Method { return &Penalty{InnerIter: 1} }, status: IterationLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			zero := runDriver(t, p, randomW(n, k, 72), &Settings{}, tc.new())
			set := explicit
			want := runDriver(t, p, randomW(n, k, 72), &set, tc.new())
			if diff := zero.sameBits(want); diff != "" {
				t.Fatalf("Settings{} and the explicit defaults differ in the %s: %+v, %+v", diff, *zero.res, *want.res)
			}
			if zero.res.Status != tc.status {
				t.Fatalf("status %v after %d iterations, want %v", zero.res.Status, zero.res.Iterations, tc.status)
			}
			switch zero.res.Status {
			case IterationLimit:
				if zero.res.Iterations != 1000 {
					t.Errorf("%d iterations, want 1000", zero.res.Iterations)
				}
			case GapTolerance:
				if zero.res.Gap > 1e-6 {
					t.Errorf("stopped on a gap of %v", zero.res.Gap)
				}
			}
			if tc.name == "fw" && zero.res.Passes != 1+1000+10 {
				t.Errorf("%d passes, want 1011: a refresh every 100 iterations", zero.res.Passes)
			}
			none := driverRun{w: randomW(n, k, 72)}
			var err error
			if none.res, err = Minimize(context.Background(), p, none.w, nil, tc.new()); err != nil {
				t.Fatal(err)
			}
			zero.recs = nil
			if diff := none.sameBits(zero); diff != "" {
				t.Errorf("nil settings and Settings{} differ in the %s", diff)
			}
		})
	}
	t.Run("nil method", func(t *testing.T) {
		a := runDriver(t, p, randomW(n, k, 72), &Settings{}, nil)
		b := runDriver(t, p, randomW(n, k, 72), &Settings{}, &RowCD{})
		if diff := a.sameBits(b); diff != "" {
			t.Errorf("a nil method and RowCD{} differ in the %s", diff)
		}
	})
}

// MaxPasses stops every method with IterationLimit at the first iteration
// that starts with the budget spent.
func TestMaxPassesStopsEveryMethod(t *testing.T) {
	const n, k, budget = 30, 3, 9
	d, _ := NewDense(n, kernel(n, 73))
	for _, m := range driverMethods {
		t.Run(m.name, func(t *testing.T) {
			set := Settings{MaxPasses: budget, GapTol: -1}
			r := runDriver(t, Problem{P: d, K: k}, randomW(n, k, 74), &set, m.new())
			if r.res.Status != IterationLimit || r.res.Iterations >= DefaultMaxIter || r.res.Passes < budget {
				t.Fatalf("status %v after %d iterations and %d passes, want max-iter on the budget of %d passes",
					r.res.Status, r.res.Iterations, r.res.Passes, budget)
			}
			steps := r.recs[:len(r.recs)-1] // the final record is no iteration
			if len(steps) == 0 {
				t.Fatal("no iteration")
			}
			for _, it := range steps[:len(steps)-1] {
				if it.Passes >= budget {
					t.Errorf("iteration %d ended with %d passes, the budget spent, and the run went on", it.Iter, it.Passes)
				}
			}
			if last := steps[len(steps)-1]; last.Passes < budget {
				t.Errorf("the last iteration ended with %d passes, under the budget of %d", last.Passes, budget)
			}
		})
	}
}

// Every method stops on the gap relative to ¼||WᵀW||², which it reports as
// the Result's Model, computed from the W it returns.
func TestModelGapEveryMethod(t *testing.T) {
	const n, k, tol = 30, 3, 1e-2
	d, _ := NewDense(n, kernel(n, 76))
	for _, m := range driverMethods {
		t.Run(m.name, func(t *testing.T) {
			set := Settings{ModelGapTol: tol, GapTol: -1}
			r := runDriver(t, Problem{P: d, K: k}, randomW(n, k, 77), &set, m.new())
			g := gramOf(r.w, n, k)
			model := dot(g, g) / 4
			if math.Abs(r.res.Model-model) > 1e-9*model {
				t.Errorf("Result.Model %v, ¼||WᵀW||² of the returned W %v", r.res.Model, model)
			}
			if r.res.Status != ModelGapTolerance || r.res.Gap > tol*model || r.res.Iterations == 0 {
				t.Errorf("status %v, gap %v (tol·¼||WᵀW||² = %v) after %d iterations, want model-gap after at least one",
					r.res.Status, r.res.Gap, tol*model, r.res.Iterations)
			}
		})
	}
}

// foreignPayload is the payload of no method of the package.
type foreignPayload struct{}

func (foreignPayload) Method() string                   { return "foreign" }
func (foreignPayload) Size() int64                      { return 0 }
func (foreignPayload) WriteTo(io.Writer) (int64, error) { return 0, nil }

// Resuming from the payload of another method, or with a method that does
// not save states, is an error that leaves W as it is.
func TestResumeWrongPayload(t *testing.T) {
	const n, k = 30, 3
	d, _ := NewDense(n, kernel(n, 75))
	p := Problem{P: d, K: k}
	stopAt2 := func(m Method) saved {
		t.Helper()
		set := Settings{MaxIter: 10, GapTol: -1, PW: make([]float64, n*k)}
		calls := 0
		set.Stop = func() bool { calls++; return calls > 2 }
		var sv *saved
		set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
		res, err := Minimize(context.Background(), p, randomW(n, k, 76), &set, m)
		if err != nil || res.Status != Stopped || sv == nil {
			t.Fatalf("%T: error %v, status %v, checkpoint %v", m, err, res.Status, sv != nil)
		}
		return *sv
	}
	fwSaved, rcdSaved := stopAt2(&FrankWolfe{}), stopAt2(&RowCD{})
	foreign := fwSaved
	foreign.st.Payload = foreignPayload{}
	for _, tc := range []struct {
		name string
		sv   saved
		m    Method
		want string
	}{
		{name: "fw from rowcd", sv: rcdSaved, m: &FrankWolfe{}, want: "a rowcd payload, not fw"},
		{name: "rowcd from fw", sv: fwSaved, m: &RowCD{}, want: "a fw payload, not rowcd"},
		{name: "fw from foreign", sv: foreign, m: &FrankWolfe{}, want: "a foreign payload, not fw"},
		{name: "rowcd from foreign", sv: foreign, m: &RowCD{}, want: "a foreign payload, not rowcd"},
		{name: "pgd", sv: fwSaved, m: &PGD{}, want: "cannot resume"},
		{name: "penalty", sv: rcdSaved, m: &Penalty{}, want: "cannot resume"},
		{name: "kmeans", sv: rcdSaved, m: &KMeans{}, want: "cannot resume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.sv.st
			st.Payload = clonePayload(st.Payload)
			set := Settings{MaxIter: 10, GapTol: -1, Resume: &st, PW: slices.Clone(tc.sv.pw)}
			w := slices.Clone(tc.sv.w)
			_, err := Minimize(context.Background(), p, w, &set, tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if !slices.Equal(w, tc.sv.w) {
				t.Error("a refused resume changed W")
			}
		})
	}
	// The right payloads resume.
	for _, c := range []struct {
		sv saved
		m  Method
	}{{fwSaved, &FrankWolfe{}}, {rcdSaved, &RowCD{}}} {
		st := c.sv.st
		st.Payload = clonePayload(st.Payload)
		set := Settings{MaxIter: 10, GapTol: -1, Resume: &st, PW: slices.Clone(c.sv.pw)}
		if _, err := Minimize(context.Background(), p, slices.Clone(c.sv.w), &set, c.m); err != nil {
			t.Errorf("%T resuming its own payload: %v", c.m, err)
		}
	}
}

// The final record of every method, whatever stopped the run, is the
// iterate returned: the Result's iterations, objective and gap (the exact
// ones of a P·W pass at W), the passes (but for Penalty's evaluation of
// its projection, made after the record), a step of 0, and W itself.
func TestFinalRecordIsTheResult(t *testing.T) {
	const n, k = 40, 3
	P := kernel(n, 77)
	d, _ := NewDense(n, P)
	for _, tc := range []struct {
		name   string
		set    Settings
		m      func() Method
		status Status
	}{
		{name: "fw, max-iter, no refresh", set: Settings{MaxIter: 7, GapTol: -1, Refresh: -1}, m: func() Method { return &FrankWolfe{} }, status: IterationLimit},
		{name: "fw, ftol", set: Settings{FuncTol: 1e-3, GapTol: -1, Refresh: -1}, m: func() Method { return &FrankWolfe{} }, status: FunctionConvergence},
		{name: "fw, gap", set: Settings{GapTol: 0.5, Refresh: -1}, m: func() Method { return &FrankWolfe{} }, status: GapTolerance},
		{name: "rowcd, max-iter, no refresh", set: Settings{MaxIter: 7, GapTol: -1, Refresh: -1}, m: func() Method { return &RowCD{BlockSize: 16} }, status: IterationLimit},
		{name: "rowcd, gap", set: Settings{GapTol: 1e-9}, m: func() Method { return &RowCD{BlockSize: 16} }, status: GapTolerance},
		{name: "pgd, max-iter", set: Settings{MaxIter: 7, GapTol: -1}, m: func() Method { return &PGD{} }, status: IterationLimit},
		{name: "pgd, no decrease", set: Settings{GapTol: -1}, m: func() Method { return &PGD{InitialStep: 1e6, MaxBacktracks: 1} }, status: FunctionConvergence},
		{name: "penalty, max-iter", set: Settings{MaxIter: 3, GapTol: -1}, m: func() Method { return &Penalty{InnerIter: 10} }, status: IterationLimit},
		{name: "penalty, ftol", set: Settings{FuncTol: 1e9, GapTol: -1}, m: func() Method { return &Penalty{InnerIter: 10} }, status: FunctionConvergence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := randomW(n, k, 78)
			var recs []Iteration
			var wFinal []float64
			set := tc.set
			set.Recorder = func(it Iteration) error {
				recs = append(recs, it)
				if it.Final {
					wFinal = slices.Clone(w)
				}
				return nil
			}
			m := tc.m()
			res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, m)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status %v after %d iterations, want %v", res.Status, res.Iterations, tc.status)
			}
			if len(recs) != res.Iterations+1 {
				t.Fatalf("%d records for %d iterations", len(recs), res.Iterations)
			}
			for _, it := range recs[:len(recs)-1] {
				if it.Final {
					t.Fatalf("record %d is final before the last", it.Iter)
				}
			}
			end := recs[len(recs)-1]
			passes := res.Passes
			if _, ok := m.(*Penalty); ok {
				passes-- // the projection's pass follows the final record
			}
			if !end.Final || end.Iter != res.Iterations || end.Step != 0 || end.Passes != passes ||
				math.Float64bits(end.Objective) != math.Float64bits(res.Objective) || math.Float64bits(end.Gap) != math.Float64bits(res.Gap) {
				t.Errorf("final record %+v, result %+v", end, *res)
			}
			if !slices.Equal(wFinal, w) {
				t.Error("W changed after the final record")
			}
			if f := denseObjective(P, n, w, k); relErr(res.Objective, f) > 1e-11 {
				t.Errorf("objective %v, f(W) = %v", res.Objective, f)
			}
			if g, _ := denseGap(P, n, w, k); math.Abs(res.Gap-g) > 1e-10*(1+math.Abs(g)) {
				t.Errorf("gap %v, dense %v", res.Gap, g)
			}
		})
	}
}

// nonFinite is a Dense that breaks the Affinity's contract: its first pass
// reports ||P||_F^2 = +Inf, or its pass number bad returns P·W with an
// infinite entry.
type nonFinite struct {
	*Dense
	frob       bool
	calls, bad int
}

func (a *nonFinite) Mul(ctx context.Context, dst, w []float64, k int, rows []float64) (float64, error) {
	f, err := a.Dense.Mul(ctx, dst, w, k, rows)
	a.calls++
	switch {
	case err != nil:
	case a.frob && rows != nil:
		f = math.Inf(1)
	case a.calls == a.bad:
		dst[0] = math.Inf(1)
	}
	return f, err
}

// A non-finite objective ends the run of every method with an error.
func TestNonFiniteObjectiveIsAnError(t *testing.T) {
	const n, k = 30, 3
	d, _ := NewDense(n, kernel(n, 79))
	for _, m := range driverMethods {
		t.Run(m.name+", first pass", func(t *testing.T) {
			set := Settings{MaxIter: 10, GapTol: -1}
			_, err := Minimize(context.Background(), Problem{P: &nonFinite{Dense: d, frob: true}, K: k}, randomW(n, k, 80), &set, m.new())
			if !errors.Is(err, errNonFinite) || !strings.Contains(err.Error(), "iteration 0") {
				t.Fatalf("error %v, want a non-finite objective at iteration 0", err)
			}
		})
	}
	// A refresh's pass (the second pass, after iteration 1) of the methods
	// that carry P·W.
	for _, m := range driverMethods[:2] {
		t.Run(m.name+", refresh", func(t *testing.T) {
			set := Settings{MaxIter: 10, GapTol: -1, Refresh: 2}
			res, err := Minimize(context.Background(), Problem{P: &nonFinite{Dense: d, bad: 2}, K: k}, randomW(n, k, 80), &set, m.new())
			if !errors.Is(err, errNonFinite) || !strings.Contains(err.Error(), "iteration 2") || res.Iterations != 2 {
				t.Fatalf("error %v after %d iterations, want a non-finite objective at iteration 2", err, res.Iterations)
			}
		})
	}
}
