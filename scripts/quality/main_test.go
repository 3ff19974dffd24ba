package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBlobs writes NAME.csv with three well-separated groups of rows and
// their labels.
func writeBlobs(t *testing.T, dir, name string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("f1,f2,label\n")
	for i := range n {
		c := i % 3
		fmt.Fprintf(&b, "%g,%g,%d\n", 10*float64(c)+rng.NormFloat64(), -5*float64(c)+rng.NormFloat64(), c)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeBlobs(t, dir, "blobs", 90)
	for _, tc := range []struct {
		name   string
		method string
		init   string
	}{
		{name: "rowcd, k-means start", method: "rowcd", init: "kmeans"},
		{name: "rowcd, random start", method: "rowcd", init: "random"},
		{name: "fw, k-means start", method: "fw", init: "kmeans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := options{data: dir, sets: []string{"blobs"}, method: tc.method, maxIter: 200, restarts: 2, init: tc.init, workers: 2}
			if err := run(context.Background(), o, &out); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 5 {
				t.Fatalf("want a header, a rule and 3 rows, have:\n%s", out.String())
			}
			// The groups are 10 standard deviations apart: both the
			// default ssnmf and k-means recover them exactly.
			for _, want := range []string{
				"| blobs | 90 | 3 | ssnmf (defaults) |",
				"| blobs | 90 | 3 | ssnmf, gamma = 1 | 1 |",
				"| blobs | 90 | 3 | k-means (10 starts) | - | 1.0000 | 1.0000 | 1.0000 | - |",
			} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if !strings.Contains(lines[2], "| 1.0000 | 1.0000 | 1.0000 |") {
				t.Errorf("default ssnmf did not recover the groups: %s", lines[2])
			}
		})
	}
}

// TestRunLargeSets checks that a set above -dense-max-n gets the kNN run
// and k-means, and a row that says why the dense runs were left out.
func TestRunLargeSets(t *testing.T) {
	dir := t.TempDir()
	writeBlobs(t, dir, "blobs", 90)
	var out bytes.Buffer
	o := options{data: dir, sets: []string{"blobs"}, method: "rowcd", maxIter: 50, restarts: 1, init: "kmeans", workers: 2,
		neighbors: 10, denseMaxN: 89}
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| blobs | 90 | 3 | ssnmf (defaults): not run, n > -dense-max-n 89 (a pass is 8.1e+03 kernel entries) | - |",
		"| blobs | 90 | 3 | ssnmf, knn 10 connectivity |",
		"| blobs | 90 | 3 | k-means (10 starts) |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "gamma = 1") {
		t.Errorf("a dense run above -dense-max-n:\n%s", out.String())
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nolabel.csv"), []byte("a,b\n1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    options
		want string
	}{
		{name: "missing", o: options{data: dir, sets: []string{"absent"}, method: "rowcd", maxIter: 1, restarts: 1, init: "kmeans", workers: 1}, want: "absent.csv"},
		{name: "no label", o: options{data: dir, sets: []string{"nolabel"}, method: "rowcd", maxIter: 1, restarts: 1, init: "kmeans", workers: 1}, want: "no label column"},
		{name: "init", o: options{data: dir, sets: []string{"nolabel"}, method: "rowcd", maxIter: 1, restarts: 1, init: "corners", workers: 1}, want: "-init"},
		{name: "restarts", o: options{data: dir, sets: []string{"nolabel"}, method: "rowcd", maxIter: 1, restarts: 0, init: "kmeans", workers: 1}, want: "-restarts"},
		{name: "method", o: options{data: dir, sets: []string{"nolabel"}, method: "newton", maxIter: 1, restarts: 1, init: "kmeans", workers: 1}, want: "-method"},
		{name: "kmeans method", o: options{data: dir, sets: []string{"nolabel"}, method: "kmeans", maxIter: 1, restarts: 1, init: "kmeans", workers: 1}, want: "-method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.o, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
