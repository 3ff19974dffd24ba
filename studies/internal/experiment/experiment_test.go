package experiment

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/trace"
)

func TestParseSets(t *testing.T) {
	known := []Set{{"blood", 10}, {"satimage", 6}}
	for _, tc := range []struct {
		list string
		want []Set
		err  string // a part of the error, "" for none
	}{
		{list: "blood", want: []Set{{"blood", 10}}},
		{list: "blood,satimage", want: []Set{{"blood", 10}, {"satimage", 6}}},
		{list: " blood , satimage:3", want: []Set{{"blood", 10}, {"satimage", 3}}},
		{list: "mine:4,blood:2", want: []Set{{"mine", 4}, {"blood", 2}}},
		{list: "mine", err: `"mine" has no default k; give it as mine:K`},
		{list: "", err: `"" has no default k`},
		{list: "blood,", err: `"" has no default k`},
		{list: "blood:0", err: `"blood:0": k must be a whole number >= 1`},
		{list: "blood:x", err: `"blood:x": k must be a whole number >= 1`},
		{list: "blood:", err: `"blood:": k must be`},
		{list: "blood: 3", err: `"blood: 3": k must be`},
	} {
		got, err := ParseSets(tc.list, known)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ParseSets(%q): %v", tc.list, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseSets(%q) error %v, want it to contain %q", tc.list, err, tc.err)
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("ParseSets(%q) = %v, want %v", tc.list, got, tc.want)
		}
	}
}

func TestReadLabeled(t *testing.T) {
	path := Path("testdata", "tiny")
	if path != filepath.Join("testdata", "tiny.csv") {
		t.Fatalf("Path = %q", path)
	}
	tab, err := ReadLabeled(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if tab.N != 5 || tab.P != 2 || !reflect.DeepEqual(tab.Labels, []int{0, 0, 1, 1, 2}) ||
		!reflect.DeepEqual(tab.Classes, []string{"a", "b", "c"}) {
		t.Errorf("read n=%d p=%d labels %v classes %v", tab.N, tab.P, tab.Labels, tab.Classes)
	}
	for _, tc := range []struct{ name, err string }{
		{"nolabel", "nolabel.csv: no label column to score against"},
		{"absent", "absent.csv"},
	} {
		if _, err := ReadLabeled(Path("testdata", tc.name)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadLabeled(%s): error %v, want it to contain %q", tc.name, err, tc.err)
		}
	}
}

func TestClusters(t *testing.T) {
	w := []float64{
		0.2, 0.5, 0.3,
		1, 0, 0,
		0.4, 0.2, 0.4, // a tie: the lowest index
	}
	if got, want := Clusters(w, 3), []int{1, 0, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("Clusters = %v, want %v", got, want)
	}
	if got := Clusters(nil, 3); len(got) != 0 {
		t.Errorf("Clusters(nil) = %v", got)
	}
}

func TestWriteTrace(t *testing.T) {
	its := []fw.Iteration{
		{Iter: 0, Elapsed: time.Second, Objective: 3.5, Gap: 2, Step: 0.25, Passes: 1},
		{Iter: 1, Elapsed: 2 * time.Second, Objective: 3.25, Gap: 0.5, Passes: 2, Final: true},
	}
	path := filepath.Join(t.TempDir(), "run.csv")
	if err := os.WriteFile(path, []byte("an earlier trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrace(path, its); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want []float64
	}{
		{trace.Iter, []float64{0, 1}},
		{trace.StepSize, []float64{0.25, 0}},
		{trace.Seconds, []float64{1, 2}},
		{trace.Objective, []float64{3.5, 3.25}},
		{trace.Passes, []float64{1, 2}},
	} {
		got, err := tr.Column(c.name)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("column %s = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if err := WriteTrace(filepath.Join(t.TempDir(), "absent", "run.csv"), its); err == nil {
		t.Error("WriteTrace into a missing directory did not fail")
	}
}
