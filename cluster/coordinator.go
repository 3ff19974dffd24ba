package cluster

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/tile"
)

// Step is one distributed pass: Tasks tasks of "ssnmf worker -run Dir
// -pass Pass", each finding its index in its environment (SLURM_PROCID).
type Step struct {
	Name   string // a name for the engine's listings, e.g. ssnmf-pass-000007
	Dir    string // the run directory
	Pass   uint64
	Tasks  int
	Stderr string // the file of a task's standard error, %t standing for its index
}

// Launcher runs the tasks of a step and waits for all of them: Srun, as a
// job step of the Slurm allocation the coordinator runs in. An error means
// the step failed; which tasks did their work is told by their parts.
type Launcher interface {
	Launch(ctx context.Context, s Step) error
}

// Stats counts the steps of a coordinator.
type Stats struct {
	Steps   int           // steps launched, retries included
	Retries int           // steps launched again after a failure
	Time    time.Duration // in the steps, launching and waiting
	Collect time.Duration // reading the parts
}

// Coordinator runs the O(n²) work of a run as steps of Tasks tasks: the
// search of a kNN graph (SearchKNN) and the passes of the Gaussian kernel
// (Gaussian), over a run directory that it and every task see. It writes
// each pass's input, launches one step, and reads the parts in task order;
// the results have the same bits as the passes on one machine. A failed
// step is launched again, up to Retries times; its tasks that did their
// work skip it.
type Coordinator struct {
	Path     string // the run directory
	Tasks    int
	Launcher Launcher
	Retries  int
	// FS is the file system of the coordinator's writes; vfs.OS{} if nil.
	FS vfs.FS
	// Log, if not nil, gets a line for each retry.
	Log func(msg string)
	// Kernel is the family of the tasks' kernels (tile.ISAAuto: the
	// fastest each task's CPU runs); the run directory records it.
	Kernel tile.ISA

	Stats Stats

	dir  *Dir
	pass uint64
}

// family returns the name of the kernel family of the tasks, "" for auto.
func (c *Coordinator) family() string {
	if c.Kernel == tile.ISAAuto {
		return ""
	}
	return c.Kernel.String()
}

func (c *Coordinator) fs() vfs.FS {
	if c.FS == nil {
		return vfs.OS{}
	}
	return c.FS
}

// prepare writes the run directory for spec and x.
func (c *Coordinator) prepare(spec Spec, x []float64) error {
	if c.Tasks < 1 || c.Launcher == nil || c.Retries < 0 {
		return fmt.Errorf("cluster: %d tasks, %d retries, launcher %v", c.Tasks, c.Retries, c.Launcher)
	}
	d, err := Create(c.fs(), c.Path, spec, x)
	if err != nil {
		return err
	}
	c.dir = d
	return nil
}

// SearchKNN runs the search of the kNN graph of the n×p rows x as one step,
// and returns its parts (graph.KNNRows) in task order, for graph.JoinKNN.
// It serves as graph.KNNOptions.Search.
func (c *Coordinator) SearchKNN(ctx context.Context, x []float64, n, p int, opt graph.KNNOptions) ([]*graph.KNNPart, error) {
	m := opt.Neighbors
	if m == 0 {
		m = graph.DefaultNeighbors
	}
	block := opt.BlockSize
	if block == 0 {
		block = tile.DefaultBlockSize
	}
	spec := Spec{Kernel: KNN, N: n, P: p, BlockSize: min(block, n), Neighbors: min(m, n), Weights: opt.Weights.String(), Family: c.family()}
	if err := c.prepare(spec, x); err != nil {
		return nil, err
	}
	parts := make([]*graph.KNNPart, c.Tasks)
	err := c.run(ctx, Header{Kind: KNNInput, Rows: uint64(n)}, nil, func(t int, h Header, payload []byte) (err error) {
		parts[t], err = knnPartOf(h, payload)
		return err
	})
	return parts, err
}

// knnPartOf returns the neighbour lists of a KNNPart's payload.
func knnPartOf(h Header, payload []byte) (*graph.KNNPart, error) {
	m, rows, size := h.Cols, h.Rows, uint64(len(payload))
	if rows > size || m > 0 && rows > size/m {
		return nil, fmt.Errorf("a part of %d rows of %d neighbours in %d bytes", rows, m, len(payload))
	}
	s, err := cut(payload, 4*int(rows), 4*int(rows), 8*int(rows*m), 4*int(rows*m))
	if err != nil {
		return nil, err
	}
	return &graph.KNNPart{M: int(m), Rows: int32s(s[0]), Count: int32s(s[1]), Dist: float64s(s[2]), Index: int32s(s[3])}, nil
}

// Gaussian returns the Gaussian kernel of the n×p rows x with bandwidth
// gamma as an fw.Affinity whose products (Mul, MulOneHot) run as steps, in
// tiles of edge block. It has no Sweep: a row-wise method needs every row
// of P·W current after each row's update, which steps cannot give, so a
// run on it uses a method of whole passes (fw's FrankWolfe).
func (c *Coordinator) Gaussian(x []float64, n, p int, gamma float64, prec tile.Precision, block int) (fw.Affinity, error) {
	spec := Spec{Kernel: Gaussian, N: n, P: p, Gamma: gamma, Precision: prec.String(), BlockSize: min(block, n), Family: c.family()}
	if block <= 0 {
		spec.BlockSize = min(tile.DefaultBlockSize, n)
	}
	if err := c.prepare(spec, x); err != nil {
		return nil, err
	}
	e, err := spec.engine(x, 1)
	if err != nil {
		return nil, err
	}
	return &gaussian{c: c, e: e}, nil
}

// run runs one pass: it writes the input (header h, payload), launches
// the step until every task's part is there or the retries are spent, and
// hands the parts to collect in task order, then removes the pass's files.
// A pass that fails leaves them: the same pass of a run in the same
// directory (the same input) finds the parts done and skips their tasks.
func (c *Coordinator) run(ctx context.Context, h Header, payload []byte, collect func(task int, h Header, payload []byte) error) error {
	c.pass++
	d, pass := c.dir, c.pass
	h.Pass, h.Source = pass, d.ID
	in, err := writeBlock(c.fs(), d.InputPath(pass), h, payload)
	if err != nil {
		return fmt.Errorf("pass %d: %w", pass, err)
	}
	want := h.Kind.part()
	for try := 0; ; try++ {
		start := time.Now()
		lerr := c.Launcher.Launch(ctx, Step{Name: fmt.Sprintf("ssnmf-pass-%06d", pass), Dir: d.Path, Pass: pass, Tasks: c.Tasks, Stderr: d.LogPath(pass, try, -1)})
		c.Stats.Steps++
		c.Stats.Time += time.Since(start)
		if err := ctx.Err(); err != nil {
			return err
		}
		start = time.Now()
		bad, part, err := c.collect(pass, in.ID(), want, collect)
		c.Stats.Collect += time.Since(start)
		if err != nil {
			return err
		}
		if bad < 0 {
			c.clean(pass)
			return nil
		}
		why := "it succeeded"
		if lerr != nil {
			why = lerr.Error()
		}
		if try == c.Retries {
			log := d.LogPath(pass, try, bad)
			return &StepError{Pass: pass, Task: bad, Tasks: c.Tasks, Part: part, Tries: try + 1, Step: why, Log: log, Stderr: lastLine(log)}
		}
		c.Stats.Retries++
		if c.Log != nil {
			c.Log(fmt.Sprintf("pass %d: task %d %s (the step: %s); launching the step again, retry %d of %d", pass, bad, part, why, try+1, c.Retries))
		}
	}
}

// collect reads the parts of a pass in task order and hands each on as it
// is read, so that one part at a time is in memory, or returns the first
// task whose part is missing, damaged or not of input id, with what is
// wrong with it ("has no part", "has a damaged part (why)"); -1 when every
// part was there. The headers are checked first, so a part missing is found
// before any is read; a part damaged is found as it is read, and the parts
// of a later try are handed on again, so collect must set, not add.
func (c *Coordinator) collect(pass, id uint64, want Kind, collect func(int, Header, []byte) error) (bad int, part string, err error) {
	wrong := func(t int, h Header, err error) string {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "has no part"
		case err != nil:
			return fmt.Sprintf("has a damaged part (%v)", err)
		case !(h.Kind == want && h.Source == id && h.Pass == pass && h.Task == uint32(t) && h.Tasks == uint32(c.Tasks)):
			return fmt.Sprintf("has a part of another step (%s: kind %v, pass %d, task %d of %d)", c.dir.PartPath(pass, t), h.Kind, h.Pass, h.Task, h.Tasks)
		}
		return ""
	}
	for t := range c.Tasks {
		h, err := readHeader(c.dir.PartPath(pass, t))
		if why := wrong(t, h, err); why != "" {
			return t, why, nil
		}
	}
	for t := range c.Tasks {
		h, payload, err := readBlock(c.dir.PartPath(pass, t), want)
		if why := wrong(t, h, err); why != "" {
			return t, why, nil
		}
		if err := collect(t, h, payload); err != nil {
			return 0, "", fmt.Errorf("pass %d: %s: %w", pass, c.dir.PartPath(pass, t), err)
		}
	}
	return -1, "", nil
}

// clean removes the input and the parts of a pass; the logs stay.
func (c *Coordinator) clean(pass uint64) {
	os.Remove(c.dir.InputPath(pass)) // a file left behind is only disk space
	for t := range c.Tasks {
		os.Remove(c.dir.PartPath(pass, t))
	}
}

// StepError reports a pass whose step failed more often than the retries
// allow: the first task without a part, and the end of its output.
type StepError struct {
	Pass        uint64
	Task, Tasks int
	Part        string // what is wrong with the task's part: "has no part", "has a damaged part (why)"
	Tries       int
	Step        string // how the last step ended
	Log         string // the task's output in the last try
	Stderr      string // its last line
}

// Error returns the report as one line.
func (e *StepError) Error() string {
	return fmt.Sprintf("pass %d: task %d of %d %s after %d tries (the last step: %s); its output (%s) ends: %s",
		e.Pass, e.Task, e.Tasks, cmp.Or(e.Part, "has no part"), e.Tries, e.Step, e.Log, e.Stderr)
}

// lastLine returns the last non-empty line of the file at path, or why
// there is none.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no stderr: %v)", err)
	}
	defer f.Close()
	last := "(empty)"
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			last = l
		}
	}
	return last
}

// gaussian is the Gaussian kernel whose passes run as steps.
type gaussian struct {
	c *Coordinator
	e *tile.Engine // the parts' rows; it runs no pass
}

func (g *gaussian) N() int { return g.e.N() }

func (g *gaussian) Mul(ctx context.Context, dst, w []float64, k int, rowSums []float64) (float64, error) {
	n := g.N()
	switch {
	case k < 1 || len(w) != n*k || len(dst) != n*k:
		return 0, fmt.Errorf("cluster pass P·W: W and P·W of %d and %d values, want %d×%d", len(w), len(dst), n, k)
	case rowSums != nil && len(rowSums) != n:
		return 0, fmt.Errorf("cluster pass P·W: %d row sums, want %d", len(rowSums), n)
	}
	kind := MulInput
	if rowSums != nil {
		kind = MulSumsInput
	}
	norms := make([][]float64, g.c.Tasks) // each task's row blocks' shares of ||P||²
	err := g.c.run(ctx, Header{Kind: kind, Rows: uint64(n), Cols: uint64(k)}, store.AsBytes(w), func(t int, h Header, payload []byte) error {
		r0, r1 := g.e.PartRows(t, g.c.Tasks)
		rows := r1 - r0
		lengths := []int{8 * rows * k}
		if rowSums != nil {
			lengths = append(lengths, 8*rows, 8*g.e.BlockNorms(t, g.c.Tasks))
		}
		if h.Rows != uint64(rows) || h.Cols != uint64(k) {
			return fmt.Errorf("a part of %d×%d, want %d×%d", h.Rows, h.Cols, rows, k)
		}
		s, err := cut(payload, lengths...)
		if err != nil {
			return err
		}
		copy(store.AsBytes(dst[r0*k:r1*k]), s[0])
		if rowSums != nil {
			copy(store.AsBytes(rowSums[r0:r1]), s[1])
			norms[t] = float64s(s[2])
		}
		return nil
	})
	return tile.FrobSq(slices.Concat(norms...)), err
}

func (g *gaussian) MulOneHot(ctx context.Context, dst []float64, s []int32, k int) error {
	n := g.N()
	if k < 1 || len(s) != n || len(dst) != n*k {
		return fmt.Errorf("cluster pass P·S: %d assignments and P·S of %d values, want %d and %d×%d", len(s), len(dst), n, n, k)
	}
	for i, c := range s {
		if c < 0 || int(c) >= k {
			return fmt.Errorf("cluster pass P·S: row %d has column %d, want 0 <= c < %d", i, c, k)
		}
	}
	return g.c.run(ctx, Header{Kind: OneHotInput, Rows: uint64(n), Cols: uint64(k)}, store.AsBytes(s), func(t int, h Header, payload []byte) error {
		r0, r1 := g.e.PartRows(t, g.c.Tasks)
		if h.Rows != uint64(r1-r0) || h.Cols != uint64(k) || len(payload) != 8*(r1-r0)*k {
			return fmt.Errorf("a part of %d×%d in %d bytes, want %d×%d", h.Rows, h.Cols, len(payload), r1-r0, k)
		}
		copy(store.AsBytes(dst[r0*k:r1*k]), payload)
		return nil
	})
}

// ErrNoSweep is the error of the Sweep of an affinity whose passes run as
// steps.
var ErrNoSweep = errors.New("the passes of a cluster engine have no row sweeps (rowcd); use a method of whole passes, -method fw")

func (g *gaussian) Sweep(int, fw.SweepOptions) (fw.Sweep, error) { return nil, ErrNoSweep }
