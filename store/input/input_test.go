package input

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssnmf/ssnmf/store"
)

func TestParseInputFormat(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{in: "", want: "auto"},
		{in: "auto", want: "auto"},
		{in: "CSV", want: "csv"},
		{in: "arrow", want: "arrow"},
		{in: "ipc", want: "arrow"},
		{in: "feather", want: "arrow"},
		{in: " parquet ", want: "parquet"},
		{in: "json", err: true},
	} {
		got, err := ParseFormat(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestFormatAdvice: a binary file read as CSV is refused; the error says to
// give -format only when the format was guessed, not when -format csv was
// given (it used to say so either way).
func TestFormatAdvice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin.csv")
	if err := os.WriteFile(path, []byte("x\x00,y\x00\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const advice = "give -format"
	for _, tc := range []struct {
		format string
		advice bool
	}{{Auto, true}, {CSV, false}} {
		_, err := Open(path, tc.format, store.TableOptions{}, "")
		if err == nil || !strings.Contains(err.Error(), "NUL bytes") {
			t.Fatalf("-format %s: error %v, want one about NUL bytes", tc.format, err)
		}
		if strings.Contains(err.Error(), advice) != tc.advice {
			t.Errorf("-format %s: error %q; want the advice %q: %v", tc.format, err, advice, tc.advice)
		}
	}
}

// TestSniff: the formats by their first bytes, whatever the name, then by
// the name.
func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		head, path, want string
	}{
		{"PAR1\x15\x04", "x.csv", Parquet},
		{"ARROW1\x00\x00", "x.csv", Arrow},
		{"\xff\xff\xff\xff\x10\x01", "/dev/stdin", Arrow}, // an IPC stream's continuation marker
		{"x1,x2\n", "/dev/stdin", CSV},
		{"x1,x2\n", "d.parquet", Parquet},
		{"", "d.arrows", Arrow},
		{"\x1f\x8b\x08", "d.gz", CSV},
	} {
		if got := sniff([]byte(tc.head), tc.path); got != tc.want {
			t.Errorf("sniff(%q, %s) = %s, want %s", tc.head, tc.path, got, tc.want)
		}
	}
}
