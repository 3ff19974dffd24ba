package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/methods"
	"github.com/ssnmf/ssnmf/tile"
)

// randomGraph returns a symmetric sparse P with about deg neighbours a row,
// a positive diagonal on every other row, and its dense form.
func randomGraph(t testing.TB, n, deg int, seed uint64) (*CSR, []float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	dense := make([]float64, n*n)
	for i := range n {
		if i%2 == 0 {
			dense[i*n+i] = 1
		}
		for range deg / 2 {
			j := rng.IntN(n)
			v := 0.1 + rng.Float64()
			dense[i*n+j], dense[j*n+i] = v, v
		}
	}
	return fromDense(t, n, dense), dense
}

// fromDense returns the CSR of the nonzero entries of the symmetric n×n
// matrix dense.
func fromDense(t testing.TB, n int, dense []float64) *CSR {
	t.Helper()
	rowPtr := []int64{0}
	var col []int32
	var val []float64
	for i := range n {
		for j, v := range dense[i*n : (i+1)*n] {
			if v != 0 {
				col, val = append(col, int32(j)), append(val, v)
			}
		}
		rowPtr = append(rowPtr, int64(len(col)))
	}
	m, err := NewCSR(rowPtr, col, val)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewCSRErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rowPtr []int64
		col    []int32
		val    []float64
		want   string
	}{
		{name: "no rows", rowPtr: []int64{0}, want: "do not form"},
		{name: "offsets", rowPtr: []int64{0, 2}, col: []int32{0}, val: []float64{1}, want: "do not form"},
		{name: "decreasing offsets", rowPtr: []int64{0, 2, 1, 2}, col: []int32{0, 1}, val: []float64{1, 1}, want: "row 1: offsets"},
		{name: "column out of range", rowPtr: []int64{0, 1, 1}, col: []int32{2}, val: []float64{1}, want: "column 2 out of range"},
		{name: "columns not increasing", rowPtr: []int64{0, 2, 3}, col: []int32{1, 0, 0}, val: []float64{1, 1, 1}, want: "not increasing"},
		{name: "negative", rowPtr: []int64{0, 1}, col: []int32{0}, val: []float64{-1}, want: "value -1"},
		{name: "NaN", rowPtr: []int64{0, 1}, col: []int32{0}, val: []float64{math.NaN()}, want: "value NaN"},
		{name: "infinite", rowPtr: []int64{0, 1}, col: []int32{0}, val: []float64{math.Inf(1)}, want: "value +Inf"},
		{name: "missing mirror", rowPtr: []int64{0, 1, 1}, col: []int32{1}, val: []float64{1}, want: "not symmetric"},
		{name: "other mirror", rowPtr: []int64{0, 1, 2}, col: []int32{1, 0}, val: []float64{1, 2}, want: "not symmetric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewCSR(tc.rowPtr, tc.col, tc.val)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestCheckCSRWorkers checks that checkCSR gives the same matrix (its
// diagonal, the bits of its moments), the same chunks to visit and the
// same error for a bad entry, whatever the workers, over many chunks.
func TestCheckCSRWorkers(t *testing.T) {
	const n = 3000
	rowPtr := []int64{0}
	var col []int32
	var val []float64
	for i := range n { // a band: row i holds the columns within 50 of it
		for j := max(0, i-50); j <= min(n-1, i+50); j++ {
			col, val = append(col, int32(j)), append(val, float64(1+(i*j)%17)/7)
		}
		rowPtr = append(rowPtr, int64(len(col)))
	}
	check := func(workers int, val []float64) (*CSR, [][2]int64, error) {
		var visits [][2]int64
		m, err := checkCSR(rowPtr, col, val, workers, func(lo, hi int64) { visits = append(visits, [2]int64{lo, hi}) })
		return m, visits, err
	}
	want, wantVisits, err := check(1, val)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantVisits) < 3 {
		t.Fatalf("%d chunks, want several", len(wantVisits))
	}
	bad := slices.Clone(val)
	bad[len(bad)/2], bad[len(bad)-3] = -1, math.NaN()
	_, _, wantErr := check(1, bad)
	if wantErr == nil || !strings.Contains(wantErr.Error(), "value -1") {
		t.Fatalf("bad values: error %v, want the first bad entry's", wantErr)
	}
	for _, workers := range []int{2, 3, 8} {
		m, visits, err := check(workers, val)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(m.diag, want.diag) || m.moments != want.moments || !slices.Equal(visits, wantVisits) {
			t.Errorf("%d workers: diagonal, moments %+v or visits other than one worker's (moments %+v)", workers, m.moments, want.moments)
		}
		if _, _, err := check(workers, bad); err == nil || err.Error() != wantErr.Error() {
			t.Errorf("%d workers, bad values: error %v, want %v", workers, err, wantErr)
		}
	}
}

// TestProductsMatchDense checks P·W, the row sums and P·S against the dense
// reference to the bit (both add the nonzero products of a row in column
// order), and ||P||_F^2 to rounding (the graph adds it row by row), for
// the graph as stored and scaled by 3 (against 3·P).
func TestProductsMatchDense(t *testing.T) {
	for _, scale := range []float64{1, 3} {
		t.Run(fmt.Sprint("scale ", scale), func(t *testing.T) { testProductsMatchDense(t, scale) })
	}
}

// scaled sets m.Scale and returns its dense form, scaled the same way.
func scaled(m *CSR, dense []float64, scale float64) []float64 {
	m.Scale = scale
	p := slices.Clone(dense)
	for i := range p {
		p[i] *= scale
	}
	return p
}

func testProductsMatchDense(t *testing.T, scale float64) {
	const n, k = 150, 4
	m, p := randomGraph(t, n, 8, 1)
	d, err := fw.NewDense(n, scaled(m, p, scale))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Sum(), floats.Sum(p); math.Abs(got-want) > 1e-12*want {
		t.Errorf("Sum %v, want %v", got, want)
	}
	var inOrder float64
	for _, v := range m.Val {
		inOrder += v
	}
	if m.Sum() != inOrder {
		t.Errorf("Sum %v, want %v: the values added in the order of the entries", m.Sum(), inOrder)
	}
	if mo, top := m.Moments(), floats.Max(p); mo.Max != top || math.Abs(mo.Squares-floats.Dot(p, p)/(top*top)) > 1e-12*mo.Squares {
		t.Errorf("Moments %+v, want the largest %v and Σ(v/largest)² %v", mo, top, floats.Dot(p, p)/(top*top))
	}
	rng := rand.New(rand.NewPCG(2, 3))
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.Float64()
	}
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(rng.IntN(k))
	}
	ctx := context.Background()
	for _, workers := range []int{1, 3} {
		m.Workers = workers
		got, want := make([]float64, n*k), make([]float64, n*k)
		gotRows, wantRows := make([]float64, n), make([]float64, n)
		gf, err := m.Mul(ctx, got, w, k, gotRows)
		if err != nil {
			t.Fatal(err)
		}
		wf, _ := d.Mul(ctx, want, w, k, wantRows)
		if !slices.Equal(got, want) || !slices.Equal(gotRows, wantRows) {
			t.Errorf("%d workers: P·W or the row sums differ from the dense reference", workers)
		}
		if math.Abs(gf-wf) > 1e-14*wf {
			t.Errorf("%d workers: ||P||² = %v, dense %v", workers, gf, wf)
		}
		if err := m.MulOneHot(ctx, got, s, k); err != nil {
			t.Fatal(err)
		}
		d.MulOneHot(ctx, want, s, k)
		if !slices.Equal(got, want) {
			t.Errorf("%d workers: P·S differs from the dense reference", workers)
		}
	}
	if err := m.MulOneHot(ctx, make([]float64, n*k), make([]int32, n-1), k); err == nil {
		t.Error("P·S with n-1 labels: no error")
	}
	if _, err := m.Mul(ctx, make([]float64, n), make([]float64, n*k), k, nil); err == nil {
		t.Error("P·W into a short matrix: no error")
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		m.Scale = bad
		if _, err := m.Mul(ctx, make([]float64, n*k), w, k, nil); err == nil {
			t.Errorf("P·W with scale %v: no error", bad)
		}
		if _, err := m.Sweep(k, fw.SweepOptions{}); err == nil {
			t.Errorf("sweep with scale %v: no error", bad)
		}
	}
}

// start returns a random feasible W.
func start(t testing.TB, n, k int) []float64 {
	w := make([]float64, n*k)
	if err := fw.Initialize(w, k, fw.StartRandom, 5); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestMethodsMatchDense runs every method on the graph and on its dense
// form from the same start. The methods whose passes are products agree to
// the rounding of ||P||_F^2; row-wise CD, which updates P·W neighbour by
// neighbour instead of through strips of tiles, reaches the same point to
// the rounding of its carried sums. The graph is scaled by 7 in a second
// round, against the dense 7·P.
func TestMethodsMatchDense(t *testing.T) {
	const n, k = 120, 3
	for _, scale := range []float64{1, 7} {
		m, p := randomGraph(t, n, 10, 4)
		d, err := fw.NewDense(n, scaled(m, p, scale))
		if err != nil {
			t.Fatal(err)
		}
		testMethodsMatchDense(t, m, d, n, k)
	}
}

func testMethodsMatchDense(t *testing.T, m *CSR, d fw.Affinity, n, k int) {
	for _, meth := range methods.All() {
		if meth.Features || meth.Graph { // they need the features or the embedding
			continue
		}
		t.Run(fmt.Sprintf("%s scale %v", meth.Name, m.Scale), func(t *testing.T) {
			run := func(a fw.Affinity) ([]float64, *fw.Result, []float64) {
				w := start(t, n, k)
				var fs []float64
				set := fw.Settings{MaxIter: 40, Refresh: 7, Workers: 2, Recorder: func(it fw.Iteration) error {
					fs = append(fs, it.Objective)
					return nil
				}}
				res, err := fw.Minimize(context.Background(), fw.Problem{P: a, K: k}, w, &set, meth.New(methods.Params{BlockSize: 16}))
				if err != nil {
					t.Fatal(err)
				}
				return w, res, fs
			}
			gw, gres, gfs := run(m)
			dw, dres, _ := run(d)
			if math.Abs(gres.FrobSq-dres.FrobSq) > 1e-14*dres.FrobSq || gres.MaxRowSum != dres.MaxRowSum {
				t.Errorf("||P||² %v and max row sum %v, dense %v and %v", gres.FrobSq, gres.MaxRowSum, dres.FrobSq, dres.MaxRowSum)
			}
			ftol, wtol := 1e-12, 1e-9
			if meth.Name == "rowcd" {
				ftol, wtol = 1e-9, 1e-6
			}
			if math.Abs(gres.Objective-dres.Objective) > ftol*dres.Objective || gres.Iterations != dres.Iterations {
				t.Errorf("objective %v after %d iterations, dense %v after %d", gres.Objective, gres.Iterations, dres.Objective, dres.Iterations)
			}
			for i := range gw {
				if math.Abs(gw[i]-dw[i]) > wtol {
					t.Fatalf("W[%d] = %v, dense %v", i, gw[i], dw[i])
				}
			}
			if meth.Name == "rowcd" || meth.Name == "fw" || meth.Name == "pgd" {
				for i := 1; i < len(gfs); i++ {
					if gfs[i] > gfs[i-1]*(1+1e-12) {
						t.Errorf("objective rose at iteration %d: %v -> %v", i, gfs[i-1], gfs[i])
					}
				}
				if err := simplexRows(gw, k); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// simplexRows reports the first row of w off the simplex.
func simplexRows(w []float64, k int) error {
	for i := 0; i < len(w); i += k {
		var s float64
		for _, v := range w[i : i+k] {
			s += v
		}
		if slices.Min(w[i:i+k]) < 0 || math.Abs(s-1) > 1e-9 {
			return fmt.Errorf("row %d is off the simplex: %v", i/k, w[i:i+k])
		}
	}
	return nil
}

// TestRowCDSameBitsAnyWorkersAndResume checks that a row-wise run on the
// graph gives the same bits for 1 and 3 workers, and that a run stopped at
// a checkpoint and resumed from it ends with the same bits.
func TestRowCDSameBitsAnyWorkersAndResume(t *testing.T) {
	const n, k = 300, 4
	m, _ := randomGraph(t, n, 12, 9)
	ctx := context.Background()
	solve := func(workers int, stopAt int, resume *fw.State) ([]float64, []float64, *fw.State) {
		m.Workers = workers
		w, pw := start(t, n, k), make([]float64, n*k)
		if resume != nil {
			copy(w, resume.W)
			copy(pw, resume.PW)
		}
		var saved *fw.State
		set := fw.Settings{MaxIter: 30, GapTol: -1, Workers: workers, PW: pw, Resume: resume,
			Stop:       func() bool { stopAt--; return stopAt == 0 },
			Checkpoint: func(st *fw.State) error { saved = cloneState(t, st); return nil }}
		if _, err := fw.Minimize(ctx, fw.Problem{P: m, K: k}, w, &set, &fw.RowCD{}); err != nil {
			t.Fatal(err)
		}
		return w, pw, saved
	}
	w1, pw1, _ := solve(1, -1, nil)
	w3, pw3, _ := solve(3, -1, nil)
	if !slices.Equal(w1, w3) || !slices.Equal(pw1, pw3) {
		t.Error("1 and 3 workers give different bits")
	}
	_, _, st := solve(2, 12, nil)
	if st == nil || st.Iter != 11 {
		t.Fatalf("stopped at %v, want a checkpoint at iteration 11", st)
	}
	wr, pwr, _ := solve(1, -1, st)
	if !slices.Equal(w1, wr) || !slices.Equal(pw1, pwr) {
		t.Error("the resumed run ends with other bits than the run never interrupted")
	}
}

// BenchmarkCSR times a P·W pass and a row-wise sweep (five sweeps of
// Minimize, the start's pass included) on ring lattices of n = 100,000
// rows with 2h+1 entries a row (row i's neighbours i±1..i±h, and itself),
// for several h: the scaling in nnz, in stored entries a second.
func BenchmarkCSR(b *testing.B) {
	const n, k = 100_000, 10
	rng := rand.New(rand.NewPCG(1, 1))
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.Float64()
	}
	ctx := context.Background()
	for _, h := range []int{2, 7, 15, 30, 60} {
		rowPtr := make([]int64, n+1)
		var col []int32
		var val []float64
		for i := range n {
			for dj := -h; dj <= h; dj++ {
				col = append(col, int32((i+dj+n)%n))
			}
			slices.Sort(col[len(col)-2*h-1:])
			for range 2*h + 1 {
				val = append(val, 1)
			}
			rowPtr[i+1] = int64(len(col))
		}
		m, err := NewCSR(rowPtr, col, val)
		if err != nil {
			b.Fatal(err)
		}
		nnz := fmt.Sprintf("nnz=%d", m.NNZ())
		for _, isa := range tile.SupportedISAs() {
			b.Run("Mul/"+isa.String()+"/"+nnz, func(b *testing.B) {
				dst := make([]float64, n*k)
				m.Kernel = isa
				for b.Loop() {
					if _, err := m.Mul(ctx, dst, w, k, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(m.NNZ())*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
			})
		}
		b.Run("RowCDSweep/"+nnz, func(b *testing.B) {
			w0 := start(b, n, k)
			var iters int
			set := fw.Settings{MaxIter: 5, GapTol: -1, Refresh: -1, Recorder: func(it fw.Iteration) error {
				if !it.Final {
					iters++
				}
				return nil
			}}
			for b.Loop() {
				w := slices.Clone(w0)
				if _, err := fw.Minimize(ctx, fw.Problem{P: m, K: k}, w, &set, &fw.RowCD{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m.NNZ())*float64(iters)/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(b.Elapsed().Seconds()/float64(iters)*1e3, "ms/sweep")
		})
	}
}
