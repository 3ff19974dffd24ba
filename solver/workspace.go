package solver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ssnmf/ssnmf/store"
)

// CheckpointFile is the name of the checkpoint in a work directory.
const CheckpointFile = "checkpoint.ssnmf"

// Workspace holds the memory-mapped n×k matrices of a run in its work
// directory: W, P·W and the method's second matrix (P·S), and the best W
// of several starts.
type Workspace struct {
	Dir       string    // the work directory
	N, K      int       // the rows and the clusters
	W, PW, PS []float64 // W (W.mat), P·W (PW.mat) and P·S (PS.mat)
	Best      []float64 // the best W of several starts (best.mat); nil until made by Matrix
	mats      []*store.Matrix
}

// NewWorkspace creates the matrix files of W, P·W and P·S, each n×k, in
// the directory dir and maps them.
func NewWorkspace(dir string, n, k int) (*Workspace, error) {
	ws := &Workspace{Dir: dir, N: n, K: k}
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

// Matrix creates an n×k matrix file named name in the work directory and
// returns its mapped data, which stays mapped until Close.
func (ws *Workspace) Matrix(name string) ([]float64, error) {
	m, err := store.CreateMatrix(filepath.Join(ws.Dir, name), ws.N, ws.K)
	if err != nil {
		return nil, err
	}
	ws.mats = append(ws.mats, m)
	return m.Data(), nil
}

// Close unmaps every matrix of the workspace, leaving the files in place.
func (ws *Workspace) Close() {
	for _, m := range ws.mats {
		m.Close()
	}
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
// into a matrix file of the work directory.
func (ws *Workspace) InputOrder(order []int32) ([]float64, error) {
	if order == nil {
		return ws.W, nil
	}
	w, err := ws.Matrix("W.input.mat")
	if err != nil {
		return nil, err
	}
	return w, store.PermuteRows(w, ws.W, ws.K, order, ws.Dir)
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
// later resume never mixes the two; it reports whether a checkpoint was
// there.
func (ws *Workspace) Clear() (bool, error) {
	err := os.Remove(ws.CheckpointPath())
	had := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return had, ws.RemoveBest(-1)
}

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
