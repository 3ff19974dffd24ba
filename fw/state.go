package fw

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// State is what a run needs, beyond W and P·W, to go on from the start of
// an iteration: the driver's counts and the method's own state, its
// Payload. Settings.Checkpoint receives it and Settings.Resume takes it
// back.
type State struct {
	K         int           // columns of W
	Iter      int           // iterations taken
	Passes    int           // passes over P taken
	FrobSq    float64       // ||P||_F^2
	MaxRowSum float64       // largest row sum of P
	Prev      float64       // objective before the last iteration; NaN before the first
	Elapsed   time.Duration // time spent so far
	Payload   Payload       // the method's state

	// W and PW are the run's current W and P·W, valid during the call
	// to Settings.Checkpoint only. Resume ignores them.
	W, PW []float64
}

// Payload is a method's part of a State, in a binary form of its own:
// Method names the method that reads it back (ReadPayload), Size is the
// number of bytes WriteTo writes.
type Payload interface {
	Method() string
	Size() int64
	io.WriterTo
}

// The payloads' binary forms are little-endian, with floats as their IEEE
// 754 bits:
//
//	FrankWolfeState ("fw"):
//	  offset  size    field
//	       0     4    flags, uint32: bit 0 = P·W fresh from a pass
//	       4     4    reserved, zero
//	       8  8·k·k   WᵀW as carried by the run, float64, row-major
//
//	RowCDState ("rowcd"):
//	  offset  size    field
//	       0     4    flags, uint32: bit 0 = P·W fresh from a pass
//	       4     4    NZ, pending slots a row, uint32 in [0, 255]; 0: no
//	                  pending changes (Sweep.Defers false), and the three
//	                  arrays of pending changes below are absent
//	       8     8    tracked objective, float64
//	      16     8    exact gap of the last P·W pass, float64
//	      24     8    sum of the row gaps of the last sweep (NaN before the first), float64
//	      32  8·k·k   WᵀW as of the state, float64, row-major
//	       .     n    pending changes per row, uint8 <= NZ
//	       .  4·n·NZ  their columns, int32 < k, row i's in slots i·NZ...; unused slots 0 (ignored on read)
//	       .  8·n·NZ  their values, float64; unused slots 0 (ignored on read)
//	  if flags bit 1, a sweep stopped part way (RowCDState.Part):
//	       .     8    visits made, uint64 in [1, n)
//	       .     8    the objective's change so far, float64
//	       .     8    the sum of the row gaps so far, float64
//	       .     8    the mass moved so far, float64
//	       .     8    the rows whose cluster the visits changed, uint64 <= visits made
const (
	payloadFresh = 1 << 0
	payloadPart  = 1 << 1
	partSize     = 40
	fwHeader     = 8
	rowcdHeader  = 32
	maxPendingNZ = math.MaxUint8
	fwMethod     = "fw"
	rowcdMethod  = "rowcd"
)

// FrankWolfeState is the Payload of a FrankWolfe run.
type FrankWolfeState struct {
	Fresh bool      // P·W was computed by a pass at W, not carried
	Gram  []float64 // WᵀW, k×k, as carried by the updates
}

// Method returns "fw".
func (s *FrankWolfeState) Method() string { return fwMethod }

// Size returns the bytes of the binary form.
func (s *FrankWolfeState) Size() int64 { return fwHeader + 8*int64(len(s.Gram)) }

// WriteTo writes the binary form.
func (s *FrankWolfeState) WriteTo(w io.Writer) (int64, error) {
	bw := newPayloadWriter(w)
	bw.u32(flags(s.Fresh))
	bw.u32(0)
	bw.floats(s.Gram)
	return bw.done()
}

// RowCDState is the Payload of a RowCD run.
type RowCDState struct {
	Fresh     bool      // P·W was computed by a pass at W (Gap is exact)
	Gram      []float64 // WᵀW as of the state, recomputed from W by a resumed run
	Objective float64   // the tracked objective at W, which a pass would not reproduce to the bit
	Gap       float64   // the exact Frank-Wolfe gap of the last P·W pass
	SweepGap  float64   // the sum of the row gaps of the last sweep; NaN before the first
	Pending   *Pending  // the changes of P·W not yet applied; nil if the sweep defers none
	// Part, if not nil, is the sweep that Settings.Stop stopped part way,
	// which the resumed run goes on with; the other fields are as of the
	// start of that sweep, but for W, P·W, Gram and Pending, which are
	// as of its last visit.
	Part *SweepPart
}

// SweepPart is a sweep of RowCD stopped part way: the visits made and the
// sweep's sums so far.
type SweepPart struct {
	At      int     // visits made, 1 to n-1: the sweep goes on with visit At
	Dec     float64 // the objective's change so far
	Gap     float64 // the sum of the row gaps at the visits so far
	Moved   float64 // the mass moved so far
	Changed int     // the rows whose largest membership the visits changed
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// check reports whether p, if not nil, is a sweep of n rows stopped part
// way.
func (p *SweepPart) check(n int) error {
	switch {
	case p == nil:
		return nil
	case p.At < 1 || p.At >= n:
		return fmt.Errorf("a sweep stopped after %d visits, want 1 to %d", p.At, n-1)
	case !finite(p.Dec) || !finite(p.Gap) || !finite(p.Moved):
		return fmt.Errorf("a sweep stopped part way with change %v, gap %v and mass moved %v, want finite sums", p.Dec, p.Gap, p.Moved)
	case p.Changed < 0 || p.Changed > p.At:
		return fmt.Errorf("a sweep stopped after %d visits that changed %d rows' clusters", p.At, p.Changed)
	}
	return nil
}

// Method returns "rowcd".
func (s *RowCDState) Method() string { return rowcdMethod }

// Size returns the bytes of the binary form.
func (s *RowCDState) Size() int64 {
	size := rowcdHeader + 8*int64(len(s.Gram))
	if p := s.Pending; p != nil {
		size += int64(len(p.Count)) + 4*int64(len(p.Count))*int64(p.NZ) + 8*int64(len(p.Count))*int64(p.NZ)
	}
	if s.Part != nil {
		size += partSize
	}
	return size
}

// WriteTo writes the binary form.
func (s *RowCDState) WriteTo(w io.Writer) (int64, error) {
	p := s.Pending
	if p == nil {
		p = &Pending{}
	}
	bw := newPayloadWriter(w)
	fl := flags(s.Fresh)
	if s.Part != nil {
		fl |= payloadPart
	}
	bw.u32(fl)
	bw.u32(uint32(p.NZ))
	bw.floats([]float64{s.Objective, s.Gap, s.SweepGap})
	bw.floats(s.Gram)
	for i, c := range p.Count {
		bw.buf = append(bw.buf, c)
		bw.flushIf(i)
	}
	for i := range p.Count {
		for e := range p.NZ {
			col := int32(0)
			if e < int(p.Count[i]) {
				col = p.Col[i*p.NZ+e]
			}
			bw.u32(uint32(col))
		}
		bw.flushIf(i)
	}
	for i := range p.Count {
		for e := range p.NZ {
			v := 0.0
			if e < int(p.Count[i]) {
				v = p.Val[i*p.NZ+e]
			}
			bw.u64(math.Float64bits(v))
		}
		bw.flushIf(i)
	}
	if pt := s.Part; pt != nil {
		bw.u64(uint64(pt.At))
		bw.floats([]float64{pt.Dec, pt.Gap, pt.Moved})
		bw.u64(uint64(pt.Changed))
	}
	return bw.done()
}

// ReadPayload reads the binary form of the payload of method (its
// Payload.Method), size bytes, for an n×k W. It checks the sizes and the
// pending changes.
func ReadPayload(method string, r io.Reader, size int64, n, k int) (Payload, error) {
	if n < 1 || k < 1 || k > 1<<16 || int64(n) > 1<<40 {
		return nil, fmt.Errorf("payload for n = %d, k = %d: out of range", n, k)
	}
	br := &payloadReader{r: bufio.NewReaderSize(r, 1<<16)}
	kk := int64(k) * int64(k)
	switch method {
	case fwMethod:
		if want := fwHeader + 8*kk; size != want {
			return nil, fmt.Errorf("fw payload of %d bytes, want %d for k = %d", size, want, k)
		}
		fl, reserved := br.u32(), br.u32()
		s := &FrankWolfeState{Fresh: fl&payloadFresh != 0, Gram: br.floats(int(kk))}
		if reserved != 0 {
			return nil, fmt.Errorf("fw payload: reserved word %#x, want 0", reserved)
		}
		if err := br.check(fl &^ payloadFresh); err != nil {
			return nil, fmt.Errorf("fw payload: %w", err)
		}
		return s, nil
	case rowcdMethod:
		if size < rowcdHeader {
			return nil, fmt.Errorf("rowcd payload of %d bytes, want at least %d", size, rowcdHeader)
		}
		fl, nz := br.u32(), int(br.u32())
		if nz > maxPendingNZ {
			return nil, fmt.Errorf("rowcd payload: %d pending slots a row, want 0 to %d", nz, maxPendingNZ)
		}
		want := rowcdHeader + 8*kk
		if nz > 0 {
			want += int64(n) * (1 + 12*int64(nz))
		}
		if fl&payloadPart != 0 {
			want += partSize
		}
		if size != want {
			return nil, fmt.Errorf("rowcd payload of %d bytes, want %d for n = %d, k = %d, %d slots a row", size, want, n, k, nz)
		}
		hdr := br.floats(3)
		s := &RowCDState{Fresh: fl&payloadFresh != 0, Gram: br.floats(int(kk))}
		s.Objective, s.Gap, s.SweepGap = hdr[0], hdr[1], hdr[2]
		var p *Pending
		if nz > 0 {
			p = &Pending{NZ: nz, Count: make([]uint8, n), Col: make([]int32, n*nz), Val: make([]float64, n*nz)}
			br.read(p.Count)
			for i := range p.Col {
				p.Col[i] = int32(br.u32())
			}
			br.readFloats(p.Val)
			s.Pending = p
		}
		if fl&payloadPart != 0 {
			at := br.u64()
			sums := br.floats(3)
			changed := br.u64()
			if at >= uint64(n) || changed > at {
				at, changed = 0, 0 // refused by check
			}
			s.Part = &SweepPart{At: int(at), Dec: sums[0], Gap: sums[1], Moved: sums[2], Changed: int(changed)}
		}
		if err := br.check(fl &^ (payloadFresh | payloadPart)); err != nil {
			return nil, fmt.Errorf("rowcd payload: %w", err)
		}
		if p != nil {
			if err := p.Check(n, k, nz); err != nil {
				return nil, fmt.Errorf("rowcd payload: %w", err)
			}
		}
		if err := s.Part.check(n); err != nil {
			return nil, fmt.Errorf("rowcd payload: %w", err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("no method %q saves a payload (want fw or rowcd)", method)
}

func flags(fresh bool) uint32 {
	if fresh {
		return payloadFresh
	}
	return 0
}

// payloadWriter writes little-endian values through a buffer.
type payloadWriter struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

func newPayloadWriter(w io.Writer) *payloadWriter {
	return &payloadWriter{w: w, buf: make([]byte, 0, 1<<16)}
}

func (b *payloadWriter) u32(v uint32) { b.buf = binary.LittleEndian.AppendUint32(b.buf, v) }
func (b *payloadWriter) u64(v uint64) { b.buf = binary.LittleEndian.AppendUint64(b.buf, v) }

func (b *payloadWriter) floats(v []float64) {
	for i, x := range v {
		b.u64(math.Float64bits(x))
		b.flushIf(i)
	}
}

// flushIf writes the buffer out every 4096 values.
func (b *payloadWriter) flushIf(i int) {
	if i%4096 == 4095 {
		b.flush()
	}
}

func (b *payloadWriter) flush() {
	if b.err == nil && len(b.buf) > 0 {
		var m int
		m, b.err = b.w.Write(b.buf)
		b.n += int64(m)
	}
	b.buf = b.buf[:0]
}

func (b *payloadWriter) done() (int64, error) {
	b.flush()
	return b.n, b.err
}

// payloadReader reads little-endian values and keeps the first error.
type payloadReader struct {
	r   *bufio.Reader
	err error
	b   [8]byte
}

func (b *payloadReader) read(p []byte) {
	if b.err == nil {
		_, b.err = io.ReadFull(b.r, p)
	}
}

func (b *payloadReader) u32() uint32 {
	b.read(b.b[:4])
	return binary.LittleEndian.Uint32(b.b[:4])
}

func (b *payloadReader) u64() uint64 {
	b.read(b.b[:8])
	return binary.LittleEndian.Uint64(b.b[:8])
}

func (b *payloadReader) floats(n int) []float64 {
	v := make([]float64, n)
	b.readFloats(v)
	return v
}

func (b *payloadReader) readFloats(v []float64) {
	for i := range v {
		b.read(b.b[:8])
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b.b[:8]))
	}
}

// check reports a read error or unknown flags.
func (b *payloadReader) check(unknownFlags uint32) error {
	if errors.Is(b.err, io.EOF) {
		b.err = io.ErrUnexpectedEOF
	}
	if b.err != nil {
		return b.err
	}
	if unknownFlags != 0 {
		return fmt.Errorf("unknown flags %#x", unknownFlags)
	}
	return nil
}

// Pending is the change of every row of W at its last visit by RowCD, in
// sparse form. Between sweeps, row i of P·W lacks the changes of the rows
// after row i's block of rows that the affinity's Sweep has not yet passed
// on (see Sweep); together with P·W they give the product P·W at W.
//
// Row i changed in Count[i] <= NZ columns, Col[i*NZ : i*NZ+Count[i]], by
// Val[i*NZ : i*NZ+Count[i]]; the other slots of a row are not used. NZ is
// 2·Moves. In a State passed to Settings.Checkpoint the slices are the
// run's own, valid during the call only.
type Pending struct {
	NZ    int       // slots per row
	Count []uint8   // n: the number of changed columns of each row
	Col   []int32   // n×NZ: the changed columns, each < k
	Val   []float64 // n×NZ: the changes
}

// Check reports whether p describes changes of an n×k matrix with nz slots
// per row: the slices have n, n×nz and n×nz values, every count is at most
// nz and every used column is in [0, k) with a finite change.
func (p *Pending) Check(n, k, nz int) error {
	if p == nil {
		return errors.New("no pending changes")
	}
	if p.NZ != nz {
		return fmt.Errorf("pending changes with %d slots a row, want %d (2·Moves)", p.NZ, nz)
	}
	if len(p.Count) != n || len(p.Col) != n*nz || len(p.Val) != n*nz {
		return fmt.Errorf("pending changes of %d, %d and %d values, want %d counts and %d columns and values",
			len(p.Count), len(p.Col), len(p.Val), n, n*nz)
	}
	for i, c := range p.Count {
		if int(c) > nz {
			return fmt.Errorf("row %d has %d pending changes, at most %d fit", i, c, nz)
		}
		for e, col := range p.Col[i*nz : i*nz+int(c)] {
			if col < 0 || int(col) >= k {
				return fmt.Errorf("row %d: pending change %d in column %d, want one in [0, %d)", i, e, col, k)
			}
			if v := p.Val[i*nz+e]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("row %d: pending change %d is %v", i, e, v)
			}
		}
	}
	return nil
}

// row returns the columns and values of row i's change.
func (p *Pending) row(i int) ([]int32, []float64) {
	c := int(p.Count[i])
	return p.Col[i*p.NZ : i*p.NZ+c], p.Val[i*p.NZ : i*p.NZ+c]
}
