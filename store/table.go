package store

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// defaultLabel is the label column used when TableOptions.Label is empty.
const defaultLabel = "label"

// FeaturesFile is the name of the matrix file, in TableOptions.MapDir, that
// holds the features of a table read with a MapDir.
const FeaturesFile = "features.mat"

// Table holds a data set read from a file: numeric features and optional
// ground-truth labels.
//
// The features are either on the Go heap or, when the table was read with
// TableOptions.MapDir, in a memory-mapped matrix file (see [Matrix]); in the
// second case Features aliases the mapping and must not be used after
// [Table.Close]. Either way they are float64, the element type of the kernel
// computations: integer values up to 2^53 in magnitude and all float32
// values are represented exactly.
type Table struct {
	Features  []float64 // N×P, row-major
	N, P      int
	Names     []string // feature column names, in output order
	Labels    []int    // class index per row; nil when the file has no label column
	Classes   []string // Classes[c] is the label text of class c
	LabelName string   // name of the label column, "" when none

	mat *Matrix // the mapped features, nil when they are on the heap
}

// Close releases the memory-mapped features of a table read with
// TableOptions.MapDir, leaving the file in place; it does nothing for a
// table held in memory. Closing twice is harmless.
func (t *Table) Close() error {
	if t.mat == nil {
		return nil
	}
	err := t.mat.Close()
	t.mat, t.Features = nil, nil
	return err
}

// MappedPath returns the path of the matrix file that holds the features,
// or "" when they are held in memory.
func (t *Table) MappedPath() string {
	if t.mat == nil {
		return ""
	}
	return t.mat.path
}

// TableOptions selects the columns of an input file that make up a [Table]
// and says where its features are kept. The same options apply to every
// input format.
type TableOptions struct {
	// Features lists the feature columns, in the order they appear in
	// Table.Features. Nil means every column except the label column.
	Features []string

	// Label names the label column. Empty means the column named "label"
	// if the input has one, and no label column otherwise.
	Label string

	// IgnoreLabel keeps the label column out of the features and reads
	// nothing of it, whatever it holds (blank, NA, any type): the table
	// has no labels. For rows whose class is not known, as a model's new
	// rows.
	IgnoreLabel bool

	// FeaturesHint, if not empty, is added to an error about a feature
	// column of Features the input does not have.
	FeaturesHint string

	// NumericHint is what an error about a column that is not numeric
	// says to do; empty means "choose the feature columns with -features".
	NumericHint string

	// MapDir, if not empty, is an existing directory in which the features
	// are written, as they are read, to the matrix file FeaturesFile
	// (replacing any file of that name); the table then maps that file
	// instead of holding the features on the Go heap, so that they are
	// never held twice and their pages are file-backed, reclaimable memory.
	// A table read this way must be closed.
	MapDir string

	// Workers, if more than 1, lets a Parquet file's columns be decoded
	// at once, a goroutine each; the table is the same.
	Workers int
}

// CSVOptions is the former name of [TableOptions], kept so that callers
// written for CSV input read unchanged.
type CSVOptions = TableOptions

// SelectColumns resolves opt against the column names of an input, named
// name in errors, and returns the index of the label column (-1 for none,
// or with opt.IgnoreLabel) and the indices of the feature columns in the order of opt.Features.
// Column names must be distinct and non-empty. Readers of every format use
// it, so that -features and -label mean the same everywhere.
func SelectColumns(name string, columns []string, opt TableOptions) (label int, features []int, err error) {
	index, err := columnIndex(columns)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", name, err)
	}
	available := func() string { return quoteList(columns) }

	label = -1
	if opt.Label != "" {
		j, ok := index[opt.Label]
		if !ok {
			return 0, nil, fmt.Errorf("%s: unknown label column %s; available columns: %s", name, Quote(opt.Label), available())
		}
		label = j
	} else if j, ok := index[defaultLabel]; ok {
		label = j
	}

	if opt.Features == nil {
		for j := range columns {
			if j != label {
				features = append(features, j)
			}
		}
	} else {
		seen := make(map[int]bool, len(opt.Features))
		for _, s := range opt.Features {
			j, ok := index[s]
			switch {
			case !ok && opt.FeaturesHint != "":
				return 0, nil, fmt.Errorf("%s: unknown feature column %q; available columns: %s; %s", name, s, available(), opt.FeaturesHint)
			case !ok:
				return 0, nil, fmt.Errorf("%s: unknown feature column %s; available columns: %s", name, Quote(s), available())
			case j == label:
				return 0, nil, fmt.Errorf("%s: column %s is the label column and cannot also be a feature", name, Quote(s))
			case seen[j]:
				return 0, nil, fmt.Errorf("%s: feature column %s is listed twice", name, Quote(s))
			}
			seen[j] = true
			features = append(features, j)
		}
	}
	if len(features) == 0 {
		return 0, nil, fmt.Errorf("%s: no feature columns", name)
	}
	if opt.IgnoreLabel {
		label = -1
	}
	return label, features, nil
}

// columnIndex maps each column name to its index, after checking that the
// names are non-empty and distinct. Its errors do not name the input.
func columnIndex(columns []string) (map[string]int, error) {
	index := make(map[string]int, len(columns))
	for j, s := range columns {
		if s == "" {
			return nil, fmt.Errorf("column %d has an empty name", j+1)
		}
		if k, dup := index[s]; dup {
			return nil, fmt.Errorf("duplicate column name %s (columns %d and %d)", Quote(s), k+1, j+1)
		}
		index[s] = j
	}
	return index, nil
}

// tableBuilder assembles a Table row by row: features go to the heap or to
// a matrix file, label texts become provisional classes in order of first
// appearance.
type tableBuilder struct {
	t       *Table
	mw      *matrixWriter  // nil when the features go to t.Features
	classOf map[string]int // label text → provisional class
	texts   []string       // provisional class → label text
}

// newTableBuilder starts a table with the given feature names and label
// column name ("" for none).
func newTableBuilder(names []string, labelName string, opt TableOptions) (*tableBuilder, error) {
	b := &tableBuilder{t: &Table{P: len(names), Names: names, LabelName: labelName}}
	if labelName != "" {
		b.t.Labels = []int{}
		b.classOf = make(map[string]int)
	}
	if opt.MapDir != "" {
		mw, err := newMatrixWriter(filepath.Join(opt.MapDir, FeaturesFile), len(names))
		if err != nil {
			return nil, err
		}
		b.mw = mw
	}
	return b, nil
}

// addRows appends rows of features, len(x) a multiple of P.
func (b *tableBuilder) addRows(x []float64) error {
	b.t.N += len(x) / b.t.P
	if b.mw != nil {
		return b.mw.write(x)
	}
	b.t.Features = append(b.t.Features, x...)
	return nil
}

// MissingLabels lists, in prose, the label texts that mean "no label":
// a row with one of them (case aside, spaces trimmed), or with a null
// label, is refused by every reader, as a row whose class is unknown
// would otherwise be counted as a class of its own.
const MissingLabels = "empty, NA, N/A, NaN, null or None"

// missingLabel reports whether the label text, trimmed, is one of
// MissingLabels, and returns the reader's message for it if so.
func missingLabel(text string) (string, bool) {
	switch t := strings.TrimSpace(text); strings.ToLower(t) {
	case "":
		return "empty label (a row with a missing label is refused: " + MissingLabels + "; drop the row, or choose another -label)", true
	case "na", "n/a", "nan", "null", "none":
		return fmt.Sprintf("missing label %q (a row with a missing label is refused: %s; drop the row, or choose another -label)", t, MissingLabels), true
	}
	return "", false
}

// Hint returns o.NumericHint, or the default hint.
func (o TableOptions) Hint() string {
	if o.NumericHint != "" {
		return o.NumericHint
	}
	return "choose the feature columns with -features"
}

// addLabel appends the label of the next row. The text may alias memory
// that changes later; it is copied when it is new.
func (b *tableBuilder) addLabel(text string) {
	c, ok := b.classOf[text]
	if !ok {
		c = len(b.texts)
		text = strings.Clone(text)
		b.classOf[text] = c
		b.texts = append(b.texts, text)
	}
	b.t.Labels = append(b.t.Labels, c)
}

// addLabelBytes is addLabel for a text in a byte slice, which it does not
// retain.
func (b *tableBuilder) addLabelBytes(text []byte) {
	c, ok := b.classOf[string(text)]
	if !ok {
		c = len(b.texts)
		s := string(text)
		b.classOf[s] = c
		b.texts = append(b.texts, s)
	}
	b.t.Labels = append(b.t.Labels, c)
}

// abort discards a table that failed to read.
func (b *tableBuilder) abort() {
	if b.mw != nil {
		b.mw.abort()
	}
}

// finish orders the classes and maps the features file, if any. The
// caller has checked that there is at least one row.
func (b *tableBuilder) finish() (*Table, error) {
	t := b.t
	if t.Labels != nil {
		t.Classes = orderClasses(t.Labels, b.texts)
	}
	if b.mw != nil {
		m, err := b.mw.finish()
		if err != nil {
			return nil, err
		}
		t.mat, t.Features = m, m.Data()
	}
	return t, nil
}

// orderClasses sorts the provisional classes' texts, numerically if every
// text is an integer and lexicographically otherwise, renumbers labels in
// place to match, and returns the sorted texts.
func orderClasses(labels []int, texts []string) []string {
	type class struct {
		text string
		num  int64
		old  int
	}
	classes := make([]class, len(texts))
	numeric := true
	for i, s := range texts {
		classes[i] = class{text: s, old: i}
		if numeric {
			n, err := strconv.ParseInt(s, 10, 64)
			classes[i].num, numeric = n, err == nil
		}
	}
	slices.SortFunc(classes, func(a, b class) int {
		if numeric {
			if c := cmp.Compare(a.num, b.num); c != 0 {
				return c
			}
		}
		return strings.Compare(a.text, b.text)
	})
	renumber := make([]int, len(classes))
	sorted := make([]string, len(classes))
	for c, cl := range classes {
		renumber[cl.old] = c
		sorted[c] = cl.text
	}
	for i, c := range labels {
		labels[i] = renumber[c]
	}
	return sorted
}
