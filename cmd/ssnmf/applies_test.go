package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// flagNeeds is the table of what every flag of every command applies to:
// the want of its need (applies.go), or "" for a flag that applies to
// every run of its command. A flag added to a command fails
// TestEveryFlagClassified until it is listed here.
var flagNeeds = map[string]map[string]string{
	"solve": {
		"affinity": "", "checkpoint-every": "", "engine": "", "frtol": "", "ftol": "", "k": "",
		"max-iter": "", "max-time": "", "method": "", "out": "", "q": "", "restarts": "", "starts": "", "resume": "",
		"rtol": "", "mtol": "", "seed": "", "summary": "", "tile": "", "tol": "", "trace": "", "workdir": "", "workers": "", "kernel": "", "mem": "",
		"gamma": needGaussian.want, "precision": needGaussian.want,
		"neighbors": needKNN.want, "weights": needKNN.want, "knn": needKNN.want,
		"knn-recall": needApprox.want, "knn-probes": needApprox.want, "knn-rounds": needApprox.want, "knn-descent": needApprox.want,
		"scale":       needSparse.want,
		"model":       needModel.want,
		"standardize": needFeatures.want, "features": needFeatures.want, "label": needFeatures.want,
		"format": needInput.want,
		"rows":   needEdgesAlone.want,
		"moves":  needRowCD.want, "strip-memory": needDenseRowCD.want,
		"sweep-order": needApproxRowCD.want,
		"step":        needFW.want,
		"refresh":     needRefresh.want,
		"init":        needStart.want,
		"init-starts": needKMStart.want,
		"tasks":       needSlurm.want, "retries": needSlurm.want,
	},
	"graph": {
		"engine": "", "o": "", "q": "", "tile": "", "workers": "", "kernel": "", "mem": "",
		"neighbors": needKNN.want, "weights": needKNN.want, "knn": needKNN.want,
		"knn-recall": needApprox.want, "knn-probes": needApprox.want, "knn-rounds": needApprox.want, "knn-descent": needApprox.want,
		"standardize": needFeatures.want, "features": needFeatures.want, "label": needFeatures.want,
		"format": needInput.want,
		"tasks":  needSlurm.want, "retries": needSlurm.want,
	},
	"tiles": {
		"o": "", "q": "", "seed": "", "tile": "", "workers": "",
		"gamma": needGaussian.want, "precision": needGaussian.want,
		"standardize": needFeatures.want, "features": needFeatures.want, "label": needFeatures.want,
		"format": needInput.want,
	},
	"gen":    {"k": "", "n": "", "o": "", "p": "", "q": "", "seed": "", "sep": ""},
	"worker": {"pass": "", "run": "", "task": "", "tasks": "", "workers": ""},
	"bench":  {"fallback-reps": "", "k": "", "n": "", "p": "", "precision": "", "probe": "", "quick": "", "reps": "", "tile": "", "workers": ""},
	"plot":   {"linear": "", "o": "", "title": "", "x": "", "y": "", "pdf": ""},
	"predict": {"model": "", "out": "", "knn": needKNNModel.want, "knn-probes": needApproxModel.want, "knn-sample": needApproxModel.want, "knn-recall": needApproxModel.want,
		"seed": needApproxModel.want, "batch": "", "workers": "", "format": "", "label": "", "features": "", "q": ""},
	"dump": {"rows": ""},
}

// commandFlags returns the flags that "ssnmf cmd -h" lists.
func commandFlags(t *testing.T, cmd string) []string {
	t.Helper()
	_, stdout, _ := ssnmf(t, cmd, "-h")
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(stdout, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("ssnmf %s -h lists no flags:\n%s", cmd, stdout)
	}
	return names
}

// TestEveryFlagClassified checks that every flag of every command is in
// flagNeeds, and that solve's definitions mark the needs the table says.
func TestEveryFlagClassified(t *testing.T) {
	for _, cmd := range slices.Sorted(maps.Keys(flagNeeds)) {
		for _, name := range commandFlags(t, cmd) {
			if _, ok := flagNeeds[cmd][name]; !ok {
				t.Errorf("ssnmf %s -%s is not in flagNeeds: register what it applies to (applies.go) and list it", cmd, name)
			}
		}
	}
	c, err := parseSolve(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range flagNeeds["solve"] {
		if got := c.marks.applies[name].want; got != want {
			t.Errorf("solve -%s: its definition needs %q, the table %q", name, got, want)
		}
	}
}

// TestFlagsApply gives every flag that applies only to some runs on a
// command line of a run it does not apply to, and checks the error: one
// line naming the flag, what it needs, and what the run has instead.
func TestFlagsApply(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "edges.csv")
	if err := os.WriteFile(edges, []byte("src,dst,weight\n0,1,1\n1,2,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const data = "testdata/small.csv"
	out := filepath.Join(dir, "o.csv")
	// A value of each flag that its command accepts.
	value := map[string]string{
		"gamma": "1", "precision": "float32", "neighbors": "5", "weights": "connectivity", "knn": "approx",
		"knn-recall": "0.9", "knn-probes": "2", "knn-rounds": "3", "knn-descent": "2", "scale": "2", "model": filepath.Join(dir, "m"), "standardize": "false",
		"features": "x1", "label": "label", "format": "csv", "rows": "3", "moves": "2", "strip-memory": "0", "sweep-order": "input",
		"step": "curvature", "refresh": "5", "init": "random", "init-starts": "2", "tasks": "2", "retries": "1",
	}
	// A run that each need does not hold for, by command: its arguments
	// and the words of what it has instead.
	type breaker struct {
		args []string
		have string
	}
	breaks := map[string]map[string]breaker{
		needGaussian.want:    {"solve": {[]string{data}, "the affinity is knn"}},
		needKNN.want:         {"solve": {[]string{"-affinity", "gaussian", data}, "the affinity is gaussian"}},
		needApprox.want:      {"solve": {[]string{"-knn", "exact", data}, "the search is -knn exact"}, "graph": {[]string{"-knn", "exact", data}, "the search is -knn exact"}},
		needSparse.want:      {"solve": {[]string{"-affinity", "gaussian", data}, "the affinity is gaussian"}},
		needFeatures.want:    {"solve": {[]string{"-affinity", edges}, "P is read from -affinity and no INPUT is given"}},
		needInput.want:       {"solve": {nil, "no INPUT is given"}, "graph": {nil, "no INPUT is given"}, "tiles": {nil, "no INPUT is given"}},
		needEdgesAlone.want:  {"solve": {[]string{"-affinity", edges, data}, "INPUT gives the rows"}},
		needRowCD.want:       {"solve": {[]string{"-method", "fw", data}, "the method is fw"}},
		needApproxRowCD.want: {"solve": {[]string{"-knn", "exact", data}, "the search is -knn exact"}},
		needDenseRowCD.want:  {"solve": {[]string{data}, "the affinity is knn, whose sweep reads no strips"}},
		needFW.want:          {"solve": {[]string{data}, "the method is rowcd"}},
		needRefresh.want:     {"solve": {[]string{"-method", "pgd", data}, "the method is pgd"}},
		needStart.want:       {"solve": {[]string{"-method", "kmeans", data}, "-method kmeans makes its own start"}},
		needKMStart.want:     {"solve": {[]string{"-init", "corners", data}, "the start is corners"}},
		needModel.want:       {"solve": {[]string{"-affinity", edges, data}, "P is read from the file of -affinity"}},
		needSlurm.want:       {"solve": {[]string{data}, "the engine is local"}, "graph": {[]string{data}, "the engine is local"}},
	}
	// The needs that every run of a command has.
	always := map[string][]string{"graph": {needKNN.want, needFeatures.want}, "tiles": {needGaussian.want, needFeatures.want}}
	base := map[string][]string{"solve": {"solve", "-k", "2"}, "graph": {"graph", "-o", out}, "tiles": {"tiles", "-o", filepath.Join(dir, "p.arrow")}}
	for _, cmd := range slices.Sorted(maps.Keys(base)) {
		for _, name := range slices.Sorted(maps.Keys(flagNeeds[cmd])) {
			want := flagNeeds[cmd][name]
			b, ok := breaks[want][cmd]
			if want == "" || slices.Contains(always[cmd], want) {
				continue // applies to every run of cmd
			}
			if !ok {
				t.Errorf("ssnmf %s -%s needs %s: no run without it to test", cmd, name, want)
				continue
			}
			t.Run(cmd+" -"+name, func(t *testing.T) {
				args := slices.Concat(base[cmd], []string{"-" + name + "=" + value[name]}, b.args)
				code, _, stderr := ssnmf(t, args...)
				prefix := "ssnmf: -" + name + " applies to " + want + " (" + b.have
				if code != exitUsage || !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "\n") != 1 {
					t.Fatalf("ssnmf %s: exit %d, stderr %q; want exit %d and one line starting %q", strings.Join(args, " "), code, stderr, exitUsage, prefix)
				}
			})
		}
	}
}

// TestGammaExample is the example, word for word.
func TestGammaExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := solve(context.Background(), []string{"-gamma", "1", "-k", "2", "testdata/small.csv"}, &stdout, &stderr, nil)
	const want = "-gamma applies to -affinity gaussian (the affinity is knn); add -affinity gaussian"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
