package fw

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

// saved is a deep copy of a checkpoint: the State and its W and P·W.
type saved struct {
	st    State
	w, pw []float64
}

func save(st *State) saved {
	c := *st
	c.Payload = clonePayload(st.Payload)
	c.W, c.PW = nil, nil
	return saved{st: c, w: slices.Clone(st.W), pw: slices.Clone(st.PW)}
}

// clonePayload returns a deep copy of a FrankWolfeState or RowCDState,
// which share their slices with the run.
func clonePayload(p Payload) Payload {
	switch p := p.(type) {
	case *FrankWolfeState:
		c := *p
		c.Gram = slices.Clone(p.Gram)
		return &c
	case *RowCDState:
		c := *p
		c.Gram = slices.Clone(p.Gram)
		if q := p.Pending; q != nil {
			c.Pending = &Pending{NZ: q.NZ, Count: slices.Clone(q.Count), Col: slices.Clone(q.Col), Val: slices.Clone(q.Val)}
		}
		if p.Part != nil {
			part := *p.Part
			c.Part = &part
		}
		return &c
	}
	return p
}

// payloadOf returns the payload of st, which must be a P: a
// *FrankWolfeState or a *RowCDState.
func payloadOf[P Payload](t *testing.T, st *State) P {
	t.Helper()
	p, ok := st.Payload.(P)
	if !ok {
		t.Fatalf("payload %T, want %T", st.Payload, p)
	}
	return p
}

type run struct {
	w     []float64
	res   *Result
	trace []Iteration
}

func (r run) same(t *testing.T, what string, o run) {
	t.Helper()
	if r.res.Objective != o.res.Objective || r.res.Gap != o.res.Gap || r.res.Passes != o.res.Passes ||
		r.res.Iterations != o.res.Iterations || r.res.Status != o.res.Status {
		t.Fatalf("%s: result %+v, uninterrupted %+v", what, *r.res, *o.res)
	}
	for i := range r.w {
		if math.Float64bits(r.w[i]) != math.Float64bits(o.w[i]) {
			t.Fatalf("%s: W[%d] = %v, uninterrupted %v", what, i, r.w[i], o.w[i])
		}
	}
	// The resumed trace is the tail of the uninterrupted one.
	tail := o.trace[len(o.trace)-len(r.trace):]
	for i, it := range r.trace {
		if it.Iter != tail[i].Iter || it.Objective != tail[i].Objective || it.Gap != tail[i].Gap || it.Step != tail[i].Step || it.Passes != tail[i].Passes || it.Moved != tail[i].Moved {
			t.Fatalf("%s: trace record %+v, uninterrupted %+v", what, it, tail[i])
		}
	}
}

// resumeTest is a run with a checkpoint after every iteration, resumed
// from its checkpoints.
type resumeTest[M Method] struct {
	p    Problem
	w    []float64 // the start
	base Settings  // the settings of the runs but for the workers
	// method returns a fresh method, to which, and to the settings, set
	// makes the case's edits.
	method func() M
	set    func(*Settings, M)
	// step: the run resumes from every step-th of its checkpoints and from
	// the last.
	step func(checkpoints int) int
	// whole, if not nil, checks the uninterrupted run; each, if not nil,
	// checks checkpoint i before any resumption from it.
	whole func(r run)
	each  func(i int, sv saved)
}

// check runs rt.method from rt.w with a checkpoint after every iteration,
// then resumes from the checkpoints with 1, 2 or 3 workers and checks that
// every resumed run ends with the same bits as the uninterrupted one: W,
// the result and the tail of the trace.
func (rt resumeTest[M]) check(t *testing.T) {
	t.Helper()
	settings := func(workers int) Settings {
		s := rt.base
		s.Workers = workers
		rt.set(&s, rt.method())
		return s
	}
	minimize := func(s Settings, w, pw []float64) run {
		var r run
		s.PW = pw
		s.Recorder = func(it Iteration) error { r.trace = append(r.trace, it); return nil }
		m := rt.method()
		rt.set(&Settings{}, m)
		res, err := Minimize(context.Background(), rt.p, w, &s, m)
		if err != nil {
			t.Fatal(err)
		}
		r.w, r.res = w, res
		return r
	}
	var states []saved
	s := settings(1)
	s.CheckpointEvery = 1
	s.Checkpoint = func(st *State) error { states = append(states, save(st)); return nil }
	whole := minimize(s, rt.w, nil)
	if rt.whole != nil {
		rt.whole(whole)
	}
	if whole.res.Iterations < 3 || len(states) != whole.res.Iterations-1 {
		t.Fatalf("%d iterations, %d checkpoints", whole.res.Iterations, len(states))
	}
	step := rt.step(len(states))
	for i, sv := range states {
		if sv.st.Iter != i+1 {
			t.Fatalf("checkpoint %d at iteration %d", i, sv.st.Iter)
		}
		if rt.each != nil {
			rt.each(i, sv)
		}
		if i%step != 0 && i != len(states)-1 {
			continue
		}
		s := settings(1 + i%3)
		st := sv.st
		s.Resume = &st
		r := minimize(s, slices.Clone(sv.w), slices.Clone(sv.pw))
		r.same(t, "resumed at "+itoa(sv.st.Iter), whole)
	}
}

// stopTest is a run stopped at the start of an iteration, with a
// checkpoint, and resumed from it.
type stopTest struct {
	p      Problem
	base   Settings
	seed   uint64        // of the random start
	method func() Method // a fresh method
	at     []int         // the iterations to stop at
	// resumeWorkers are the workers of the resumed runs.
	resumeWorkers int
	// noFinal: the stopped run must make no final record.
	noFinal bool
	// stopped checks the run stopped at iteration at and its checkpoint.
	stopped func(at int, res *Result, sv *saved)
}

// check stops a run with Settings.Stop at each iteration of sc.at and checks
// the run stopped, its checkpoint and that the run resumed from it ends as
// the uninterrupted one.
func (sc stopTest) check(t *testing.T) {
	t.Helper()
	n, k := sc.p.P.N(), sc.p.K
	whole := sc.base
	w := randomW(n, k, sc.seed)
	want, err := Minimize(context.Background(), sc.p, w, &whole, sc.method())
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range sc.at {
		set := sc.base
		set.PW = make([]float64, n*k)
		calls := 0
		set.Stop = func() bool { calls++; return calls > at }
		var sv *saved
		set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
		if sc.noFinal {
			set.Recorder = func(it Iteration) error {
				if it.Final {
					t.Errorf("stop at %d: a final record", at)
				}
				return nil
			}
		}
		res, err := Minimize(context.Background(), sc.p, randomW(n, k, sc.seed), &set, sc.method())
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Stopped || sv == nil || sv.st.Iter != at || res.Iterations != at {
			t.Fatalf("stop at %d: status %v, %d iterations, checkpoint %v", at, res.Status, res.Iterations, sv != nil)
		}
		sc.stopped(at, res, sv)
		resume := sc.base
		resume.Workers = sc.resumeWorkers
		resume.Resume, resume.PW = &sv.st, sv.pw
		got, err := Minimize(context.Background(), sc.p, sv.w, &resume, sc.method())
		if err != nil {
			t.Fatal(err)
		}
		run{w: sv.w, res: got}.same(t, "stopped at "+itoa(at), run{w: w, res: want})
	}
}

// A run resumed from any checkpoint, with any worker count, ends with the
// same bits as the run that was never interrupted.
func TestResumeSameBits(t *testing.T) {
	const n, k = chunkRows + 133, 4
	d, _ := NewDense(n, kernel(n, 21))
	tests := []struct {
		name string
		set  func(*Settings, *FrankWolfe)
	}{
		{name: "exact", set: func(s *Settings, m *FrankWolfe) {}},
		{name: "ftol", set: func(s *Settings, m *FrankWolfe) { s.FuncTol = 20; s.MaxIter = 60 }},
		{name: "no refresh", set: func(s *Settings, m *FrankWolfe) { s.Refresh = -1 }},
		{name: "open loop", set: func(s *Settings, m *FrankWolfe) { m.Step = StepOpenLoop }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resumeTest[*FrankWolfe]{
				p:      Problem{P: d, K: k},
				w:      randomW(n, k, 22),
				base:   Settings{MaxIter: 14, GapTol: -1, Refresh: 5},
				method: func() *FrankWolfe { return &FrankWolfe{} },
				set:    tc.set,
				step:   func(int) int { return 3 }, // every third, to keep the test short
				whole: func(whole run) {
					if tc.name == "ftol" && whole.res.Status != FunctionConvergence {
						t.Errorf("ftol case ended on %v; the test wants a function-tolerance stop", whole.res.Status)
					}
				},
			}.check(t)
		})
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// Stop ends the run at the start of an iteration with a checkpoint, and the
// run resumed from it ends as the uninterrupted one.
func TestStopCheckpoints(t *testing.T) {
	const n, k = 90, 3
	d, _ := NewDense(n, kernel(n, 31))
	stopTest{
		p:      Problem{P: d, K: k},
		base:   Settings{MaxIter: 17, GapTol: -1, Refresh: 4},
		seed:   32,
		method: func() Method { return &FrankWolfe{} },
		at:     []int{0, 1, 8, 16},
		stopped: func(at int, res *Result, sv *saved) {
			if at == 0 && (res.Passes != 1 || !payloadOf[*FrankWolfeState](t, &sv.st).Fresh || !math.IsNaN(sv.st.Prev)) {
				t.Fatalf("stop at 0: passes %d, fresh %v, prev %v", res.Passes, payloadOf[*FrankWolfeState](t, &sv.st).Fresh, sv.st.Prev)
			}
		},
	}.check(t)
}

func TestResumeErrors(t *testing.T) {
	const n, k = 20, 3
	d, _ := NewDense(n, kernel(n, 41))
	tests := []struct {
		name string
		set  Settings
	}{
		{name: "gram size", set: Settings{MaxIter: 3, PW: make([]float64, n*k), Resume: &State{Payload: &FrankWolfeState{Gram: make([]float64, 4)}}}},
		{name: "no PW", set: Settings{MaxIter: 3, Resume: &State{Payload: &FrankWolfeState{Gram: make([]float64, k*k)}}}},
		{name: "negative iteration", set: Settings{MaxIter: 3, PW: make([]float64, n*k), Resume: &State{Iter: -1, Payload: &FrankWolfeState{Gram: make([]float64, k*k)}}}},
		{name: "negative checkpoint interval", set: Settings{MaxIter: 3, CheckpointEvery: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Minimize(context.Background(), Problem{P: d, K: k}, randomW(n, k, 1), &tc.set, &FrankWolfe{}); err == nil {
				t.Fatal("no error")
			}
		})
	}
	set := Settings{CheckpointEvery: 1}
	set.Checkpoint = func(*State) error { return context.DeadlineExceeded }
	if _, err := Minimize(context.Background(), Problem{P: d, K: k}, randomW(n, k, 1), &set, &FrankWolfe{}); err == nil {
		t.Fatal("failing checkpoint: no error")
	}
}

// A row-CD run resumed from any checkpoint, with any worker count, ends with
// the same bits as the run that was never interrupted: W, the objective,
// the gap and every trace record, in both schedules of a sweep, with one
// and with several moves a row, with and without refreshes, and through the
// function-tolerance and gap stops.
func TestRowCDResumeSameBits(t *testing.T) {
	const n, k = 157, 4
	d, _ := rcdProblem(t, n, 51)
	type variant struct {
		name string
		set  func(*Settings, *RowCD)
	}
	var tests []variant
	for _, mem := range []int64{0, 1} {
		for _, moves := range []int{1, 3} {
			for _, refresh := range []int{0, 4} {
				name := "strip"
				if mem == 1 {
					name = "two-pass"
				}
				name += ", moves " + itoa(moves) + ", refresh " + itoa(refresh)
				tests = append(tests, variant{name: name, set: func(s *Settings, m *RowCD) {
					m.StripMemory, m.Moves, s.Refresh = mem, moves, refresh
					if refresh == 0 {
						s.Refresh = -1 // none
					}
				}})
			}
		}
	}
	tests = append(tests,
		variant{name: "ftol", set: func(s *Settings, m *RowCD) { s.FuncTol, s.MaxIter = 1e-3, 200 }},
		variant{name: "gap", set: func(s *Settings, m *RowCD) { s.GapTol, s.MaxIter, s.Refresh = 1e-7, 500, -1 }},
		variant{name: "gap, two-pass, refresh 3", set: func(s *Settings, m *RowCD) { s.GapTol, s.MaxIter, s.Refresh, m.StripMemory = 1e-7, 500, 3, 1 }},
	)
	wantStatus := map[string]Status{"ftol": FunctionConvergence, "gap": GapTolerance, "gap, two-pass, refresh 3": GapTolerance}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			moved := false
			resumeTest[*RowCD]{
				p:      Problem{P: d, K: k},
				w:      randomW(n, k, 52),
				base:   Settings{MaxIter: 9, GapTol: -1, Refresh: 5},
				method: func() *RowCD { return &RowCD{BlockSize: 40} },
				set:    tc.set,
				step:   func(checkpoints int) int { return max(1, checkpoints/12) }, // at most about a dozen resumptions
				whole: func(whole run) {
					if want, ok := wantStatus[tc.name]; ok && whole.res.Status != want {
						t.Fatalf("ended on %v after %d sweeps; the test wants %v", whole.res.Status, whole.res.Iterations, want)
					}
				},
				each: func(i int, sv saved) {
					p := payloadOf[*RowCDState](t, &sv.st)
					if p.Pending == nil {
						t.Fatalf("checkpoint %d at sweep %d has no pending changes", i, sv.st.Iter)
					}
					for _, c := range p.Pending.Count {
						moved = moved || c > 0
					}
				},
			}.check(t)
			if !moved {
				t.Fatal("no checkpoint has pending changes: the test does not test them")
			}
		})
	}
}

// Stop ends a row-CD run at the start of a sweep with a checkpoint, and the
// run resumed from it, with another worker count, ends as the
// uninterrupted one.
func TestRowCDStopCheckpoints(t *testing.T) {
	const n, k = 90, 3
	d, _ := rcdProblem(t, n, 53)
	stopTest{
		p:             Problem{P: d, K: k},
		base:          Settings{MaxIter: 11, GapTol: -1, Refresh: 4},
		seed:          54,
		method:        func() Method { return &RowCD{BlockSize: 32} },
		at:            []int{0, 1, 4, 6, 10},
		resumeWorkers: 2,
		noFinal:       true,
		stopped: func(at int, res *Result, sv *saved) {
			if wantPasses := 1 + at + at/4; res.Passes != wantPasses || sv.st.Passes != wantPasses {
				t.Fatalf("stop at %d: %d passes, checkpoint %d, want %d", at, res.Passes, sv.st.Passes, wantPasses)
			}
			if p := payloadOf[*RowCDState](t, &sv.st); at == 0 && (!p.Fresh || !math.IsNaN(sv.st.Prev) || !math.IsNaN(p.SweepGap)) {
				t.Fatalf("stop at 0: fresh %v, prev %v, sweep gap %v", p.Fresh, sv.st.Prev, p.SweepGap)
			}
		},
	}.check(t)
}

// Stop stops a row-CD sweep part way, within a sweep of one block and
// between the blocks of a sweep of several, with a checkpoint that holds
// the sweep; the run resumed from it, with another worker count, goes on
// with the sweep and ends with the same bits and records as the run never
// stopped.
func TestRowCDStopPartWay(t *testing.T) {
	const n, k, poll = 157, 4, 30
	d, _ := rcdProblem(t, n, 57)
	for _, tc := range []struct {
		name  string
		block int
		mem   int64 // RowCD.StripMemory: 1 reads every strip twice
		at    []int // the visits after which the polls fall, in a sweep
	}{
		{name: "one block", block: n, at: []int{30, 60, 90, 120, 150}},
		{name: "one block, two-pass", block: n, mem: 1, at: []int{30, 60, 90, 120, 150}},
		{name: "blocks of 20", block: 20, at: []int{40, 80, 120}},
		{name: "blocks of 20, two-pass", block: 20, mem: 1, at: []int{40, 80, 120}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := func() *RowCD { return &RowCD{BlockSize: tc.block, StripMemory: tc.mem, pollRows: poll} }
			base := Settings{MaxIter: 12, GapTol: -1, Refresh: 5}
			whole := base
			want := run{w: randomW(n, k, 58)}
			whole.Recorder = func(it Iteration) error { want.trace = append(want.trace, it); return nil }
			var err error
			if want.res, err = Minimize(context.Background(), Problem{P: d, K: k}, want.w, &whole, method()); err != nil {
				t.Fatal(err)
			}
			perSweep := 1 + len(tc.at) // the poll at the start of an iteration, then the sweep's
			parts := 0
			for stopAt := 1; stopAt < 8*perSweep; stopAt += 2 {
				set := base
				set.PW = make([]float64, n*k)
				calls := 0
				set.Stop = func() bool { calls++; return calls > stopAt }
				var sv *saved
				set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
				res, err := Minimize(context.Background(), Problem{P: d, K: k}, randomW(n, k, 58), &set, method())
				if err != nil {
					t.Fatal(err)
				}
				iter, within := stopAt/perSweep, stopAt%perSweep
				if res.Status != Stopped || sv == nil || sv.st.Iter != iter || res.Iterations != iter {
					t.Fatalf("stop at poll %d: status %v, %d iterations, checkpoint %v; want a stop in iteration %d", stopAt, res.Status, res.Iterations, sv != nil, iter)
				}
				p := payloadOf[*RowCDState](t, &sv.st)
				switch {
				case within == 0 && p.Part != nil:
					t.Fatalf("stop at poll %d, the start of an iteration: the checkpoint holds a sweep part way, %+v", stopAt, *p.Part)
				case within > 0 && (p.Part == nil || p.Part.At != tc.at[within-1]):
					t.Fatalf("stop at poll %d: the checkpoint's sweep part way is %+v, want one of %d visits", stopAt, p.Part, tc.at[within-1])
				case within > 0:
					parts++
				}
				resume := base
				resume.Workers = 3
				resume.Resume, resume.PW = &sv.st, sv.pw
				got := run{w: sv.w}
				resume.Recorder = func(it Iteration) error { got.trace = append(got.trace, it); return nil }
				if got.res, err = Minimize(context.Background(), Problem{P: d, K: k}, got.w, &resume, method()); err != nil {
					t.Fatal(err)
				}
				got.same(t, "stopped at poll "+itoa(stopAt), want)
				if len(got.trace) != len(want.trace)-iter {
					t.Fatalf("stopped at poll %d: %d records resumed, want %d", stopAt, len(got.trace), len(want.trace)-iter)
				}
			}
			if parts == 0 {
				t.Fatal("no stop fell part way through a sweep")
			}
		})
	}
}

// A row-CD resume state that does not fit the problem is an error, never a
// panic.
func TestRowCDResumeErrors(t *testing.T) {
	const n, k, moves = 20, 3, 2
	d, _ := rcdProblem(t, n, 55)
	set := Settings{MaxIter: 4, CheckpointEvery: 2}
	var sv *saved
	set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
	w := make([]float64, n*k)
	Initialize(w, k, StartRandom, 56)
	if _, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, &RowCD{Moves: moves, BlockSize: 8}); err != nil || sv == nil {
		t.Fatalf("error %v, checkpoint %v", err, sv != nil)
	}
	good := func() (*State, []float64, []float64) {
		st := sv.st // a deep copy of the checkpoint
		st.Payload = clonePayload(st.Payload)
		return &st, slices.Clone(sv.w), slices.Clone(sv.pw)
	}
	// The saved state itself resumes.
	st, w0, pw := good()
	ok := Settings{MaxIter: 4, Resume: st, PW: pw}
	if _, err := Minimize(context.Background(), Problem{P: d, K: k}, w0, &ok, &RowCD{Moves: moves, BlockSize: 8}); err != nil {
		t.Fatalf("the good state: %v", err)
	}
	row := -1
	for i, c := range payloadOf[*RowCDState](t, &sv.st).Pending.Count {
		if c > 0 {
			row = i
			break
		}
	}
	if row < 0 {
		t.Fatal("no pending change in the checkpoint")
	}
	nz := 2 * moves
	for _, tc := range []struct {
		name string
		edit func(st *State, p *RowCDState, s *Settings, m *RowCD)
		want string
		// driver is set for an error of the driver's own, worded without
		// "resume state".
		driver bool
	}{
		{name: "no pending", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending = nil }, want: "no pending changes"},
		{name: "sweep past the end", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Part = &SweepPart{At: n} }, want: "a sweep stopped after 20 visits"},
		{name: "sweep of NaN", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Part = &SweepPart{At: 3, Gap: math.NaN()} }, want: "want finite sums"},
		{name: "sweep changed too many", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Part = &SweepPart{At: 3, Changed: 4} }, want: "changed 4 rows"},
		{name: "no PW", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { s.PW = nil }, want: "saved P·W", driver: true},
		{name: "other moves", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { m.Moves = 3 }, want: "4 slots a row, want 6"},
		{name: "short counts", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Count = p.Pending.Count[:n-1] }, want: "pending changes of 19"},
		{name: "short columns", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Col = p.Pending.Col[:n*nz-1] }, want: "want 20 counts"},
		{name: "short values", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Val = nil }, want: "want 20 counts"},
		{name: "count", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Count[3] = uint8(nz + 1) }, want: "row 3 has 5 pending changes"},
		{name: "column", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Col[row*nz] = k }, want: "in column 3"},
		{name: "negative column", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Col[row*nz] = -1 }, want: "in column -1"},
		{name: "NaN change", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Pending.Val[row*nz] = math.NaN() }, want: "is NaN"},
		{name: "gram", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Gram = p.Gram[:1] }, want: "Gram has 1 values"},
		{name: "iteration", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { st.Iter = -1 }, want: "iteration -1"},
		{name: "objective", edit: func(st *State, p *RowCDState, s *Settings, m *RowCD) { p.Objective = math.Inf(1) }, want: "objective +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, w, pw := good()
			s := Settings{MaxIter: 4, Resume: st, PW: pw}
			m := &RowCD{Moves: moves, BlockSize: 8}
			tc.edit(st, payloadOf[*RowCDState](t, st), &s, m)
			_, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &s, m)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !tc.driver && !strings.Contains(err.Error(), "resume state") {
				t.Fatalf("error %v, want a resume-state error containing %q", err, tc.want)
			}
		})
	}
	// A failing Checkpoint ends the run with its error.
	fail := Settings{CheckpointEvery: 1}
	fail.Checkpoint = func(*State) error { return context.DeadlineExceeded }
	Initialize(w, k, StartRandom, 56)
	if _, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &fail, &RowCD{}); err == nil || !strings.Contains(err.Error(), "checkpoint at iteration 1") {
		t.Fatalf("failing checkpoint: error %v", err)
	}
}
