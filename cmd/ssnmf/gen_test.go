package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
)

// runGen runs gen with args and fails the test on error.
func runGen(t *testing.T, args ...string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := gen(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("gen %s: %v", strings.Join(args, " "), err)
	}
}

// tableView is a Table without where its features are kept.
func tableView(t *store.Table) store.Table {
	return store.Table{Features: t.Features, N: t.N, P: t.P, Names: t.Names, Labels: t.Labels, Classes: t.Classes, LabelName: t.LabelName}
}

// TestGenFormats writes the same mixture in every format, across a batch
// boundary, and reads each back through openInput: the tables agree bit
// for bit, and the data are a mixture of unit-variance Gaussians.
func TestGenFormats(t *testing.T) {
	const n, p, k = genBatchRows + 100, 3, 4
	dir := t.TempDir()
	var first *store.Table
	for _, name := range []string{"g.parquet", "g.arrow", "g.csv", "g.csv.gz"} {
		path := filepath.Join(dir, name)
		runGen(t, "-n", strconv.Itoa(n), "-p", strconv.Itoa(p), "-k", strconv.Itoa(k), "-seed", "7", "-sep", "5", "-o", path)
		tab, err := input.Open(path, "", store.TableOptions{}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Close()
		if tab.N != n || tab.P != p || !slices.Equal(tab.Names, []string{"x1", "x2", "x3"}) || tab.LabelName != "label" ||
			!slices.Equal(tab.Classes, []string{"0", "1", "2", "3"}) {
			t.Fatalf("%s: %d×%d %q label %q classes %q", name, tab.N, tab.P, tab.Names, tab.LabelName, tab.Classes)
		}
		if first == nil {
			first = tab
			continue
		}
		if a, b := tableView(tab), tableView(first); !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs from %s", name, "g.parquet")
		}
	}

	// Each class is uniform over k components and has unit variance in
	// every coordinate around its mean; n/k ≈ 16,000 rows per class keep
	// the sample variance within ±0.05 of 1 and the share within ±0.02
	// of 1/4 with overwhelming probability.
	count := make([]float64, k)
	sum := make([]float64, k*p)
	sq := make([]float64, k*p)
	for i := range n {
		c := first.Labels[i]
		count[c]++
		for j := range p {
			v := first.Features[i*p+j]
			sum[c*p+j] += v
			sq[c*p+j] += v * v
		}
	}
	for c := range k {
		if share := count[c] / n; math.Abs(share-0.25) > 0.02 {
			t.Errorf("class %d has share %.4f, want 0.25", c, share)
		}
		for j := range p {
			mean := sum[c*p+j] / count[c]
			if v := sq[c*p+j]/count[c] - mean*mean; math.Abs(v-1) > 0.05 {
				t.Errorf("class %d, x%d: variance %.4f, want 1", c, j+1, v)
			}
		}
	}
}

// TestGenDeterministic checks that a seed gives the same file and another
// seed a different one.
func TestGenDeterministic(t *testing.T) {
	dir := t.TempDir()
	read := func(name, seed string) []byte {
		path := filepath.Join(dir, name)
		runGen(t, "-n", "500", "-p", "2", "-k", "3", "-seed", seed, "-o", path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := read("a.csv", "1"), read("b.csv", "1"), read("c.csv", "2")
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different files")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same file")
	}
	if !bytes.HasPrefix(a, []byte("x1,x2,label\n")) || bytes.Count(a, []byte("\n")) != 501 {
		t.Errorf("file begins %q and has %d lines, want header x1,x2,label and 501 lines", a[:min(len(a), 40)], bytes.Count(a, []byte("\n")))
	}
}

func TestGenErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.parquet")
	testCmdUsage(t, gen, []usageCase{
		{name: "no -n", args: []string{"-o", out}, want: "-n must be >= 1, have 0"},
		{name: "no -o", args: []string{"-n", "5"}, want: "-o FILE is required"},
		{name: "bad extension", args: []string{"-n", "5", "-o", filepath.Join(dir, "o.txt")}, want: "unknown extension"},
		{name: "bad -p", args: []string{"-n", "5", "-p", "0", "-o", out}, want: "-p must be >= 1"},
		{name: "bad -k", args: []string{"-n", "5", "-k", "-1", "-o", out}, want: "-k must be >= 1"},
		{name: "bad -sep", args: []string{"-n", "5", "-sep", "NaN", "-o", out}, want: "-sep must be a number >= 0"},
		{name: "argument", args: []string{"-n", "5", "-o", out, "extra"}, want: "gen takes no arguments"},
		{name: "unknown flag", args: []string{"-x"}, want: "flag provided but not defined: -x"},
		{name: "missing directory", args: []string{"-n", "5", "-o", filepath.Join(dir, "no", "o.csv")}, want: "-o: writing"},
	}, true)
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("failed runs left %v behind", names)
	}

	var stdout bytes.Buffer
	if err := gen(context.Background(), []string{"-h"}, &stdout, &bytes.Buffer{}); !errors.Is(err, errHelp) || !strings.Contains(stdout.String(), "Usage: ssnmf gen") {
		t.Errorf("-h: error %v, usage %q", err, stdout.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := gen(ctx, []string{"-n", "5", "-o", out}, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled run left %s: %v", out, err)
	}
}

// BenchmarkGen measures generating and writing Parquet, in rows per second.
func BenchmarkGen(b *testing.B) {
	const n = 200000
	out := filepath.Join(b.TempDir(), "b.parquet")
	for b.Loop() {
		if err := gen(context.Background(), []string{"-n", "200000", "-q", "-o", out}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
