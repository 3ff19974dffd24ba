package solver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/internal/diskio"
)

// TestWriteText checks the rows of the summary's table for each kind of
// P: the Gaussian kernel's, the kNN graph's (with its search) and a
// file's, and the rows that appear only with what they report.
func TestWriteText(t *testing.T) {
	ari, nmi, brier := 0.5, 0.25, 0.125
	base := Summary{Input: "in.csv", N: 10, P: 3, K: 2, Method: "rowcd", Objective: 4, Gap: 0.5, ModelTerm: 8,
		StopReason: "model-gap", Iterations: 3, Passes: 4, Sizes: []int{6, 4}}
	for _, c := range []struct {
		name      string
		edit      func(s *Summary)
		want, not []string
	}{
		{"gaussian", func(s *Summary) { s.Gamma, s.GammaRule = 0.25, "neighbor" },
			[]string{"input          in.csv (n=10, p=3)", "kernel         gamma=0.25 (neighbor)", "cluster sizes  6 4", "storage I/O    not counted"},
			[]string{"affinity", "vs labels", "starts", "engine", "init"}},
		{"knn", func(s *Summary) {
			s.Neighbors, s.Weights, s.GraphEntries, s.KNN, s.search = 5, "self-tuning", 50, "approx", "approximate search, recall 0.9900 on 10 sampled rows"
			s.ARI, s.NMI, s.Brier, s.Classes = &ari, &nmi, &brier, 2
			s.Starts, s.BestStart = []Start{{Objective: 4}, {Objective: 5}}, 0
			s.InitRule, s.Init = "eigengap 3 >= 2", "spectral"
		}, []string{"affinity       kNN graph: 5 neighbours, self-tuning weights, 50 entries", "kNN search     approximate search, recall 0.9900",
			"vs labels      ARI 0.5000  NMI 0.2500  accuracy - (2 classes)", "Brier 0.1250", "starts         2, the least objective chosen: start 0 (4, 5)",
			"init           spectral (auto: eigengap 3 >= 2)"}, []string{"kernel "}},
		{"edge list", func(s *Summary) {
			s.AffinityKind, s.Affinity, s.Scale, s.ScaleRule = "edge list", "e.parquet", 2, "mass"
			s.Steps, s.Engine, s.Tasks = 1, "slurm", 4
		}, []string{"input          in.csv (n=10)\n", "affinity       edge list e.parquet", "scale          2 (mass)", "engine         slurm: 1 step(s) of 4 tasks"},
			[]string{"kNN search", "p=3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			c.edit(&s)
			var b strings.Builder
			if err := s.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("%q in\n%s", n, b.String())
				}
			}
		})
	}
}

// WriteJSON writes the summary's record, indented, which reads back as
// it was; NewIOReport reports no phases as nil, and the phases recorded
// with their totals.
func TestWriteJSONAndIOReport(t *testing.T) {
	s := &Summary{Input: "in.csv", N: 10, K: 2, Objective: 4}
	if s.IO = NewIOReport(nil); s.IO != nil {
		t.Errorf("NewIOReport(nil) = %+v, want nil", s.IO)
	}
	m := diskio.Start()
	m.End("input")
	if r := NewIOReport(m); m.OK() && (r == nil || len(r.Phases) != 1 || r.Phases[0].Name != "input") {
		t.Errorf("NewIOReport of one phase = %+v", r)
	}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Input != "in.csv" || back.N != 10 || !strings.Contains(b.String(), "\n  \"") {
		t.Errorf("WriteJSON wrote %s (%v)", b.String(), err)
	}
}
