package input

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestOutputFormat checks the formats of output names: by extension in
// any case, gzip for OutputFormat alone, and CSV for an output written in
// place.
func TestOutputFormat(t *testing.T) {
	for path, want := range map[string][2]string{
		"w.csv": {CSV, CSV}, "W.CSV": {CSV, CSV}, "w.arrow": {Arrow, Arrow}, "A.PARQUET": {Parquet, Parquet},
		"w.csv.gz": {CSVGzip, ""}, "w.txt": {"", ""}, "w.gz": {"", ""}, "w": {"", ""}, os.DevNull: {CSV, CSV},
	} {
		if got := OutputFormat(path); got != want[0] {
			t.Errorf("OutputFormat(%q) = %q, want %q", path, got, want[0])
		}
		if got := TableFormat(path); got != want[1] {
			t.Errorf("TableFormat(%q) = %q, want %q", path, got, want[1])
		}
	}
}

// WriteMemberships writes the format of the name's extension: the magic
// of Arrow and Parquet, CSV's header otherwise.
func TestWriteMemberships(t *testing.T) {
	w := []float64{0.25, 0.75, 1, 0}
	for path, want := range map[string]string{"w.arrow": "ARROW1", "w.parquet": "PAR1", "w.csv": "id,w1,w2"} {
		var b bytes.Buffer
		if err := WriteMemberships(&b, path, w, 2, 2); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), want) {
			t.Errorf("%s: begins with %.10q, want %q", path, b.String(), want)
		}
	}
}
