package graph

import (
	"cmp"
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
)

// bandGraph returns a symmetric graph of n rows whose row i is linked to
// i±1..i±near and to far rows drawn anywhere, as a kNN graph in the
// partition's order is mostly near the diagonal.
func bandGraph(t testing.TB, n, near, far int, seed uint64) *CSR {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	type entry struct {
		i, j int32
		v    float64
	}
	var es []entry
	link := func(i, j int) {
		if i != j {
			v := 0.1 + rng.Float64()
			es = append(es, entry{int32(i), int32(j), v}, entry{int32(j), int32(i), v})
		}
	}
	for i := range n {
		for d := 1; d <= near && i+d < n; d++ {
			link(i, i+d)
		}
		for range far {
			link(i, rng.IntN(n))
		}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.j, b.j)) })
	es = slices.CompactFunc(es, func(a, b entry) bool { return a.i == b.i && a.j == b.j })
	rowPtr, col, val := make([]int64, n+1), make([]int32, len(es)), make([]float64, len(es))
	for e, x := range es {
		rowPtr[x.i+1]++
		col[e], val[e] = x.j, x.v
	}
	for i := range n {
		rowPtr[i+1] += rowPtr[i]
	}
	m, err := NewCSR(rowPtr, col, val)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// cloneState returns a copy of a row-CD run's checkpoint st that shares
// nothing with the run. A sweep of a graph defers no change, so the
// payload keeps no pending changes.
func cloneState(t testing.TB, st *fw.State) *fw.State {
	t.Helper()
	cp := *st
	cp.W, cp.PW = slices.Clone(st.W), slices.Clone(st.PW)
	p := *st.Payload.(*fw.RowCDState)
	if p.Pending != nil {
		t.Fatal("a row-CD run on a graph kept pending changes")
	}
	p.Gram = slices.Clone(p.Gram)
	if p.Part != nil {
		part := *p.Part
		p.Part = &part
	}
	cp.Payload = &p
	return &cp
}

// TestSweepWindowsSameBits checks that row-wise CD on a graph whose sweeps
// keep P·W current a window of rows at a time, setting the changes of the
// other rows aside, ends with the bits of the sweeps of one block: for
// several windows, and for a run stopped part way through a sweep (past
// the 65,536 rows between two polls) and resumed from its checkpoint.
func TestSweepWindowsSameBits(t *testing.T) {
	const n, k, iters = 70_000, 4, 4
	m := bandGraph(t, n, 3, 2, 21)
	ctx := context.Background()
	type result struct{ w, pw []float64 }
	solve := func(window, stopAt int, resume *fw.State) (result, *fw.State) {
		t.Helper()
		w, pw := start(t, n, k), make([]float64, n*k)
		if resume != nil {
			copy(w, resume.W)
			copy(pw, resume.PW)
		}
		var saved *fw.State
		set := fw.Settings{MaxIter: iters, GapTol: -1, Refresh: -1, Workers: 2, PW: pw, Resume: resume,
			Stop:       func() bool { stopAt--; return stopAt == 0 },
			Checkpoint: func(st *fw.State) error { saved = cloneState(t, st); return nil }}
		meth := &fw.RowCD{Window: window, Dir: t.TempDir()}
		if _, err := fw.Minimize(ctx, fw.Problem{P: m, K: k}, w, &set, meth); err != nil {
			t.Fatal(err)
		}
		return result{w, pw}, saved
	}
	want, _ := solve(0, -1, nil)
	same := func(name string, got result) {
		t.Helper()
		if !slices.Equal(got.w, want.w) || !slices.Equal(got.pw, want.pw) {
			t.Errorf("%s: W or P·W differs from the sweeps of one block", name)
		}
	}
	for _, window := range []int{1_000, 9_999, 40_000} {
		got, _ := solve(window, -1, nil)
		same("window "+strconv.Itoa(window), got)
	}
	parts := 0
	for stopAt := 2; stopAt <= 2*iters; stopAt++ {
		_, st := solve(9_999, stopAt, nil)
		if st == nil {
			t.Fatalf("stop at poll %d: no checkpoint", stopAt)
		}
		if st.Payload.(*fw.RowCDState).Part != nil {
			parts++
		}
		got, _ := solve(9_999, -1, st)
		same("stopped at poll "+strconv.Itoa(stopAt)+" and resumed", got)
	}
	if parts == 0 {
		t.Fatal("no stop fell part way through a sweep")
	}
}

// TestSweepWindowErrors checks that a sweep in windows without a
// directory to set changes aside in is refused, and that one whose
// changes cannot be set aside ends the run with an error that says so.
func TestSweepWindowErrors(t *testing.T) {
	m := bandGraph(t, 100, 2, 1, 3)
	if _, err := m.Sweep(3, fw.SweepOptions{Window: 10}); err == nil {
		t.Error("a window without a directory was taken")
	}
	set := fw.Settings{MaxIter: 2, GapTol: -1}
	meth := &fw.RowCD{Window: 10, Dir: filepath.Join(t.TempDir(), "gone")}
	_, err := fw.Minimize(context.Background(), fw.Problem{P: m, K: 3}, start(t, 100, 3), &set, meth)
	if err == nil || !strings.Contains(err.Error(), "setting a sweep's changes of P·W aside") {
		t.Errorf("a sweep whose directory is gone: error %v", err)
	}
	if sw, err := m.Sweep(3, fw.SweepOptions{Window: 100}); err != nil || len(sw.Blocks()) != 2 {
		t.Errorf("a window of all the rows: error %v, want one block", err)
	}
}

// TestSweepWindowMemory checks the anonymous memory of a sweep in
// windows: a window's rows of P·W are held in memory of the sweep's own
// budget (8·k·Window bytes) from the first pull, which copies them from
// P·W, and freed when the sweep settles, at its last push or when it
// stops part way; P·W then has every row back.
func TestSweepWindowMemory(t *testing.T) {
	const n, k, window = 1000, 3, 300
	m := bandGraph(t, n, 2, 1, 5)
	sw, err := m.Sweep(k, fw.SweepOptions{Window: window, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := sw.(*sweepSpill)
	full := s.space.Left()
	if full != 8*k*window {
		t.Fatalf("the sweep's budget is %d bytes, want %d", full, 8*k*window)
	}
	pw := make([]float64, n*k)
	for i := range pw {
		pw[i] = float64(i)
	}
	ctx := context.Background()
	bounds := sw.Blocks()
	for stop := 1; stop < len(bounds); stop++ {
		for b := range stop {
			blk, err := sw.Pull(ctx, bounds[b], bounds[b+1], pw, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.space.Left() != 0 {
				t.Fatalf("block %d pulled: %d bytes of the budget left, want 0", b, s.space.Left())
			}
			rows, r0 := blk.(interface{ Rows() ([]float64, int) }).Rows()
			if r0 != bounds[b] || !slices.Equal(rows, pw[bounds[b]*k:bounds[b+1]*k]) {
				t.Fatalf("block %d: the rows held are not P·W's rows [%d, %d)", b, bounds[b], bounds[b+1])
			}
			rows[0]++ // a visit's change, held
			if b < stop-1 || stop == len(bounds)-1 {
				err = sw.Push(ctx, bounds[b], bounds[b+1], pw, nil)
			} else {
				err = blk.(interface{ Settle([]float64) error }).Settle(pw)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if s.space.Left() != full {
			t.Errorf("sweep stopped after block %d: %d bytes of the budget left, want %d", stop-1, s.space.Left(), full)
		}
		for b := range stop {
			want := float64(bounds[b]*k + stop - b) // a change each pull since the first
			if got := pw[bounds[b]*k]; got != want {
				t.Fatalf("sweep stopped after block %d: block %d's first value %g, want %g", stop-1, b, got, want)
			}
		}
	}
}
