package fw

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/kmeans"
	"github.com/ssnmf/ssnmf/tile"
)

// blockCD is the block form of RowCD that a dense run across nodes would
// need: each of tasks tasks sweeps its own rows, as RowCD does, against
// P·W at the start of the iteration kept current for its own rows' changes
// only (the diagonal block of P), and WᵀW kept for its own changes; the
// changes D of all tasks are then combined by an exact line search on
// f(W + λD), a quartic whose coefficients need P·D, one pass. With one
// task and λ = 1 it is RowCD's sweep. It lives here, with its measurement
// (BenchmarkBlockRowCD), because it did not converge within 1.5× the
// passes of RowCD (docs/guide/slurm.md, "Block row-wise CD").
type blockCD struct {
	p          []float64 // P, n×n
	n, k       int
	tasks      int
	search     bool // the exact line search; λ = 1 without
	w, pw, a   []float64
	frob       float64
	lastLambda float64
}

func newBlockCD(p []float64, n, k, tasks int, search bool, w []float64) *blockCD {
	b := &blockCD{p: p, n: n, k: k, tasks: tasks, search: search, w: slices.Clone(w)}
	b.pw = denseMul(p, n, b.w, k)
	b.a = gramOf(b.w, n, k)
	for _, v := range p {
		b.frob += v * v
	}
	return b
}

// denseMul returns P·W for the dense n×n P.
func denseMul(p []float64, n int, w []float64, k int) []float64 {
	out := make([]float64, n*k)
	for i := range n {
		oi := out[i*k : (i+1)*k]
		for l, v := range p[i*n : (i+1)*n] {
			if v != 0 {
				axpy(oi, v, w[l*k:(l+1)*k])
			}
		}
	}
	return out
}

// gramOf returns WᵀW.
func gramOf(w []float64, n, k int) []float64 {
	a := make([]float64, k*k)
	for i := range n {
		wi := w[i*k : (i+1)*k]
		for c, x := range wi {
			axpy(a[c*k:(c+1)*k], x, wi)
		}
	}
	return a
}

// objective returns f(W) = 1/4 (||P||² - 2 tr(WᵀPW) + ||WᵀW||²).
func (b *blockCD) objective() float64 {
	return 0.25 * (b.frob - 2*dot(b.w, b.pw) + dot(b.a, b.a))
}

// gap returns the Frank-Wolfe gap at W: Σ_i g_i·w_i - min_j g_ij for the
// gradient G = W WᵀW - P·W.
func (b *blockCD) gap() float64 {
	k := b.k
	g := make([]float64, k)
	var gap float64
	for i := range b.n {
		wi := b.w[i*k : (i+1)*k]
		for j := range g {
			g[j] = -b.pw[i*k+j]
		}
		for c, x := range wi {
			axpy(g, x, b.a[c*k:(c+1)*k])
		}
		gap += dot(g, wi) - slices.Min(g)
	}
	return gap
}

// iterate takes one iteration with moves moves a row visit.
func (b *blockCD) iterate(moves int) {
	n, k := b.n, b.k
	d := make([]float64, n*k) // the change of W
	vs := newVisitScratch(k, 2*DefaultMoves)
	v := make([]float64, k)
	var cols []int32
	var vals []float64
	for t := range b.tasks {
		r0, r1 := t*n/b.tasks, (t+1)*n/b.tasks
		a := slices.Clone(b.a)
		pw := slices.Clone(b.pw[r0*k : r1*k])
		for i := r0; i < r1; i++ {
			copy(v, b.w[i*k:(i+1)*k])
			visitRow(v, pw[(i-r0)*k:(i-r0+1)*k], a, b.p[i*n+i], moves, vs)
			cols, vals = cols[:0], vals[:0]
			for c := range v {
				if dc := v[c] - vs.old[c]; dc != 0 {
					cols, vals = append(cols, int32(c)), append(vals, dc)
					d[i*k+c] = dc
				}
			}
			rankUpdate(a, k, vs.old, cols, vals)
			for l := r0; l < r1; l++ {
				if pli := b.p[l*n+i]; pli != 0 {
					for e, c := range cols {
						pw[(l-r0)*k+int(c)] += pli * vals[e]
					}
				}
			}
		}
	}
	pd := denseMul(b.p, n, d, k)
	lambda := 1.0
	if b.search {
		// f(W+λD) - f(W) = 1/4 (-2(2λ tr(DᵀPW) + λ² tr(DᵀPD))
		//                      + ||A + λB + λ²C||² - ||A||²),
		// with A = WᵀW, B = WᵀD + DᵀW and C = DᵀD.
		wd := make([]float64, k*k) // WᵀD
		for i := range n {
			for c, x := range b.w[i*k : (i+1)*k] {
				axpy(wd[c*k:(c+1)*k], x, d[i*k:(i+1)*k])
			}
		}
		bm := make([]float64, k*k)
		for r := range k {
			for c := range k {
				bm[r*k+c] = wd[r*k+c] + wd[c*k+r]
			}
		}
		cm := gramOf(d, n, k)
		q := quartic{
			a1: 0.25 * (-4*dot(d, b.pw) + 2*dot(b.a, bm)),
			a2: 0.25 * (-2*dot(d, pd) + dot(bm, bm) + 2*dot(b.a, cm)),
			a3: 0.25 * 2 * dot(bm, cm),
			a4: 0.25 * dot(cm, cm),
		}
		lambda = q.argmin()
	}
	b.lastLambda = lambda
	axpy(b.w, lambda, d)
	axpy(b.pw, lambda, pd)
	b.a = gramOf(b.w, n, k)
}

// TestBlockCD checks the block form's properties on a small problem: rows
// on the simplex, the objective never up under the exact line search, P·W
// kept right, and with one task and λ = 1 the tracked objective is
// RowCD's.
func TestBlockCD(t *testing.T) {
	const n, p, k = 90, 3, 4
	x := make([]float64, n*p)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range x {
		x[i] = rng.NormFloat64() + float64(i/p%3)
	}
	P := gaussianP(x, n, p, 0.5)
	w0 := make([]float64, n*k)
	if err := Initialize(w0, k, StartRandom, 1); err != nil {
		t.Fatal(err)
	}
	for _, tasks := range []int{1, 2, 3, 7} {
		b := newBlockCD(P, n, k, tasks, true, w0)
		f := b.objective()
		for it := range 15 {
			b.iterate(DefaultMoves)
			if err := checkSimplex(b.w, k, 1e-12); err != nil {
				t.Fatalf("%d tasks, iteration %d: %v", tasks, it, err)
			}
			if got := b.objective(); got > f+1e-9*math.Abs(f) {
				t.Fatalf("%d tasks, iteration %d: objective %v after %v (λ = %v)", tasks, it, got, f, b.lastLambda)
			} else {
				f = got
			}
			if !(b.lastLambda >= 0 && b.lastLambda <= 1) {
				t.Fatalf("λ = %v", b.lastLambda)
			}
		}
		want := denseMul(P, n, b.w, k)
		for i := range want {
			if math.Abs(want[i]-b.pw[i]) > 1e-9*(1+math.Abs(want[i])) {
				t.Fatalf("%d tasks: P·W[%d] = %v, recomputed %v", tasks, i, b.pw[i], want[i])
			}
		}
	}
	// One task, λ = 1: RowCD's sweeps on the same P.
	dense, err := NewDense(n, P)
	if err != nil {
		t.Fatal(err)
	}
	w := slices.Clone(w0)
	set := &Settings{MaxIter: 5, GapTol: -1, Workers: 1}
	res, err := Minimize(context.Background(), Problem{P: dense, K: k}, w, set, &RowCD{})
	if err != nil {
		t.Fatal(err)
	}
	b := newBlockCD(P, n, k, 1, false, w0)
	for range 5 {
		b.iterate(DefaultMoves)
	}
	if math.Abs(b.objective()-res.Objective) > 1e-9*math.Abs(res.Objective) {
		t.Fatalf("one task, λ = 1: objective %v after 5 sweeps, RowCD %v", b.objective(), res.Objective)
	}
}

// gaussianP returns the dense Gaussian kernel of the n×p rows x.
func gaussianP(x []float64, n, p int, gamma float64) []float64 {
	P := make([]float64, n*n)
	for i := range n {
		for j := range n {
			var d float64
			for q := range p {
				e := x[i*p+q] - x[j*p+q]
				d += e * e
			}
			P[i*n+j] = math.Exp(-gamma * d)
		}
	}
	return P
}

// BenchmarkBlockRowCD measures the passes over P that the block form needs
// to reach RowCD's stopping rule (relative gap 1e-5, here exact at every
// iteration) on the shared data sets, against RowCD itself (one task,
// λ = 1), from the same k-means start: RowCD costs a pass a sweep; an
// iteration of the block form reads the diagonal blocks of its tasks (1/T
// of P) and makes one pass for P·D. It reports passes and their ratio to
// RowCD's; run it with
//
//	go test ./fw -run '^$' -bench BlockRowCD -benchtime 1x
func BenchmarkBlockRowCD(b *testing.B) {
	dir := filepath.Join("..", "..", "shared", "data")
	for _, set := range []string{"blood", "yeast", "satimage"} {
		x, n, p, k, err := readLabeled(filepath.Join(dir, set+".csv"))
		if err != nil {
			b.Skipf("no shared data: %v", err)
		}
		tile.Standardize(x, n, p)
		bw, err := tile.AutoBandwidth(x, n, p, 1)
		if err != nil {
			b.Fatal(err)
		}
		P := gaussianP(x, n, p, bw.Gamma)
		km, err := kmeans.Cluster(context.Background(), x, n, p, k, kmeans.Settings{Seed: 1, Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		w0 := make([]float64, n*k)
		if err := km.Soft(w0, x, bw.Gamma); err != nil {
			b.Fatal(err)
		}
		const maxIter, rtol = 500, 1e-5
		var serial float64
		for _, tasks := range []int{1, 2, 4, 16} {
			b.Run(fmt.Sprintf("%s/tasks=%d", set, tasks), func(b *testing.B) {
				for range b.N {
					bc := newBlockCD(P, n, k, tasks, tasks > 1, w0)
					it := 0
					for ; it < maxIter && bc.gap() > rtol*math.Abs(bc.objective()); it++ {
						bc.iterate(DefaultMoves)
					}
					passes := float64(it)
					if tasks > 1 {
						passes *= 1 + 1/float64(tasks)
					} else {
						serial = passes
					}
					b.ReportMetric(float64(it), "iterations")
					b.ReportMetric(passes, "passes")
					b.ReportMetric(passes/serial, "vs-rowcd")
					b.ReportMetric(bc.objective(), "objective")
				}
			})
		}
	}
}

// readLabeled reads a CSV file of numeric features and a label column,
// and returns the features, their shape and the number of classes.
func readLabeled(path string) (x []float64, n, p, k int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		return nil, 0, 0, 0, fmt.Errorf("%s: no header", path)
	}
	head := strings.Split(sc.Text(), ",")
	label := slices.Index(head, "label")
	classes := map[string]bool{}
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		for c, s := range fields {
			if c == label {
				classes[s] = true
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, 0, 0, 0, fmt.Errorf("%s row %d: %w", path, n+1, err)
			}
			x = append(x, v)
		}
		n++
	}
	return x, n, len(head) - 1, len(classes), sc.Err()
}
