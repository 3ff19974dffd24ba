package checkpoint

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
)

func testState(n, k int) *fw.State {
	st := &fw.State{Iter: 7, Passes: 9, FrobSq: 123.456, MaxRowSum: 7.5, Prev: math.NaN(), Fresh: true,
		Elapsed: 1500 * time.Millisecond, Gram: make([]float64, k*k), W: make([]float64, n*k), PW: make([]float64, n*k)}
	for i := range st.Gram {
		st.Gram[i] = float64(i) / 3
	}
	for i := range st.W {
		st.W[i], st.PW[i] = 1/float64(i+1), math.Pi*float64(i)
	}
	return st
}

func alloc(n, k int) ([]float64, []float64, error) {
	return make([]float64, n*k), make([]float64, n*k), nil
}

func save(t *testing.T, st *fw.State) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "checkpoint")
	if err := Save(name, st, []byte(`{"k":3}`), []byte("iter,objective\n0,1\n")); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestRoundTrip(t *testing.T) {
	for _, prev := range []float64{math.NaN(), 42.125} {
		st := testState(5, 3)
		st.Prev = prev
		st.Fresh = math.IsNaN(prev)
		name := save(t, st)
		var w, pw []float64
		c, err := Load(name, func(n, k int) ([]float64, []float64, error) {
			w, pw, _ = alloc(n, k)
			return w, pw, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := c.State
		if c.N != 5 || c.K != 3 || got.Iter != 7 || got.Passes != 9 || got.FrobSq != st.FrobSq || got.MaxRowSum != st.MaxRowSum ||
			math.Float64bits(got.Prev) != math.Float64bits(prev) || got.Fresh != st.Fresh || got.Elapsed != st.Elapsed {
			t.Fatalf("state %+v, saved %+v", got, *st)
		}
		if string(c.Settings) != `{"k":3}` || string(c.Trace) != "iter,objective\n0,1\n" {
			t.Fatalf("settings %q trace %q", c.Settings, c.Trace)
		}
		for _, m := range []struct{ got, want []float64 }{{got.Gram, st.Gram}, {w, st.W}, {pw, st.PW}} {
			for i := range m.want {
				if math.Float64bits(m.got[i]) != math.Float64bits(m.want[i]) {
					t.Fatalf("value %d = %v, saved %v", i, m.got[i], m.want[i])
				}
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good, err := os.ReadFile(save(t, testState(4, 2)))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name    string
		data    []byte
		storage func(n, k int) ([]float64, []float64, error)
		want    string
	}{
		{name: "empty", data: nil, want: "header: unexpected EOF"},
		{name: "magic", data: edit(func(b []byte) []byte { b[0] = 'X'; return b }), want: "bad magic"},
		{name: "version", data: edit(func(b []byte) []byte { b[8] = 9; return b }), want: "format version 9"},
		{name: "zero k", data: edit(func(b []byte) []byte { b[24] = 0; return b }), want: "bad sizes"},
		{name: "truncated", data: good[:len(good)-9], want: "truncated or extended"},
		{name: "extended", data: append(bytes.Clone(good), 0), want: "truncated or extended"},
		{name: "flipped bit", data: edit(func(b []byte) []byte { b[len(b)-30] ^= 4; return b }), want: "the file is damaged"},
		{name: "flipped state", data: edit(func(b []byte) []byte { b[33] ^= 1; return b }), want: "the file is damaged"},
		{name: "storage size", data: good, storage: func(n, k int) ([]float64, []float64, error) { return make([]float64, 1), nil, nil }, want: "want 8"},
		{name: "storage error", data: good, storage: func(n, k int) ([]float64, []float64, error) { return nil, nil, os.ErrPermission }, want: "permission denied"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "c")
			if err := os.WriteFile(name, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			storage := tc.storage
			if storage == nil {
				storage = alloc
			}
			_, err := Load(name, storage)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), name) {
				t.Fatalf("error %v, want it to name the file and contain %q", err, tc.want)
			}
		})
	}
}

func TestSaveReplacesAtomically(t *testing.T) {
	st := testState(3, 2)
	name := save(t, st)
	bad := *st
	bad.PW = bad.PW[:1]
	if err := Save(name, &bad, nil, nil); err == nil {
		t.Fatal("inconsistent state: no error")
	}
	if _, err := Load(name, alloc); err != nil {
		t.Fatalf("a failed Save damaged the earlier checkpoint: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(name))
	if len(entries) != 1 {
		t.Fatalf("%d files in the directory, want the checkpoint only", len(entries))
	}
}

func TestDump(t *testing.T) {
	var out bytes.Buffer
	if err := Dump(&out, save(t, testState(4, 2))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n 4, k 2", "iteration 7, passes 9, elapsed 1.5s", `settings {"k":3}`, "trace 19 bytes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}
}

func FuzzLoad(f *testing.F) {
	dir := f.TempDir()
	name := filepath.Join(dir, "c")
	if err := Save(name, testState(3, 2), []byte("{}"), []byte("t")); err != nil {
		f.Fatal(err)
	}
	good, _ := os.ReadFile(name)
	f.Add(good)
	f.Add(good[:headerSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := load(bytes.NewReader(data), int64(len(data)), alloc)
		if err == nil && (c.N < 1 || c.K < 1 || len(c.State.Gram) != c.K*c.K) {
			t.Fatalf("accepted a checkpoint with n %d, k %d, Gram %d", c.N, c.K, len(c.State.Gram))
		}
	})
}
