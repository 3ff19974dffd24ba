package model

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ssnmf/ssnmf/store"
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
