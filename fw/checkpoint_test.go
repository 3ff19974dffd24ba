package fw

import (
	"context"
	"math"
	"slices"
	"testing"
)

// saved is a deep copy of a checkpoint: the State and its W and P·W.
type saved struct {
	st    State
	w, pw []float64
}

func save(st *State) saved {
	c := *st
	c.Gram = slices.Clone(st.Gram)
	c.W, c.PW = nil, nil
	return saved{st: c, w: slices.Clone(st.W), pw: slices.Clone(st.PW)}
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
		set  func(*Settings)
	}{
		{name: "exact", set: func(s *Settings) {}},
		{name: "ftol", set: func(s *Settings) { s.FuncTol = 20; s.MaxIter = 60 }},
		{name: "no refresh", set: func(s *Settings) { s.Refresh = 0 }},
		{name: "open loop", set: func(s *Settings) { s.Step = StepOpenLoop }},
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
				s := DefaultSettings()
				s.MaxIter, s.GapTol, s.Refresh, s.Workers = 14, 0, 5, workers
				tc.set(&s)
				return s
			}
			minimize := func(s Settings, w, pw []float64) run {
				var r run
				s.PW = pw
				s.Recorder = func(it Iteration) error { r.trace = append(r.trace, it); return nil }
				res, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &s)
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
	base := DefaultSettings()
	base.MaxIter, base.GapTol, base.Refresh = 17, 0, 4
	whole := base
	w := randomW(n, k, 32)
	want, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &whole)
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
		res, err := Minimize(context.Background(), Problem{P: d, K: k}, w2, &set)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Stopped || sv == nil || sv.st.Iter != at || res.Iterations != at {
			t.Fatalf("stop at %d: status %v, %d iterations, checkpoint %v", at, res.Status, res.Iterations, sv != nil)
		}
		if at == 0 && (res.Passes != 1 || !sv.st.Fresh || !math.IsNaN(sv.st.Prev)) {
			t.Fatalf("stop at 0: passes %d, fresh %v, prev %v", res.Passes, sv.st.Fresh, sv.st.Prev)
		}
		resume := base
		resume.Resume, resume.PW = &sv.st, sv.pw
		got, err := Minimize(context.Background(), Problem{P: d, K: k}, sv.w, &resume)
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
		{name: "gram size", set: Settings{MaxIter: 3, PW: make([]float64, n*k), Resume: &State{Gram: make([]float64, 4)}}},
		{name: "no PW", set: Settings{MaxIter: 3, Resume: &State{Gram: make([]float64, k*k)}}},
		{name: "negative iteration", set: Settings{MaxIter: 3, PW: make([]float64, n*k), Resume: &State{Iter: -1, Gram: make([]float64, k*k)}}},
		{name: "negative checkpoint interval", set: Settings{MaxIter: 3, CheckpointEvery: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Minimize(context.Background(), Problem{P: d, K: k}, randomW(n, k, 1), &tc.set); err == nil {
				t.Fatal("no error")
			}
		})
	}
	set := DefaultSettings()
	set.CheckpointEvery = 1
	set.Checkpoint = func(*State) error { return context.DeadlineExceeded }
	if _, err := Minimize(context.Background(), Problem{P: d, K: k}, randomW(n, k, 1), &set); err == nil {
		t.Fatal("failing checkpoint: no error")
	}
}
