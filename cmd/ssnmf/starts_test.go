package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/solver"
)

// -restarts, the former name of -starts, runs the same starts.
func TestStartsAlias(t *testing.T) {
	dir := t.TempDir()
	out := func(flag string) []byte {
		t.Helper()
		name := filepath.Join(dir, flag+".csv")
		if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", flag, "3", "-out", name, "testdata/small.csv"); code != exitOK {
			t.Fatalf("%s 3: exit %d: %s", flag, code, stderr)
		}
		b, _ := os.ReadFile(name)
		return b
	}
	if !bytes.Equal(out("-starts"), out("-restarts")) {
		t.Error("-starts 3 and -restarts 3 give different memberships")
	}
}

// A run of several starts stopped by -max-time in its first start and
// resumed ends with the same bits, summary objectives and starts as one
// never stopped: the resumed run finishes that start and runs the others.
func TestStartsMaxTimeResume(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	args := []string{"solve", "-q", "-starts", "3", "-seed", "1", "-workers", "2"}
	if code, _, stderr := ssnmf(t, append(args, "-out", at("ref.csv"), "-summary", at("ref.json"))...); code != exitOK {
		t.Fatalf("reference: exit %d: %s", code, stderr)
	}
	work := at("work")
	code, _, stderr := ssnmf(t, append(args, "-workdir", work, "-max-time", "1ns", "-out", at("w.csv"), "-summary", at("w.json"))...)
	if code != exitOK || !strings.Contains(stderr, "-resume "+work) {
		t.Fatalf("-max-time 1ns: exit %d: %s", code, stderr)
	}
	if s := readSummary(t, at("w.json")); s.StopReason != "max-time" {
		t.Fatalf("-max-time 1ns: stop_reason %q, want max-time", s.StopReason)
	}
	if code, _, stderr := ssnmf(t, "solve", "-q", "-resume", work, "-max-time", "0", "-workers", "1"); code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	ref, got := readSummary(t, at("ref.json")), readSummary(t, at("w.json"))
	a, _ := os.ReadFile(at("ref.csv"))
	b, _ := os.ReadFile(at("w.csv"))
	if !bytes.Equal(a, b) {
		t.Error("the resumed run ends with other memberships than the run never stopped")
	}
	if len(got.Starts) != 3 || got.BestStart != ref.BestStart || math.Float64bits(got.Objective) != math.Float64bits(ref.Objective) {
		t.Errorf("resumed: %d starts, best %d, objective %v; never stopped: best %d, objective %v", len(got.Starts), got.BestStart, got.Objective, ref.BestStart, ref.Objective)
	}
	for i := range min(len(got.Starts), len(ref.Starts)) {
		if got.Starts[i].Objective != ref.Starts[i].Objective || got.Starts[i].Seed != ref.Starts[i].Seed {
			t.Errorf("start %d: resumed %+v, never stopped %+v", i, got.Starts[i], ref.Starts[i])
		}
	}
}

// A run of several starts killed at random moments and resumed each time
// ends with the same bits as one never killed.
func TestKillAndResumeStarts(t *testing.T) {
	killAndResume(t, func(work string) []string {
		return append(rowcdResumeArgs(work), "-starts", "3", "-max-iter", "12")
	}, nil)
}

// -scale sizes scales P to Σ_j n_j² of the k-means start's clusters, and
// twice that is the default where the features are at hand; it needs the
// features and a sparse P.
func TestScaleSizes(t *testing.T) {
	dir := t.TempDir()
	sum := filepath.Join(dir, "s.json")
	for _, tc := range []struct {
		args   []string
		prefix string
	}{{[]string{"-scale", "sizes"}, "sizes: "}, {[]string{"-scale", "auto"}, "sizes: "}, {nil, "2 × (sizes: "}} {
		if code, _, stderr := ssnmf(t, append([]string{"solve", "-q", "-k", "3", "-starts", "1", "-summary", sum, "testdata/small.csv"}, tc.args...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if s := readSummary(t, sum); !strings.HasPrefix(s.ScaleRule, tc.prefix) {
			t.Errorf("%v: scale %v (%s), want %q", tc.args, s.Scale, s.ScaleRule, tc.prefix)
		}
	}
	edges := filepath.Join(dir, "edges.csv")
	if code, _, stderr := ssnmf(t, "graph", "-q", "-neighbors", "4", "-o", edges, "testdata/small.csv"); code != exitOK {
		t.Fatalf("graph: exit %d: %s", code, stderr)
	}
	// Without the features, the default falls back to twice the mass rule.
	if code, _, stderr := ssnmf(t, "solve", "-q", "-k", "3", "-affinity", edges, "-summary", sum); code != exitOK {
		t.Fatalf("edge list: exit %d: %s", code, stderr)
	}
	if s := readSummary(t, sum); !strings.HasPrefix(s.ScaleRule, "2 × (mass: ") {
		t.Errorf("edge list without features: scale rule %q, want twice the mass rule", s.ScaleRule)
	}
	testUsage(t, []string{"solve", "-k", "3"}, []usageCase{
		{name: "no features", args: []string{"-affinity", edges, "-scale", "sizes"}, want: "-scale sizes needs the features"},
		{name: "dense", args: []string{"-affinity", "gaussian", "-scale", "sizes", "testdata/small.csv"}, want: "-scale applies to a sparse P"},
		{name: "unknown rule", args: []string{"-scale", "equal", "testdata/small.csv"}, want: "want a positive number, mass, sizes or auto"},
		{name: "negative starts", args: []string{"-starts", "-1", "testdata/small.csv"}, want: "-starts must be >= 0, have -1"},
	})
}

// -scale RULE:F multiplies the rule's factor by F: sizes, mass, and auto
// whichever rule it falls back to; F must be a number > 0.
func TestScaleMultiple(t *testing.T) {
	dir := t.TempDir()
	sum := filepath.Join(dir, "s.json")
	scale := func(args ...string) solver.Summary {
		t.Helper()
		if code, _, stderr := ssnmf(t, append([]string{"solve", "-q", "-k", "3", "-starts", "1", "-summary", sum}, args...)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return readSummary(t, sum)
	}
	edges := filepath.Join(dir, "edges.csv")
	if code, _, stderr := ssnmf(t, "graph", "-q", "-neighbors", "4", "-o", edges, "testdata/small.csv"); code != exitOK {
		t.Fatalf("graph: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		rule, times string
		f           float64
		input       []string
		prefix      string
	}{
		{"sizes", "sizes:2", 2, []string{"testdata/small.csv"}, "2 × (sizes: "},
		{"mass", "mass:0.5", 0.5, []string{"testdata/small.csv"}, "0.5 × (mass: "},
		{"auto", "auto:3", 3, []string{"testdata/small.csv"}, "3 × (sizes: "},
		{"auto", "auto:3", 3, []string{"-affinity", edges}, "3 × (mass: "},
	} {
		base := scale(append([]string{"-scale", tc.rule}, tc.input...)...)
		got := scale(append([]string{"-scale", tc.times}, tc.input...)...)
		if math.Abs(got.Scale-tc.f*base.Scale) > 1e-12*got.Scale || !strings.HasPrefix(got.ScaleRule, tc.prefix) {
			t.Errorf("-scale %s %v: scale %v (%s), want %v times -scale %s's %v", tc.times, tc.input, got.Scale, got.ScaleRule, tc.f, tc.rule, base.Scale)
		}
	}
	testUsage(t, []string{"solve", "-k", "3"}, []usageCase{
		{name: "zero multiple", args: []string{"-scale", "sizes:0", "testdata/small.csv"}, want: "want sizes:F with a number F > 0"},
		{name: "no multiple", args: []string{"-scale", "mass:", "testdata/small.csv"}, want: "want mass:F with a number F > 0"},
		{name: "number with multiple", args: []string{"-scale", "2:3", "testdata/small.csv"}, want: "want a positive number, mass, sizes or auto"},
	})
}

// A -scale value prints as it parses, so that a resumed run reads back the
// rule and its multiple.
func TestScaleFlagRoundTrip(t *testing.T) {
	for _, s := range []string{"mass", "sizes", "auto", "sizes:2", "auto:1.5", "mass:0.25", "3.5"} {
		var f scaleFlag
		if err := f.Set(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var g scaleFlag
		if err := g.Set(f.String()); err != nil || g != f || f.String() != s {
			t.Errorf("%s: prints %q, which parses to %+v (%v), want %+v", s, f.String(), g, err, f)
		}
	}
}

// -starts and its former name -restarts given together are refused,
// naming both, in either order (the last one given used to win silently).
func TestStartsAndRestarts(t *testing.T) {
	for _, args := range [][]string{{"-starts", "2", "-restarts", "3"}, {"-restarts", "3", "-starts", "2"}} {
		code, _, stderr := ssnmf(t, append(append([]string{"solve", "-q", "-k", "3"}, args...), "testdata/small.csv")...)
		const want = "ssnmf: -starts and -restarts (its former name) are both given, and only one can count: give -starts alone\n"
		if code != exitUsage || stderr != want {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, code, stderr, exitUsage, want)
		}
	}
}

// k must be below the number of rows, whether given by -k or by the
// classes of the label column (k = n ran for an hour at n = 1,000, for
// each row a cluster of its own), and above half the rows a warning says
// that clusters of a single row are forced.
func TestClustersAndRows(t *testing.T) {
	dir := t.TempDir()
	distinct := filepath.Join(dir, "distinct.csv") // 4 rows, 4 classes
	if err := os.WriteFile(distinct, []byte("x,label\n0,a\n1,b\n2,c\n3,d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const small = "testdata/small.csv" // 12 rows
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // the whole of stderr
	}{
		{"k = n", []string{"-k", "12", small}, exitUsage,
			"ssnmf: -k 12 is not below the 12 rows of testdata/small.csv: a clustering needs fewer clusters than rows (at k = n each row is a cluster of its own); give -k 11 or less\n"},
		{"k > n", []string{"-k", "13", small}, exitUsage, "ssnmf: -k 13 is not below the 12 rows of testdata/small.csv"},
		{"a class a row", []string{distinct}, exitUsage, "ssnmf: k = 4, the number of classes of the label column, is not below the 4 rows of " + distinct},
		{"k > n/2", []string{"-k", "7", small}, exitOK,
			"ssnmf: -k 7 is more than half the 12 rows: at least 2 clusters hold a single row, and an iteration costs about n·k² = 5.9e+02 multiply-adds (the run may be long)\n"},
		{"k > n/2, k-means", []string{"-method", "kmeans", "-k", "7", small}, exitOK,
			"ssnmf: -k 7 is more than half the 12 rows: at least 2 clusters hold a single row\n"},
		{"k = n/2", []string{"-k", "6", small}, exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := ssnmf(t, append([]string{"solve", "-q", "-max-iter", "2"}, tc.args...)...)
			if code != tc.code || !strings.HasPrefix(stderr, tc.want) || tc.code == exitOK && stderr != tc.want {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}
