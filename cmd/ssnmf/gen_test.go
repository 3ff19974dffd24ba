package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store"
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
