package model

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/store"
)

// TestPredictTable predicts a table in batches of every size: the
// memberships are those of one Predict, progress counts the batches, and
// a bad value is a RowError of the table's row whose ValueError names the
// table's column.
func TestPredictTable(t *testing.T) {
	n, p := 300, 3
	m, _, _ := identityModel(t, blobs(n, p, 2, 4), n, p, graph.KNNOptions{Neighbors: 8, Weights: graph.SelfTuning, Method: graph.Exact}, 0)
	rows := 50
	y := blobs(rows, p, 2, 5)
	want := make([]float64, rows*m.K())
	if err := m.Predict(context.Background(), y, rows, want, Options{}); err != nil {
		t.Fatal(err)
	}
	bad := slices.Clone(y)
	bad[37*p+2] = math.Inf(-1)
	names := []string{"u", "v", "w"}
	for _, tc := range []struct {
		name    string
		x       []float64
		batch   int
		done    []int  // the progress calls; nil: not checked
		badRow  int    // the row of the error, -1 for none
		badName string // the column it names
	}{
		{"one batch", y, 0, []int{50}, -1, ""},
		{"batches of 20", y, 20, []int{20, 40, 50}, -1, ""},
		{"batches of 1", y, 1, nil, -1, ""},
		{"a bad row", bad, 16, []int{16, 32}, 37, "w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var done []int
			tab := &store.Table{Features: tc.x, N: rows, P: p, Names: names}
			mat, err := m.PredictTable(context.Background(), tab, t.TempDir(), Options{Workers: 2}, tc.batch, func(d int) { done = append(done, d) })
			if tc.badRow >= 0 {
				var re *RowError
				var ve *ValueError
				if !errors.As(err, &re) || re.Row != tc.badRow || !errors.As(err, &ve) || ve.Name != tc.badName {
					t.Fatalf("error %v, want row %d, column %q", err, tc.badRow, tc.badName)
				}
			} else if err != nil {
				t.Fatal(err)
			} else {
				defer mat.Close()
				if !slices.Equal(mat.Data(), want) {
					t.Error("the memberships differ from Predict's")
				}
			}
			if tc.done != nil && !slices.Equal(done, tc.done) {
				t.Errorf("progress %v, want %v", done, tc.done)
			}
		})
	}
	if _, err := m.PredictTable(context.Background(), &store.Table{Features: y[:rows*2], N: rows, P: 2}, t.TempDir(), Options{}, 0, nil); err == nil {
		t.Error("a table of 2 features: no error")
	}
}

// TestTuneTable checks that a bad sampled value names the table's column.
func TestTuneTable(t *testing.T) {
	n, p := 300, 3
	m, _, _ := identityModel(t, blobs(n, p, 2, 4), n, p, graph.KNNOptions{Neighbors: 8, Weights: graph.SelfTuning, Method: graph.Approximate}, 50)
	y := blobs(20, p, 2, 5)
	y[3*p+1] = math.NaN()
	tab := &store.Table{Features: y, N: 20, P: p, Names: []string{"u", "v", "w"}}
	_, _, err := m.TuneTable(context.Background(), tab, 20, 1, 0.9, Options{Search: graph.Approximate}, nil)
	var re *RowError
	var ve *ValueError
	if !errors.As(err, &re) || re.Row != 3 || !errors.As(err, &ve) || ve.Name != "v" {
		t.Fatalf("error %v, want row 3, column \"v\"", err)
	}
}

// TestPredictFile predicts the rows of a CSV file: the memberships are
// those of one Predict of its rows, Progress is told 0 and then each
// batch, and a file that is not there is an InputError. The zero Table
// reads the model's features by name, whatever the order and the other
// columns of the file, and never reads its label column.
func TestPredictFile(t *testing.T) {
	n, p, rows := 200, 3, 30
	m, _, _ := identityModel(t, blobs(n, p, 2, 4), n, p, graph.KNNOptions{Neighbors: 8, Weights: graph.SelfTuning, Method: graph.Exact}, 0)
	y := blobs(rows, p, 2, 5)
	names := m.Features()
	var csv strings.Builder
	csv.WriteString("id,label," + strings.Join([]string{names[2], names[0], names[1]}, ",") + "\n")
	for i := range rows {
		x := y[i*p : (i+1)*p]
		row := []string{strconv.Itoa(1000 + i), "NA"}
		for _, v := range []float64{x[2], x[0], x[1]} {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		csv.WriteString(strings.Join(row, ",") + "\n")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "new.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, rows*m.K())
	if err := m.Predict(context.Background(), y, rows, want, Options{}); err != nil {
		t.Fatal(err)
	}
	var done []int
	o := FileOptions{Batch: 20, Progress: func(d, r int) { done = append(done, d) }}
	pr, err := m.PredictFile(context.Background(), path, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.W.Close()
	if pr.Rows != rows || !slices.Equal(pr.W.Data(), want) || !slices.Equal(done, []int{0, 20, 30}) {
		t.Errorf("rows %d, progress %v, the same memberships as Predict: %v; want %d, [0 20 30], true", pr.Rows, done, slices.Equal(pr.W.Data(), want), rows)
	}
	var ie *InputError
	if _, err := m.PredictFile(context.Background(), filepath.Join(dir, "none.csv"), dir, o); !errors.As(err, &ie) {
		t.Errorf("a missing file: err = %v, want an InputError", err)
	}
}

// TestPredictFileUnchanged checks that PredictFile refuses memberships of
// a model whose file was written to in place since Open.
func TestPredictFileUnchanged(t *testing.T) {
	m, path, b := openCopy(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "new.csv")
	if err := os.WriteFile(in, []byte(strings.Join(m.Features(), ",")+"\n"+strings.Repeat("0,", len(m.Features())-1)+"0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past the file system's clock tick
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.PredictFile(context.Background(), in, dir, FileOptions{}); err == nil || !strings.Contains(err.Error(), "written to while in use") {
		t.Fatalf("error %v, want the model's file named as written to", err)
	}
}
