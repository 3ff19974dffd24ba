package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store/vfs"
)

var update = flag.Bool("update", false, "rewrite testdata/v3_*.ckp and testdata/dump.golden (never the files of versions 1 and 2)")

// oldState is the fw.State of the releases that wrote format versions 1 and
// 2, with the fields of both methods in one struct.
type oldState struct {
	Iter, Passes             int
	FrobSq, MaxRowSum, Prev  float64
	Fresh                    bool
	Elapsed                  time.Duration
	Gram                     []float64
	Objective, Gap, SweepGap float64     // row-CD; 0 for Frank-Wolfe
	Pending                  *fw.Pending // row-CD; nil for Frank-Wolfe
	W, PW                    []float64
}

// fwState is the Frank-Wolfe state of an n×k run that the fixtures and
// most tests save.
func fwState(n, k int) *oldState {
	o := &oldState{Iter: 7, Passes: 9, FrobSq: 123.456, MaxRowSum: 7.5, Prev: math.NaN(), Fresh: true,
		Elapsed: 1500 * time.Millisecond, Gram: make([]float64, k*k), W: make([]float64, n*k), PW: make([]float64, n*k)}
	for i := range o.Gram {
		o.Gram[i] = float64(i) / 3
	}
	for i := range o.W {
		o.W[i], o.PW[i] = 1/float64(i+1), math.Pi*float64(i)
	}
	return o
}

// rowCDState is fwState with the fields of a row-CD state: the tracked
// objective, the gaps and pending changes with garbage in the unused slots.
func rowCDState(n, k, nz int) *oldState {
	o := fwState(n, k)
	o.Prev = 17.5
	o.Objective, o.Gap, o.SweepGap = 99.25, 0.5, math.NaN()
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
	o.Pending = p
	return o
}

// state returns o as an fw.State, as Load makes it from a file of version 1
// or 2: a Frank-Wolfe payload without pending changes, else a row-CD one.
func (o *oldState) state() *fw.State {
	st := &fw.State{Iter: o.Iter, Passes: o.Passes, FrobSq: o.FrobSq, MaxRowSum: o.MaxRowSum, Prev: o.Prev,
		Elapsed: o.Elapsed, W: o.W, PW: o.PW}
	if o.Pending == nil {
		st.Payload = &fw.FrankWolfeState{Fresh: o.Fresh, Gram: o.Gram}
	} else {
		st.Payload = &fw.RowCDState{Fresh: o.Fresh, Gram: o.Gram, Objective: o.Objective, Gap: o.Gap,
			SweepGap: o.SweepGap, Pending: o.Pending}
	}
	return st
}

// writeOld returns o in format version 1 or 2, byte by byte from the layouts
// in the package doc, independently of Save and Load. TestFixtures checks it
// against files written by the releases that wrote those versions.
func writeOld(t testing.TB, version int, o *oldState, settings, trace string) []byte {
	t.Helper()
	k := int(math.Sqrt(float64(len(o.Gram))))
	n := len(o.W) / k
	le := binary.LittleEndian
	b := []byte("SSNMFCKP")
	b = le.AppendUint32(b, uint32(version))
	var nz, flags uint32
	if o.Fresh {
		flags |= 1
	}
	if p := o.Pending; p != nil {
		if version != 2 {
			t.Fatalf("pending changes in version %d", version)
		}
		nz, flags = uint32(p.NZ), flags|2
	}
	b = le.AppendUint32(b, nz)
	for _, v := range []uint64{uint64(n), uint64(k), uint64(o.Iter), uint64(o.Passes), math.Float64bits(o.FrobSq),
		math.Float64bits(o.MaxRowSum), math.Float64bits(o.Prev), uint64(o.Elapsed)} {
		b = le.AppendUint64(b, v)
	}
	b = le.AppendUint32(b, flags)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, uint64(len(settings)))
	b = le.AppendUint64(b, uint64(len(trace)))
	if version == 2 {
		for _, v := range []float64{o.Objective, o.Gap, o.SweepGap} {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	}
	if want := map[int]int{1: 104, 2: 128}[version]; len(b) != want {
		t.Fatalf("version %d header of %d bytes, want %d", version, len(b), want)
	}
	b = append(b, settings...)
	b = append(b, trace...)
	for _, m := range [][]float64{o.Gram, o.W, o.PW} {
		for _, v := range m {
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	}
	if p := o.Pending; p != nil {
		b = append(b, p.Count...)
		for i, c := range p.Count {
			for e := range p.NZ {
				var v uint32
				if e < int(c) {
					v = uint32(p.Col[i*p.NZ+e])
				}
				b = le.AppendUint32(b, v)
			}
		}
		for i, c := range p.Count {
			for e := range p.NZ {
				var v uint64
				if e < int(c) {
					v = math.Float64bits(p.Val[i*p.NZ+e])
				}
				b = le.AppendUint64(b, v)
			}
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
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

const testSettings, testTrace = `{"k":3}`, "iter,objective\n0,1\n"

func save(t testing.TB, st *fw.State) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "checkpoint")
	if err := Save(name, st, []byte(testSettings), []byte(testTrace)); err != nil {
		t.Fatal(err)
	}
	return name
}

func saveBytes(t testing.TB, st *fw.State) []byte {
	t.Helper()
	b, err := os.ReadFile(save(t, st))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadFile loads name, returning the checkpoint with its W and P·W.
func loadFile(t testing.TB, name string) (*Checkpoint, []float64, []float64) {
	t.Helper()
	var w, pw []float64
	c, err := Load(name, func(n, k int) ([]float64, []float64, error) {
		w, pw, _ = alloc(n, k)
		return w, pw, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, w, pw
}

func same(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func sameFloats(t testing.TB, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !same(got[i], want[i]) {
			t.Fatalf("%s: value %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// checkState reports a field of c, w and pw that differs from want's (its
// W, PW and payload), bit for bit; the unused slots of pending changes
// must come back as zeros.
func checkState(t testing.TB, c *Checkpoint, w, pw []float64, want *fw.State) {
	t.Helper()
	got := c.State
	if got.Iter != want.Iter || got.Passes != want.Passes || !same(got.FrobSq, want.FrobSq) || !same(got.MaxRowSum, want.MaxRowSum) ||
		!same(got.Prev, want.Prev) || got.Elapsed != want.Elapsed || got.W != nil || got.PW != nil {
		t.Fatalf("state %+v, want %+v", got, *want)
	}
	if c.Method != want.Payload.Method() || got.Payload == nil || got.Payload.Method() != c.Method {
		t.Fatalf("method %q, payload %T, want %q", c.Method, got.Payload, want.Payload.Method())
	}
	if c.N*c.K != len(want.W) {
		t.Fatalf("n %d, k %d for %d values of W", c.N, c.K, len(want.W))
	}
	sameFloats(t, "W", w, want.W)
	sameFloats(t, "P·W", pw, want.PW)
	switch wp := want.Payload.(type) {
	case *fw.FrankWolfeState:
		gp, ok := got.Payload.(*fw.FrankWolfeState)
		if !ok || gp.Fresh != wp.Fresh {
			t.Fatalf("payload %+v, want %+v", got.Payload, wp)
		}
		sameFloats(t, "WᵀW", gp.Gram, wp.Gram)
	case *fw.RowCDState:
		gp, ok := got.Payload.(*fw.RowCDState)
		if !ok || gp.Fresh != wp.Fresh || !same(gp.Objective, wp.Objective) || !same(gp.Gap, wp.Gap) || !same(gp.SweepGap, wp.SweepGap) {
			t.Fatalf("payload %+v, want %+v", got.Payload, wp)
		}
		sameFloats(t, "WᵀW", gp.Gram, wp.Gram)
		p, want := gp.Pending, wp.Pending
		n, nz := len(want.Count), want.NZ
		if p == nil || p.NZ != nz || len(p.Count) != n || len(p.Col) != n*nz || len(p.Val) != n*nz {
			t.Fatalf("pending %+v", p)
		}
		for i := range n {
			if p.Count[i] != want.Count[i] {
				t.Fatalf("row %d: %d pending changes, want %d", i, p.Count[i], want.Count[i])
			}
			for e := range nz {
				col, val := int32(0), 0.0
				if e < int(want.Count[i]) {
					col, val = want.Col[i*nz+e], want.Val[i*nz+e]
				}
				if p.Col[i*nz+e] != col || !same(p.Val[i*nz+e], val) {
					t.Fatalf("row %d slot %d: %d %v, want %d %v", i, e, p.Col[i*nz+e], p.Val[i*nz+e], col, val)
				}
			}
		}
	default:
		t.Fatalf("want payload %T", wp)
	}
}

// fixture is a file under testdata. Those of versions 1 and 2 were written
// by the releases that wrote these versions (see testdata/README) and are
// never rewritten; those of version 3 are Save's, pinned.
type fixture struct {
	file            string
	version         int
	method          string
	state           *oldState
	settings, trace string
}

func fixtures() []fixture {
	v2fw := fwState(5, 3)
	v2fw.Prev, v2fw.Fresh = 42.125, false
	rowcd := rowCDState(7, 3, 4)
	const rowcdSettings, rowcdTrace = `{"k":3,"method":"rowcd"}`, "iter,objective\n0,1\n1,0.5\n"
	return []fixture{
		{"v1_fw.ckp", 1, "fw", fwState(5, 3), testSettings, testTrace},
		{"v2_fw.ckp", 2, "fw", v2fw, testSettings, testTrace},
		{"v2_rowcd.ckp", 2, "rowcd", rowcd, rowcdSettings, rowcdTrace},
		// The version-2 files, saved again.
		{"v3_fw.ckp", 3, "fw", v2fw, testSettings, testTrace},
		{"v3_rowcd.ckp", 3, "rowcd", rowcd, rowcdSettings, rowcdTrace},
	}
}

// The files of versions 1 and 2 that the earlier releases wrote load, with
// every field; writeOld writes them byte for byte; Save writes the
// version-3 files byte for byte, also from the loaded earlier versions.
func TestFixtures(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.file, func(t *testing.T) {
			name := filepath.Join("testdata", fx.file)
			want := fx.state.state()
			if fx.version == 3 {
				tmp := filepath.Join(t.TempDir(), "c")
				if err := Save(tmp, want, []byte(fx.settings), []byte(fx.trace)); err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(tmp)
				if *update {
					if err := os.WriteFile(name, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if old, err := os.ReadFile(name); err != nil || !bytes.Equal(b, old) {
					t.Fatalf("Save wrote %d bytes that differ from %s (%v): the format changed", len(b), name, err)
				}
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if fx.version < 3 && !bytes.Equal(writeOld(t, fx.version, fx.state, fx.settings, fx.trace), data) {
				t.Fatalf("writeOld differs from %s, written by the release", name)
			}
			c, w, pw := loadFile(t, name)
			if c.Version != fx.version || c.Method != fx.method {
				t.Fatalf("version %d, method %q, want %d, %q", c.Version, c.Method, fx.version, fx.method)
			}
			checkState(t, c, w, pw, want)
			if string(c.Settings) != fx.settings || string(c.Trace) != fx.trace {
				t.Fatalf("settings %q trace %q", c.Settings, c.Trace)
			}
			if b, err := ReadSettings(name); err != nil || string(b) != fx.settings {
				t.Fatalf("ReadSettings: %q, %v", b, err)
			}
			// Saved again, the state is in version 3 and loads the same.
			c.State.W, c.State.PW = w, pw
			again := filepath.Join(t.TempDir(), "again")
			if err := Save(again, &c.State, c.Settings, c.Trace); err != nil {
				t.Fatal(err)
			}
			c2, w2, pw2 := loadFile(t, again)
			if c2.Version != 3 || string(c2.Settings) != fx.settings || string(c2.Trace) != fx.trace {
				t.Fatalf("saved again: version %d, settings %q, trace %q", c2.Version, c2.Settings, c2.Trace)
			}
			checkState(t, c2, w2, pw2, want)
		})
	}
	// The version-3 files are the version-2 ones saved again.
	for _, pair := range [][2]string{{"v2_fw.ckp", "v3_fw.ckp"}, {"v2_rowcd.ckp", "v3_rowcd.ckp"}} {
		c, w, pw := loadFile(t, filepath.Join("testdata", pair[0]))
		c.State.W, c.State.PW = w, pw
		name := filepath.Join(t.TempDir(), "c")
		if err := Save(name, &c.State, c.Settings, c.Trace); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(name)
		want, _ := os.ReadFile(filepath.Join("testdata", pair[1]))
		if !bytes.Equal(got, want) {
			t.Errorf("%s saved again differs from %s", pair[0], pair[1])
		}
	}
}

// Version 1 readers ignored the flags but bit 0, and so does Load.
func TestLoadVersion1OtherFlags(t *testing.T) {
	o := fwState(5, 3)
	b := writeOld(t, 1, o, "{}", "")
	b[80] |= 6
	name := filepath.Join(t.TempDir(), "v1")
	if err := os.WriteFile(name, reseal(b), 0o644); err != nil {
		t.Fatal(err)
	}
	c, w, pw := loadFile(t, name)
	checkState(t, c, w, pw, o.state())
}

// A Frank-Wolfe state round-trips exactly, WᵀW larger than the payload
// writer's buffer included.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		n, k  int
		prev  float64
		fresh bool
	}{{5, 3, math.NaN(), true}, {5, 3, 42.125, false}, {90, 70, -0.0, true}} {
		o := fwState(tc.n, tc.k)
		o.Prev, o.Fresh = tc.prev, tc.fresh
		st := o.state()
		name := save(t, st)
		c, w, pw := loadFile(t, name)
		if c.Version != 3 || c.Method != "fw" || c.N != tc.n || c.K != tc.k {
			t.Fatalf("version %d, method %q, n %d, k %d", c.Version, c.Method, c.N, c.K)
		}
		checkState(t, c, w, pw, st)
		if string(c.Settings) != testSettings || string(c.Trace) != testTrace {
			t.Fatalf("settings %q trace %q", c.Settings, c.Trace)
		}
		fi, _ := os.Stat(name)
		if want := int64(headerSize3+2+len(testSettings)+len(testTrace)+16*tc.n*tc.k+4) + st.Payload.Size(); fi.Size() != want {
			t.Fatalf("file of %d bytes, want %d", fi.Size(), want)
		}
	}
}

// A row-CD state round-trips: the tracked objective, the gaps and the used
// slots of the pending changes; the unused slots come back as zeros.
func TestRoundTripRowCD(t *testing.T) {
	for _, tc := range []struct{ n, k, nz int }{{7, 3, 4}, {1, 1, 1}, {5000, 2, 2}, {3, 2, 255}} {
		st := rowCDState(tc.n, tc.k, tc.nz).state()
		c, w, pw := loadFile(t, save(t, st))
		if c.Version != 3 || c.Method != "rowcd" || c.N != tc.n || c.K != tc.k {
			t.Fatalf("version %d, method %q, n %d, k %d", c.Version, c.Method, c.N, c.K)
		}
		checkState(t, c, w, pw, st)
	}
}

type loadCase struct {
	name    string
	data    []byte
	storage func(n, k int) ([]float64, []float64, error)
	want    string
}

func TestLoadErrors(t *testing.T) {
	le := binary.LittleEndian
	edit := func(good []byte) func(func(b []byte) []byte) []byte {
		return func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	}
	// Version 3, Frank-Wolfe, n 4, k 2: the method's name at 112, the
	// payload of 8+32 bytes at 114, the settings at 154.
	good := saveBytes(t, fwState(4, 2).state())
	const fwPayload = 114
	e := edit(good)
	tests := []loadCase{
		{name: "empty", data: nil, want: "header: unexpected EOF"},
		{name: "magic", data: e(func(b []byte) []byte { b[0] = 'X'; return b }), want: "bad magic"},
		{name: "version", data: e(func(b []byte) []byte { b[8] = 9; return b }), want: "format version 9, want 1 to 3"},
		{name: "version 0", data: e(func(b []byte) []byte { b[8] = 0; return b }), want: "format version 0"},
		{name: "version 4", data: e(func(b []byte) []byte { b[8] = 4; return reseal(b) }), want: "format version 4"},
		{name: "v1 header of a v3 file", data: e(func(b []byte) []byte { b[8] = 1; return b }), want: "truncated or extended"},
		{name: "v2 header of a v3 file", data: e(func(b []byte) []byte { b[8] = 2; return b }), want: "pending changes with 0 slots a row"},
		{name: "reserved", data: e(func(b []byte) []byte { b[12] = 1; return reseal(b) }), want: "reserved header bytes 0x1, want 0"},
		{name: "no method name", data: e(func(b []byte) []byte { b[80] = 0; return b }), want: "method name of 0 bytes"},
		{name: "long method name", data: e(func(b []byte) []byte { le.PutUint64(b[80:], 256); return b }), want: "method name of 256 bytes, want 1 to 255"},
		{name: "method name length", data: e(func(b []byte) []byte { b[80] = 3; return b }), want: "truncated or extended"},
		{name: "unknown method", data: e(func(b []byte) []byte { b[113] = 'x'; return reseal(b) }), want: `no method "fx" saves a payload`},
		{name: "damaged method", data: e(func(b []byte) []byte { b[113] = 'x'; return b }), want: "the file is damaged"},
		{name: "payload length", data: e(func(b []byte) []byte { b[88] += 8; return b }), want: "truncated or extended"},
		{name: "payload and settings lengths", data: e(func(b []byte) []byte { b[88] -= 8; b[96] += 8; return reseal(b) }), want: "fw payload of 32 bytes, want 40 for k = 2"},
		{name: "payload and trace lengths", data: e(func(b []byte) []byte { b[88] += 7; b[104] -= 7; return reseal(b) }), want: "fw payload of 47 bytes, want 40"},
		{name: "inconsistent lengths, damaged", data: e(func(b []byte) []byte { b[88] -= 8; b[96] += 8; return b }), want: "the file is damaged"},
		{name: "huge payload", data: e(func(b []byte) []byte { le.PutUint64(b[88:], 1<<63); return b }), want: "bad sizes: payload"},
		{name: "large payload", data: e(func(b []byte) []byte { le.PutUint64(b[88:], 1<<62); return b }), want: "truncated or extended"},
		{name: "huge settings", data: e(func(b []byte) []byte { le.PutUint64(b[96:], 1<<31); return b }), want: "bad sizes"},
		{name: "huge trace", data: e(func(b []byte) []byte { le.PutUint64(b[104:], math.MaxUint64); return b }), want: "bad sizes"},
		{name: "huge k", data: e(func(b []byte) []byte { le.PutUint64(b[24:], math.MaxInt32); return b }), want: "truncated or extended"},
		{name: "huge n and k", data: e(func(b []byte) []byte {
			le.PutUint64(b[16:], math.MaxInt32)
			le.PutUint64(b[24:], math.MaxInt32)
			return b
		}), want: "truncated or extended"},
		{name: "too large n", data: e(func(b []byte) []byte { le.PutUint64(b[16:], 1<<31); return b }), want: "bad sizes"},
		{name: "short header", data: good[:108], want: "header: unexpected EOF"},
		{name: "short v1 header", data: good[:100], want: "header: unexpected EOF"},
		{name: "zero k", data: e(func(b []byte) []byte { b[24] = 0; return b }), want: "bad sizes"},
		{name: "zero n", data: e(func(b []byte) []byte { b[16] = 0; return b }), want: "bad sizes"},
		{name: "n and k swapped", data: e(func(b []byte) []byte { b[16], b[24] = 2, 4; return reseal(b) }), want: "fw payload of 40 bytes, want 136 for k = 4"},
		{name: "truncated", data: good[:len(good)-9], want: "truncated or extended"},
		{name: "no checksum", data: good[:len(good)-4], want: "truncated or extended"},
		{name: "extended", data: append(bytes.Clone(good), 0), want: "truncated or extended"},
		{name: "flipped bit", data: e(func(b []byte) []byte { b[len(b)-30] ^= 4; return b }), want: "the file is damaged"},
		{name: "flipped checksum", data: e(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), want: "the file is damaged"},
		{name: "flipped state", data: e(func(b []byte) []byte { b[33] ^= 1; return b }), want: "the file is damaged"},
		{name: "flipped WᵀW", data: e(func(b []byte) []byte { b[fwPayload+8+5] ^= 1; return b }), want: "the file is damaged"},
		{name: "fw flags", data: e(func(b []byte) []byte { b[fwPayload] |= 2; return reseal(b) }), want: "fw payload: unknown flags 0x2"},
		{name: "fw flags damaged", data: e(func(b []byte) []byte { b[fwPayload] |= 2; return b }), want: "the file is damaged"},
		{name: "storage size", data: good, storage: func(n, k int) ([]float64, []float64, error) { return make([]float64, 1), nil, nil }, want: "want 8"},
		{name: "storage error", data: good, storage: func(n, k int) ([]float64, []float64, error) { return nil, nil, os.ErrPermission }, want: "permission denied"},
	}

	// Version 3, row-CD, n 4, k 2, 2 slots a row: the method's name at 112,
	// the payload at 117: flags, NZ, objective, gaps, WᵀW (32 bytes) at
	// +32, 4 counts at +64, 4·2 columns at +68 and 4·2 values at +100.
	rowcd := saveBytes(t, rowCDState(4, 2, 2).state())
	const pl = 117
	const nz, counts, cols, vals = pl + 4, pl + 64, pl + 68, pl + 100
	r := edit(rowcd)
	tests = append(tests, []loadCase{
		{name: "row-CD truncated", data: rowcd[:len(rowcd)-5], want: "truncated or extended"},
		{name: "row-CD other slots", data: r(func(b []byte) []byte { b[nz] = 3; return reseal(b) }), want: "rowcd payload of 164 bytes, want 212 for n = 4, k = 2, 3 slots a row"},
		{name: "row-CD other slots, damaged", data: r(func(b []byte) []byte { b[nz] = 3; return b }), want: "the file is damaged"},
		{name: "row-CD no slots", data: r(func(b []byte) []byte { b[nz] = 0; return reseal(b) }), want: "want 64 for n = 4, k = 2, 0 slots a row"},
		{name: "row-CD 256 slots", data: r(func(b []byte) []byte { b[nz], b[nz+1] = 0, 1; return reseal(b) }), want: "256 pending slots a row"},
		{name: "row-CD flags", data: r(func(b []byte) []byte { b[pl+1] = 1; return reseal(b) }), want: "rowcd payload: unknown flags 0x100"},
		{name: "row-CD flipped value", data: r(func(b []byte) []byte { b[vals+3] ^= 1; return b }), want: "the file is damaged"},
		{name: "row-CD count", data: r(func(b []byte) []byte { b[counts+1] = 3; return reseal(b) }), want: "row 1 has 3 pending changes, at most 2"},
		{name: "row-CD count, damaged", data: r(func(b []byte) []byte { b[counts+1] = 3; return b }), want: "the file is damaged"},
		{name: "row-CD column", data: r(func(b []byte) []byte { b[cols+2*4] = 2; return reseal(b) }), want: "row 1: pending change 0 in column 2"},
		{name: "row-CD negative column", data: r(func(b []byte) []byte { b[cols+2*4+3] = 0x80; return reseal(b) }), want: "in column -"},
		{name: "row-CD NaN", data: r(func(b []byte) []byte {
			le.PutUint64(b[vals+2*8:], math.Float64bits(math.NaN()))
			return reseal(b)
		}), want: "pending change 0 is NaN"},
		{name: "row-CD payload as fw", data: r(func(b []byte) []byte {
			// "rowcd" becomes "fw" and 3 bytes more payload.
			b = append(b[:112:112], append([]byte("fw"), b[117:]...)...)
			le.PutUint64(b[80:], 2)
			le.PutUint64(b[88:], le.Uint64(b[88:])+3)
			return reseal(append(b[:len(b)-4], 0, 0, 0, 0, 0, 0, 0))
		}), want: "fw payload of 167 bytes, want 40"},
	}...)

	// Version 2, row-CD, n 4, k 2, 2 slots a row, as the earlier release
	// wrote it: the pending part is 4 counts, 4·2 columns and 4·2 values
	// before the checksum.
	v2 := writeOld(t, 2, rowCDState(4, 2, 2), testSettings, testTrace)
	const pend = 4 + 4*2*12 + 4
	c2, cols2, vals2 := len(v2)-pend, len(v2)-pend+4, len(v2)-pend+4+4*2*4
	v := edit(v2)
	v2fw := edit(writeOld(t, 2, fwState(4, 2), testSettings, testTrace))
	v1 := edit(writeOld(t, 1, fwState(4, 2), testSettings, testTrace))
	tests = append(tests, []loadCase{
		{name: "v2 truncated", data: v2[:len(v2)-5], want: "truncated or extended"},
		{name: "v2 short header", data: v2[:120], want: "header: unexpected EOF"},
		{name: "v2 unknown flag", data: v(func(b []byte) []byte { b[80] |= 4; return b }), want: "unknown flags 0x7"},
		{name: "v2 other slots", data: v(func(b []byte) []byte { b[12] = 3; return b }), want: "truncated or extended"},
		{name: "v2 no pending flag", data: v(func(b []byte) []byte { b[80] &^= 2; return b }), want: "2 pending slots a row but no pending changes"},
		{name: "v2 slots without pending", data: v2fw(func(b []byte) []byte { b[12] = 2; return b }), want: "2 pending slots a row but no pending changes"},
		{name: "v2 pending without slots", data: v2fw(func(b []byte) []byte { b[80] |= 2; return b }), want: "0 slots a row"},
		{name: "v2 fw flipped bit", data: v2fw(func(b []byte) []byte { b[len(b)-30] ^= 4; return b }), want: "the file is damaged"},
		{name: "v2 flipped row-CD field", data: v(func(b []byte) []byte { b[115] ^= 1; return b }), want: "the file is damaged"},
		{name: "v2 flipped value", data: v(func(b []byte) []byte { b[vals2+3] ^= 1; return b }), want: "the file is damaged"},
		{name: "v2 count, damaged", data: v(func(b []byte) []byte { b[c2+1] = 3; return b }), want: "the file is damaged"},
		{name: "v2 count", data: v(func(b []byte) []byte { b[c2+1] = 3; return reseal(b) }), want: "row 1 has 3 pending changes, at most 2"},
		{name: "v2 column", data: v(func(b []byte) []byte { b[cols2+2*4] = 2; return reseal(b) }), want: "row 1: pending change 0 in column 2"},
		{name: "v2 NaN", data: v(func(b []byte) []byte {
			le.PutUint64(b[vals2+2*8:], math.Float64bits(math.NaN()))
			return reseal(b)
		}), want: "pending change 0 is NaN"},
		{name: "v2 storage error", data: v2, storage: func(n, k int) ([]float64, []float64, error) { return nil, nil, os.ErrPermission }, want: "permission denied"},
		{name: "v1 truncated", data: v1(func(b []byte) []byte { return b[:len(b)-1] }), want: "truncated or extended"},
		{name: "v1 flipped bit", data: v1(func(b []byte) []byte { b[len(b)-30] ^= 4; return b }), want: "the file is damaged"},
		{name: "v1 huge settings", data: v1(func(b []byte) []byte { le.PutUint64(b[88:], 1<<40); return b }), want: "bad sizes"},
		{name: "v1 storage size", data: v1(func(b []byte) []byte { return b }), storage: func(n, k int) ([]float64, []float64, error) { return make([]float64, 8), nil, nil }, want: "want 8"},
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

// A failed Save leaves the earlier checkpoint as it was and no other file.
func TestSaveReplacesAtomically(t *testing.T) {
	st := fwState(3, 2).state()
	name := save(t, st)
	before, _ := os.ReadFile(name)
	bad := *st
	bad.PW = bad.PW[:1]
	fws := st.Payload.(*fw.FrankWolfeState)
	fails := []struct {
		what  string
		write func() error
		want  string
	}{
		{"inconsistent state", func() error { return Save(name, &bad, nil, nil) }, "inconsistent state"},
		{"no payload", func() error { s := *st; s.Payload = nil; return Save(name, &s, nil, nil) }, "no payload"},
		{"nil payload", func() error { s := *st; s.Payload = (*fw.RowCDState)(nil); return Save(name, &s, nil, nil) }, "nil payload"},
		{"unknown payload", func() error { s := *st; s.Payload = &lying{fws, 0, 0, nil, "fw"}; return Save(name, &s, nil, nil) }, "its k is unknown"},
		{"short Size", func() error { return saveLying(name, st, &lying{fws, -1, 0, nil, "fw"}) }, "fw payload of 40 bytes (40 reported), its Size is 39"},
		{"long Size", func() error { return saveLying(name, st, &lying{fws, 8, 0, nil, "fw"}) }, "fw payload of 40 bytes (40 reported), its Size is 48"},
		{"wrong count", func() error { return saveLying(name, st, &lying{fws, 0, 1, nil, "fw"}) }, "fw payload of 40 bytes (41 reported), its Size is 40"},
		{"write error", func() error { return saveLying(name, st, &lying{fws, 0, 0, io.ErrShortWrite, "fw"}) }, "fw payload: short write"},
		{"no method name", func() error { return saveLying(name, st, &lying{fws, 0, 0, nil, ""}) }, `method name ""`},
		{"long method name", func() error { return saveLying(name, st, &lying{fws, 0, 0, nil, strings.Repeat("m", 256)}) }, "want 1 to 255 bytes"},
		{"shape", func() error { return writeFS(vfs.OS{}, name, st, 2, 2, nil, nil) }, "want 2×2"},
	}
	for _, f := range fails {
		if err := f.write(); err == nil || !strings.Contains(err.Error(), f.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming the file with %q", f.what, err, f.want)
		}
		if after, err := os.ReadFile(name); err != nil || !bytes.Equal(after, before) {
			t.Fatalf("%s: a failed Save changed the earlier checkpoint (%v)", f.what, err)
		}
		if entries, _ := os.ReadDir(filepath.Dir(name)); len(entries) != 1 {
			t.Fatalf("%s: %d files in the directory, want the checkpoint only", f.what, len(entries))
		}
	}
	// A payload of another method, with a name of 255 bytes, saves for
	// the n and k given; Load gives up on its method.
	if err := saveLying(name, st, &lying{fws, 0, 0, nil, strings.Repeat("m", 255)}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(name, alloc); err == nil || !strings.Contains(err.Error(), `no method "mmm`) {
		t.Fatalf("error %v", err)
	}
}

// lying is a FrankWolfeState of the method named method, whose Size is
// off by size and whose WriteTo reports count bytes more than it wrote or
// fails with err.
type lying struct {
	*fw.FrankWolfeState
	size, count int64
	err         error
	method      string
}

func (l *lying) Method() string { return l.method }
func (l *lying) Size() int64    { return l.FrankWolfeState.Size() + l.size }
func (l *lying) WriteTo(w io.Writer) (int64, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.FrankWolfeState.WriteTo(w)
	return n + l.count, err
}

// saveLying saves st with the payload p, through write with the n and k of
// p's WᵀW: Save does not know the type.
func saveLying(name string, st *fw.State, p *lying) error {
	s := *st
	s.Payload = p
	k := int(math.Sqrt(float64(len(p.Gram))))
	return writeFS(vfs.OS{}, name, &s, len(st.W)/k, k, nil, nil)
}

// Save refuses pending changes that do not fit the state.
// noPending returns st with a row-CD payload that keeps no pending
// changes (a sweep that defers none) and holds a sweep stopped part way.
func noPending(st *fw.State) *fw.State {
	p := *st.Payload.(*fw.RowCDState)
	p.Pending, p.Part = nil, &fw.SweepPart{At: 1, Dec: -0.5, Gap: 2, Moved: 0.25, Changed: 1}
	st.Payload = &p
	return st
}

// A row-CD state without pending changes saves as a payload whose NZ is
// 0, without the three arrays, and loads back as it was; Dump says so.
func TestRowCDWithoutPending(t *testing.T) {
	const n, k = 5, 3
	st := noPending(rowCDState(n, k, 2).state())
	name := save(t, st)
	c, w, pw := loadFile(t, name)
	p, ok := c.State.Payload.(*fw.RowCDState)
	if !ok || p.Pending != nil {
		t.Fatalf("loaded payload %T %+v, want a row-CD state without pending changes", c.State.Payload, c.State.Payload)
	}
	want := st.Payload.(*fw.RowCDState)
	if p.Objective != want.Objective || p.Gap != want.Gap || !slices.Equal(p.Gram, want.Gram) || p.Part == nil || *p.Part != *want.Part ||
		!slices.Equal(w, st.W) || !slices.Equal(pw, st.PW) {
		t.Errorf("loaded %+v, want %+v", p, want)
	}
	if size := int64(32 + 8*k*k + 40); p.Size() != size {
		t.Errorf("payload of %d bytes, want %d", p.Size(), size)
	}
	var out bytes.Buffer
	if err := Dump(&out, name); err != nil || !strings.Contains(out.String(), "pending changes: none kept") {
		t.Errorf("Dump: %v\n%s", err, out.String())
	}
}

func TestSaveRefusesBadPending(t *testing.T) {
	for _, tc := range []struct {
		edit func(p *fw.RowCDState)
		want string
	}{
		{func(p *fw.RowCDState) { p.Pending.NZ = 0 }, "0 slots a row"},
		{func(p *fw.RowCDState) { p.Pending.NZ = 300 }, "300 slots a row"},
		{func(p *fw.RowCDState) { p.Pending.Count = p.Pending.Count[:1] }, "want 3 counts"},
		{func(p *fw.RowCDState) { p.Pending.Count[0] = 9 }, "row 0 has 9 pending changes"},
		{func(p *fw.RowCDState) { p.Pending.Col[1*2] = 5 }, "row 1: pending change 0 in column 5"},
		{func(p *fw.RowCDState) { p.Gram = p.Gram[:3] }, "inconsistent state: Gram 3"},
	} {
		st := rowCDState(3, 2, 2).state()
		tc.edit(st.Payload.(*fw.RowCDState))
		name := filepath.Join(t.TempDir(), "c")
		if err := Save(name, st, nil, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused state was saved: %v", err)
		}
	}
}

// Dump prints the header of every version, the method and the payload's
// size; testdata/dump.golden holds its output for the fixtures.
func TestDump(t *testing.T) {
	var out bytes.Buffer
	for _, fx := range fixtures() {
		if err := Dump(&out, filepath.Join("testdata", fx.file)); err != nil {
			t.Fatal(err)
		}
	}
	golden := filepath.Join("testdata", "dump.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("Dump output:\n%s\nwant (%s):\n%s", out.Bytes(), golden, want)
	}
	out.Reset()
	// Rows 1, 2, 4 and 5 of 6 have 1, 2, 1 and 2 pending changes.
	if err := Dump(&out, save(t, rowCDState(6, 2, 2).state())); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format version 3", "method rowcd, payload 214 bytes, P·W fresh true",
		"row-CD: objective 99.25, gap of the last pass 0.5, gap of the last sweep NaN",
		"pending changes: 2 slots a row, 4 rows, 6 changes"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("SSNMFCKP"), 0o644)
	if err := Dump(io.Discard, bad); err == nil {
		t.Error("Dump of a damaged file: no error")
	}
}

// ReadSettings refuses a damaged header, and a version-3 file whose
// payload runs past its end.
func TestReadSettings(t *testing.T) {
	name := save(t, rowCDState(3, 2, 2).state())
	if b, err := ReadSettings(name); err != nil || string(b) != testSettings {
		t.Fatalf("ReadSettings: %q, %v", b, err)
	}
	good, _ := os.ReadFile(name)
	for _, tc := range []struct {
		edit func(b []byte)
		want string
	}{
		{func(b []byte) { b[8] = 7 }, "format version 7"},
		{func(b []byte) { b[80] = 0 }, "method name of 0 bytes"},
		{func(b []byte) { binary.LittleEndian.PutUint64(b[88:], 1<<40) }, "settings: unexpected EOF"},
		{func(b []byte) { binary.LittleEndian.PutUint64(b[88:], 1<<63) }, "bad sizes: payload"},
	} {
		b := bytes.Clone(good)
		tc.edit(b)
		bad := filepath.Join(t.TempDir(), "bad")
		os.WriteFile(bad, b, 0o644)
		if _, err := ReadSettings(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// FuzzLoad feeds load damaged files of all three versions: it must return
// an error or a consistent checkpoint, never panic.
func FuzzLoad(f *testing.F) {
	for _, fx := range fixtures() {
		good, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(good)
		f.Add(good[:headerSize1])
	}
	f.Add(writeOld(f, 1, fwState(3, 2), "{}", "t"))
	f.Add(writeOld(f, 2, fwState(3, 2), "{}", "t"))
	f.Add(writeOld(f, 2, rowCDState(3, 2, 2), "{}", "t"))
	f.Add(saveBytes(f, fwState(2, 1).state()))
	f.Add(saveBytes(f, rowCDState(3, 2, 2).state()))
	f.Add(saveBytes(f, noPending(rowCDState(3, 2, 2).state())))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := load(bytes.NewReader(data), int64(len(data)), alloc)
		if err != nil {
			return
		}
		if c.N < 1 || c.K < 1 || c.Version < 1 || c.Version > 3 || c.State.Payload == nil || c.Method != c.State.Payload.Method() {
			t.Fatalf("accepted a checkpoint of version %d with n %d, k %d, method %q, payload %T", c.Version, c.N, c.K, c.Method, c.State.Payload)
		}
		switch p := c.State.Payload.(type) {
		case *fw.FrankWolfeState:
			if len(p.Gram) != c.K*c.K {
				t.Fatalf("accepted a WᵀW of %d values for k %d", len(p.Gram), c.K)
			}
		case *fw.RowCDState:
			if c.Version < 2 || len(p.Gram) != c.K*c.K {
				t.Fatalf("accepted a row-CD state in version %d, WᵀW of %d values for k %d", c.Version, len(p.Gram), c.K)
			}
			if p.Pending != nil {
				if err := p.Pending.Check(c.N, c.K, p.Pending.NZ); err != nil {
					t.Fatalf("accepted bad pending changes: %v", err)
				}
			}
		default:
			t.Fatalf("payload %T", p)
		}
		if c.Version == 3 {
			want := int64(headerSize3+len(c.Method)+len(c.Settings)+len(c.Trace)+16*c.N*c.K+4) + c.State.Payload.Size()
			if int64(len(data)) != want {
				t.Fatalf("accepted %d bytes for a checkpoint of %d", len(data), want)
			}
		}
	})
}

// TestSaveOtherMethod checks that a payload of a method this package does
// not know is saved with the state's K, and that Load hands it to
// fw.ReadPayload, which names the method it cannot read.
func TestSaveOtherMethod(t *testing.T) {
	st := fwState(3, 2).state()
	name := filepath.Join(t.TempDir(), "c")
	s := *st
	s.K = 2
	s.Payload = &lying{st.Payload.(*fw.FrankWolfeState), 0, 0, nil, "newton"}
	if err := Save(name, &s, nil, nil); err != nil {
		t.Fatalf("Save: %v", err)
	}
	_, err := Load(name, func(n, k int) ([]float64, []float64, error) { return make([]float64, n*k), make([]float64, n*k), nil })
	if err == nil || !strings.Contains(err.Error(), `"newton"`) {
		t.Errorf("Load: error %v, want one naming the method", err)
	}
	s.K = 4 // does not divide W's 6 values
	if err := Save(name, &s, nil, nil); err == nil || !strings.Contains(err.Error(), "inconsistent state") {
		t.Errorf("Save with K = 4: error %v, want an inconsistent state", err)
	}
}
