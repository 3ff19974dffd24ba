package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/ssnmf/ssnmf/affinity"
	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
	"github.com/ssnmf/ssnmf/tile"
)

// The files of a run directory.
const (
	specFile     = "run.json"
	featuresFile = "features.blk"
)

// The kernels a run directory serves.
const (
	Gaussian = "gaussian" // the Gaussian kernel's passes
	KNN      = "knn"      // the search of a kNN graph
)

// Spec is what a run directory's tasks compute with: the kernel and its
// settings. It is kept in run.json.
type Spec struct {
	Kernel    string  `json:"kernel"` // Gaussian or KNN
	N         int     `json:"n"`
	P         int     `json:"p"`
	Gamma     float64 `json:"gamma,omitempty"`     // the Gaussian kernel's bandwidth
	Precision string  `json:"precision,omitempty"` // the Gaussian kernel's values, tile.Precision's name
	BlockSize int     `json:"block_size"`          // the tile edge; the parts are runs of row blocks
	Neighbors int     `json:"neighbors,omitempty"` // the kNN graph's M
	Weights   string  `json:"weights,omitempty"`   // the kNN graph's weights, graph.Weights' name
	// Features is the CRC-32C of the features' payload.
	Features uint32 `json:"features_crc32c"`
	// Family is the family of vector kernels the coordinator ran
	// (tile.ISA's name; "" for auto): a task on a CPU without it runs the
	// fastest family it has (see Dir.KernelNote).
	Family string `json:"kernel_family,omitempty"`
}

// ID identifies the run: every input names it as its source, so a task
// refuses an input of another run.
func (s *Spec) ID() uint64 {
	b, _ := json.Marshal(s) // a struct of plain fields always marshals
	return uint64(crc32.Checksum(b, castagnoli))<<32 | uint64(s.Features)
}

func (s *Spec) check() error {
	if s.Family != "" {
		if _, err := tile.ParseISA(s.Family); err != nil {
			return err
		}
	}
	switch {
	case s.N < 1 || s.P < 0 || s.BlockSize < 1:
		return fmt.Errorf("n = %d, p = %d, block size %d", s.N, s.P, s.BlockSize)
	case s.Kernel == Gaussian:
		if !(s.Gamma > 0) {
			return fmt.Errorf("gamma %v, want > 0", s.Gamma)
		}
		_, err := tile.ParsePrecision(s.Precision)
		return err
	case s.Kernel == KNN:
		if s.Neighbors < 1 {
			return fmt.Errorf("%d neighbours", s.Neighbors)
		}
		_, err := graph.ParseWeights(s.Weights)
		return err
	}
	return fmt.Errorf("kernel %q, want %q or %q", s.Kernel, Gaussian, KNN)
}

// kernel returns the kernel family the tasks run: Family if this CPU runs
// it, else the fastest it does, and whether that is another.
func (s *Spec) kernel() (tile.ISA, bool) {
	isa, err := tile.ParseISA(s.Family)
	if s.Family == "" || err != nil { // check refuses an unknown name
		isa = tile.ISAAuto
	}
	return isa.Fallback()
}

// knnOptions returns the options of the kNN search.
func (s *Spec) knnOptions(workers int) graph.KNNOptions {
	w, _ := graph.ParseWeights(s.Weights) // checked by check
	isa, _ := s.kernel()
	return graph.KNNOptions{Neighbors: s.Neighbors, Weights: w, BlockSize: s.BlockSize, Workers: workers, Kernel: isa}
}

// engine returns the tile engine of the Gaussian kernel of x, set up as a
// local run sets it up (affinity.GaussianEngine).
func (s *Spec) engine(x []float64, workers int) (*tile.Engine, error) {
	prec, err := tile.ParsePrecision(s.Precision)
	if err != nil {
		return nil, err
	}
	isa, _ := s.kernel()
	return affinity.GaussianEngine(x, s.N, s.P, s.Gamma, prec, s.BlockSize, workers, isa)
}

// Dir is a run directory on storage that the coordinator and every task
// see: the spec, the features, and the inputs and outputs of the passes.
type Dir struct {
	Path string
	Spec Spec
	ID   uint64    // Spec.ID()
	X    []float64 // the features, N×P
	fsys vfs.FS
}

// Create makes path a run directory for spec and the features x (spec.N ×
// spec.P; spec.Features is set here), through fsys. If path already holds
// the same run, as after a resumed run, its files are kept.
func Create(fsys vfs.FS, path string, spec Spec, x []float64) (*Dir, error) {
	spec.Features = crc32.Checksum(store.AsBytes(x), castagnoli)
	if err := spec.check(); err != nil {
		return nil, fmt.Errorf("run directory %s: %w", path, err)
	}
	if len(x) != spec.N*spec.P {
		return nil, fmt.Errorf("run directory %s: %d feature values, want %d×%d", path, len(x), spec.N, spec.P)
	}
	if err := os.MkdirAll(filepath.Join(path, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	d := &Dir{Path: path, Spec: spec, ID: spec.ID(), X: x, fsys: fsys}
	if old, err := Open(path); err == nil && old.ID == d.ID {
		return d, nil
	}
	js, err := json.MarshalIndent(&spec, "", "  ")
	if err != nil {
		return nil, err
	}
	// The features go first: a run.json names features that are in place.
	fh := Header{Kind: Features, Rows: uint64(spec.N), Cols: uint64(spec.P), Source: d.ID}
	if _, err := writeBlock(fsys, d.path(featuresFile), fh, store.AsBytes(x)); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if err := store.WriteFileAtomicFS(fsys, d.path(specFile), func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	}); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	return d, nil
}

// Open opens the run directory at path, as a task does: it reads the spec
// and the features and checks that they belong together.
func Open(path string) (*Dir, error) {
	b, err := os.ReadFile(filepath.Join(path, specFile))
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	d := &Dir{Path: path, fsys: vfs.OS{}}
	if err := json.Unmarshal(b, &d.Spec); err != nil {
		return nil, fmt.Errorf("run directory: %s: %w", d.path(specFile), err)
	}
	if err := d.Spec.check(); err != nil {
		return nil, fmt.Errorf("run directory: %s: %w", d.path(specFile), err)
	}
	d.ID = d.Spec.ID()
	h, payload, err := readBlock(d.path(featuresFile), Features)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	switch {
	case h.Source != d.ID:
		return nil, fmt.Errorf("run directory: %s belongs to another run (source %016x, run %016x)", d.path(featuresFile), h.Source, d.ID)
	case h.Rows != uint64(d.Spec.N) || h.Cols != uint64(d.Spec.P):
		return nil, fmt.Errorf("run directory: %s holds %d×%d features, %s says %d×%d", d.path(featuresFile), h.Rows, h.Cols, specFile, d.Spec.N, d.Spec.P)
	}
	d.X = float64s(payload)
	return d, nil
}

func (d *Dir) path(name string) string { return filepath.Join(d.Path, name) }

// InputPath and PartPath name the input of a pass and the part of a task.
func (d *Dir) InputPath(pass uint64) string { return d.path(fmt.Sprintf("pass-%06d.in", pass)) }

// PartPath names the output of task task of a pass.
func (d *Dir) PartPath(pass uint64, task int) string {
	return d.path(fmt.Sprintf("pass-%06d.part-%04d", pass, task))
}

// LogPath names the standard error of task task (or, with task < 0,
// Slurm's pattern %t for it) in try try of a pass.
func (d *Dir) LogPath(pass uint64, try, task int) string {
	t := "%t"
	if task >= 0 {
		t = fmt.Sprint(task)
	}
	return d.path(filepath.Join("logs", fmt.Sprintf("pass-%06d.try-%d.task-%s.err", pass, try, t)))
}

// errStale reports an input or a part that is not of this run or pass.
var errStale = errors.New("stale or foreign")

// KernelNote returns a line saying that this CPU lacks the kernel family
// the run's coordinator ran, and which it runs instead (the results then
// differ in rounding), or "" if it runs the same.
func (d *Dir) KernelNote() string {
	isa, other := d.Spec.kernel()
	if !other {
		return ""
	}
	return fmt.Sprintf("the run's kernels are %s; this CPU (%s) lacks them: the task runs %s, whose results differ in rounding", d.Spec.Family, tile.CPUFeatures(), isa)
}
