package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSpectralMisfit checks the misfit 1 - cos²(P, WWᵀ) read off a start's
// objective, model term and ||P||² against the direct computation on a
// small P and W.
func TestSpectralMisfit(t *testing.T) {
	p := [][]float64{{0, 2, 0.5}, {2, 0, 0.1}, {0.5, 0.1, 0}}
	w := [][]float64{{0.9, 0.1}, {0.8, 0.2}, {0.3, 0.7}}
	var pp, pw, ww, wtw float64
	for i := range p {
		for j := range p {
			var m float64
			for c := range w[i] {
				m += w[i][c] * w[j][c]
			}
			pp += p[i][j] * p[i][j]
			pw += p[i][j] * m
			ww += m * m
		}
	}
	for a := range 2 {
		for b := range 2 {
			var m float64
			for i := range w {
				m += w[i][a] * w[i][b]
			}
			wtw += m * m
		}
	}
	if math.Abs(ww-wtw) > 1e-12 {
		t.Fatalf("||WWᵀ||² %v != ||WᵀW||² %v", ww, wtw)
	}
	f, model := (pp-2*pw+ww)/4, wtw/4
	st := newSpectralStarts("kmeans", record{PFrobSq: pp, Starts: []startRecord{{Objective: f, Model: model}}})
	want := 1 - pw*pw/(pp*ww)
	if got := st[0].misfit; math.Abs(got-want) > 1e-12 {
		t.Errorf("misfit %v, want %v", got, want)
	}
	if old := newSpectralStarts("kmeans", record{PFrobSq: pp, Starts: []startRecord{{Objective: f}}}); !math.IsNaN(old[0].misfit) {
		t.Errorf("a record without the model term: misfit %v, want NaN", old[0].misfit)
	}
}

// TestSpectralRules checks which start each rule keeps on a set of two
// k-means starts and two spectral starts, ties to the earlier start.
func TestSpectralRules(t *testing.T) {
	s := spectralSet{
		kmeans:   []spectralStart{{kind: "kmeans", objective: 5, misfit: 0.1, ari: 0.1}, {kind: "kmeans", objective: 4, misfit: 0.5, ari: 0.2}},
		spectral: []spectralStart{{kind: "spectral", objective: 4.5, misfit: 0.3, ari: 0.9}, {kind: "spectral", objective: 3, misfit: 0.3, ari: 0.8}},
		method:   0.7,
		gap:      4,
	}
	want := map[string]float64{
		"the spectral start if the eigengap >= 1.5, else the default": 0.8,
		"the spectral start if the eigengap >= 2, else the default":   0.8,
		"the spectral start if the eigengap >= 3, else the default":   0.8,
		"the spectral start if the eigengap >= 5, else the default":   0.2,
		"the spectral start if the eigengap >= 10, else the default":  0.2,
		"the spectral start if the eigengap >= 20, else the default":  0.2,
		"the default (its k-means starts, least f)":                   0.2,
		"1 k-means start":            0.1,
		"1 spectral start":           0.9,
		"2 spectral starts, least f": 0.8,
		"the default's k-means starts + 1 spectral, least f":      0.2,
		"the default's k-means starts + 1 spectral, least misfit": 0.1,
		"the default's k-means starts + 2 spectral, least f":      0.8,
		"1 k-means + 1 spectral start, least f":                   0.9,
		"-method spectral":                                        0.7,
	}
	rules := spectralRules(nil, false)
	if len(rules) != len(want) {
		t.Fatalf("%d rules, want %d", len(rules), len(want))
	}
	for _, r := range rules {
		if got := r.ariOf(s); got != want[r.name] {
			t.Errorf("%s: ARI %v, want %v", r.name, got, want[r.name])
		}
	}
	if got := rules[4].ariOf(spectralSet{kmeans: s.kmeans}); !math.IsNaN(got) {
		t.Errorf("a mixed rule on a set without spectral starts: ARI %v, want NaN", got)
	}
	noGap := s
	noGap.gap = math.NaN()
	if got := rules[len(rules)-1].ariOf(noGap); !math.IsNaN(got) {
		t.Errorf("a gated rule on a set without eigenvalues: ARI %v, want NaN", got)
	}
	gated := spectralRules([]float64{3.5, 4, 4.5}, true)
	var names []string
	for _, r := range gated {
		names = append(names, fmt.Sprintf("%s: %v", r.name, r.ariOf(s)))
	}
	wantGated := []string{
		"the default (its k-means starts, least f): 0.2",
		"the spectral start if the eigengap >= 3.5, else the default: 0.8",
		"the spectral start if the eigengap >= 4, else the default: 0.8",
		"the spectral start if the eigengap >= 4.5, else the default: 0.2",
	}
	if !slices.Equal(names, wantGated) {
		t.Errorf("gated rules at 3.5, 4, 4.5 on a set of gap 4:\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(wantGated, "\n"))
	}
}

// TestSpectralReport runs the spectral study on made-up records in which
// the spectral start is right on half the sets and has the least
// objective there: the mixed rule of least objective is best and picked
// in every repeat. A set whose spectral run is on another scale is left
// out, and the anchors' rows and the sets of SpectralClustering >= 0.95
// are reported.
func TestSpectralReport(t *testing.T) {
	dir := t.TempDir()
	path, anchors := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "a.jsonl")
	var b, a bytes.Buffer
	add := func(buf *bytes.Buffer, v any) {
		line, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	f := func(v float64) *float64 { return &v }
	for i := range 7 {
		set := fmt.Sprintf("s%d", i)
		good := i%2 == 0
		km, sp := 0.5, 0.2
		spObj := 12.0
		if good {
			km, sp, spObj = 0.3, 1, 8
		}
		scale := 1.0
		if i == 6 {
			scale = 2 // the spectral run on another P: the set is left out
		}
		add(&b, record{Set: set, N: 100 + i, K: 2, Candidate: "defaults", ARI: km, Scale: 1, PFrobSq: 100,
			Starts: []startRecord{{Objective: 10, ARI: f(km), Model: 20}, {Objective: 11, ARI: f(0), Model: 20}}})
		add(&b, record{Set: set, N: 100 + i, K: 2, Candidate: "spectral-start", ARI: sp, Scale: scale, PFrobSq: 100,
			Spectral: &spectralRecord{Eigenvalues: []float64{1, 0.99, map[bool]float64{true: 0.5, false: 0.98}[good]}},
			Starts:   []startRecord{{Objective: spObj, ARI: f(sp), Model: 20}, {Objective: spObj, ARI: f(sp), Model: 20}}})
		add(&b, record{Set: set, N: 100 + i, K: 2, Candidate: "method-spectral", ARI: sp})
		for _, m := range []string{"kmeans", "gmm", "spectral"} {
			add(&a, anchor{Set: set, Method: m, ARI: map[bool]float64{true: 0.96, false: 0.4}[good && m == "spectral"]})
		}
	}
	for p, buf := range map[string]*bytes.Buffer{path: &b, anchors: &a} {
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := spectralReport(options{spectral: []string{path}, anchors: anchors, repeats: 20, lsoSeed: 1}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"6 sets: s0, s1, s2, s3, s4, s5\n",
		"| the default's k-means starts + 1 spectral, least f | 0.7500 | ",
		"| the default (its k-means starts, least f) | 0.4000 | ",
		"| scikit-learn spectral | 0.6800 | ",
		"The 3 sets where scikit-learn's SpectralClustering has ARI >= 0.95 (s0, s2, s4)",
		"| the default's k-means starts + 1 spectral, least f | 3 of 3 | 1.0000 |",
		"| the default (its k-means starts, least f) | 0 of 3 | 0.3000 |",
		"| s1 | 1 | 2 | spectral 0 | 12 | 0.2 | ",
		"| the spectral start if the eigengap >= 5, else the default | 0.7500 | ",
		"| the spectral start if the eigengap >= 1.5, else the default | 0.6000 | ",
		"| the spectral start if the eigengap >= 3, else the default | 0.7500 | ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := spectralReport(options{spectral: []string{path}, sets: []string{"s0", "s1", "s2", "s3", "s6"}, repeats: 2}, &out); err != nil || !strings.Contains(out.String(), "4 sets: s0, s1, s2, s3\n") {
		t.Errorf("-sets s0,s1,s2,s3,s6: err %v, want the 4 sets s0 to s3:\n%s", err, out.String())
	}
	if err := spectralReport(options{spectral: []string{anchors}, repeats: 2}, &out); err == nil || !strings.Contains(err.Error(), "0 sets") {
		t.Errorf("records without the runs: err %v, want one that says 0 sets", err)
	}
}

// TestSpectralAuto checks the check of the default's runs: it passes where
// their ARIs are the rule's picks (the spectral starts' where the gap is
// at least 2, the k-means starts' elsewhere), and names the set where not.
func TestSpectralAuto(t *testing.T) {
	starts := spectralSet{
		kmeans:   []spectralStart{{kind: "kmeans", objective: 5, ari: 0.1}, {kind: "kmeans", objective: 4, ari: 0.2}},
		spectral: []spectralStart{{kind: "spectral", objective: 4.5, ari: 0.9}, {kind: "spectral", objective: 3, ari: 0.8}},
	}
	apart, joined := starts, starts
	apart.name, apart.gap = "apart", 4
	joined.name, joined.gap = "joined", 1.5
	sets := []spectralSet{apart, joined}
	dir := t.TempDir()
	for _, tc := range []struct {
		aris  [2]float64
		wrong string
	}{
		{[2]float64{0.8, 0.2}, ""},
		{[2]float64{0.8, 0.8}, "joined"},
		{[2]float64{0.9, 0.2}, "apart"},
	} {
		path := filepath.Join(dir, "auto.jsonl")
		var lines []string
		for i, s := range sets {
			b, _ := json.Marshal(record{Set: s.name, Candidate: "defaults", ARI: tc.aris[i]})
			lines = append(lines, string(b))
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		err := spectralAuto(&out, sets, []string{path})
		if tc.wrong == "" && err != nil || tc.wrong != "" && (err == nil || !strings.Contains(err.Error(), tc.wrong)) {
			t.Errorf("ARIs %v: error %v, want one naming %q", tc.aris, err, tc.wrong)
		}
	}
}
