package solver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/workdir"
)

// CheckpointFile is the name of the checkpoint in a work directory.
const CheckpointFile = "checkpoint.ssnmf"

// Workspace holds the n×k matrices of a run: W, P·W and the method's
// second matrix (P·S), and the best W of several starts and W in the
// input's order when they are made.
//
// They are held in anonymous memory when all five fit in the memory the
// caller grants (the command grants the anonymous share of its memory
// budget, which the kNN search's scratch has released by then), and as
// memory-mapped matrix files of the work directory otherwise, so that a
// run larger than memory stays possible. A solve rewrites these matrices
// at every sweep: in files, the kernel writes each dirty page back to
// the disk again and again, which anonymous memory never does. The
// placement changes no bit of a run, and not its resumption either: a
// checkpoint saves W and P·W in a file of its own, and the best W of a
// checkpointed run in a file named by BestPath, in either placement.
type Workspace struct {
	Dir       string    // the work directory
	N, K      int       // the rows and the clusters
	W, PW, PS []float64 // W (W.mat), P·W (PW.mat) and P·S (PS.mat)
	Best      []float64 // the best W of several starts (best.mat); nil until made by Matrix
	// InMemory reports that the matrices are in anonymous memory, not in
	// files of Dir.
	InMemory bool
	mats     []*store.Matrix
	anon     [][]byte
	spare    int64 // the memory granted that the matrices do not take
}

// WorkspaceBytes returns the most bytes the matrices of a workspace of n
// rows and k clusters take: five n×k matrices of float64 (W, P·W, P·S, the
// best W and W in the input's order).
func WorkspaceBytes(n, k int) int64 { return 5 * 8 * int64(n) * int64(k) }

// NewWorkspace makes the matrices of W, P·W and P·S, each n×k: in
// anonymous memory if WorkspaceBytes(n, k) is at most memory, else as
// matrix files in the directory dir, mapped.
func NewWorkspace(dir string, n, k int, memory int64) (*Workspace, error) {
	ws := &Workspace{Dir: dir, N: n, K: k, InMemory: WorkspaceBytes(n, k) <= memory, spare: memory}
	if ws.InMemory {
		ws.spare -= WorkspaceBytes(n, k)
	}
	for _, m := range []struct {
		name string
		dst  *[]float64
	}{{"W.mat", &ws.W}, {"PW.mat", &ws.PW}, {"PS.mat", &ws.PS}} {
		var err error
		if *m.dst, err = ws.Matrix(m.name); err != nil {
			ws.Close()
			return nil, err
		}
	}
	return ws, nil
}

// ScratchSpace returns the space of the run's other scratch memory (the
// spectral embedding's blocks and coarse graphs): anonymous memory up to
// what the memory granted to NewWorkspace leaves beside the matrices,
// then unlinked files in the work directory.
func (ws *Workspace) ScratchSpace() *store.ScratchSpace {
	return store.NewScratchSpace(ws.Dir, max(ws.spare, 0))
}

// SweepWindow returns the rows of P·W that a sweep of a sparse P keeps
// current at once (fw.SweepOptions.Window): 0, all of them, when the
// matrices are in memory, else as many as the memory granted to
// NewWorkspace holds, which the matrices in files leave unused, but at
// least minWindow rows and a 256th of them (a file a window). A sweep's
// visits of those rows then change a copy of their rows of P·W in
// anonymous memory, and the changes to other rows are set aside and added
// window by window, rather than each bringing in and dirtying a page
// anywhere in the file.
func (ws *Workspace) SweepWindow() int {
	if ws.InMemory {
		return 0
	}
	return max(minWindow, (ws.N+255)/256, int(ws.spare/int64(8*ws.K)))
}

// minWindow is the fewest rows of a window of SweepWindow.
const minWindow = 1 << 16

// Matrix makes an n×k matrix of zeros, in anonymous memory or as the
// matrix file named name in the work directory, and returns its data,
// which stays valid until Close.
func (ws *Workspace) Matrix(name string) ([]float64, error) {
	if ws.InMemory {
		b, err := store.MapAnonymous(8 * ws.N * ws.K)
		if err != nil {
			return nil, fmt.Errorf("%s in memory (%d×%d): %w", name, ws.N, ws.K, err)
		}
		ws.anon = append(ws.anon, b)
		return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), ws.N*ws.K), nil
	}
	m, err := store.CreateMatrix(filepath.Join(ws.Dir, name), ws.N, ws.K)
	if err != nil {
		return nil, err
	}
	ws.mats = append(ws.mats, m)
	return m.Data(), nil
}

// Close releases every matrix of the workspace, leaving the files of one
// in the work directory in place.
func (ws *Workspace) Close() {
	for _, m := range ws.mats {
		m.Close()
	}
	for _, b := range ws.anon {
		store.UnmapAnonymous(b)
	}
	ws.mats, ws.anon = nil, nil
}

// KeepBest copies W into Best, the best W of the starts so far, which it
// makes (best.mat) on first use.
func (ws *Workspace) KeepBest() error {
	if ws.Best == nil {
		var err error
		if ws.Best, err = ws.Matrix("best.mat"); err != nil {
			return err
		}
	}
	copy(ws.Best, ws.W)
	return nil
}

// InputOrder returns W in the input's order of the rows: W itself if
// order is nil, else W's rows moved by order (see affinity.Built.Order)
// into a matrix file of the work directory, assembled in runs of the
// memory granted that the matrices do not take (store.PermuteRows).
func (ws *Workspace) InputOrder(order []int32) ([]float64, error) {
	if order == nil {
		return ws.W, nil
	}
	w, err := ws.Matrix("W.input.mat")
	if err != nil {
		return nil, err
	}
	dir := ws.Dir // for the run files of a W larger than memory
	if ws.InMemory {
		dir = ""
	}
	return w, store.PermuteRows(w, ws.W, ws.K, order, dir, ws.spare)
}

// CheckpointPath returns the path of the work directory's checkpoint.
func (ws *Workspace) CheckpointPath() string { return filepath.Join(ws.Dir, CheckpointFile) }

// BestPath returns the file of the best W of the starts up to start s,
// which a checkpoint of a later start names.
func (ws *Workspace) BestPath(s int) string {
	return filepath.Join(ws.Dir, fmt.Sprintf("best-%d.mat", s))
}

// RemoveBest removes the files of the best W of the starts but that of
// start keep (none if -1), which the last checkpoint names: a finished run
// can still be resumed from it.
func (ws *Workspace) RemoveBest(keep int) error {
	files, err := filepath.Glob(filepath.Join(ws.Dir, "best-*.mat"))
	for _, f := range files {
		if keep >= 0 && f == ws.BestPath(keep) {
			continue
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// Clear removes the checkpoint and the files of best Ws that an earlier
// run left in the work directory, so that a new run starts clean and a
// later resume never mixes the two, and, for a workspace in memory, the
// matrix files of an earlier run in files; it reports whether a checkpoint
// was there.
func (ws *Workspace) Clear() (bool, error) {
	err := os.Remove(ws.CheckpointPath())
	had := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if ws.InMemory {
		for _, name := range matrixFiles {
			if err := os.Remove(filepath.Join(ws.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return had, err
			}
		}
	}
	return had, ws.RemoveBest(-1)
}

// matrixFiles are the names of a workspace's matrix files when it is in
// files.
var matrixFiles = []string{"W.mat", "PW.mat", "PS.mat", "best.mat", "W.input.mat"}

// WriteMatrix writes the n×k matrix w to a matrix file at path, synced.
func WriteMatrix(path string, w []float64, n, k int) error {
	m, err := store.CreateMatrix(path, n, k)
	if err != nil {
		return err
	}
	copy(m.Data(), w)
	if err := m.Sync(); err != nil {
		m.Close()
		return err
	}
	return m.Close()
}

// ReadMatrix reads the n×k matrix file at path into w.
func ReadMatrix(path string, w []float64, n, k int) error {
	m, err := store.OpenMatrix(path)
	if err != nil {
		return err
	}
	defer m.Close()
	if m.Rows() != n || m.Cols() != k {
		return fmt.Errorf("%s: holds %d×%d, want %d×%d", path, m.Rows(), m.Cols(), n, k)
	}
	copy(w, m.Data())
	return nil
}

// LockWorkdir locks the work directory dir for one run at a time (package
// workdir), and removes the temporaries a killed run left there (an
// unfinished graph, a checkpoint's temporary file), which the lock proves
// no live run writes. Its errors are workdir.Acquire's: a
// *workdir.BusyError when another process holds the lock,
// errors.ErrUnsupported where the file system cannot lock.
func LockWorkdir(dir string) (*workdir.Lock, error) {
	l, err := workdir.Acquire(dir)
	if err != nil {
		return nil, err
	}
	store.RemoveTemps(dir, CheckpointFile)
	os.Remove(filepath.Join(dir, GraphFile+".tmp"))
	return l, nil
}

// MakeWorkdir returns the work directory dir, made if it is missing, or,
// if dir is "", a new temporary directory in parent ("" for the system's),
// as an absolute path; temp reports the latter, which the caller removes.
// The error of a temporary directory says so; that of dir is the file
// system's, for the caller to name dir by its setting.
func MakeWorkdir(dir, parent string) (_ string, temp bool, err error) {
	if dir != "" {
		return dir, false, os.MkdirAll(dir, 0o755)
	}
	if dir, err = os.MkdirTemp(parent, "ssnmf-"); err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return "", false, fmt.Errorf("work directory: %w", err)
	}
	return dir, true, nil
}
