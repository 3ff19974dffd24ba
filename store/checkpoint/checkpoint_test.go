package checkpoint

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
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

// rowCDState is testState with the fields of a row-CD state: the tracked
// objective, the gaps and pending changes with garbage in the unused slots.
func rowCDState(n, k, nz int) *fw.State {
	st := testState(n, k)
	st.Objective, st.Gap, st.SweepGap = 99.25, 0.5, math.NaN()
	p := &fw.Pending{NZ: nz, Count: make([]uint8, n), Col: make([]int32, n*nz), Val: make([]float64, n*nz)}
	for i := range n {
		p.Count[i] = uint8(i % (nz + 1))
		for e := range nz {
			p.Col[i*nz+e] = int32((i + e) % k)
			p.Val[i*nz+e] = float64(i-e) / 7
			if e >= int(p.Count[i]) {
				p.Col[i*nz+e], p.Val[i*nz+e] = 12345, math.Inf(1) // not used, not saved
			}
		}
	}
	st.Pending = p
	return st
}

// saveV1 writes st in format version 1 as the previous release did, byte
// by byte from the layout in the package doc, independently of Save.
func saveV1(t testing.TB, name string, st *fw.State, settings, trace []byte) {
	t.Helper()
	k := int(math.Sqrt(float64(len(st.Gram))))
	n := len(st.W) / k
	le := binary.LittleEndian
	b := []byte("SSNMFCKP")
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 0)
	for _, v := range []uint64{uint64(n), uint64(k), uint64(st.Iter), uint64(st.Passes), math.Float64bits(st.FrobSq),
		math.Float64bits(st.MaxRowSum), math.Float64bits(st.Prev), uint64(st.Elapsed)} {
		b = le.AppendUint64(b, v)
	}
	var flags uint32
	if st.Fresh {
		flags = 1
	}
	b = le.AppendUint32(b, flags)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, uint64(len(settings)))
	b = le.AppendUint64(b, uint64(len(trace)))
	if len(b) != 104 {
		t.Fatalf("version 1 header of %d bytes", len(b))
	}
	b = append(b, settings...)
	b = append(b, trace...)
	for _, m := range [][]float64{st.Gram, st.W, st.PW} {
		for _, v := range m {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	}
	b = le.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// reseal replaces the checksum of the checkpoint b by the right one, so that
// a test can damage the contents behind the checksum's back.
func reseal(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
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

// A row-CD state round-trips: the tracked objective, the gaps and the used
// slots of the pending changes; the unused slots come back as zeros.
func TestRoundTripRowCD(t *testing.T) {
	const n, k, nz = 7, 3, 4
	st := rowCDState(n, k, nz)
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
	if c.Version != 2 || got.Objective != st.Objective || got.Gap != st.Gap || !math.IsNaN(got.SweepGap) ||
		got.Iter != st.Iter || got.Fresh != st.Fresh || math.Float64bits(got.Prev) != math.Float64bits(st.Prev) {
		t.Fatalf("version %d, state %+v, saved %+v", c.Version, got, *st)
	}
	p, want := got.Pending, st.Pending
	if p == nil || p.NZ != nz || len(p.Count) != n || len(p.Col) != n*nz || len(p.Val) != n*nz {
		t.Fatalf("pending %+v", p)
	}
	for i := range n {
		if p.Count[i] != want.Count[i] {
			t.Fatalf("row %d: %d pending changes, saved %d", i, p.Count[i], want.Count[i])
		}
		for e := range nz {
			col, val := int32(0), 0.0
			if e < int(want.Count[i]) {
				col, val = want.Col[i*nz+e], want.Val[i*nz+e]
			}
			if p.Col[i*nz+e] != col || math.Float64bits(p.Val[i*nz+e]) != math.Float64bits(val) {
				t.Fatalf("row %d slot %d: %d %v, want %d %v", i, e, p.Col[i*nz+e], p.Val[i*nz+e], col, val)
			}
		}
	}
	for i := range st.W {
		if w[i] != st.W[i] || pw[i] != st.PW[i] {
			t.Fatalf("W or P·W value %d differs", i)
		}
	}
	// A Frank-Wolfe state has no pending changes.
	c, err = Load(save(t, testState(n, k)), alloc)
	if err != nil || c.State.Pending != nil || c.Version != 2 {
		t.Fatalf("Frank-Wolfe state: %v, pending %v, version %d", err, c.State.Pending, c.Version)
	}
}

// A version-1 file, as the previous release wrote for Frank-Wolfe runs,
// still loads, and its settings read.
func TestLoadVersion1(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		st := testState(5, 3)
		st.Fresh, st.Prev = fresh, 17.5
		name := filepath.Join(t.TempDir(), "v1")
		saveV1(t, name, st, []byte(`{"k":3}`), []byte("iter\n"))
		var w, pw []float64
		c, err := Load(name, func(n, k int) ([]float64, []float64, error) {
			w, pw, _ = alloc(n, k)
			return w, pw, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got := c.State
		if c.Version != 1 || c.N != 5 || c.K != 3 || got.Iter != st.Iter || got.Passes != st.Passes || got.FrobSq != st.FrobSq ||
			got.MaxRowSum != st.MaxRowSum || got.Prev != st.Prev || got.Fresh != fresh || got.Elapsed != st.Elapsed ||
			got.Pending != nil || got.Objective != 0 || got.Gap != 0 || got.SweepGap != 0 {
			t.Fatalf("version %d, state %+v, saved %+v", c.Version, got, *st)
		}
		if string(c.Settings) != `{"k":3}` || string(c.Trace) != "iter\n" {
			t.Fatalf("settings %q trace %q", c.Settings, c.Trace)
		}
		for _, m := range []struct{ got, want []float64 }{{got.Gram, st.Gram}, {w, st.W}, {pw, st.PW}} {
			for i := range m.want {
				if math.Float64bits(m.got[i]) != math.Float64bits(m.want[i]) {
					t.Fatalf("value %d = %v, saved %v", i, m.got[i], m.want[i])
				}
			}
		}
		if b, err := ReadSettings(name); err != nil || string(b) != `{"k":3}` {
			t.Fatalf("ReadSettings: %q, %v", b, err)
		}
		var out bytes.Buffer
		if err := Dump(&out, name); err != nil || !strings.Contains(out.String(), "format version 1") || strings.Contains(out.String(), "row-CD") {
			t.Fatalf("Dump: %v\n%s", err, out.String())
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
		{name: "version", data: edit(func(b []byte) []byte { b[8] = 9; return b }), want: "format version 9, want 1 or 2"},
		{name: "version 0", data: edit(func(b []byte) []byte { b[8] = 0; return b }), want: "format version 0"},
		{name: "v1 header of a v2 file", data: edit(func(b []byte) []byte { b[8] = 1; return b }), want: "truncated or extended"},
		{name: "unknown flag", data: edit(func(b []byte) []byte { b[80] |= 4; return b }), want: "unknown flags 0x5"},
		{name: "slots without pending", data: edit(func(b []byte) []byte { b[12] = 2; return b }), want: "2 pending slots a row but no pending changes"},
		{name: "pending without slots", data: edit(func(b []byte) []byte { b[80] |= 2; return b }), want: "0 slots a row"},
		{name: "huge k", data: edit(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[24:], math.MaxInt32); return b }), want: "truncated or extended"},
		{name: "huge n and k", data: edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[16:], math.MaxInt32)
			binary.LittleEndian.PutUint64(b[24:], math.MaxInt32)
			return b
		}), want: "truncated or extended"},
		{name: "short header", data: good[:110], want: "header: unexpected EOF"},
		{name: "zero k", data: edit(func(b []byte) []byte { b[24] = 0; return b }), want: "bad sizes"},
		{name: "truncated", data: good[:len(good)-9], want: "truncated or extended"},
		{name: "extended", data: append(bytes.Clone(good), 0), want: "truncated or extended"},
		{name: "flipped bit", data: edit(func(b []byte) []byte { b[len(b)-30] ^= 4; return b }), want: "the file is damaged"},
		{name: "flipped state", data: edit(func(b []byte) []byte { b[33] ^= 1; return b }), want: "the file is damaged"},
		{name: "storage size", data: good, storage: func(n, k int) ([]float64, []float64, error) { return make([]float64, 1), nil, nil }, want: "want 8"},
		{name: "storage error", data: good, storage: func(n, k int) ([]float64, []float64, error) { return nil, nil, os.ErrPermission }, want: "permission denied"},
	}
	rowcd, err := os.ReadFile(save(t, rowCDState(4, 2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	// The pending part: 4 counts, then 4·2 columns, then 4·2 values.
	counts := len(rowcd) - 4 - 4*2*12 - 4
	cols, vals := counts+4, counts+4+4*2*4
	editR := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(rowcd)) }
	tests = append(tests, []struct {
		name    string
		data    []byte
		storage func(n, k int) ([]float64, []float64, error)
		want    string
	}{
		{name: "row-CD truncated", data: rowcd[:len(rowcd)-5], want: "truncated or extended"},
		{name: "row-CD other slots", data: editR(func(b []byte) []byte { b[12] = 3; return b }), want: "truncated or extended"},
		{name: "row-CD no pending flag", data: editR(func(b []byte) []byte { b[80] &^= 2; return b }), want: "but no pending changes"},
		{name: "row-CD flipped value", data: editR(func(b []byte) []byte { b[vals+3] ^= 1; return b }), want: "the file is damaged"},
		{name: "row-CD count", data: editR(func(b []byte) []byte { b[counts+1] = 3; return reseal(b) }), want: "row 1 has 3 pending changes, at most 2"},
		{name: "row-CD column", data: editR(func(b []byte) []byte { b[cols+2*4] = 2; return reseal(b) }), want: "row 1: pending change 0 in column 2"},
		{name: "row-CD negative column", data: editR(func(b []byte) []byte { b[cols+2*4+3] = 0x80; return reseal(b) }), want: "in column -"},
		{name: "row-CD NaN", data: editR(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[vals+2*8:], math.Float64bits(math.NaN()))
			return reseal(b)
		}), want: "pending change 0 is NaN"},
	}...)
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
	for _, want := range []string{"format version 2", "n 4, k 2", "iteration 7, passes 9, elapsed 1.5s", `settings {"k":3}`, "trace 19 bytes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "row-CD") {
		t.Errorf("dump of a Frank-Wolfe state shows row-CD fields:\n%s", out.String())
	}
	out.Reset()
	// Rows 1, 2, 4 and 5 of 6 have 1, 2, 1 and 2 pending changes.
	if err := Dump(&out, save(t, rowCDState(6, 2, 2))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"row-CD: objective 99.25, gap of the last pass 0.5, gap of the last sweep NaN",
		"pending changes: 2 slots a row, 4 rows, 6 changes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}
}

// ReadSettings reads the settings of a version-2 file and refuses a
// damaged header.
func TestReadSettings(t *testing.T) {
	name := save(t, rowCDState(3, 2, 2))
	if b, err := ReadSettings(name); err != nil || string(b) != `{"k":3}` {
		t.Fatalf("ReadSettings: %q, %v", b, err)
	}
	b, _ := os.ReadFile(name)
	b[8] = 7
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, b, 0o644)
	if _, err := ReadSettings(bad); err == nil || !strings.Contains(err.Error(), "format version 7") {
		t.Fatalf("error %v", err)
	}
}

// Save refuses pending changes that do not fit the state.
func TestSaveRefusesBadPending(t *testing.T) {
	for _, edit := range []func(p *fw.Pending){
		func(p *fw.Pending) { p.NZ = 0 },
		func(p *fw.Pending) { p.NZ = 300 },
		func(p *fw.Pending) { p.Count = p.Count[:1] },
		func(p *fw.Pending) { p.Count[0] = 9 },
	} {
		st := rowCDState(3, 2, 2)
		edit(st.Pending)
		if err := Save(filepath.Join(t.TempDir(), "c"), st, nil, nil); err == nil {
			t.Errorf("pending %+v: no error", *st.Pending)
		}
	}
}

// FuzzLoad feeds Load damaged files of both versions: it must return an
// error or a consistent checkpoint, never panic.
func FuzzLoad(f *testing.F) {
	dir := f.TempDir()
	v1, v2, v2r := filepath.Join(dir, "v1"), filepath.Join(dir, "v2"), filepath.Join(dir, "v2r")
	saveV1(f, v1, testState(3, 2), []byte("{}"), []byte("t"))
	if err := Save(v2, testState(3, 2), []byte("{}"), []byte("t")); err != nil {
		f.Fatal(err)
	}
	if err := Save(v2r, rowCDState(3, 2, 2), []byte("{}"), []byte("t")); err != nil {
		f.Fatal(err)
	}
	for _, name := range []string{v1, v2, v2r} {
		good, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(good)
		f.Add(good[:headerSize1])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := load(bytes.NewReader(data), int64(len(data)), alloc)
		if err != nil {
			return
		}
		if c.N < 1 || c.K < 1 || len(c.State.Gram) != c.K*c.K || (c.Version != 1 && c.Version != 2) {
			t.Fatalf("accepted a checkpoint of version %d with n %d, k %d, Gram %d", c.Version, c.N, c.K, len(c.State.Gram))
		}
		if p := c.State.Pending; p != nil {
			if c.Version != 2 {
				t.Fatalf("pending changes in a version-%d file", c.Version)
			}
			if err := p.Check(c.N, c.K, p.NZ); err != nil {
				t.Fatalf("accepted bad pending changes: %v", err)
			}
		}
	})
}
