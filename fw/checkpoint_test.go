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
		return &c
	}
	return p
}

// fwState and rcdState return the payload of a Frank-Wolfe or a RowCD state.
func fwState(t *testing.T, st *State) *FrankWolfeState {
	t.Helper()
	p, ok := st.Payload.(*FrankWolfeState)
	if !ok {
		t.Fatalf("payload %T, want *FrankWolfeState", st.Payload)
	}
	return p
}

func rcdState(t *testing.T, st *State) *RowCDState {
	t.Helper()
	p, ok := st.Payload.(*RowCDState)
	if !ok {
		t.Fatalf("payload %T, want *RowCDState", st.Payload)
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
		if it.Iter != tail[i].Iter || it.Objective != tail[i].Objective || it.Gap != tail[i].Gap || it.Step != tail[i].Step || it.Passes != tail[i].Passes {
			t.Fatalf("%s: trace record %+v, uninterrupted %+v", what, it, tail[i])
		}
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
	var lastStatus Status
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if tc.name == "ftol" && !t.Failed() && lastStatus != FunctionConvergence {
					t.Errorf("ftol case ended on %v; the test wants a function-tolerance stop", lastStatus)
				}
			}()
			settings := func(workers int) Settings {
				s := Settings{MaxIter: 14, GapTol: -1, Refresh: 5, Workers: workers}
				tc.set(&s, &FrankWolfe{})
				return s
			}
			method := func() *FrankWolfe {
				m := &FrankWolfe{}
				tc.set(&Settings{}, m)
				return m
			}
			minimize := func(s Settings, w, pw []float64) run {
				var r run
				s.PW = pw
				s.Recorder = func(it Iteration) error { r.trace = append(r.trace, it); return nil }
				res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &s, method())
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
			whole := minimize(s, randomW(n, k, 22), nil)
			lastStatus = whole.res.Status
			if whole.res.Iterations < 3 || len(states) != whole.res.Iterations-1 {
				t.Fatalf("%d iterations, %d checkpoints", whole.res.Iterations, len(states))
			}
			for i, sv := range states {
				if sv.st.Iter != i+1 {
					t.Fatalf("checkpoint %d at iteration %d", i, sv.st.Iter)
				}
				if i%3 != 0 && i != len(states)-1 {
					continue // every third, to keep the test short
				}
				s := settings(1 + i%3)
				st := sv.st
				s.Resume = &st
				r := minimize(s, slices.Clone(sv.w), slices.Clone(sv.pw))
				r.same(t, "resumed at "+itoa(sv.st.Iter), whole)
			}
		})
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// Stop ends the run at the start of an iteration with a checkpoint, and the
// run resumed from it ends as the uninterrupted one.
func TestStopCheckpoints(t *testing.T) {
	const n, k = 90, 3
	d, _ := NewDense(n, kernel(n, 31))
	base := Settings{MaxIter: 17, GapTol: -1, Refresh: 4}
	whole := base
	w := randomW(n, k, 32)
	want, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &whole, &FrankWolfe{})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 1, 8, 16} {
		set := base
		set.PW = make([]float64, n*k)
		calls := 0
		set.Stop = func() bool { calls++; return calls > at }
		var sv *saved
		set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
		w2 := randomW(n, k, 32)
		res, err := Minimize(context.Background(), Problem{P: d, K: k}, w2, &set, &FrankWolfe{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Stopped || sv == nil || sv.st.Iter != at || res.Iterations != at {
			t.Fatalf("stop at %d: status %v, %d iterations, checkpoint %v", at, res.Status, res.Iterations, sv != nil)
		}
		if at == 0 && (res.Passes != 1 || !fwState(t, &sv.st).Fresh || !math.IsNaN(sv.st.Prev)) {
			t.Fatalf("stop at 0: passes %d, fresh %v, prev %v", res.Passes, fwState(t, &sv.st).Fresh, sv.st.Prev)
		}
		resume := base
		resume.Resume, resume.PW = &sv.st, sv.pw
		got, err := Minimize(context.Background(), Problem{P: d, K: k}, sv.w, &resume, &FrankWolfe{})
		if err != nil {
			t.Fatal(err)
		}
		run{w: sv.w, res: got}.same(t, "stopped at "+itoa(at), run{w: w, res: want})
	}
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
			settings := func(workers int) Settings {
				s := Settings{MaxIter: 9, GapTol: -1, Refresh: 5, Workers: workers}
				tc.set(&s, &RowCD{})
				return s
			}
			method := func() *RowCD {
				m := &RowCD{BlockSize: 40}
				tc.set(&Settings{}, m)
				return m
			}
			minimize := func(s Settings, w, pw []float64) run {
				var r run
				s.PW = pw
				s.Recorder = func(it Iteration) error { r.trace = append(r.trace, it); return nil }
				res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &s, method())
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
			w := make([]float64, n*k)
			if err := Initialize(w, k, StartRandom, 52); err != nil {
				t.Fatal(err)
			}
			whole := minimize(s, w, nil)
			if want, ok := wantStatus[tc.name]; ok && whole.res.Status != want {
				t.Fatalf("ended on %v after %d sweeps; the test wants %v", whole.res.Status, whole.res.Iterations, want)
			}
			if whole.res.Iterations < 3 || len(states) != whole.res.Iterations-1 {
				t.Fatalf("%d sweeps, %d checkpoints", whole.res.Iterations, len(states))
			}
			moved := false
			step := max(1, len(states)/12) // at most about a dozen resumptions
			for i, sv := range states {
				if sv.st.Iter != i+1 || rcdState(t, &sv.st).Pending == nil {
					t.Fatalf("checkpoint %d at sweep %d, pending %v", i, sv.st.Iter, rcdState(t, &sv.st).Pending != nil)
				}
				for _, c := range rcdState(t, &sv.st).Pending.Count {
					moved = moved || c > 0
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
	base := Settings{MaxIter: 11, GapTol: -1, Refresh: 4}
	method := func() *RowCD { return &RowCD{BlockSize: 32} }
	start := func() []float64 {
		w := make([]float64, n*k)
		Initialize(w, k, StartRandom, 54)
		return w
	}
	whole := base
	w := start()
	want, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &whole, method())
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 1, 4, 6, 10} {
		set := base
		set.PW = make([]float64, n*k)
		calls := 0
		set.Stop = func() bool { calls++; return calls > at }
		var sv *saved
		set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
		set.Recorder = func(it Iteration) error {
			if it.Final {
				t.Errorf("stop at %d: a final record", at)
			}
			return nil
		}
		w2 := start()
		res, err := Minimize(context.Background(), Problem{P: d, K: k}, w2, &set, method())
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Stopped || sv == nil || sv.st.Iter != at || res.Iterations != at {
			t.Fatalf("stop at %d: status %v, %d sweeps, checkpoint %v", at, res.Status, res.Iterations, sv != nil)
		}
		if wantPasses := 1 + at + at/4; res.Passes != wantPasses || sv.st.Passes != wantPasses {
			t.Fatalf("stop at %d: %d passes, checkpoint %d, want %d", at, res.Passes, sv.st.Passes, wantPasses)
		}
		if p := rcdState(t, &sv.st); at == 0 && (!p.Fresh || !math.IsNaN(sv.st.Prev) || !math.IsNaN(p.SweepGap)) {
			t.Fatalf("stop at 0: fresh %v, prev %v, sweep gap %v", p.Fresh, sv.st.Prev, p.SweepGap)
		}
		resume := base
		resume.Workers = 2
		resume.Resume, resume.PW = &sv.st, sv.pw
		got, err := Minimize(context.Background(), Problem{P: d, K: k}, sv.w, &resume, method())
		if err != nil {
			t.Fatal(err)
		}
		run{w: sv.w, res: got}.same(t, "stopped at "+itoa(at), run{w: w, res: want})
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
	for i, c := range rcdState(t, &sv.st).Pending.Count {
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
			tc.edit(st, rcdState(t, st), &s, m)
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
