package synth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
)

// tableView is a Table without where its features are kept.
func tableView(t *store.Table) store.Table {
	return store.Table{Features: t.Features, N: t.N, P: t.P, Names: t.Names, Labels: t.Labels, Classes: t.Classes, LabelName: t.LabelName}
}

// TestWriteFormats writes the same mixture in every format, across a
// batch boundary, and reads each back through input.Open: the tables agree
// bit for bit, and the data are a mixture of unit-variance Gaussians.
func TestWriteFormats(t *testing.T) {
	s := Settings{N: BatchRows + 100, P: 3, K: 4, Seed: 7, Sep: 5}
	dir := t.TempDir()
	var first *store.Table
	for _, format := range []string{input.Parquet, input.Arrow, input.CSV, CSVGzip} {
		path := filepath.Join(dir, "g."+format)
		if f := Format(path); f != format {
			t.Fatalf("Format(%s) = %q, want %q", path, f, format)
		}
		var buf bytes.Buffer
		if err := Write(context.Background(), &buf, format, s); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		tab, err := input.Open(path, "", store.TableOptions{}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if tab.N != s.N || tab.P != s.P || !slices.Equal(tab.Names, []string{"x1", "x2", "x3"}) || tab.LabelName != "label" ||
			!slices.Equal(tab.Classes, []string{"0", "1", "2", "3"}) {
			t.Fatalf("%s: %d×%d %q label %q classes %q", format, tab.N, tab.P, tab.Names, tab.LabelName, tab.Classes)
		}
		if first == nil {
			first = tab
			continue
		}
		if a, b := tableView(tab), tableView(first); !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs from %s", format, input.Parquet)
		}
	}
	checkMixture(t, first, s.K)
}

// checkMixture checks that each class of tab is uniform over k components
// and has unit variance in every coordinate around its mean; n/k ≈ 16,000
// rows per class keep the sample variance within ±0.05 of 1 and the share
// within ±0.02 of 1/k with overwhelming probability.
func checkMixture(t *testing.T, tab *store.Table, k int) {
	t.Helper()
	n, p := tab.N, tab.P
	count := make([]float64, k)
	sum := make([]float64, k*p)
	sq := make([]float64, k*p)
	for i := range n {
		c := tab.Labels[i]
		count[c]++
		for j := range p {
			v := tab.Features[i*p+j]
			sum[c*p+j] += v
			sq[c*p+j] += v * v
		}
	}
	for c := range k {
		if share := count[c] / float64(n); math.Abs(share-1/float64(k)) > 0.02 {
			t.Errorf("class %d has share %.4f, want %.4f", c, share, 1/float64(k))
		}
		for j := range p {
			mean := sum[c*p+j] / count[c]
			if v := sq[c*p+j]/count[c] - mean*mean; math.Abs(v-1) > 0.05 {
				t.Errorf("class %d, x%d: variance %.4f, want 1", c, j+1, v)
			}
		}
	}
}

// TestFill checks that the rows do not depend on how they are cut into
// batches, and that another seed gives other rows.
func TestFill(t *testing.T) {
	s := Settings{P: 2, K: 3, Sep: 2, Seed: 1}
	draw := func(s Settings, batches ...int) ([]float64, []int32) {
		m := NewMixture(s)
		var x []float64
		var labels []int32
		for _, rows := range batches {
			bx, bl := make([]float64, rows*s.P), make([]int32, rows)
			m.Fill(bx, bl)
			x, labels = append(x, bx...), append(labels, bl...)
		}
		return x, labels
	}
	x, labels := draw(s, 10)
	for _, batches := range [][]int{{1, 9}, {5, 5}, {3, 0, 7}} {
		if bx, bl := draw(s, batches...); !slices.Equal(bx, x) || !slices.Equal(bl, labels) {
			t.Errorf("batches %v gave other rows", batches)
		}
	}
	s.Seed = 2
	if ox, _ := draw(s, 10); slices.Equal(ox, x) {
		t.Error("seeds 1 and 2 gave the same rows")
	}
}

// TestWriteErrors checks what Write refuses.
func TestWriteErrors(t *testing.T) {
	ok := Settings{N: 5, P: 2, K: 2, Sep: 1}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		format string
		s      Settings
		want   string
	}{
		{"no rows", context.Background(), input.CSV, Settings{P: 2, K: 2}, "n=0 p=2 k=2 sep=0: want n, p, k >= 1"},
		{"no features", context.Background(), input.CSV, Settings{N: 1, K: 2}, "want n, p, k >= 1"},
		{"NaN sep", context.Background(), input.CSV, Settings{N: 1, P: 1, K: 1, Sep: math.NaN()}, "sep=NaN"},
		{"format", context.Background(), "txt", ok, `unknown output format "txt"`},
		{"cancelled", cancelled, input.Parquet, ok, "interrupted after 0 rows: context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(tc.ctx, &bytes.Buffer{}, tc.format, tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if tc.ctx.Err() != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v does not wrap context.Canceled", err)
			}
		})
	}
}

// TestFormat checks the formats of names.
func TestFormat(t *testing.T) {
	for path, want := range map[string]string{
		"a.parquet": input.Parquet, "A.PARQUET": input.Parquet, "b.arrow": input.Arrow, "c.csv": input.CSV, "d.CSV.GZ": CSVGzip,
		"e.txt": "", "f.gz": "", "g": "", os.DevNull: input.CSV,
	} {
		if got := Format(path); got != want {
			t.Errorf("Format(%q) = %q, want %q", path, got, want)
		}
	}
}

// BenchmarkWrite measures generating and writing Parquet, in rows per
// second.
func BenchmarkWrite(b *testing.B) {
	s := Settings{N: 200000, P: 16, K: 10, Sep: 2}
	for b.Loop() {
		if err := Write(context.Background(), io.Discard, input.Parquet, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(s.N*b.N)/b.Elapsed().Seconds(), "rows/s")
}
