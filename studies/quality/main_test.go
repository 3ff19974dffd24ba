package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestRun runs the study on well-separated groups with a few candidates
// and checks the table, the dense row left out and the raw records.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeBlobs(t, dir, "blobs", 90)
	raw := filepath.Join(dir, "raw.jsonl")
	anchors := filepath.Join(dir, "anchors.jsonl")
	if err := os.WriteFile(anchors, []byte(`{"set": "blobs", "method": "kmeans", "ARI": 1.0, "NMI": 1.0, "seconds": 0.5, "maxrss_kB": 102400}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := options{data: []string{dir}, candidates: []string{"defaults", "dense-mass", "knn-10-conn-mass+s3", "kmeans"},
		denseMaxN: 89, maxIter: 50, timeout: time.Minute, raw: raw, anchors: anchors}
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 7 {
		t.Fatalf("want a header, a rule and 5 rows, have:\n%s", out.String())
	}
	// The groups are 10 standard deviations apart: every candidate
	// recovers them.
	for _, want := range []string{
		"| blobs | 90 | 3 | defaults | 1.0000 | 1.0000 |",
		"| blobs | 90 | 3 | dense-mass | not run: n > -dense-max-n 89 (8.1e+03 entries a pass) |",
		"| blobs | 90 | 3 | knn-10-conn-mass+s3 | 1.0000 | 1.0000 |",
		"| blobs | 90 | 3 | kmeans | 1.0000 | 1.0000 |",
		"| blobs | 90 | 3 | sklearn kmeans | 1.0000 | 1.0000 | - | - | - | 0.5 | 100 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	recs := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(recs) != 3 {
		t.Fatalf("%d raw records, want 3", len(recs))
	}
	for _, line := range recs {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != "" || r.ARI != 1 || r.Seconds <= 0 || r.RSSkB <= 0 || r.Iterations < 1 || r.Settled > r.Iterations ||
			r.LastMoved > r.Iterations || len(r.FrtolStop) != len(frtols) || len(r.RtolStop) != len(rtols) {
			t.Errorf("record %+v", r)
		}
	}
}

// TestReadTrace checks the sweep counts read off a trace.
func TestReadTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	tr := "iter,seconds,objective,gap,step_size,passes,start,moved,model\n" +
		"0,0,200,1,1,1,0,50,10\n" + // f falls 100, 50, 10, 0.001, 0
		"1,0,100,1,1,2,0,5,10\n" +
		"2,0,50,1,1,3,0,0,100\n" +
		"3,0,40,1,1,4,0,2,1000\n" +
		"4,0,40.001,0.001,1,5,0,0,5\n" +
		"5,0,40.001,1,0,6,0,0,1000\n"
	if err := os.WriteFile(path, []byte(tr), 0o644); err != nil {
		t.Fatal(err)
	}
	var r record
	if err := r.readTrace(path); err != nil {
		t.Fatal(err)
	}
	// Within 0.01% of 40.001 from row 3 on; the last move in the step
	// from row 3.
	if r.Settled != 3 || r.LastMoved != 4 {
		t.Errorf("settled %d, last moved %d; want 3 and 4", r.Settled, r.LastMoved)
	}
	// |Δf| <= 1e-3 f first at row 4 (0.001 <= 0.04); <= 1e-6 f only at 5.
	if got := r.FrtolStop["0.001"]; got != [2]int{4, 0} {
		t.Errorf("frtol 1e-3 stop %v, want [4 0]", got)
	}
	if got := r.FrtolStop["1e-06"]; got != [2]int{5, 0} {
		t.Errorf("frtol 1e-6 stop %v, want [5 0]", got)
	}
	// gap <= 1e-4 f first at row 4 (0.001 <= 0.004); <= 1e-5 f never,
	// which reports the last row.
	if got := r.RtolStop["0.0001"]; got != [2]int{4, 0} {
		t.Errorf("rtol 1e-4 stop %v, want [4 0]", got)
	}
	if got := r.RtolStop["1e-05"]; got != [2]int{5, 0} {
		t.Errorf("rtol 1e-5 stop %v, want [5 0]", got)
	}
	// gap <= 1e-2 ¼||WᵀW||² first at row 2 (1 <= 1), with the 2 rows
	// moved from row 3 after it; <= 1e-3 at row 3, <= 3e-4 at row 4
	// (0.001 <= 0.0015); <= 1e-4 never.
	want := map[string][2]int{"0.03": {2, 2}, "0.01": {2, 2}, "0.003": {3, 2}, "0.001": {3, 2}, "0.0003": {4, 0}, "0.0001": {5, 0}}
	if !maps.Equal(r.MtolStop, want) {
		t.Errorf("mtol stops %v, want %v", r.MtolStop, want)
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
		{name: "missing", o: options{data: []string{dir}, sets: []string{"absent"}, maxIter: 1}, want: "found 0 of them"},
		{name: "no label", o: options{data: []string{dir}, sets: []string{"nolabel"}, maxIter: 1}, want: "no label column"},
		{name: "max-iter", o: options{data: []string{dir}, maxIter: 0}, want: "-max-iter"},
		{name: "candidate", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"newton"}}, want: "-candidates"},
		{name: "variant", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"kmeans+s0"}}, want: "-candidates"},
		{name: "mtol of no stop rule", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"kmeans/mtol=1e-3"}}, want: "-candidates"},
		{name: "mtol not > 0", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"starts10-sizes/mtol=0"}}, want: "-candidates"},
		{name: "graph of no stop rule", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"kmeans/graph=g"}}, want: "-candidates"},
		{name: "graph of a dense P", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"starts10-gaussian/graph=g"}}, want: "-candidates"},
		{name: "graph without a directory", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"starts10-sizes/graph="}}, want: "-candidates"},
		{name: "graph before mtol", o: options{data: []string{dir}, maxIter: 1, candidates: []string{"starts10-sizes/graph=g/mtol=1e-3"}}, want: "-candidates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.o, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestPickVariants checks the arguments of the variants of a candidate.
func TestPickVariants(t *testing.T) {
	cs, err := pick(candidates(), []string{"starts10-sizes:2/mtol=1e-3/graph=gn"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cs[0].args(dataset{name: "iris", n: 150, k: 3}), " ")
	want := "-starts 10 -scale sizes:2 -rtol 0 -mtol 1e-3 -affinity " + filepath.Join("gn", "iris.csv")
	if cs[0].name != "starts10-sizes:2/mtol=1e-3/graph=gn" || got != want {
		t.Errorf("candidate %q, args %q; want args %q", cs[0].name, got, want)
	}
	if r := (lsoRule{2, "sizes:2/mtol=1e-3/graph=gn"}); r.String() != "-starts 2 -scale sizes:2 -rtol 0 -mtol 1e-3 -affinity gn/SET.csv" {
		t.Errorf("rule %q", r)
	}
}

// TestSolveMissingBinary checks that a binary that cannot be started gives
// a record with the error, not a panic.
func TestSolveMissingBinary(t *testing.T) {
	o := options{bin: filepath.Join(t.TempDir(), "no-ssnmf"), maxIter: 1, timeout: time.Minute}
	r := solve(context.Background(), o, dataset{name: "x", path: "x.csv", n: 2, k: 2}, candidates()[0])
	if !strings.Contains(r.Error, "no-ssnmf") || r.RSSkB != 0 {
		t.Errorf("record %+v, want the start's error", r)
	}
}
