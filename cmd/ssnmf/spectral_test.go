package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// -method spectral and -init spectral cluster the rings of
// testdata/rings1000.csv (go run ./studies/spectral -n 1000 -shape rings -seed 2), where the default's
// k-means start does not; the memberships are the same bits for 1, 2 and
// 5 workers; and the summary reports the embedding: k+1 eigenvalues,
// the first 1, with residuals of at most 1e-6 (-method spectral) or of the
// one sweep of a start (-init spectral).
func TestSpectralRuns(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"method spectral", []string{"-method", "spectral"}},
		{"init spectral", []string{"-init", "spectral", "-starts", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var first []byte
			for _, w := range []string{"1", "2", "5"} {
				out, sum := filepath.Join(dir, w+".csv"), filepath.Join(dir, w+".json")
				args := append([]string{"solve", "-q", "-workers", w, "-out", out, "-summary", sum}, tc.args...)
				if code, _, stderr := ssnmf(t, append(args, "testdata/rings1000.csv")...); code != exitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				s := readSummary(t, sum)
				if s.ARI == nil || *s.ARI < 0.95 {
					ari := -1.0
					if s.ARI != nil {
						ari = *s.ARI
					}
					t.Errorf("%s workers: ARI %v, want >= 0.95", w, ari)
				}
				sp := s.Spectral
				if sp == nil || len(sp.Eigenvalues) != s.K+1 || sp.Eigenvalues[0] < 1-1e-9 || sp.Passes < 2 {
					t.Fatalf("%s workers: spectral report %+v", w, sp)
				}
				// -method spectral: LOBPCG to the tolerance; -init spectral:
				// the approximate embedding of a start, one sweep.
				if exact := tc.args[0] == "-method"; exact != sp.Converged || exact != (sp.Sweeps == 0) || exact != (sp.Tol == 1e-6) {
					t.Fatalf("%s workers: spectral report %+v", w, sp)
				}
				for j, r := range sp.Residuals {
					if !(r <= sp.Tol) && sp.Converged {
						t.Errorf("residual %d: %v", j, r)
					}
				}
				b, _ := os.ReadFile(out)
				if first == nil {
					first = b
				} else if !bytes.Equal(b, first) {
					t.Errorf("%s workers: other memberships than 1 worker", w)
				}
			}
		})
	}
}

// -method spectral on the edge list of the kNN graph gives the memberships
// of the run that builds the graph.
func TestSpectralEdgeList(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "e.csv")
	if code, _, stderr := ssnmf(t, "graph", "-o", edges, "testdata/rings1000.csv"); code != exitOK {
		t.Fatalf("graph: exit %d: %s", code, stderr)
	}
	var outs [2][]byte
	for i, args := range [][]string{{"testdata/rings1000.csv"}, {"-affinity", edges, "-k", "3"}} {
		out := filepath.Join(dir, "w.csv")
		args = append([]string{"solve", "-q", "-method", "spectral", "-out", out}, args...)
		if code, _, stderr := ssnmf(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		outs[i], _ = os.ReadFile(out)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("the edge list's memberships differ from the kNN graph's")
	}
}

// The spectral embedding is the graph's: -init spectral and -method
// spectral on a P that is not a graph, and -init with -method spectral,
// are errors naming the flag.
func TestSpectralErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-affinity", "gaussian", "-method", "spectral"}, "-method spectral needs a sparse P, whose graph it embeds (-affinity knn or an edge list); the affinity is gaussian: use -affinity knn"},
		{[]string{"-affinity", "gaussian", "-init", "spectral"}, "-init spectral needs a sparse P, whose graph it embeds (-affinity knn or an edge list); the affinity is gaussian: use -affinity knn"},
		{[]string{"-method", "spectral", "-init", "kmeans"}, "-init applies to a method that starts from a W (any -method but kmeans and spectral) (-method spectral makes its own start); drop it"},
		{[]string{"-init", "spectral", "-init-starts", "2"}, "-init-starts applies to -init kmeans (the start is spectral); add -init kmeans"},
	} {
		code, _, stderr := ssnmf(t, append([]string{"solve", "-q"}, append(tc.args, "testdata/rings1000.csv")...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// lockedBuffer is a bytes.Buffer that a stop function may read while the
// run writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A signal during the spectral embedding, which saves no checkpoint, ends
// it at once with an error that says so, and no output is written.
func TestSpectralStop(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 2·10⁴ rows and embeds their graph")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "w.csv")
	if code, _, stderr := ssnmf(t, "gen", "-n", "20000", "-p", "4", "-k", "10", "-seed", "1", "-o", in); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	var stdout bytes.Buffer
	var stderr lockedBuffer
	// Asked once the set-up is done: its line names the method.
	stop := func() bool { return strings.Contains(stderr.String(), "method=spectral") }
	code := runStop(context.Background(), []string{"solve", "-method", "spectral", "-out", out, in}, &stdout, &stderr, stop)
	want := "stopped by a signal during the spectral embedding, which saves no checkpoint to resume from; run again"
	if code != exitFailure || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %d, want %d with %q: %s", code, exitFailure, want, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("stopped run wrote %s (%v)", out, err)
	}
}

// -init auto on a graph that the embedding cannot take (four of its ten
// rows with an edge, fewer than k+1 = 5) keeps the start it had before:
// random, the edge list having no features; the summary says why.
func TestInitAutoWithoutEmbedding(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "edges.csv")
	if err := os.WriteFile(edges, []byte("src,dst,weight\n0,1,1\n1,2,1\n2,9,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := filepath.Join(dir, "s.json")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-affinity", edges, "-k", "4", "-summary", sum); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := readSummary(t, sum)
	if s.Init != "random" || !strings.Contains(s.InitRule, "no spectral embedding") || !strings.Contains(s.InitRule, "fewer than K+1") {
		t.Errorf("init %q (%q), want random for want of an embedding", s.Init, s.InitRule)
	}
}
