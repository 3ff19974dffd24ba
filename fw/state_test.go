package fw

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// encodePayload returns the binary form of p, checking that WriteTo writes
// Size bytes.
func encodePayload(t *testing.T, p Payload) []byte {
	t.Helper()
	var buf bytes.Buffer
	m, err := p.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if m != p.Size() || int64(buf.Len()) != m {
		t.Fatalf("%s payload: WriteTo reports %d bytes and wrote %d, Size %d", p.Method(), m, buf.Len(), p.Size())
	}
	return buf.Bytes()
}

// samePayload reports whether two payloads hold the same values, to the
// bit: the same method, flags, floats and pending changes.
func samePayload(a, b Payload) bool {
	bits := func(x, y []float64) bool {
		return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
	}
	switch a := a.(type) {
	case *FrankWolfeState:
		b, ok := b.(*FrankWolfeState)
		return ok && a.Fresh == b.Fresh && bits(a.Gram, b.Gram)
	case *RowCDState:
		b, ok := b.(*RowCDState)
		if !ok || a.Fresh != b.Fresh || !bits(a.Gram, b.Gram) ||
			!bits([]float64{a.Objective, a.Gap, a.SweepGap}, []float64{b.Objective, b.Gap, b.SweepGap}) {
			return false
		}
		if (a.Part == nil) != (b.Part == nil) || a.Part != nil && (a.Part.At != b.Part.At || a.Part.Changed != b.Part.Changed ||
			!bits([]float64{a.Part.Dec, a.Part.Gap, a.Part.Moved}, []float64{b.Part.Dec, b.Part.Gap, b.Part.Moved})) {
			return false
		}
		p, q := a.Pending, b.Pending
		if p.NZ != q.NZ || !slices.Equal(p.Count, q.Count) {
			return false
		}
		for i := range p.Count { // the used slots; the others are written as zero
			pc, pv := p.row(i)
			qc, qv := q.row(i)
			if !slices.Equal(pc, qc) || !bits(pv, qv) {
				return false
			}
		}
		return true
	}
	return false
}

// roundTrip writes p and reads it back for an n×k W, checking that it reads
// to the same values, and returns the payload read and the bytes written.
func roundTrip(t *testing.T, p Payload, n, k int) (Payload, []byte) {
	t.Helper()
	enc := encodePayload(t, p)
	q, err := ReadPayload(p.Method(), bytes.NewReader(enc), int64(len(enc)), n, k)
	if err != nil {
		t.Fatalf("%s payload of %d bytes written does not read back: %v", p.Method(), len(enc), err)
	}
	if !samePayload(p, q) {
		t.Fatalf("%s payload of %d bytes does not round-trip", p.Method(), len(enc))
	}
	return q, enc
}

// fuzzBytes hands out the fuzzer's bytes in turn, cyclically, and zeros if
// there are none.
type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[f.i%len(f.b)]
	f.i++
	return c
}

func (f *fuzzBytes) u64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = f.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

// float returns any float64, NaN and infinities included, or a finite one.
func (f *fuzzBytes) float(finite bool) float64 {
	v := math.Float64frombits(f.u64())
	if finite && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return 0
	}
	return v
}

// payloadsOf returns the states that a FrankWolfe and a RowCD run save on
// an n×k problem: at the start, and after a few iterations.
func payloadsOf(tb testing.TB, n, k int) []Payload {
	tb.Helper()
	d, _ := NewDense(n, kernel(n, 91))
	var out []Payload
	for _, m := range []func() Method{
		func() Method { return &FrankWolfe{} },
		func() Method { return &RowCD{Moves: 2, BlockSize: 4} },
	} {
		for _, at := range []int{0, 3} {
			set := Settings{MaxIter: 10, GapTol: -1, Refresh: -1}
			calls := 0
			set.Stop = func() bool { calls++; return calls > at }
			set.Checkpoint = func(st *State) error { out = append(out, clonePayload(st.Payload)); return nil }
			w := make([]float64, n*k)
			if err := Initialize(w, k, StartRandom, 92); err != nil {
				tb.Fatal(err)
			}
			if _, err := Minimize(context.Background(), Problem{P: d, K: k}, w, &set, m()); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return out
}

// FuzzReadPayload checks ReadPayload: arbitrary bytes give a payload or an
// error, never a panic; a payload it reads writes back to Size bytes that
// it reads again to the same values; bytes cut short of the size are an
// error; and FrankWolfeState and RowCDState, built from the fuzzer's bytes,
// round-trip through WriteTo and ReadPayload to the bit.
//
// n and k are (n8 % 64) + 1 and (k8 % 16) + 1.
func FuzzReadPayload(f *testing.F) {
	const n, k = 13, 3
	for _, p := range payloadsOf(f, n, k) {
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(p.Method() == "rowcd", uint8(n-1), uint8(k-1), buf.Bytes())
	}
	f.Add(false, uint8(0), uint8(0), []byte{})
	f.Add(true, uint8(0), uint8(0), []byte{1, 0, 0, 0, 1, 0, 0, 0})
	f.Add(false, uint8(0), uint8(0), []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, rowcd bool, n8, k8 uint8, data []byte) {
		n, k := int(n8)%64+1, int(k8)%16+1
		method := "fw"
		if rowcd {
			method = "rowcd"
		}

		// Arbitrary bytes.
		size := int64(len(data))
		if p, err := ReadPayload(method, bytes.NewReader(data), size, n, k); err == nil {
			if p.Method() != method || p.Size() != size {
				t.Fatalf("read a %s payload of %d bytes from %d bytes of %s", p.Method(), p.Size(), size, method)
			}
			q, enc := roundTrip(t, p, n, k)
			if !bytes.Equal(encodePayload(t, q), enc) {
				t.Fatal("the payload read, written back and read again writes other bytes")
			}
			// Bytes cut short of the size.
			if len(data) > 0 {
				if _, err := ReadPayload(method, bytes.NewReader(data[:len(data)-1]), size, n, k); err == nil {
					t.Fatal("a payload one byte short read without an error")
				}
			}
		}
		if _, err := ReadPayload("foreign", bytes.NewReader(data), size, n, k); err == nil {
			t.Fatal("a payload of an unknown method read without an error")
		}

		// States built from the bytes.
		fws, rs := statesFrom(data, n, k)
		for _, p := range []Payload{fws, rs} {
			roundTrip(t, p, n, k)
		}
	})
}

// statesFrom builds a FrankWolfeState and a valid RowCDState for an n×k W
// from the bytes: any float bits, NaN included, but finite pending changes.
func statesFrom(data []byte, n, k int) (*FrankWolfeState, *RowCDState) {
	src := &fuzzBytes{b: data}
	fws := &FrankWolfeState{Fresh: src.byte()&1 == 1, Gram: make([]float64, k*k)}
	for i := range fws.Gram {
		fws.Gram[i] = src.float(false)
	}
	nz := int(src.byte())%6 + 1
	rs := &RowCDState{
		Fresh: src.byte()&1 == 1, Gram: make([]float64, k*k),
		Objective: src.float(false), Gap: src.float(false), SweepGap: src.float(false),
		Pending: &Pending{NZ: nz, Count: make([]uint8, n), Col: make([]int32, n*nz), Val: make([]float64, n*nz)},
	}
	for i := range rs.Gram {
		rs.Gram[i] = src.float(false)
	}
	for i := range n {
		c := int(src.byte()) % (nz + 1)
		rs.Pending.Count[i] = uint8(c)
		for e := range c {
			rs.Pending.Col[i*nz+e] = int32(int(src.byte()) % k)
			rs.Pending.Val[i*nz+e] = src.float(true)
		}
	}
	if n > 1 && src.byte()&1 == 1 {
		at := int(src.byte())%(n-1) + 1
		rs.Part = &SweepPart{At: at, Dec: src.float(true), Gap: src.float(true), Moved: src.float(true), Changed: int(src.byte()) % (at + 1)}
	}
	return fws, rs
}

// Payloads larger than the writer's buffer of 4096 values round-trip.
func TestPayloadRoundTripLarge(t *testing.T) {
	const n, k = 5000, 70
	data := make([]byte, 1031)
	for i := range data {
		data[i] = byte(i*i + 7*i)
	}
	fws, rs := statesFrom(data, n, k)
	for _, p := range []Payload{fws, rs} {
		roundTrip(t, p, n, k)
	}
}

// The payloads of real runs round-trip, and a state read back resumes the
// run with the same bits as the state itself.
func TestPayloadRoundTripResumes(t *testing.T) {
	const n, k = 40, 3
	d, _ := NewDense(n, kernel(n, 93))
	for _, m := range []func() Method{
		func() Method { return &FrankWolfe{} },
		func() Method { return &RowCD{Moves: 2, BlockSize: 8} },
	} {
		base := Settings{MaxIter: 9, GapTol: -1, Refresh: 4}
		set := base
		set.CheckpointEvery = 5
		var sv *saved
		set.Checkpoint = func(st *State) error { s := save(st); sv = &s; return nil }
		want := driverRun{w: randomW(n, k, 94)}
		var err error
		if want.res, err = Minimize(context.Background(), Problem{P: d, K: k}, want.w, &set, m()); err != nil || sv == nil {
			t.Fatalf("error %v, checkpoint %v", err, sv != nil)
		}
		p, _ := roundTrip(t, sv.st.Payload, n, k)
		st := sv.st
		st.Payload = p
		resume := base
		resume.Resume, resume.PW = &st, slices.Clone(sv.pw)
		got := driverRun{w: slices.Clone(sv.w)}
		if got.res, err = Minimize(context.Background(), Problem{P: d, K: k}, got.w, &resume, m()); err != nil {
			t.Fatal(err)
		}
		if diff := got.sameBits(want); diff != "" {
			t.Errorf("%s: the run resumed from the payload read back differs in the %s", p.Method(), diff)
		}
	}
}
