package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/store/vfs/errorfs"
	"github.com/ssnmf/ssnmf/tile"
)

// inProcess launches a step as goroutines that call Work, as the tasks of
// srun would. fail, if set, says which tasks of which try die before
// writing their part, with a message on their stderr.
type inProcess struct {
	fsys  vfs.FS
	fail  func(pass uint64, task, try int) bool
	mu    sync.Mutex
	tries map[uint64]int
}

func (l *inProcess) Launch(ctx context.Context, s Step) error {
	d, err := Open(s.Dir)
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.tries == nil {
		l.tries = map[uint64]int{}
	}
	try := l.tries[s.Pass]
	l.tries[s.Pass]++
	l.mu.Unlock()
	fsys := l.fsys
	if fsys == nil {
		fsys = vfs.OS{}
	}
	errs := make([]error, s.Tasks)
	var wg sync.WaitGroup
	for t := range s.Tasks {
		wg.Go(func() {
			if l.fail != nil && l.fail(s.Pass, t, try) {
				errs[t] = fmt.Errorf("task %d killed", t)
				os.WriteFile(strings.ReplaceAll(s.Stderr, "%t", fmt.Sprint(t)), []byte("ssnmf worker: killed by the test\n"), 0o644)
				return
			}
			errs[t] = Work(ctx, fsys, d, s.Pass, t, s.Tasks, 2)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func features(n, p int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64() + float64(i/p%3)
	}
	return x
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s[%d] = %v, the local pass gave %v", what, i, got[i], want[i])
		}
	}
}

// TestGaussianSameBits checks that the passes of the Gaussian kernel run as
// steps of 1 to 5 tasks give the local engine's bits.
func TestGaussianSameBits(t *testing.T) {
	const n, p, k, block = 203, 3, 4, 32
	x := features(n, p, 1)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(2, 3))
	w := make([]float64, n*k)
	for i := range w {
		w[i] = rng.Float64()
	}
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(rng.IntN(k))
	}
	for _, prec := range []tile.Precision{tile.Float64, tile.Float32} {
		src, _ := tile.NewGaussianPrecision(x, n, p, 0.4, prec)
		local := &tile.Engine{Source: src, BlockSize: block, Workers: 3}
		pw, ps, rows := make([]float64, n*k), make([]float64, n*k), make([]float64, n)
		frob, err := local.Mul(ctx, pw, w, k, rows)
		if err != nil {
			t.Fatal(err)
		}
		if err := local.MulOneHot(ctx, ps, s, k); err != nil {
			t.Fatal(err)
		}
		for _, tasks := range []int{1, 2, 3, 5} {
			c := &Coordinator{Path: t.TempDir(), Tasks: tasks, Launcher: &inProcess{}}
			a, err := c.Gaussian(x, n, p, 0.4, prec, block)
			if err != nil {
				t.Fatal(err)
			}
			gpw, gps, grows := make([]float64, n*k), make([]float64, n*k), make([]float64, n)
			gfrob, err := a.Mul(ctx, gpw, w, k, grows)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.MulOneHot(ctx, gps, s, k); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%v, %d tasks: ", prec, tasks)
			sameBits(t, name+"P·W", gpw, pw)
			sameBits(t, name+"P·S", gps, ps)
			sameBits(t, name+"row sums", grows, rows)
			if gfrob != frob {
				t.Fatalf("%s||P||² = %v, local %v", name, gfrob, frob)
			}
			if _, err := a.Sweep(k, fw.SweepOptions{}); !errors.Is(err, ErrNoSweep) {
				t.Fatalf("Sweep: %v, want ErrNoSweep", err)
			}
			// Every pass's files are gone; the logs directory stays.
			left, _ := filepath.Glob(filepath.Join(c.Path, "pass-*"))
			if len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
		}
	}
}

// TestKNNSameBits checks that a kNN search run as steps gives graph.KNN's
// graph, for 1 to 4 tasks.
func TestKNNSameBits(t *testing.T) {
	const n, p = 300, 4
	x := features(n, p, 4)
	opt := graph.KNNOptions{Neighbors: 8, Weights: graph.SelfTuning, BlockSize: 50}
	want, err := graph.KNN(context.Background(), x, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tasks := range []int{1, 2, 4} {
		c := &Coordinator{Path: t.TempDir(), Tasks: tasks, Launcher: &inProcess{}}
		o := opt
		o.Search = c.SearchKNN
		g, err := graph.KNN(context.Background(), x, n, p, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.RowPtr, want.RowPtr) || !slices.Equal(g.Col, want.Col) || !slices.Equal(g.Val, want.Val) {
			t.Fatalf("%d tasks: another graph than graph.KNN's", tasks)
		}
		if c.Stats.Steps != 1 {
			t.Fatalf("%d tasks: %d steps, want 1", tasks, c.Stats.Steps)
		}
	}
}

// TestRetry checks that a step whose task dies is launched again, the
// tasks that did their work skipping it, with the same result; and that a
// task that always dies ends the pass with one line naming it and its
// stderr.
func TestRetry(t *testing.T) {
	const n, p, k = 150, 2, 3
	x := features(n, p, 5)
	w := make([]float64, n*k)
	for i := range w {
		w[i] = float64(i%7) / 7
	}
	ctx := context.Background()
	run := func(l Launcher, retries int) ([]float64, *Coordinator, error) {
		c := &Coordinator{Path: t.TempDir(), Tasks: 3, Launcher: l, Retries: retries}
		var logged []string
		c.Log = func(m string) { logged = append(logged, m) }
		a, err := c.Gaussian(x, n, p, 1, tile.Float64, 40)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, n*k)
		_, err = a.Mul(ctx, dst, w, k, nil)
		if err == nil && len(logged) != c.Stats.Retries {
			t.Fatalf("%d retries, %d lines logged", c.Stats.Retries, len(logged))
		}
		return dst, c, err
	}
	want, _, err := run(&inProcess{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, c, err := run(&inProcess{fail: func(_ uint64, task, try int) bool { return task == 1 && try == 0 }}, 2)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "P·W after a retry", got, want)
	if c.Stats.Steps != 2 || c.Stats.Retries != 1 {
		t.Fatalf("%d steps, %d retries, want 2 and 1", c.Stats.Steps, c.Stats.Retries)
	}
	_, _, err = run(&inProcess{fail: func(_ uint64, task, _ int) bool { return task == 2 }}, 1)
	var se *StepError
	if !errors.As(err, &se) || se.Task != 2 || se.Tries != 2 {
		t.Fatalf("a task that always dies: %v, want a StepError of task 2 after 2 tries", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "task 2 of 3") || !strings.Contains(msg, "killed by the test") || !strings.Contains(msg, "after 2 tries") {
		t.Fatalf("error %q, want one line naming task 2, its tries and its stderr", msg)
	}
}

// TestWorkIdempotent checks that a task run again leaves its part as it
// was, and that a task refuses the input of another pass or another run.
func TestWorkIdempotent(t *testing.T) {
	const n, p, k = 90, 2, 2
	x := features(n, p, 6)
	dir := t.TempDir()
	c := &Coordinator{Path: dir, Tasks: 2, Launcher: &inProcess{}}
	if _, err := c.Gaussian(x, n, p, 1, tile.Float64, 32); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, n*k)
	for i := range w {
		w[i] = 0.5
	}
	if _, err := writeBlock(vfs.OS{}, d.InputPath(1), Header{Kind: MulInput, Pass: 1, Rows: n, Cols: k, Source: d.ID}, store.AsBytes(w)); err != nil {
		t.Fatal(err)
	}
	if err := Work(context.Background(), vfs.OS{}, d, 1, 1, 2, 1); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(d.PartPath(1, 1))
	st1, _ := os.Stat(d.PartPath(1, 1))
	if err := Work(context.Background(), vfs.OS{}, d, 1, 1, 2, 3); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(d.PartPath(1, 1))
	st2, _ := os.Stat(d.PartPath(1, 1))
	if string(first) != string(again) || !st1.ModTime().Equal(st2.ModTime()) {
		t.Fatal("the part was written again")
	}
	// A part from another input is recomputed.
	os.WriteFile(d.PartPath(1, 0), first, 0o644)
	if err := Work(context.Background(), vfs.OS{}, d, 1, 0, 2, 1); err != nil {
		t.Fatal(err)
	}
	if h, _, err := readBlock(d.PartPath(1, 0), ProductPart); err != nil || h.Task != 0 {
		t.Fatalf("task 0's part: task %d, %v", h.Task, err)
	}
	for _, tc := range []struct {
		name string
		pass uint64
		h    Header
	}{
		{name: "another pass", pass: 2, h: Header{Kind: MulInput, Pass: 1, Rows: n, Cols: k, Source: d.ID}},
		{name: "another run", pass: 2, h: Header{Kind: MulInput, Pass: 2, Rows: n, Cols: k, Source: d.ID + 1}},
	} {
		if _, err := writeBlock(vfs.OS{}, d.InputPath(2), tc.h, store.AsBytes(w)); err != nil {
			t.Fatal(err)
		}
		if err := Work(context.Background(), vfs.OS{}, d, tc.pass, 0, 2, 1); !errors.Is(err, errStale) {
			t.Errorf("%s: %v, want a stale input", tc.name, err)
		}
	}
	if err := Work(context.Background(), vfs.OS{}, d, 9, 0, 2, 1); err == nil {
		t.Error("a pass without input: no error")
	}
}

// TestWorkFaults fails each write, sync, rename and the rest of a task's
// output in turn (errorfs): the task stops with an error naming the file,
// no part and no temporary file is left, and the task run again writes
// the part. It reports the count of fault points tried.
func TestWorkFaults(t *testing.T) {
	const n, p, k = 80, 2, 3
	x := features(n, p, 7)
	dir := t.TempDir()
	c := &Coordinator{Path: dir, Tasks: 2, Launcher: &inProcess{}}
	if _, err := c.Gaussian(x, n, p, 1, tile.Float64, 32); err != nil {
		t.Fatal(err)
	}
	d, _ := Open(dir)
	w := make([]float64, n*k)
	for i := range w {
		w[i] = 1.0 / k
	}
	if _, err := writeBlock(vfs.OS{}, d.InputPath(1), Header{Kind: MulSumsInput, Pass: 1, Rows: n, Cols: k, Source: d.ID}, store.AsBytes(w)); err != nil {
		t.Fatal(err)
	}
	points := 0
	_, err := errorfs.Each(vfs.OS{}, func(fsys *errorfs.FS) error {
		os.Remove(d.PartPath(1, 0))
		return Work(context.Background(), fsys, d, 1, 0, 2, 1)
	}, func(failAt int, fault *errorfs.Fault, err error) {
		points++
		if fault.Op == errorfs.OpSyncDir {
			// The directory's sync comes after the rename: the part is
			// whole.
			return
		}
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), d.PartPath(1, 0)) {
			t.Fatalf("fault %d (%v): error %v, want one line naming the part", failAt, fault, err)
		}
		if _, serr := os.Stat(d.PartPath(1, 0)); serr == nil {
			t.Fatalf("fault %d (%v): a part was left", failAt, fault)
		}
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(tmp) > 0 {
			t.Fatalf("fault %d (%v): temporary files left: %v", failAt, fault, tmp)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(d.PartPath(1, 0))
	if points < 5 {
		t.Fatalf("%d fault points, want at least one for each of create, write, chmod, sync, close, rename", points)
	}
	if _, _, err := readBlock(d.PartPath(1, 0), ProductPart); err != nil || len(want) == 0 {
		t.Fatalf("the part after the faults: %v", err)
	}
	t.Logf("fault points tried in a task's output: %d", points)
}

// FuzzReadBlock checks that reading any bytes as a block file returns an
// error or a payload of the length and checksum its header gives, and
// never panics.
func FuzzReadBlock(f *testing.F) {
	dir := f.TempDir()
	good := filepath.Join(dir, "good.blk")
	if _, err := writeBlock(vfs.OS{}, good, Header{Kind: MulInput, Pass: 3, Rows: 2, Cols: 2, Source: 7}, store.AsBytes([]float64{1, 2, 3, 4})); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	f.Add(b)
	f.Add(b[:headerSize])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.blk")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		h, payload, err := readBlock(path, MulInput)
		if err != nil {
			return
		}
		if uint64(len(payload)) != h.Length || h.Kind != MulInput {
			t.Fatalf("read %d bytes of a %v, the header says %d", len(payload), h.Kind, h.Length)
		}
		var out bytes.Buffer
		if err := Dump(&out, path); err != nil {
			t.Fatalf("Dump of a readable block: %v", err)
		}
	})
}

// partsKept launches the step in process after noting which parts are
// already there and their times.
type partsKept struct {
	inProcess
	before map[int]time.Time
}

func (l *partsKept) Launch(ctx context.Context, s Step) error {
	d, err := Open(s.Dir)
	if err != nil {
		return err
	}
	l.before = map[int]time.Time{}
	for t := range s.Tasks {
		if fi, err := os.Stat(d.PartPath(s.Pass, t)); err == nil {
			l.before[t] = fi.ModTime()
		}
	}
	if err := l.inProcess.Launch(ctx, s); err != nil {
		return err
	}
	for t, mt := range l.before {
		if fi, err := os.Stat(d.PartPath(s.Pass, t)); err != nil || !fi.ModTime().Equal(mt) {
			return fmt.Errorf("task %d wrote its part again", t)
		}
	}
	return nil
}

// TestRerunReusesParts checks that a pass that failed for good leaves the
// parts done, and that the same pass in the same run directory, as a run
// started again with the same work directory makes it, skips their tasks
// and gives the same result.
func TestRerunReusesParts(t *testing.T) {
	const n, p = 200, 3
	x := features(n, p, 8)
	opt := graph.KNNOptions{Neighbors: 6, Weights: graph.Connectivity, BlockSize: 40}
	want, err := graph.KNN(context.Background(), x, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Coordinator{Path: dir, Tasks: 3, Launcher: &inProcess{fail: func(_ uint64, task, _ int) bool { return task == 1 }}}
	o := opt
	o.Search = c.SearchKNN
	if _, err := graph.KNN(context.Background(), x, n, p, o); !errors.As(err, new(*StepError)) {
		t.Fatalf("a task that always dies: %v, want a StepError", err)
	}
	l := &partsKept{}
	c = &Coordinator{Path: dir, Tasks: 3, Launcher: l}
	o.Search = c.SearchKNN
	g, err := graph.KNN(context.Background(), x, n, p, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.before) != 2 {
		t.Fatalf("the run again found the parts of tasks %v, want 0 and 2", l.before)
	}
	if !slices.Equal(g.RowPtr, want.RowPtr) || !slices.Equal(g.Col, want.Col) || !slices.Equal(g.Val, want.Val) {
		t.Fatal("another graph than graph.KNN's")
	}
}

// corrupting launches the step in process and then, in the first try,
// flips a byte of the payload of task 1's part, as a torn read or a bad
// disk would.
type corrupting struct {
	inProcess
	done bool
}

func (l *corrupting) Launch(ctx context.Context, s Step) error {
	if err := l.inProcess.Launch(ctx, s); err != nil || l.done {
		return err
	}
	l.done = true
	d, err := Open(s.Dir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(d.PartPath(s.Pass, 1))
	if err != nil {
		return err
	}
	b[len(b)-1] ^= 1
	return os.WriteFile(d.PartPath(s.Pass, 1), b, 0o644)
}

// TestDamagedPart checks that a part whose payload does not match its
// checksum is found as it is read, its task run again, and the pass ends
// with the bits of a pass without damage.
func TestDamagedPart(t *testing.T) {
	const n, p, k = 150, 2, 3
	x := features(n, p, 9)
	w := make([]float64, n*k)
	for i := range w {
		w[i] = float64(i%5) / 5
	}
	var want []float64
	for _, l := range []Launcher{&inProcess{}, &corrupting{}} {
		c := &Coordinator{Path: t.TempDir(), Tasks: 3, Launcher: l, Retries: 1}
		var logged []string
		c.Log = func(m string) { logged = append(logged, m) }
		a, err := c.Gaussian(x, n, p, 1, tile.Float64, 40)
		if err != nil {
			t.Fatal(err)
		}
		dst, rows := make([]float64, n*k), make([]float64, n)
		if _, err := a.Mul(context.Background(), dst, w, k, rows); err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = dst
			continue
		}
		sameBits(t, "P·W after a damaged part", dst, want)
		if c.Stats.Retries != 1 {
			t.Fatalf("%d retries, want 1", c.Stats.Retries)
		}
		// The retry says what was wrong with the part, not that it is
		// missing.
		if len(logged) != 1 || !strings.Contains(logged[0], "task 1 has a damaged part (") || !strings.Contains(logged[0], "the step: it succeeded") {
			t.Fatalf("logged %q, want the retry of task 1 naming its damaged part", logged)
		}
	}
}

// TestNewSrun checks that a solve's coordinator runs its steps in the run
// directory RunDir of its work directory, as an absolute path, launched by
// srun with this binary.
func TestNewSrun(t *testing.T) {
	t.Chdir(t.TempDir())
	c, err := NewSrun("work", 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := os.Executable()
	want, _ := filepath.Abs(filepath.Join("work", RunDir))
	if s, ok := c.Launcher.(Srun); !ok || s.Binary != bin || c.Path != want || c.Tasks != 4 || c.Retries != 2 {
		t.Errorf("NewSrun = %+v, want the run directory %s, 4 tasks, 2 retries and srun of %s", c, want, bin)
	}
}
