package solver

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/internal/diskio"
	"github.com/ssnmf/ssnmf/score"
	"github.com/ssnmf/ssnmf/store"
)

// Summary is the record of a run: its settings, how it ended, P, the
// passes, the starts, the scores against the labels and what its methods
// report. The command writes it as the JSON of -summary; the fields the
// run does not know (the input's name, the time of the whole command, the
// engine, the memory, the storage I/O) are the caller's to fill.
type Summary struct {
	Input  string `json:"input"`
	N      int    `json:"n"`
	P      int    `json:"p"`
	K      int    `json:"k"`
	Method string `json:"method"`
	Step   string `json:"step"`
	Init   string `json:"init"`
	// InitRule says how -init auto was resolved (Run.InitRule).
	InitRule    string  `json:"init_rule,omitempty"`
	Gamma       float64 `json:"gamma"`
	GammaRule   string  `json:"gamma_rule"`
	Standardize bool    `json:"standardize"`
	Seed        uint64  `json:"seed"`
	Workers     int     `json:"workers"`
	Tile        int     `json:"tile"`
	Kernel      string  `json:"kernel"`
	// KernelFamily is the family of vector kernels that ran (-kernel,
	// resolved), KNNKernel the kernel of the kNN search's screen where
	// one ran, and CheckpointKernelFamily the family of the checkpoint's
	// run where a resumed run ran another.
	KernelFamily           string  `json:"kernel_family"`
	KNNKernel              string  `json:"knn_kernel,omitempty"`
	CheckpointKernelFamily string  `json:"checkpoint_kernel_family,omitempty"`
	Tol                    float64 `json:"tol"`
	Ftol                   float64 `json:"ftol"`
	Rtol                   float64 `json:"rtol"`
	Mtol                   float64 `json:"mtol"`
	Frtol                  float64 `json:"frtol"`
	MaxTimeSeconds         float64 `json:"max_time_seconds,omitempty"`
	MaxIter                int     `json:"max_iter"`
	Refresh                int     `json:"refresh"`
	Iterations             int     `json:"iterations"`
	Passes                 int     `json:"passes"`
	Objective              float64 `json:"objective"`
	Gap                    float64 `json:"gap"`
	ModelTerm              float64 `json:"model_term"`
	Converged              bool    `json:"converged"`
	StopReason             string  `json:"stop_reason"`
	Seconds                float64 `json:"seconds"`
	SolveSeconds           float64 `json:"solve_seconds"`
	EntriesPerSecond       float64 `json:"entries_per_second"`
	PassSeconds            float64 `json:"pass_seconds"`     // the mean time of a pass over P
	AffinitySeconds        float64 `json:"affinity_seconds"` // the time to load the input and set P up (a kNN graph's search)
	PFrobeniusSq           float64 `json:"p_frobenius_sq"`
	PMaxRowSum             float64 `json:"p_max_row_sum"`
	Precision              string  `json:"precision"`
	Affinity               string  `json:"affinity,omitempty"`
	AffinityKind           string  `json:"affinity_kind,omitempty"` // -affinity FILE: "tile file" or "edge list"
	Neighbors              int     `json:"neighbors,omitempty"`     // -affinity knn
	Weights                string  `json:"weights,omitempty"`       // -affinity knn
	GraphEntries           int64   `json:"graph_entries,omitempty"` // -affinity knn: stored entries of P
	// -affinity knn: the search ("exact" or "approx"), and for approx
	// its rounds and the recall@M measured on RecallRows sampled rows
	// (absent when not measured, or when the graph was reused).
	KNN           string   `json:"knn,omitempty"`
	KNNRounds     int      `json:"knn_rounds,omitempty"`
	KNNRecall     *float64 `json:"knn_recall,omitempty"`
	KNNRecallRows int      `json:"knn_recall_rows,omitempty"`
	// KNNParts is the most parts of the rows by which a round of leaf
	// pairs ran, the search's lists being out of core (graph.KNNRound's
	// Parts); absent if every round ran at once.
	KNNParts       int       `json:"knn_parts,omitempty"`
	Scale          float64   `json:"scale,omitempty"` // a sparse P: the factor of its stored values
	ScaleRule      string    `json:"scale_rule,omitempty"`
	ResumedAt      int       `json:"resumed_at,omitempty"`
	Starts         []Start   `json:"starts,omitempty"`
	BestStart      int       `json:"best_start"`
	KmeansInertias []float64 `json:"kmeans_inertias,omitempty"` // -method kmeans: the inertia of every start
	// The penalty method's final point is not feasible: how far it is, and
	// the objective and gap of its projection onto the constraints.
	RowSumViolation    *float64 `json:"row_sum_violation,omitempty"`
	MinEntry           *float64 `json:"min_entry,omitempty"`
	ProjectedObjective *float64 `json:"projected_objective,omitempty"`
	ProjectedGap       *float64 `json:"projected_gap,omitempty"`
	PeakRSSBytes       int64    `json:"peak_rss_bytes,omitempty"` // the process's peak resident set size
	// IO is the run's storage I/O by phase, where the system counts it
	// (package diskio): the -out, -summary and -trace files are written
	// after it and are not in it.
	IO *IOReport `json:"io,omitempty"`
	// Memory is the run's memory budget and its shares.
	Memory   Budget   `json:"memory"`
	Classes  int      `json:"classes,omitempty"`
	ARI      *float64 `json:"ari,omitempty"`
	NMI      *float64 `json:"nmi,omitempty"`
	Accuracy *float64 `json:"accuracy,omitempty"`
	// The memberships' calibration against the labels (score.Calibrate):
	// the mean largest membership of the points clustered right and
	// wrong, and the Brier score.
	ConfidenceCorrect *float64 `json:"confidence_correct,omitempty"`
	ConfidenceWrong   *float64 `json:"confidence_wrong,omitempty"`
	Brier             *float64 `json:"brier,omitempty"`
	// -engine slurm: the tasks of a step, the steps launched (retries
	// included), the retries, and the seconds in the steps.
	Engine      string  `json:"engine"`
	Tasks       int     `json:"tasks,omitempty"`
	Steps       int     `json:"steps,omitempty"`
	StepRetries int     `json:"step_retries,omitempty"`
	StepSeconds float64 `json:"step_seconds,omitempty"`
	// Spectral is the report of the graph's spectral embedding, where
	// -init spectral or -method spectral computed it.
	Spectral *SpectralReport `json:"spectral,omitempty"`
	// Sizes are the rows of each cluster of the final W, by largest
	// membership (not in the JSON).
	Sizes []int `json:"-"`
	// search describes the approximate kNN search for WriteText.
	search string
}

// Summary returns the summary of the run, which ended in res at w (n×k,
// in the input's order of the rows): its settings (with the kernel family
// that ran, Run.Kernel, and the checkpoint's, Saved.Kernel, where a
// resumed run ran another), its result, P, the passes, the starts, what the methods report and, given the labels, the
// scores of W against them. A score that cannot be computed is left out,
// and its error returned among the warnings.
func (r *Run) Summary(res *fw.Result, w []float64) (*Summary, []error) {
	o, pr := r.Options, r.Problem
	s := &Summary{N: pr.N(), K: o.K, Method: o.Method, Step: o.Step.String(), Init: o.Init, InitRule: r.InitRule,
		Gamma: pr.Gamma, GammaRule: pr.GammaRule, Standardize: !o.Raw,
		Seed: o.Seed, Workers: o.Workers, Tile: pr.BlockSize, Kernel: pr.Kernel(), KNNKernel: pr.KNN.Kernel,
		KernelFamily: r.Kernel, Precision: o.Precision.String(),
		ResumedAt: r.ResumedAt, BestStart: r.Best,
		Tol: max(o.Tol, 0), Ftol: o.Ftol, Rtol: o.Rtol, Mtol: max(o.Mtol, 0), Frtol: o.Frtol, MaxTimeSeconds: o.MaxTime.Seconds(),
		MaxIter: max(o.MaxIter, 0), Refresh: max(o.Refresh, 0),
		Iterations: res.Iterations, Passes: res.Passes,
		Objective: res.Objective, Gap: res.Gap, ModelTerm: res.Model,
		Converged: res.Status.Converged(), StopReason: res.Status.String(),
		SolveSeconds: res.Runtime.Seconds(), PFrobeniusSq: res.FrobSq, PMaxRowSum: res.MaxRowSum, Spectral: r.Spectral,
	}
	s.affinity(pr, o.Neighbors)
	if sv := r.Saved; sv != nil && sv.Kernel != "" && sv.Kernel != r.Kernel {
		s.CheckpointKernelFamily = sv.Kernel
	}
	if km := r.KMeans; km != nil {
		s.StopReason, s.Converged = "kmeans-max-iter", false
		if km.Converged {
			s.StopReason = "kmeans-converged"
		}
		s.KmeansInertias = km.Inertias
	}
	if pr.Table != nil {
		s.P = pr.Table.P
	}
	if len(r.Starts) > 1 {
		s.Starts = r.Starts
	}
	if p := r.Penalty; p != nil {
		s.RowSumViolation, s.MinEntry = &p.MaxRowSumError, &p.MinEntry
		s.ProjectedObjective, s.ProjectedGap = &p.ProjectedObjective, &p.ProjectedGap
	}
	if t := r.Meter; t.Passes > 0 {
		s.EntriesPerSecond = EntriesPerSecond(pr.Entries(), t.Elapsed/time.Duration(t.Passes))
		s.PassSeconds = (t.Elapsed / time.Duration(t.Passes)).Seconds()
	}
	return s, s.score(pr.Table, w)
}

// affinity fills what the summary says of P: the kind of a file's, the
// graph's entries, the kNN graph's neighbours (up to neighbors), weights
// and search, and a sparse P's scale.
func (s *Summary) affinity(pr *Problem, neighbors int) {
	g := pr.Graph()
	switch {
	case pr.FromFile() && g != nil:
		s.AffinityKind, s.GraphEntries = "edge list", g.NNZ()
	case pr.FromFile():
		s.AffinityKind = "tile file"
	case g != nil:
		s.Neighbors, s.Weights, s.GraphEntries = min(neighbors, pr.N()), pr.Weights().String(), int64(pr.Entries())
		st := pr.KNN
		s.KNN, s.KNNRounds, s.search = st.Method.String(), len(st.Rounds), pr.DescribeSearch()
		if st.RecallRows > 0 {
			s.KNNRecall, s.KNNRecallRows = &st.Recall, st.RecallRows
		}
		for _, r := range st.Rounds {
			s.KNNParts = max(s.KNNParts, r.Parts)
		}
	}
	if pr.ScaleRule != "" {
		s.Scale, s.ScaleRule = pr.Scale, pr.ScaleRule
	}
}

// score counts the clusters' sizes of W and, given the labels of tab,
// scores W against them: ARI, NMI, accuracy and the calibration. It
// returns the errors of the scores it could not compute.
func (s *Summary) score(tab *store.Table, w []float64) []error {
	pred := make([]int, s.N)
	s.Sizes = make([]int, s.K)
	for i := range pred {
		pred[i] = store.Argmax(w[i*s.K : (i+1)*s.K])
		s.Sizes[pred[i]]++
	}
	if tab == nil || tab.Labels == nil {
		return nil
	}
	s.Classes = len(tab.Classes)
	var warnings []error
	for _, m := range []struct {
		name string
		fn   func(truth, pred []int) (float64, error)
		dst  **float64
	}{{"ARI", score.ARI, &s.ARI}, {"NMI", score.NMI, &s.NMI}, {"accuracy", score.Accuracy, &s.Accuracy}} {
		v, err := m.fn(tab.Labels, pred)
		if err != nil {
			warnings = append(warnings, fmt.Errorf("%s not computed: %w", m.name, err))
			continue
		}
		*m.dst = &v
	}
	cal, err := score.Calibrate(tab.Labels, w, s.K)
	if err != nil {
		return append(warnings, fmt.Errorf("calibration not computed: %w", err))
	}
	s.Brier = &cal.Brier
	if !math.IsNaN(cal.ConfidentCorrect) {
		s.ConfidenceCorrect = &cal.ConfidentCorrect
	}
	if !math.IsNaN(cal.ConfidentWrong) {
		s.ConfidenceWrong = &cal.ConfidentWrong
	}
	return warnings
}

// IOReport is the summary's record of the run's storage I/O: its totals
// and its phases, in order (input, each kNN round, affinity, scale,
// solve, model).
type IOReport struct {
	ReadBytes    int64     `json:"read_bytes"`
	WrittenBytes int64     `json:"written_bytes"`
	Phases       []IOPhase `json:"phases"`
}

// NewIOReport returns the report of the phases m recorded, nil if it
// recorded none.
func NewIOReport(m *diskio.Meter) *IOReport {
	if len(m.Phases()) == 0 {
		return nil
	}
	t := m.Total()
	return &IOReport{ReadBytes: t.Read, WrittenBytes: t.Written, Phases: m.Phases()}
}

// WriteJSON writes the summary to w as indented JSON, the record of
// ssnmf solve's -summary.
func (s *Summary) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// IOPhase is a phase of the run's storage I/O: its name, seconds and
// bytes read and written.
type IOPhase = diskio.Phase

// String formats the report for the result table: the totals, then each
// phase's bytes read and written, the kNN rounds taken together.
func (r *IOReport) String() string {
	var parts []string
	var rounds diskio.Phase
	nr := 0
	for _, p := range r.Phases {
		if strings.HasPrefix(p.Name, "kNN round ") {
			rounds.Read, rounds.Written, nr = rounds.Read+p.Read, rounds.Written+p.Written, nr+1
			continue
		}
		if nr > 0 {
			parts = append(parts, fmt.Sprintf("%d kNN rounds %s/%s", nr, diskio.Size(rounds.Read), diskio.Size(rounds.Written)))
			nr = 0
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", p.Name, diskio.Size(p.Read), diskio.Size(p.Written)))
	}
	return fmt.Sprintf("read %s, wrote %s (read/written: %s)", diskio.Size(r.ReadBytes), diskio.Size(r.WrittenBytes), strings.Join(parts, ", "))
}
