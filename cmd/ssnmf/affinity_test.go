package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/solver"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/tile"
)

// Solving with P read from a tile file gives the same bits as generating
// it with the portable kernel, for float64 tiles of the engine's block size;
// the vector kernel differs in the last bits.
func TestTilesAndAffinity(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.arrow")
	kernel := []string{"-gamma", "1", "-tile", "5", "testdata/small.csv"}
	if code, _, stderr := ssnmf(t, append([]string{"tiles", "-q", "-o", p}, kernel...)...); code != exitOK {
		t.Fatalf("tiles: exit %d: %s", code, stderr)
	}
	gen, file := filepath.Join(dir, "gen.csv"), filepath.Join(dir, "file.csv")
	solveArgs := []string{"solve", "-q", "-k", "3", "-max-iter", "30"}
	if code, _, stderr := ssnmf(t, append(append(solveArgs, "-affinity", "gaussian", "-out", gen), kernel...)...); code != exitOK {
		t.Fatalf("solve: exit %d: %s", code, stderr)
	}
	sum := filepath.Join(dir, "s.json")
	code, stdout, stderr := ssnmf(t, append(solveArgs, "-affinity", p, "-out", file, "-summary", sum, "testdata/small.csv")...)
	if code != exitOK {
		t.Fatalf("solve -affinity: exit %d: %s", code, stderr)
	}
	if tile.DenseVectorKernel(tile.ISAAuto) {
		// The vector kernel's exp differs from math.Exp, with which the
		// tile file was written, in the last bits.
		_, a := readCSV(t, gen)
		_, b := readCSV(t, file)
		for i := range a {
			for j := range a[i] {
				x, _ := strconv.ParseFloat(a[i][j], 64)
				y, _ := strconv.ParseFloat(b[i][j], 64)
				if math.Abs(x-y) > 1e-9 {
					t.Fatalf("row %d column %d: %v from the generated kernel, %v from the tile file", i, j, x, y)
				}
			}
		}
	} else {
		a, _ := os.ReadFile(gen)
		b, _ := os.ReadFile(file)
		if !bytes.Equal(a, b) {
			t.Fatal("memberships from the tile file differ from those of the generated kernel")
		}
	}
	if !strings.Contains(stdout, "ARI 1.0000") || !strings.Contains(stdout, "tile file "+p) {
		t.Errorf("result table:\n%s", stdout)
	}
	var m map[string]any
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &m); err != nil || m["affinity"] != p || m["tile"] != 5.0 {
		t.Errorf("summary: %v %v", m, err)
	}
	// Without an INPUT, n comes from the file and -k is required.
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "2", "-max-iter", "3", "-affinity", p); code != exitOK {
		t.Fatalf("solve -affinity without INPUT: exit %d: %s", code, stderr)
	}

	bad := filepath.Join(dir, "bad.arrow")
	os.WriteFile(bad, []byte("not a tile file"), 0o644)
	testUsage(t, []string{"solve", "-q"}, []usageCase{
		{name: "n mismatch", args: []string{"-affinity", p, "-k", "2", "testdata/nolabel.csv"}, want: "holds P for n = 12, but testdata/nolabel.csv has"},
		{name: "not a tile file", args: []string{"-affinity", bad, "-k", "2", "testdata/small.csv"}, want: "bad.arrow: not an Arrow IPC file"},
		{name: "no k", args: []string{"-affinity", p}, want: "-k is required"},
		{name: "absent", args: []string{"-affinity", filepath.Join(dir, "absent.arrow"), "-k", "2"}, want: "absent.arrow: no such file"},
	})
	if code, _, stderr := ssnmf(t, "tiles", "-q", "testdata/small.csv"); code != exitUsage || !strings.Contains(stderr, "-o FILE.arrow is required") {
		t.Errorf("tiles without -o: exit %d: %s", code, stderr)
	}
}

// Every method runs through the same command line and summary.
func TestMethods(t *testing.T) {
	for _, method := range []string{"fw", "rowcd", "pgd", "penalty", "kmeans"} {
		t.Run(method, func(t *testing.T) {
			sum := filepath.Join(t.TempDir(), "s.json")
			code, stdout, stderr := ssnmf(t, "solve", "-q", "-method", method, "-k", "3", "-ftol", "1e-3", "-max-iter", "50",
				"-summary", sum, "testdata/small.csv")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "method "+method) {
				t.Errorf("table:\n%s", stdout)
			}
			var m map[string]any
			raw, _ := os.ReadFile(sum)
			if err := json.Unmarshal(raw, &m); err != nil || m["method"] != method || !(m["passes"].(float64) > 0) {
				t.Fatalf("summary: %v %v", m, err)
			}
			if _, ok := m["projected_objective"]; ok != (method == "penalty") {
				t.Errorf("projected_objective in the summary: %v, want it for penalty only", ok)
			}
		})
	}
	code, _, stderr := ssnmf(t, "solve", "-method", "pgd", "-checkpoint-every", "5", "testdata/small.csv")
	if code != exitUsage || !strings.Contains(stderr, "-method pgd saves no checkpoints (fw and rowcd do)") {
		t.Errorf("pgd with checkpoints: exit %d: %s", code, stderr)
	}
}

// A data set generated as Parquet is clustered from Parquet into Parquet,
// and the memberships read back equal the CSV output's.
func TestParquetEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "mix.parquet")
	if code, _, stderr := ssnmf(t, "gen", "-q", "-n", "300", "-p", "3", "-k", "3", "-sep", "6", "-seed", "1", "-o", data); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	pq, csvOut, sum := filepath.Join(dir, "w.parquet"), filepath.Join(dir, "w.csv"), filepath.Join(dir, "s.json")
	for _, out := range []string{pq, csvOut} {
		code, _, stderr := ssnmf(t, "solve", "-q", "-standardize", "-max-iter", "100", "-workdir", filepath.Join(dir, "work"), "-out", out, "-summary", sum, data)
		if code != exitOK {
			t.Fatalf("solve: exit %d: %s", code, stderr)
		}
	}
	var m map[string]any
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &m); err != nil || m["n"] != 300.0 || m["k"] != 3.0 || m["ari"] == nil {
		t.Fatalf("summary: n %v k %v ari %v (%v)", m["n"], m["k"], m["ari"], err)
	}
	// Read the Parquet output back as a table and compare with the CSV.
	got, err := input.Open(pq, "", store.TableOptions{Label: "cluster"}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, rows := readCSV(t, csvOut)
	if got.N != len(rows) || got.P != 5 { // id, w1..w3, confidence
		t.Fatalf("parquet output: %d rows, %d columns besides cluster", got.N, got.P)
	}
	for i, row := range rows {
		for j, c := range []int{0, 1, 2, 3, 5} { // the CSV's columns but cluster
			want, _ := strconv.ParseFloat(row[c], 64)
			if v := got.Features[i*5+j]; v != want {
				t.Fatalf("row %d column %d: parquet %v, csv %v", i, j, v, want)
			}
		}
	}
}

// -starts keeps the start with the lowest objective and lists every one.
func TestStarts(t *testing.T) {
	dir := t.TempDir()
	sum, out := filepath.Join(dir, "s.json"), filepath.Join(dir, "w.csv")
	code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-init", "random", "-max-iter", "5", "-starts", "4",
		"-summary", sum, "-out", out, "testdata/small.csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s solver.Summary
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Starts) != 4 {
		t.Fatalf("%d starts in the summary, want 4", len(s.Starts))
	}
	best := 0
	for i, st := range s.Starts {
		if st.Objective < s.Starts[best].Objective {
			best = i
		}
		for j := range i {
			if s.Starts[j].Seed == st.Seed {
				t.Fatalf("starts %d and %d have the same seed", j, i)
			}
		}
	}
	if s.BestStart != best || s.Objective != s.Starts[best].Objective {
		t.Fatalf("best start %d objective %v; the starts were %+v", s.BestStart, s.Objective, s.Starts)
	}
	// Every start carries its model term ¼||WᵀW||², the best start's the
	// run's (studies/spectral compares starts at their own scale by it).
	for i, st := range s.Starts {
		if !(st.ModelTerm > 0) {
			t.Errorf("start %d: model term %v, want > 0", i, st.ModelTerm)
		}
	}
	if s.Starts[best].ModelTerm != s.ModelTerm {
		t.Errorf("best start's model term %v, the run's %v", s.Starts[best].ModelTerm, s.ModelTerm)
	}
	// The memberships written are those of the best start: rerun it alone.
	alone := filepath.Join(dir, "alone.csv")
	seed := strconv.FormatUint(s.Starts[best].Seed, 10)
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-init", "random", "-max-iter", "5", "-seed", seed, "-starts", "1",
		"-out", alone, "testdata/small.csv"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(alone)
	if !bytes.Equal(a, b) {
		t.Fatal("-out differs from the best start run alone")
	}
}

// TestKNNAffinity runs -affinity knn: the summary describes the graph, the
// output has the same bits for any -workers, a run resumed from its
// checkpoint ends with the same bits as one never interrupted, and bad
// graph flags are one-line usage errors.
func TestKNNAffinity(t *testing.T) {
	dir := t.TempDir()
	// -frtol 0 -mtol 0, and -scale auto, at which this graph's solve does
	// not end in 2 sweeps as at the default's twice that: the run goes on
	// to its checkpoint.
	base := []string{"solve", "-q", "-affinity", "knn", "-neighbors", "4", "-weights", "self-tuning", "-k", "3", "-seed", "2", "-frtol", "0", "-mtol", "0", "-scale", "auto"}
	run := func(out string, extra ...string) []byte {
		t.Helper()
		args := append(append(slices.Clone(base), extra...), "-out", filepath.Join(dir, out), "testdata/small.csv")
		if code, _, stderr := ssnmf(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sum := filepath.Join(dir, "s.json")
	one := run("one.csv", "-workers", "1", "-max-iter", "20", "-summary", sum)
	if three := run("three.csv", "-workers", "3", "-max-iter", "20"); !bytes.Equal(one, three) {
		t.Error("1 and 3 workers give different memberships")
	}
	var m map[string]any
	raw, _ := os.ReadFile(sum)
	if err := json.Unmarshal(raw, &m); err != nil || m["affinity"] != "knn" || m["neighbors"] != 4.0 || m["weights"] != "self-tuning" || !(m["graph_entries"].(float64) >= 12) {
		t.Errorf("summary: %v %v", m, err)
	}
	work := filepath.Join(dir, "work")
	run("first.csv", "-workdir", work, "-checkpoint-every", "5", "-max-iter", "8")
	// The graph is kept in the work directory, and the resumed run opens
	// it instead of searching again.
	csr := filepath.Join(work, solver.GraphFile)
	before, err := os.Stat(csr)
	if err != nil {
		t.Fatalf("no graph in the work directory: %v", err)
	}
	if code, stdout, stderr := ssnmf(t, "dump", "-rows", "2", csr); code != exitOK || !strings.Contains(stdout, "CSR file") || !strings.Contains(stdout, "row 1 (") {
		t.Errorf("dump %s: exit %d: %s%s", csr, code, stdout, stderr)
	}
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work, "-max-iter", "20", "-out", filepath.Join(dir, "resumed.csv")); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if after, err := os.Stat(csr); err != nil || !os.SameFile(before, after) {
		t.Errorf("the resumed run built its graph again (%v)", err)
	}
	if resumed, _ := os.ReadFile(filepath.Join(dir, "resumed.csv")); !bytes.Equal(one, resumed) {
		t.Error("the run resumed from its checkpoint ends with other memberships than the run never interrupted")
	}
	testUsage(t, []string{"solve", "testdata/small.csv", "-affinity", "knn"}, []usageCase{
		{name: "no neighbours", args: []string{"-neighbors", "0"}, want: "-neighbors must be >= 2, have 0"},
		{name: "the row itself alone", args: []string{"-neighbors", "1"}, want: "-neighbors must be >= 2, have 1: the neighbours of a row include the row itself, so fewer than 2 leave it no other"},
		{name: "unknown weights", args: []string{"-weights", "gaussian"}, want: "-weights: unknown weights"},
		{name: "changed neighbours on resume", args: []string{"-resume", work, "-neighbors", "5"}, want: "-neighbors 5 differs from the checkpoint's -neighbors 4"},
	})
}

// TestEdgeListRoundTrip writes the kNN graph with "ssnmf graph" in every
// format and solves from each edge list: the memberships have the same bits
// as those of -affinity knn.
func TestEdgeListRoundTrip(t *testing.T) {
	dir := t.TempDir()
	knn := []string{"-neighbors", "5", "-weights", "self-tuning"}
	solveOut := func(out string, affinity ...string) []byte {
		t.Helper()
		args := append(append([]string{"solve", "-q", "-k", "3", "-seed", "1", "-max-iter", "30", "-out", filepath.Join(dir, out)}, affinity...), "testdata/small.csv")
		if code, _, stderr := ssnmf(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		b, _ := os.ReadFile(filepath.Join(dir, out))
		return b
	}
	want := solveOut("knn.csv", append([]string{"-affinity", "knn"}, knn...)...)
	for _, ext := range []string{"parquet", "arrow", "csv"} {
		edges := filepath.Join(dir, "edges."+ext)
		if code, _, stderr := ssnmf(t, append(append([]string{"graph", "-q"}, knn...), "-o", edges, "testdata/small.csv")...); code != exitOK {
			t.Fatalf("graph -o %s: exit %d: %s", edges, code, stderr)
		}
		if got := solveOut(ext+".csv", "-affinity", edges); !bytes.Equal(got, want) {
			t.Errorf("-affinity edges.%s: memberships differ from -affinity knn's", ext)
		}
	}
}

// TestEdgeListErrors gives solve bad edge lists: each is a one-line usage
// error naming the file, the edge and the column.
func TestEdgeListErrors(t *testing.T) {
	dir := t.TempDir()
	var cases []usageCase
	for _, tc := range []struct{ name, text, want string }{
		{"id out of range", "src,dst\n0,1\n0,12\n", "edges.csv: edge 2: column dst: 12, want a row id in [0, 12)"},
		{"negative id", "src,dst\n-1,1\n", "edge 1: column src: -1"},
		{"fractional id", "src,dst\n0,1.5\n", "edge 1: column dst: 1.5"},
		{"negative weight", "src,dst,weight\n0,1,-1\n", "edge 1: column weight: -1, want a finite weight >= 0"},
		{"NaN weight", "src,dst,weight\n0,1,NaN\n", "weight"},
		{"duplicate edge", "src,dst\n0,1\n0,1\n", "edges 1 and 2: the pair (0, 1) is listed twice"},
		{"asymmetric pair", "src,dst,weight\n0,1,1\n1,0,2\n", "edges 1 and 2: the pair (0, 1) is listed twice"},
		{"empty graph", "src,dst\n", "edges.csv"},
		{"not an edge list", "x,y\n0,1\n", `column "x" of an edge list`},
	} {
		name := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.MkdirAll(name, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(name, "edges.csv")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, usageCase{name: tc.name, args: []string{"-affinity", path}, want: tc.want})
	}
	testUsage(t, []string{"solve", "-k", "2", "testdata/small.csv"}, cases)
}

// TestGraphUsage checks the graph command's refusals.
func TestGraphUsage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e.parquet")
	testUsage(t, []string{"graph", "testdata/small.csv"}, []usageCase{
		{name: "no output", want: "-o EDGES.parquet is required"},
		{name: "unknown extension", args: []string{"-o", "e.json"}, want: "unknown extension"},
		{name: "no neighbours", args: []string{"-o", out, "-neighbors", "0"}, want: "-neighbors must be >= 2, have 0"},
		{name: "the row itself alone", args: []string{"-o", out, "-neighbors", "1"}, want: "-neighbors must be >= 2, have 1"},
		{name: "unknown weights", args: []string{"-o", out, "-weights", "rbf"}, want: "-weights: unknown weights"},
		{name: "two inputs", args: []string{"-o", out, "testdata/small.csv"}, want: "at most one INPUT"},
	})
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run left an output file")
	}
}

// checkIOPhases checks the summary's storage I/O, where the system counts
// it: the phases of a kNN run in order, one for each round, and totals
// that are their sums.
func checkIOPhases(t *testing.T, s solver.Summary) {
	t.Helper()
	if !diskio.Start().OK() {
		if s.IO != nil {
			t.Errorf("summary io %+v where the counters cannot be read", s.IO)
		}
		return
	}
	if s.IO == nil {
		t.Fatal("the summary has no io")
	}
	want := []string{"input"}
	for r := range s.KNNRounds {
		want = append(want, fmt.Sprintf("kNN round %d", r+1))
	}
	want = append(want, "affinity", "scale", "solve")
	var got []string
	var read, written int64
	for _, p := range s.IO.Phases {
		got = append(got, p.Name)
		read, written = read+p.Read, written+p.Written
		if p.Read < 0 || p.Written < 0 || p.Seconds < 0 {
			t.Errorf("phase %+v: a negative count", p)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("io phases %q, want %q", got, want)
	}
	if read != s.IO.ReadBytes || written != s.IO.WrittenBytes {
		t.Errorf("io totals %d read, %d written; the phases sum to %d, %d", s.IO.ReadBytes, s.IO.WrittenBytes, read, written)
	}
}

// TestApproxKNN runs the approximate kNN search (-knn approx) end to end
// on a Gaussian mixture of distinct rows: at this size every pair of
// leaves is searched, so the edge list is the exact search's; the
// memberships come out in the input's order (they match the labels); they
// have the same bits for any -workers and after a resume, which moves the
// rows into the same order again; and bad search flags are refused.
func TestApproxKNN(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "mix.csv")
	if code, _, stderr := ssnmf(t, "gen", "-q", "-n", "3000", "-p", "4", "-k", "4", "-sep", "8", "-seed", "3", "-o", data); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, knn := range []string{"exact", "approx"} {
		if code, _, stderr := ssnmf(t, "graph", "-q", "-neighbors", "10", "-knn", knn, "-o", filepath.Join(dir, knn+".csv"), data); code != exitOK {
			t.Fatalf("graph -knn %s: exit %d: %s", knn, code, stderr)
		}
	}
	if !bytes.Equal(read("exact.csv"), read("approx.csv")) {
		t.Error("graph -knn approx, every leaf searched: the edge list differs from the exact search's")
	}
	solveOut := func(out string, extra ...string) []byte {
		t.Helper()
		// One start: a resumed run with a larger -max-iter goes on with
		// the start it was checkpointed in, and a start that had ended
		// stays as it ended.
		args := append([]string{"solve", "-q", "-starts", "1", "-knn", "approx", "-neighbors", "10", "-seed", "1", "-frtol", "0", "-rtol", "0", "-mtol", "0", "-tol", "0", "-out", filepath.Join(dir, out)}, extra...)
		if code, _, stderr := ssnmf(t, append(args, data)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return read(out)
	}
	sum := filepath.Join(dir, "s.json")
	one := solveOut("one.csv", "-workers", "1", "-max-iter", "30", "-summary", sum)
	var s solver.Summary
	if err := json.Unmarshal(read("s.json"), &s); err != nil {
		t.Fatal(err)
	}
	if s.KNN != "approx" || s.KNNRecall == nil || *s.KNNRecall != 1 || s.KNNRecallRows != 1000 || s.ARI == nil || *s.ARI < 0.99 {
		t.Errorf("summary: knn %q, recall %v on %d rows, ARI %v; want approx, 1 on 1000, ARI >= 0.99 (W in the input's order)",
			s.KNN, s.KNNRecall, s.KNNRecallRows, s.ARI)
	}
	checkIOPhases(t, s)
	if three := solveOut("three.csv", "-workers", "3", "-max-iter", "30"); !bytes.Equal(one, three) {
		t.Error("1 and 3 workers give different memberships")
	}
	work := filepath.Join(dir, "work")
	solveOut("first.csv", "-workdir", work, "-checkpoint-every", "5", "-max-iter", "12")
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work, "-max-iter", "30", "-out", filepath.Join(dir, "resumed.csv")); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if !bytes.Equal(one, read("resumed.csv")) {
		t.Error("the resumed run ends with other memberships than the run never interrupted")
	}
	testUsage(t, []string{"solve", data}, []usageCase{
		{name: "unknown search", args: []string{"-knn", "lsh"}, want: `invalid value "lsh" for flag -knn`},
		{name: "recall 0", args: []string{"-knn-recall", "0"}, want: "-knn-recall must be in (0, 1], have 0"},
		{name: "recall above 1", args: []string{"-knn-recall", "1.5"}, want: "-knn-recall must be in (0, 1]"},
		{name: "no probes", args: []string{"-knn-probes", "0"}, want: "-knn-probes must be >= 1"},
		{name: "no rounds", args: []string{"-knn-rounds", "0"}, want: "-knn-rounds must be >= 1"},
	})
}

// TestApproxIsExact checks that where the approximate search is complete
// (every pair of leaves searched at this size), a run with -knn approx,
// whose rows are moved into the order of the partition, starts where the
// run with -knn exact starts: the same graph (edge lists equal byte for
// byte), gamma, and k-means starts (every start's objective and gap before
// its first sweep; the trace's gap there is the first sweep's). With -sweep-order input, which visits the rows in the
// input's order, and with the default, auto, which does so up to 50,000 rows, it is the exact run: every start the same sweeps to the
// same objective, the same clusters, W to 1e-9; not bit for bit, as the
// sums of P's rows (the scale, P·W) are added in the order of the moved
// rows. With the default order of the partition the sweeps visit the rows
// in another order, and the runs part after the start. The second data
// set is mostly copies of few rows on a grid, whose ties in distance go
// to the lower input row in both searches. The runs take -init kmeans:
// the spectral start, which -init auto takes on the first set, is made of
// the graph's rows in their order, moved by the approximate search.
func TestApproxIsExact(t *testing.T) {
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.csv")
	if code, _, stderr := ssnmf(t, "gen", "-q", "-n", "2000", "-p", "4", "-k", "4", "-sep", "3", "-seed", "5", "-o", mix); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	dup := filepath.Join(dir, "dup.csv")
	var b strings.Builder
	b.WriteString("x1,x2,x3,label\n")
	rng := rand.New(rand.NewPCG(8, 9))
	for range 2500 {
		c := rng.IntN(3)
		fmt.Fprintf(&b, "%d,%d,%d,%d\n", 3*c+rng.IntN(3), rng.IntN(2), c+rng.IntN(2), c)
	}
	if err := os.WriteFile(dup, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{mix, dup} {
		name := strings.TrimSuffix(filepath.Base(data), ".csv")
		var edges [][]byte
		for _, knn := range []string{"exact", "approx"} {
			path := filepath.Join(dir, name+"."+knn+".edges.csv")
			if code, _, stderr := ssnmf(t, "graph", "-q", "-knn", knn, "-o", path, data); code != exitOK {
				t.Fatalf("graph -knn %s %s: exit %d: %s", knn, name, code, stderr)
			}
			e, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edges = append(edges, e)
		}
		if !bytes.Equal(edges[0], edges[1]) {
			t.Fatalf("%s: the approximate search did not find the exact graph", name)
		}
		exact := solveRead(t, dir, name+".exact", data, "-knn", "exact", "-init", "kmeans")
		for _, order := range []string{"partition", "input", "auto"} {
			ap := solveRead(t, dir, name+"."+order, data, "-knn", "approx", "-sweep-order", order, "-init", "kmeans")
			if ap.sum.KNNRecall == nil || *ap.sum.KNNRecall != 1 || ap.sum.Gamma != exact.sum.Gamma || len(ap.sum.Starts) != len(exact.sum.Starts) || len(exact.sum.Starts) < 2 {
				t.Fatalf("%s, %s: recall %v, gamma %v, %d starts; want 1, %v, %d (at least 2)", name, order, ap.sum.KNNRecall, ap.sum.Gamma, len(ap.sum.Starts), exact.sum.Gamma, len(exact.sum.Starts))
			}
			for s, first := range ap.first {
				want := exact.first[s]
				if !near(first, want, 1e-12) {
					t.Errorf("%s, %s: start %d: objective %.17g before the first sweep, want %.17g", name, order, s, first, want)
				}
			}
			if order == "partition" {
				continue
			}
			for s, st := range ap.sum.Starts {
				want := exact.sum.Starts[s]
				if st.Iterations != want.Iterations || !near(st.Objective, want.Objective, 1e-12) {
					t.Errorf("%s: start %d: %d sweeps to objective %.17g, want %d to %.17g", name, s, st.Iterations, st.Objective, want.Iterations, want.Objective)
				}
			}
			var diff float64
			for i, row := range ap.rows {
				for c, v := range row {
					w := exact.rows[i][c]
					if h := ap.header[c]; h == "id" || h == "cluster" {
						if v != w {
							t.Fatalf("%s: row %d: %s is %s, want %s", name, i, h, v, w)
						}
						continue
					}
					a, _ := strconv.ParseFloat(v, 64)
					e, _ := strconv.ParseFloat(w, 64)
					diff = max(diff, math.Abs(a-e))
				}
			}
			if diff > 1e-9 {
				t.Errorf("%s: memberships differ by up to %.3g from the exact path's", name, diff)
			}
		}
	}
}

// near reports whether a and b agree to tol relative to b.
func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Abs(b) }

// solved is what a test reads of a solve: its summary, its memberships,
// and every start's objective before its first sweep.
type solved struct {
	sum    solver.Summary
	header []string
	rows   [][]string
	first  map[int]float64
}

// solveRead runs solve with args on data, its outputs named by name in
// dir, and reads them.
func solveRead(t *testing.T, dir, name, data string, args ...string) solved {
	t.Helper()
	out, sum, trace := filepath.Join(dir, name+".csv"), filepath.Join(dir, name+".json"), filepath.Join(dir, name+".trace.csv")
	args = append([]string{"solve", "-q", "-out", out, "-summary", sum, "-trace", trace}, args...)
	if code, _, stderr := ssnmf(t, append(args, data)...); code != exitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var r solved
	raw, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &r.sum); err != nil {
		t.Fatal(err)
	}
	r.header, r.rows = readCSV(t, out)
	head, recs := readCSV(t, trace)
	col := func(name string) int {
		if i := slices.Index(head, name); i >= 0 {
			return i
		}
		t.Fatalf("trace of %s: no column %s in %v", name, name, head)
		return 0
	}
	it, obj, start := col("iter"), col("objective"), col("start")
	r.first = map[int]float64{}
	for _, rec := range recs {
		if rec[it] != "0" {
			continue
		}
		s, _ := strconv.Atoi(rec[start])
		r.first[s], _ = strconv.ParseFloat(rec[obj], 64)
	}
	if len(r.first) != len(r.sum.Starts) {
		t.Fatalf("%s: the trace has %d starts, the summary %d", name, len(r.first), len(r.sum.Starts))
	}
	return r
}

// TestApproxKNNShortOfRecall checks that a search stopped by -knn-rounds
// below its recall target says so.
func TestApproxKNNShortOfRecall(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "mix.csv")
	if code, _, stderr := ssnmf(t, "gen", "-q", "-n", "3000", "-p", "8", "-k", "3", "-seed", "2", "-o", data); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	args := []string{"graph", "-q", "-knn", "approx", "-knn-probes", "1", "-knn-rounds", "1", "-o", filepath.Join(dir, "e.csv"), data}
	code, _, stderr := ssnmf(t, args...)
	if code != exitOK || !strings.Contains(stderr, "warning: the kNN search stopped after 1 rounds (-knn-rounds) at sampled recall 0.") {
		t.Errorf("%v: exit %d, stderr %q; want a warning that the recall is short of -knn-recall", args, code, stderr)
	}
}
