package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ssnmf/ssnmf/graph"
	"github.com/ssnmf/ssnmf/internal/fault"
	"github.com/ssnmf/ssnmf/model"
	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/input"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// predictConfig is the parsed command line of predict.
type predictConfig struct {
	model, input, out, format, label string
	features                         []string // -features: INPUT's columns for the model's features
	knn                              knnFlag
	probes, sample, batch, workers   int
	recall                           float64
	seed                             uint64
	quiet                            bool
	marks                            flagMarks // what the -knn flags apply to
	given                            []string  // the flags given
}

// The needs of predict's -knn flags, which the model decides.
var (
	needKNNModel = need{want: "a kNN model", holds: func(s scope) bool { return s.affinity == affinityKNN },
		have: func(s scope) string { return "the model's affinity is " + s.affinity }, fix: "drop it"}
	needApproxModel = need{want: "a kNN model searched with -knn approx or auto",
		holds: func(s scope) bool { return s.affinity == affinityKNN && s.knn != graph.Exact },
		have: func(s scope) string {
			if s.affinity != affinityKNN {
				return "the model's affinity is " + s.affinity
			}
			return "the search is -knn exact"
		}, fix: "drop it"}
)

// predictCmd is the predict command: the memberships of new rows in the
// clusters of a saved model (package model).
func predictCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	c, err := parsePredict(args, stdout)
	if err != nil || checkOnly(ctx) {
		return err
	}
	if err := checkFiles([]store.NamedFile{{Name: "INPUT", Path: c.input}, {Name: "-model", Path: filepath.Join(c.model, model.FileName)}}, []store.NamedFile{{Name: "-out", Path: c.out}}); err != nil {
		return err
	}
	m, err := openModel(c.model)
	if err != nil {
		return err
	}
	defer m.Close()
	defer fault.Catch(&err)() // names a fault before the close above unmaps the file
	if err := c.marks.checkApplies(c.given, scope{affinity: m.Meta().Affinity, knn: c.knn.KNNMethod}); err != nil {
		return err
	}
	out, err := createOutput(ctx, vfs.OS{}, "-out", c.out, stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	dir, lock, err := model.WorkDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	defer lock.Close()
	return c.predict(ctx, m, dir, out, stderr)
}

// predict reads INPUT into dir, predicts its rows (model.PredictFile),
// writes their memberships to out and commits it, and reports the run.
func (c *predictConfig) predict(ctx context.Context, m *model.Model, dir string, out *store.AtomicFile, stderr io.Writer) (err error) {
	topt, err := c.columns(m.Features())
	if err != nil {
		return err
	}
	var last time.Time
	p, err := m.PredictFile(ctx, c.input, dir, model.FileOptions{Options: model.Options{Search: c.knn.KNNMethod, Probes: c.probes, Workers: c.workers},
		Format: c.format, Table: topt, Sample: c.sample, Seed: c.seed, Recall: c.recall, Batch: c.batch,
		Tuned: func(t model.Tuned) {
			c.progressf(stderr, "predict search: %d probes, sampled recall@%d %.4f on %d rows (-knn-recall %v)", t.Probes, m.Meta().Neighbors, t.Recall, t.Rows, c.recall)
		},
		Progress: func(done, rows int) {
			if done == 0 {
				last = time.Now()
			} else if time.Since(last) > time.Second {
				c.progressf(stderr, "predicted %d of %d rows", done, rows)
				last = time.Now()
			}
		}})
	if ie := new(model.InputError); errors.As(err, &ie) {
		return usageError{ie.Err}
	}
	if err != nil {
		return c.rowError(err)
	}
	defer p.W.Close()
	defer fault.Catch(&err)()
	if err := writeMemberships(out, c.out, p.W.Data(), p.Rows, m.K()); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if !c.quiet {
		c.reportPredict(stderr, m, p)
	}
	return nil
}

// openModel opens the model of -model DIR; an error is the user's.
func openModel(dir string) (*model.Model, error) {
	m, err := model.Open(dir)
	if err != nil {
		var ve *model.VersionError
		if errors.As(err, &ve) || !errors.Is(err, os.ErrNotExist) {
			return nil, usageError{err}
		}
		return nil, usagef("-model %s: no model there (%v); save one with ssnmf solve -model %s", dir, err, dir)
	}
	return m, nil
}

// reportPredict prints the line of the prediction p: the model, the
// search (and the probes tuned, if any), and the times.
func (c *predictConfig) reportPredict(stderr io.Writer, m *model.Model, p *model.FilePrediction) {
	meta, opt, tuned, rows := m.Meta(), p.Options, p.Tuned, p.Rows
	search := "every training row"
	if meta.Affinity == model.KNN {
		search = fmt.Sprintf("%d neighbours, %s search", meta.Neighbors, m.Search(opt))
		if m.Search(opt) == graph.Approximate {
			search += fmt.Sprintf(" (%d probes)", opt.Probes)
		}
		if tuned.Rows > 0 {
			search += fmt.Sprintf(", sampled recall@%d %.4f on %d rows", meta.Neighbors, tuned.Recall, tuned.Rows)
		}
	}
	choosing := ""
	if tuned.Rows > 0 {
		choosing = fmt.Sprintf(", of which %.2fs choosing the probes", p.Tuning.Seconds())
	}
	fmt.Fprintf(stderr, "ssnmf: predicted %d rows of %s against %s (n=%d k=%d, %s affinity, %s) in %.2fs%s (%.3g rows/s; reading %.2fs)\n",
		rows, c.input, c.model, meta.N, meta.K, meta.Affinity, search, p.Took.Seconds(), choosing, float64(rows)/max(p.Took.Seconds(), 1e-9), p.Read.Seconds())
}

// parsePredict parses the command line of predict.
func parsePredict(args []string, stdout io.Writer) (*predictConfig, error) {
	c := &predictConfig{}
	fs := newFlagSet("ssnmf predict", "Usage: ssnmf predict -model DIR [flags] INPUT -out FILE.csv|.parquet|.arrow\n\n"+
		"Writes the memberships of the rows of INPUT in the clusters of the model that\n"+
		"ssnmf solve -model DIR saved: id, w1..wk, cluster, confidence, in input order. A row's\n"+
		"memberships are the point w of the simplex that minimizes ||p_x - W w||², p_x its\n"+
		"affinity to the training rows, solved exactly. For a kNN model p_x needs x's M nearest\n"+
		"training rows: all training rows are scanned (-knn exact, O(n·p) a row), or the rows of\n"+
		"the -knn-probes leaves nearest by centroid and then the training graph's lists of the\n"+
		"nearest rows found, until no nearer row turns up (-knn approx, about\n"+
		"O((n/512 + 512·probes + M²)·p) a row), the probes doubled until the recall measured\n"+
		"on sampled rows of INPUT reaches -knn-recall. For a gaussian\n"+
		"model p_x is x's kernel row against every training row: O(n·(p+k)) a row, whatever -knn.\n"+
		"The model's features are read from INPUT's columns of the same names (or those of\n"+
		"-features); other columns, a label column whatever it holds, are ignored. INPUT is read\n"+
		"into a memory-mapped file and predicted in batches, so memory is bounded by the model\n"+
		"and -batch, not by INPUT.")
	fs.StringVar(&c.model, "model", "", "the model `DIR` written by ssnmf solve -model (required)")
	fs.StringVar(&c.out, "out", "", "write memberships to `FILE.csv`, FILE.parquet or FILE.arrow (required; - for CSV on stdout)")
	fs.Var(&c.knn, c.marks.needs("knn", needKNNModel), fmt.Sprintf("a kNN model's neighbour search: exact, approx (the nearest leaves by centroid, then a walk of the training graph) or auto: approx above %d training rows", graph.ApproxMinRows))
	fs.IntVar(&c.probes, c.marks.atLeast(1, c.marks.needs("knn-probes", needApproxModel)), model.DefaultProbes, "-knn approx: the leaves (512 training rows each) scanned for a row before the walk of the training graph, at first: doubled until the sampled recall reaches -knn-recall")
	fs.Float64Var(&c.recall, c.marks.needs("knn-recall", needApproxModel), graph.DefaultRecall, "-knn approx: the sampled recall@M the search reaches, as the graph's: its -knn-probes are doubled until it does (every leaf scanned gives the exact lists)")
	fs.IntVar(&c.sample, c.marks.atLeast(0, c.marks.needs("knn-sample", needApproxModel)), 1000, "-knn approx: rows of INPUT whose exact lists measure the search's recall (together, one scan of the training rows; 0: none, and -knn-probes is not raised)")
	fs.Uint64Var(&c.seed, c.marks.needs("seed", needApproxModel), 0, "-knn approx: seed of the recall's sample of rows")
	fs.IntVar(&c.batch, c.marks.atLeast(1, "batch"), 1<<16, "rows predicted at a time")
	fs.IntVar(&c.workers, c.marks.atLeast(1, "workers"), runtime.GOMAXPROCS(0), "goroutines (the default is GOMAXPROCS); the result is the same for any number")
	fs.StringVar(&c.format, "format", input.Auto, "input format: "+input.Formats)
	features := fs.String("features", "", "comma-separated columns of INPUT that hold the model's features, in the model's order (default: the model's own feature names; other columns are ignored)")
	fs.StringVar(&c.label, "label", "", "a column of INPUT that is never a feature; whatever it holds is ignored (default: \"label\" if present)")
	fs.BoolVar(&c.quiet, "q", false, "no progress on stderr")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return nil, err
	}
	if err := c.marks.checkRanges(fs); err != nil {
		return nil, err
	}
	if c.format, err = input.ParseFormat(c.format); err != nil {
		return nil, usagef("-format: %v", err)
	}
	switch {
	case c.model == "":
		return nil, usagef("predict: -model DIR is required")
	case c.out == "":
		return nil, usagef("predict: -out FILE is required")
	case c.out != store.StdoutPath && input.TableFormat(c.out) == "":
		return nil, usagef("-out %s: unknown extension, want .csv, .parquet or .arrow", c.out)
	case len(pos) != 1:
		return nil, usagef("predict takes one INPUT, have %d: %s", len(pos), strings.Join(pos, " "))
	case !(c.recall > 0 && c.recall <= 1):
		return nil, usagef("-knn-recall must be in (0, 1], have %v", c.recall)
	}
	c.input = pos[0]
	c.given = givenFlags(fs)
	if slices.Contains(c.given, "knn-recall") && c.sample == 0 {
		return nil, usagef("-knn-recall needs the recall measured: -knn-sample 0 measures none; drop -knn-recall, or give -knn-sample N")
	}
	if *features != "" {
		for f := range strings.SplitSeq(*features, ",") {
			c.features = append(c.features, strings.TrimSpace(f))
		}
	}
	return c, nil
}

// columns returns the options that read the model's features (want, in
// order) from INPUT: the columns of -features, or those of the model's
// names (model.PredictFile reads them, and never the label column).
func (c *predictConfig) columns(want []string) (store.TableOptions, error) {
	opt := store.TableOptions{Features: c.features, Label: c.label,
		FeaturesHint: fmt.Sprintf("the model's features are %s: name INPUT's columns for them, in that order, with -features", strings.Join(want, ","))}
	if c.features != nil {
		if len(c.features) != len(want) {
			return opt, usagef("-features %s: %d columns for the model's %d features (%s); give one column of INPUT for each, in that order",
				strings.Join(c.features, ","), len(c.features), len(want), strings.Join(want, ","))
		}
		opt.FeaturesHint = ""
	}
	return opt, nil
}

// progressf prints a progress line on stderr, unless -q.
func (c *predictConfig) progressf(stderr io.Writer, format string, args ...any) {
	if !c.quiet {
		fmt.Fprintf(stderr, "ssnmf: "+format+"\n", args...)
	}
}

// rowError says a model.RowError as a usage error naming INPUT and the
// row.
func (c *predictConfig) rowError(err error) error {
	var re *model.RowError
	if !errors.As(err, &re) {
		return err
	}
	return usagef("%s: row %d (0-based, the id of -out): %v", c.input, re.Row, re.Err)
}
