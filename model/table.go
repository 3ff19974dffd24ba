package model

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/workdir"
)

// WFile is the name of the matrix file of memberships that PredictTable
// writes in its directory.
const WFile = "W.mat"

// WorkDir makes the temporary work directory of the prediction of a
// table, in os.TempDir() and locked until the caller closes the lock (nil
// where the file system cannot lock), with store.LockedTempDir, which
// first removes those that killed predictions left: it holds the table's
// features (store.FeaturesFile, as input.Open maps them) and the
// memberships (WFile).
func WorkDir() (string, *workdir.Lock, error) {
	return store.LockedTempDir("ssnmf-predict-", store.FeaturesFile, "features.model.mat", WFile)
}

// TuneTable is Tune on the rows of tab, which hold the model's features
// in order (the columns store.TableOptions.Features names); a ValueError
// names tab's column.
func (m *Model) TuneTable(ctx context.Context, tab *store.Table, s int, seed uint64, target float64, opt Options, step func(Tuned)) (Options, Tuned, error) {
	opt, t, err := m.Tune(ctx, tab.Features, tab.N, s, seed, target, opt, step)
	return opt, t, nameColumn(err, tab.Names)
}

// PredictTable predicts the rows of tab, which hold the model's features
// in order (the columns store.TableOptions.Features names), batch rows at
// a time (all at once if batch is 0), into the matrix file WFile of dir
// (tab.N×k), which it returns open: the caller closes it. It calls
// progress, if not nil, with the rows predicted after each batch. A
// RowError's Row is the row of tab, and a ValueError names tab's column.
func (m *Model) PredictTable(ctx context.Context, tab *store.Table, dir string, opt Options, batch int, progress func(done int)) (*store.Matrix, error) {
	k, p, x, rows := m.meta.K, m.meta.P, tab.Features, tab.N
	if tab.P != p {
		return nil, fmt.Errorf("model: a table of %d features, want the model's %d", tab.P, p)
	}
	if batch <= 0 {
		batch = max(rows, 1)
	}
	mat, err := store.CreateMatrix(filepath.Join(dir, WFile), rows, k)
	if err != nil {
		return nil, err
	}
	w := mat.Data()
	for lo := 0; lo < rows; lo += batch {
		hi := min(rows, lo+batch)
		if err := m.Predict(ctx, x[lo*p:hi*p], hi-lo, w[lo*k:hi*k], opt); err != nil {
			mat.Close()
			var re *RowError
			if errors.As(err, &re) {
				re.Row += lo
			}
			return nil, nameColumn(err, tab.Names)
		}
		if progress != nil {
			progress(hi)
		}
	}
	return mat, nil
}

// nameColumn names, in the ValueError that err may wrap, the column of
// names (a table's columns of the model's features, in order).
func nameColumn(err error, names []string) error {
	var ve *ValueError
	if errors.As(err, &ve) && ve.Feature < len(names) {
		ve.Name = names[ve.Feature]
	}
	return err
}

// FileOptions are the settings of PredictFile: the file's format and its
// columns of the model's features, the search and its tuning, the batches
// and the hooks.
type FileOptions struct {
	// Options are the search; the tuning raises its Probes.
	Options
	// Format is the file's format (store/input's, input.Auto if ""), and
	// Table names its columns of the model's features, in order: nil
	// Features are the model's own names (Model.Features). Its label
	// column, if any, is never read, whatever it holds (IgnoreLabel).
	Format string
	Table  store.TableOptions
	// Sample is the rows of the file, seeded by Seed, whose exact lists
	// measure the approximate search's recall, its probes raised until it
	// reaches Recall (TuneTable); 0 measures none.
	Sample int
	Seed   uint64
	Recall float64
	// Batch is the rows predicted at a time (PredictTable; all if 0).
	Batch int
	// Tuned, if not nil, is told each step of the tuning, and Progress
	// the rows predicted of the file's rows after each batch (0 once the
	// tuning is over, as the predicting begins).
	Tuned    func(Tuned)
	Progress func(done, rows int)
}

// A FilePrediction is what PredictFile made: the memberships of the rows
// of the file, the search as tuned, and the times.
type FilePrediction struct {
	// W holds the memberships of the Rows rows (Rows×k), mapped in the
	// work directory; the caller closes it.
	W    *store.Matrix
	Rows int
	// Options are the search that ran, and Tuned the tuning's outcome
	// (Rows 0 if none ran).
	Options Options
	Tuned   Tuned
	// Read is the time to read the file, Took the time after it, of which
	// Tuning the tuning's.
	Read, Took, Tuning time.Duration
}

// An InputError is the error of a file that PredictFile cannot read as a
// table of the model's features (store/input's Error).
type InputError = input.Error

// PredictFile predicts the rows of the table file path (store/input),
// read into the work directory dir (WorkDir) as o says: the search is
// tuned on a sample of its rows (TuneTable), then every row is predicted
// in batches (PredictTable) into the matrix file WFile there, and the
// model's file is checked unchanged since Open (Unchanged), so that the
// memberships are all of one model. A file that cannot be read is an
// *InputError; a RowError's Row is the file's row, and a ValueError names
// its column.
func (m *Model) PredictFile(ctx context.Context, path, dir string, o FileOptions) (_ *FilePrediction, err error) {
	begin := time.Now()
	topt := o.Table
	if topt.Features == nil {
		topt.Features = m.Features()
	}
	topt.IgnoreLabel = true
	tab, err := input.Open(path, cmp.Or(o.Format, input.Auto), topt, dir)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	defer tab.Close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the file
	p := &FilePrediction{Rows: tab.N, Read: time.Since(begin)}
	if p.Options, p.Tuned, err = m.TuneTable(ctx, tab, o.Sample, o.Seed, o.Recall, o.Options, o.Tuned); err != nil {
		return nil, err
	}
	p.Tuning = time.Since(begin) - p.Read
	var progress func(done int)
	if o.Progress != nil {
		progress = func(done int) { o.Progress(done, tab.N) }
		progress(0)
	}
	if p.W, err = m.PredictTable(ctx, tab, dir, p.Options, o.Batch, progress); err != nil {
		return nil, err
	}
	if err := m.Unchanged(); err != nil {
		p.W.Close()
		return nil, err
	}
	p.Took = time.Since(begin) - p.Read
	return p, nil
}
