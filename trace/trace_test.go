package trace

import (
	"bytes"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
)

// oldTrace reads a trace from before the start column: testdata/six-columns.csv,
// which cmd/ssnmf's plot tests read too.
func oldTrace(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/six-columns.csv")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// twoStarts is a trace of a run from two starts.
const twoStarts = `iter,seconds,objective,gap,step_size,passes,start
0,0.01,100,10,0.5,2,0
1,0.02,50,5,0,3,0
0,0.03,90,9,0.5,2,1
1,0.04,40,1,0,3,1
`

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string][]float64
	}{
		{name: "without start", in: oldTrace(t), want: map[string][]float64{
			Iter: {0, 1, 2}, Seconds: {0.01, 0.02, 0.04}, Objective: {100, 50, 40}, Gap: {10, 5, 1},
			StepSize: {0.5, 0.25, 0}, Passes: {2, 3, 3}, Start: {0, 0, 0}, Moved: {0, 0, 0}, Model: {0, 0, 0}, Excess: {60, 10, 0},
		}},
		{name: "two starts", in: twoStarts, want: map[string][]float64{
			Iter: {0, 1, 0, 1}, Seconds: {0.01, 0.02, 0.03, 0.04}, Objective: {100, 50, 90, 40}, Gap: {10, 5, 9, 1},
			StepSize: {0.5, 0, 0.5, 0}, Passes: {2, 3, 2, 3}, Start: {0, 0, 1, 1}, Moved: {0, 0, 0, 0}, Model: {0, 0, 0, 0}, Excess: {60, 10, 50, 0},
		}},
		{name: "other order, an extra column and a BOM", in: "\ufeffpasses,extra,gap,iter,moved,start,step_size,objective,seconds\n4,x,1,0,9,2,0,7,0.5\n",
			want: map[string][]float64{Iter: {0}, Seconds: {0.5}, Objective: {7}, Gap: {1}, StepSize: {0}, Passes: {4}, Start: {2}, Moved: {9}, Model: {0}, Excess: {0}}},
		{name: "model", in: "iter,seconds,objective,gap,step_size,passes,start,moved,model\n0,0.5,7,1,0,4,0,9,2.5\n",
			want: map[string][]float64{Iter: {0}, Seconds: {0.5}, Objective: {7}, Gap: {1}, StepSize: {0}, Passes: {4}, Start: {0}, Moved: {9}, Model: {2.5}, Excess: {0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tc.in), "t.csv")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Name != "t.csv" || tr.Len() != len(tc.want[Iter]) {
				t.Fatalf("%d rows, name %q; want %d, t.csv", tr.Len(), tr.Name, len(tc.want[Iter]))
			}
			for _, c := range append(Columns, Excess) {
				got, err := tr.Column(c)
				if err != nil || !slices.Equal(got, tc.want[c]) {
					t.Errorf("%s: %v (%v), want %v", c, got, err, tc.want[c])
				}
			}
			if _, err := tr.Column("speed"); err == nil {
				t.Error("unknown column: no error")
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: "empty file"},
		{name: "header only", in: "iter,seconds,objective,gap,step_size,passes,start\n", want: "no rows"},
		{name: "missing column", in: "iter,seconds,objective,gap,passes\n0,1,2,3,4\n", want: `no column "step_size"`},
		{name: "duplicate column", in: "iter,iter,seconds,objective,gap,step_size,passes\n", want: "twice"},
		{name: "duplicate start", in: "start,iter,seconds,objective,gap,step_size,passes,start\n", want: `"start" appears twice`},
		{name: "not a number", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,abc,1,0,1\n", want: `line 2, column "objective"`},
		{name: "NaN", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,1,NaN,0,1\n", want: `line 2, column "gap"`},
		{name: "fractional passes", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,1,1,0,1\n1,0.2,1,1,0,1.5\n", want: `line 3, column "passes"`},
		{name: "negative start", in: "iter,seconds,objective,gap,step_size,passes,start\n0,0.1,1,1,0,1,-1\n", want: `line 2, column "start"`},
		{name: "ragged", in: "iter,seconds,objective,gap,step_size,passes\n0,0.1,1\n", want: "line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), "bad.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.csv") {
				t.Fatalf("err = %v, want one naming bad.csv and saying %q", err, tc.want)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	first := fw.Iteration{Iter: 0, Objective: 18368.780017456862, Gap: 15959.66370258706, Step: 0.1, Passes: 2, Moved: 17, Model: 1234.5,
		PassTime: time.Second, Elapsed: 91300419 * time.Nanosecond}
	final := fw.Iteration{Iter: 30, Objective: 4717.869743297051, Gap: 1.5e-7, Passes: 32, Final: true, Elapsed: 1480292308 * time.Nanosecond}
	for _, tc := range []struct {
		name  string
		start int
		its   []fw.Iteration
		want  string
	}{
		{name: "none", want: ""},
		{name: "first row", its: []fw.Iteration{first},
			want: "iter,seconds,objective,gap,step_size,passes,start,moved,model\n0,0.091300419,18368.780017456862,15959.66370258706,0.1,2,0,17,1234.5\n"},
		{name: "final row of a third start", start: 2, its: []fw.Iteration{first, final},
			want: "iter,seconds,objective,gap,step_size,passes,start,moved,model\n0,0.091300419,18368.780017456862,15959.66370258706,0.1,2,2,17,1234.5\n" +
				"30,1.4802923080000001,4717.869743297051,1.5e-07,0,32,2,0,0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewWriter(&out)
			w.Start = tc.start
			for _, it := range tc.its {
				if err := w.Record(it); err != nil {
					t.Fatal(err)
				}
			}
			if out.String() != tc.want || string(w.Bytes()) != tc.want {
				t.Errorf("wrote %q, kept %q; want %q", out.String(), w.Bytes(), tc.want)
			}
		})
	}
}

// iterations returns a run of n iterations from each of starts starts, with
// awkward numbers.
func iterations(starts, n int) [][]fw.Iteration {
	var runs [][]fw.Iteration
	for s := range starts {
		var its []fw.Iteration
		for i := range n {
			its = append(its, fw.Iteration{Iter: i, Objective: 1 / float64(3+i+s), Gap: math.Pow(10, float64(-i)) * math.Pi,
				Step: math.Sqrt(float64(i + 1)), Passes: 2 + i, Moved: 3 * i, Model: float64(i) / 7, Elapsed: time.Duration(i*1234567891 + s + 1)})
		}
		its[n-1].Step, its[n-1].Final = 0, true
		runs = append(runs, its)
	}
	return runs
}

// TestRoundTrip checks that what Writer writes, Read reads back exactly.
func TestRoundTrip(t *testing.T) {
	runs := iterations(3, 7)
	var out bytes.Buffer
	w := NewWriter(&out)
	for s, its := range runs {
		w.Start = s
		for _, it := range its {
			if err := w.Record(it); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr, err := Read(&out, "rt.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string][]float64)
	for s, its := range runs {
		for _, it := range its {
			for c, v := range map[string]float64{Iter: float64(it.Iter), Seconds: it.Elapsed.Seconds(), Objective: it.Objective,
				Gap: it.Gap, StepSize: it.Step, Passes: float64(it.Passes), Start: float64(s), Moved: float64(it.Moved), Model: it.Model} {
				want[c] = append(want[c], v)
			}
		}
	}
	for _, c := range Columns {
		if got, _ := tr.Column(c); !slices.Equal(got, want[c]) {
			t.Errorf("%s: read %v, wrote %v", c, got, want[c])
		}
	}
}

// TestRestore checks that a trace taken up from a checkpoint goes on as the
// trace written at once.
func TestRestore(t *testing.T) {
	its := iterations(1, 6)[0]
	whole := NewWriter(nil)
	for _, it := range its {
		whole.Record(it)
	}
	// Checkpoints after 0, 1 and 3 rows.
	for _, cut := range []int{0, 1, 3} {
		before := NewWriter(nil)
		for _, it := range its[:cut] {
			before.Record(it)
		}
		var out bytes.Buffer
		after := NewWriter(&out)
		if err := after.Restore(before.Bytes()); err != nil {
			t.Fatal(err)
		}
		for _, it := range its[cut:] {
			if err := after.Record(it); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out.Bytes(), whole.Bytes()) || !bytes.Equal(after.Bytes(), whole.Bytes()) {
			t.Errorf("restored after %d rows: wrote %q, kept %q; want %q", cut, out.Bytes(), after.Bytes(), whole.Bytes())
		}
	}
	if err := whole.Restore(nil); err == nil {
		t.Error("Restore after a row: no error")
	}
}

// TestRestoreOlder checks that a checkpoint's trace of an older version,
// without the moved and model columns, is taken up in today's format: one
// header, its rows read back the same, the missing columns 0.
func TestRestoreOlder(t *testing.T) {
	const old = "iter,seconds,objective,gap,step_size,passes,start\n0,0.5,120,30,0.25,2,0\n1,1,101,4,0.1,3,0\n"
	var out bytes.Buffer
	w := NewWriter(&out)
	if err := w.Restore([]byte(old)); err != nil {
		t.Fatal(err)
	}
	if err := w.Record(fw.Iteration{Iter: 2, Objective: 99.5, Gap: 1, Passes: 4, Moved: 3, Model: 7, Final: true, Elapsed: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	want := header + "0,0.5,120,30,0.25,2,0,0,0\n1,1,101,4,0.1,3,0,0,0\n2,2,99.5,1,0,4,0,3,7\n"
	if out.String() != want || string(w.Bytes()) != want {
		t.Errorf("wrote %q, kept %q; want %q", out.String(), w.Bytes(), want)
	}
	if err := NewWriter(nil).Restore([]byte("iter,seconds\n0,1\n")); err == nil {
		t.Error("Restore of a trace without objective: no error")
	}
}

// failWriter fails every write.
type failWriter struct{}

var errWrite = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriterError(t *testing.T) {
	w := NewWriter(failWriter{})
	it := iterations(1, 2)[0]
	if err := w.Record(it[0]); !errors.Is(err, errWrite) {
		t.Fatalf("Record: err = %v, want %v", err, errWrite)
	}
	if err := w.Restore(nil); err == nil {
		t.Error("Restore after a failed row: no error")
	}
	if !bytes.HasPrefix(w.Bytes(), []byte(header)) || bytes.Count(w.Bytes(), []byte("\n")) != 2 {
		t.Errorf("kept %q, want the header and the row", w.Bytes())
	}
}

// FuzzRead reads arbitrary bytes as a trace: Read either fails with an
// error that names the source, or returns columns of equal length holding
// finite numbers, whole ones where the format says so. The seeds are traces
// that Writer wrote, and traces of the older format.
func FuzzRead(f *testing.F) {
	for _, n := range []int{1, 4} {
		w := NewWriter(nil)
		for s, its := range iterations(2, n) {
			w.Start = s
			for _, it := range its {
				w.Record(it)
			}
		}
		f.Add(string(w.Bytes()))
	}
	f.Add(oldTrace(f))
	f.Add(twoStarts)
	f.Add("iter,seconds,objective,gap,step_size,passes\n0,1e308,-1,0,0,0\n")
	f.Add("passes,gap\n\"1\n")
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := Read(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("error without the source: %v", err)
			}
			return
		}
		if tr.Len() == 0 {
			t.Fatal("no rows and no error")
		}
		for _, c := range append(Columns, Excess) {
			v, err := tr.Column(c)
			if err != nil || len(v) != tr.Len() {
				t.Fatalf("column %s: %d values of %d, %v", c, len(v), tr.Len(), err)
			}
			for _, x := range v {
				if math.IsNaN(x) || (c != Excess && math.IsInf(x, 0)) {
					t.Fatalf("column %s holds %v", c, x)
				}
				if slices.Contains(whole, c) && (x < 0 || x != math.Trunc(x)) {
					t.Fatalf("column %s holds %v, not a whole number >= 0", c, x)
				}
			}
		}
	})
}
