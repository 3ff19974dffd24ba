package store

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// defaultLabel is the label column used when CSVOptions.Label is empty.
const defaultLabel = "label"

// Table holds a data set read from a file: numeric features and optional
// ground-truth labels.
type Table struct {
	Features  []float64 // N×P, row-major
	N, P      int
	Names     []string // feature column names, in output order
	Labels    []int    // class index per row; nil when the file has no label column
	Classes   []string // Classes[c] is the label text of class c
	LabelName string   // name of the label column, "" when none
}

// CSVOptions selects the columns of a CSV file that make up a [Table].
type CSVOptions struct {
	// Features lists the feature columns, in the order they appear in
	// Table.Features. Nil means every column except the label column.
	Features []string

	// Label names the label column. Empty means the column named "label"
	// if the header has one, and no label column otherwise.
	Label string
}

// ReadCSV reads the CSV file at path as [ParseCSV] does, naming the file by
// path in error messages. Gzip-compressed files are decompressed.
func ReadCSV(path string, opt CSVOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading CSV: %w", err)
	}
	defer f.Close()
	return ParseCSV(f, path, opt)
}

// ParseCSV reads a table from CSV text. The name identifies the input in
// error messages, which have the form "name:line: message" when they concern
// a line. If the input begins with the gzip magic bytes it is decompressed
// first; a UTF-8 byte order mark at the start of the text is dropped.
//
// The first record is the header; column names are trimmed of surrounding
// white space and must be distinct and non-empty. Every later record must
// have as many fields as the header. Feature cells, trimmed of surrounding
// white space, must parse with [strconv.ParseFloat] to a finite value. Label
// cells, likewise trimmed, must not be empty. Labels become class indices:
// if every label text is an integer the classes are ordered numerically,
// otherwise lexicographically by text.
func ParseCSV(r io.Reader, name string, opt CSVOptions) (*Table, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	gzipped := false
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if isCorruptGzip(err) || err == io.EOF {
				return nil, fmt.Errorf("%s: corrupt gzip stream: %w", name, err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 64<<10)
		gzipped = true
	} else if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\uFEFF")) {
		br.Discard(3)
	}

	p := csvParser{name: name, gzipped: gzipped, cr: csv.NewReader(br)}
	p.cr.ReuseRecord = true
	return p.parse(opt)
}

// csvParser holds the state of one ParseCSV call.
type csvParser struct {
	name    string
	gzipped bool
	cr      *csv.Reader
	header  []string
}

// errorf returns an error about line of the input.
func (p *csvParser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, line, fmt.Sprintf(format, args...))
}

// readError converts an error from the csv.Reader into one that names the
// input, and the line and column for syntax errors. The rec is the record
// that Read returned with err. The csv package's sentinel errors, such as
// [csv.ErrFieldCount] and [csv.ErrQuote], remain visible to [errors.Is].
func (p *csvParser) readError(rec []string, err error) error {
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount):
		return fmt.Errorf("%s:%d: %w: got %d, want %d as in the header", p.name, pe.StartLine, pe.Err, len(rec), len(p.header))
	case errors.As(err, &pe) && pe.StartLine != pe.Line:
		return fmt.Errorf("%s:%d:%d: %w (in the record starting on line %d)", p.name, pe.Line, pe.Column, pe.Err, pe.StartLine)
	case errors.As(err, &pe):
		return fmt.Errorf("%s:%d:%d: %w", p.name, pe.Line, pe.Column, pe.Err)
	case p.gzipped && isCorruptGzip(err):
		return fmt.Errorf("%s: corrupt gzip stream: %w", p.name, err)
	default:
		return fmt.Errorf("%s: %w", p.name, err)
	}
}

// isCorruptGzip reports whether err, returned while reading a gzip stream,
// means that the stream is malformed rather than that reading failed.
func isCorruptGzip(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ce)
}

// parse reads the header and the records and assembles the table.
func (p *csvParser) parse(opt CSVOptions) (*Table, error) {
	rec, err := p.cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, expected a header row", p.name)
	}
	if err != nil {
		return nil, p.readError(rec, err)
	}
	headerLine, _ := p.cr.FieldPos(0)
	p.header = make([]string, len(rec))
	index := make(map[string]int, len(rec))
	for j, s := range rec {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, p.errorf(headerLine, "column %d has an empty name", j+1)
		}
		if k, dup := index[s]; dup {
			return nil, p.errorf(headerLine, "duplicate column name %q (columns %d and %d)", s, k+1, j+1)
		}
		index[s] = j
		p.header[j] = s
	}

	label, features, err := p.selectColumns(opt, index)
	if err != nil {
		return nil, err
	}
	t := &Table{P: len(features), Names: make([]string, len(features))}
	for i, j := range features {
		t.Names[i] = p.header[j]
	}
	var (
		classOf map[string]int // label text → provisional class, in order of first appearance
		texts   []string       // provisional class → label text
	)
	if label >= 0 {
		t.LabelName = p.header[label]
		t.Labels = []int{}
		classOf = make(map[string]int)
	}

	for {
		rec, err := p.cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.readError(rec, err)
		}
		for _, j := range features {
			s := strings.TrimSpace(rec[j])
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				line, _ := p.cr.FieldPos(j)
				what := "is not a number"
				switch {
				case errors.Is(err, strconv.ErrRange):
					what = "is out of range"
				case err == nil:
					what = "is not a finite number"
				}
				return nil, p.errorf(line, "column %q: %q %s", p.header[j], s, what)
			}
			t.Features = append(t.Features, v)
		}
		if label >= 0 {
			s := strings.TrimSpace(rec[label])
			if s == "" {
				line, _ := p.cr.FieldPos(label)
				return nil, p.errorf(line, "column %q: empty label", p.header[label])
			}
			c, ok := classOf[s]
			if !ok {
				c = len(texts)
				s = strings.Clone(s) // do not retain the whole record
				classOf[s] = c
				texts = append(texts, s)
			}
			t.Labels = append(t.Labels, c)
		}
		t.N++
	}
	if t.N == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", p.name)
	}
	if label >= 0 {
		t.Classes = orderClasses(t.Labels, texts)
	}
	return t, nil
}

// selectColumns resolves opt against the header, returning the index of the
// label column, -1 for none, and the indices of the feature columns.
func (p *csvParser) selectColumns(opt CSVOptions, index map[string]int) (label int, features []int, err error) {
	label = -1
	if opt.Label != "" {
		j, ok := index[opt.Label]
		if !ok {
			return 0, nil, fmt.Errorf("%s: unknown label column %q; available columns: %s", p.name, opt.Label, p.available())
		}
		label = j
	} else if j, ok := index[defaultLabel]; ok {
		label = j
	}

	if opt.Features == nil {
		for j := range p.header {
			if j != label {
				features = append(features, j)
			}
		}
	} else {
		seen := make(map[int]bool, len(opt.Features))
		for _, s := range opt.Features {
			j, ok := index[s]
			switch {
			case !ok:
				return 0, nil, fmt.Errorf("%s: unknown feature column %q; available columns: %s", p.name, s, p.available())
			case j == label:
				return 0, nil, fmt.Errorf("%s: column %q is the label column and cannot also be a feature", p.name, s)
			case seen[j]:
				return 0, nil, fmt.Errorf("%s: feature column %q is listed twice", p.name, s)
			}
			seen[j] = true
			features = append(features, j)
		}
	}
	if len(features) == 0 {
		return 0, nil, fmt.Errorf("%s: no feature columns", p.name)
	}
	return label, features, nil
}

// available returns the quoted header names, comma-separated.
func (p *csvParser) available() string {
	var b strings.Builder
	for j, s := range p.header {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(s))
	}
	return b.String()
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
