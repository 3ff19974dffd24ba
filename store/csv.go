package store

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

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
// Lines end with LF or CRLF; a text whose first line ends with a lone CR
// (old Mac OS) has every CR read as a line end.
//
// The first record is the header; column names are trimmed of surrounding
// white space and must be distinct and non-empty. A header whose names are
// all numbers, other than the column numbers 0..p-1 or 1..p in order, is
// taken for a data row of a file without a header and refused. Every later
// record must have as many fields as the header. Feature cells, trimmed of
// surrounding white space, must be decimal numbers (digits with an
// optional sign, point and exponent: 12, -0.5, 1.5e-3; Go's forms such as
// 1_000 and 0x1p3 are refused) with finite values (inf and nan are read,
// then refused as not finite). Label
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
	if err := checkText(br, name); err != nil {
		return nil, err
	}
	var text io.Reader = br
	if crOnly(br) {
		text = crReader{br}
	}

	p := csvParser{name: name, gzipped: gzipped, cr: csv.NewReader(text)}
	p.cr.ReuseRecord = true
	return p.parse(opt)
}

// checkText refuses a text that is not UTF-8 (or ASCII) by its first
// bytes: UTF-16, by its byte order mark or by the NUL bytes of its ASCII
// characters, or binary data, whose fields would otherwise reach an error
// message as raw bytes.
func checkText(br *bufio.Reader, name string) error {
	head, _ := br.Peek(512)
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return fmt.Errorf("%s: the text is UTF-16 (byte order mark % X): save it as UTF-8 to read it as CSV", name, head[:2])
	case bytes.IndexByte(head, 0) >= 0:
		return &NotTextError{fmt.Sprintf("%s: NUL bytes in the first %d bytes: the text is UTF-16 or binary, not UTF-8 CSV: save it as UTF-8", name, len(head))}
	}
	return nil
}

// NotTextError is the error of [ParseCSV] for an input whose first bytes
// hold NUL bytes: UTF-16 text without a byte order mark, or a binary file.
// A caller that chose CSV by the file's name, not by a flag, may add that
// another format can be asked for.
type NotTextError struct{ msg string }

func (e *NotTextError) Error() string { return e.msg }

// crOnly reports whether the first line of the text ends with a lone CR
// (the line ends of old Mac OS), which encoding/csv reads as part of a
// field: the whole text would be one line.
func crOnly(br *bufio.Reader) bool {
	head, err := br.Peek(br.Size())
	i := bytes.IndexAny(head, "\r\n")
	switch {
	case i < 0 || head[i] == '\n':
		return false
	case i+1 < len(head):
		return head[i+1] != '\n'
	}
	return err != nil // the text ends with its first CR
}

// crReader reads a text whose lines end with CR as one whose lines end
// with LF: every CR becomes LF.
type crReader struct{ r io.Reader }

func (c crReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
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
func (p *csvParser) parse(opt TableOptions) (*Table, error) {
	rec, err := p.cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, expected a header row", p.name)
	}
	if err != nil {
		return nil, p.readError(rec, err)
	}
	headerLine, _ := p.cr.FieldPos(0)
	p.header = make([]string, len(rec))
	for j, s := range rec {
		p.header[j] = strings.TrimSpace(s)
	}
	if noHeader(p.header) {
		return nil, fmt.Errorf("%s:%d: the first line holds numbers, not column names (%s): the file seems to have no header; add a first line of column names", p.name, headerLine, quoteList(p.header))
	}
	// SelectColumns checks the names too, but without the line number.
	if _, err := columnIndex(p.header); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", p.name, headerLine, err)
	}

	label, features, err := SelectColumns(p.name, p.header, opt)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(features))
	for i, j := range features {
		names[i] = p.header[j]
	}
	labelName := ""
	if label >= 0 {
		labelName = p.header[label]
	}
	b, err := newTableBuilder(names, labelName, opt)
	if err != nil {
		return nil, err
	}
	t, err := p.records(b, label, features)
	if err != nil {
		b.abort()
		return nil, err
	}
	return t, nil
}

// records reads the data records into b.
func (p *csvParser) records(b *tableBuilder, label int, features []int) (*Table, error) {
	row := make([]float64, len(features))
	for {
		rec, err := p.cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.readError(rec, err)
		}
		for i, j := range features {
			s := strings.TrimSpace(rec[j])
			v, err := parseNumber(s)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				line, _ := p.cr.FieldPos(j)
				what := "is not a number"
				switch {
				case errors.Is(err, strconv.ErrRange):
					what = "is out of range"
				case err == nil:
					what = "is not a finite number"
				case goNumber(s):
					what = "is not a decimal number " + numberSyntax
				}
				return nil, p.errorf(line, "column %s: %s %s", Quote(p.header[j]), Quote(s), what)
			}
			row[i] = v
		}
		if label >= 0 {
			s := strings.TrimSpace(rec[label])
			if what, missing := missingLabel(s); missing {
				line, _ := p.cr.FieldPos(label)
				return nil, p.errorf(line, "column %s: %s", Quote(p.header[label]), what)
			}
			b.addLabel(s)
		}
		if err := b.addRows(row); err != nil {
			return nil, err
		}
	}
	if b.t.N == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", p.name)
	}
	return b.finish()
}

// numberSyntax says, in a parenthesis, how a number in a CSV cell is
// written, for the errors that mention it.
const numberSyntax = "(digits with an optional sign, point and exponent, such as 12, -0.5 or 1.5e-3; not Go's forms such as 1_000 or 0x1p3)"

// parseNumber parses a feature cell: a plain decimal number, with an
// optional sign, fraction and exponent (12, -0.5, .5, 1.5e-3, 6E23), or
// inf, infinity or nan, any case, optionally signed, which are read and
// then refused as not finite. The other forms of Go's floating-point
// literals, which strconv.ParseFloat also reads (1_000, 0x1p3), are a
// syntax error, so that what a cell means does not depend on the language
// the tool is written in. A syntax error wraps strconv.ErrSyntax, a value
// out of range strconv.ErrRange.
func parseNumber(s string) (float64, error) {
	if !isDecimal(s) && !isInfNaN(s) {
		return 0, &strconv.NumError{Func: "parseNumber", Num: s, Err: strconv.ErrSyntax}
	}
	return strconv.ParseFloat(s, 64)
}

// isDecimal reports whether s is [+-] digits [. digits] [(e|E) [+-] digits],
// with at least one digit before or after the point.
func isDecimal(s string) bool {
	i := 0
	sign := func() {
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	sign()
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		sign()
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// isInfNaN reports whether s is inf, infinity or nan, any case, with an
// optional sign.
func isInfNaN(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity") || strings.EqualFold(s, "nan")
}

// goNumber reports whether s looks like one of Go's number forms that
// parseNumber refuses: one strconv.ParseFloat reads, or one with an
// underscore or a 0x prefix.
func goNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	t := strings.ToLower(strings.TrimLeft(s, "+-"))
	return err == nil || strings.Contains(s, "_") || strings.HasPrefix(t, "0x")
}

// noHeader reports whether a header looks like a data row: every name is
// a decimal number, and the names are not the column numbers 0..p-1 or
// 1..p in order, which some tools write as names.
func noHeader(header []string) bool {
	from0, from1 := true, true
	for j, s := range header {
		if !isDecimal(s) {
			return false
		}
		from0 = from0 && s == strconv.Itoa(j)
		from1 = from1 && s == strconv.Itoa(j+1)
	}
	return !from0 && !from1
}
