package methods

import (
	"math"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/fw"
)

func TestTable(t *testing.T) {
	if Names()[0] != Default {
		t.Errorf("first method %s, want the default %s", Names()[0], Default)
	}
	if got := List(); got != "rowcd, fw, pgd, penalty, kmeans or spectral" {
		t.Errorf("List() = %q", got)
	}
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Name] || m.Doc == "" || m.New == nil {
			t.Errorf("method %q: duplicate, no doc or no constructor", m.Name)
		}
		seen[m.Name] = true
		got, err := Lookup(m.Name)
		if err != nil || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got.Name, err)
		}
		meth := m.New(Params{})
		if _, ok := meth.(fw.Checkpointer); ok != m.Checkpoints {
			t.Errorf("%s: Checkpoints = %v, but the method's Checkpointer is %v", m.Name, m.Checkpoints, ok)
		}
	}
	if _, err := Lookup("newton"); err == nil || !strings.Contains(err.Error(), List()) {
		t.Errorf("Lookup(newton) error %v, want one listing the methods", err)
	}
	if got := strings.Join(With(func(m Method) bool { return m.Checkpoints }), " "); got != "rowcd fw" {
		t.Errorf("the methods with checkpoints: %s, want rowcd fw", got)
	}
}

func TestParams(t *testing.T) {
	m, _ := Lookup("rowcd")
	rc := m.New(Params{Moves: 5, BlockSize: 64, StripMemory: 1 << 20}).(*fw.RowCD)
	if rc.Moves != 5 || rc.BlockSize != 64 || rc.StripMemory != 1<<20 {
		t.Errorf("rowcd parameters %+v", rc)
	}
	scratch := make([]float64, 6)
	m, _ = Lookup("fw")
	if f := m.New(Params{Step: fw.StepOpenLoop, Scratch: scratch}).(*fw.FrankWolfe); f.Step != fw.StepOpenLoop || &f.PS[0] != &scratch[0] {
		t.Errorf("fw parameters %+v", f)
	}
	rows := make([]float64, 6)
	m, _ = Lookup("spectral")
	if s := m.New(Params{Spectral: rows, SpectralDim: 2, SpectralBeta: 3}).(*fw.KMeans); &s.X[0] != &rows[0] || s.Dim != 2 || s.Beta != 3 {
		t.Errorf("spectral parameters %+v", s)
	}
}

func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		name                string
		tol, ftol           float64
		maxIter, refresh    int
		wantTol             float64
		wantIter, wantFresh int
	}{
		{name: "as given", tol: 1e-4, ftol: 1e-3, maxIter: 50, refresh: 7, wantTol: 1e-4, wantIter: 50, wantFresh: 7},
		{name: "zeros", wantTol: math.SmallestNonzeroFloat64, wantIter: -1, wantFresh: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings(tc.tol, tc.ftol, tc.maxIter, tc.refresh)
			if s.GapTol != tc.wantTol || s.FuncTol != tc.ftol || s.MaxIter != tc.wantIter || s.Refresh != tc.wantFresh {
				t.Errorf("Settings = %+v", s)
			}
		})
	}
}
