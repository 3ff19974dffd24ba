// Package checkpoint saves and loads the state of a Frank-Wolfe or row-wise
// coordinate descent run, so that a long job killed at any moment can go on
// from its last checkpoint and end with the same bits as a run never
// interrupted.
//
// A checkpoint is one file, replaced atomically (written under a temporary
// name, synced, renamed), so that a crash leaves either the previous
// checkpoint or the new one, never a mixture. It holds the fw.State, the
// matrices W and P·W that the solver keeps in its work directory, the
// settings of the run as opaque bytes (the caller's, JSON by convention), and
// the trace written so far. Integers and floats are little-endian; floats are
// stored as their IEEE 754 bits, so the state round-trips exactly.
//
// [Save] writes format version 2:
//
//	offset    size      field
//	     0       8      magic "SSNMFCKP"
//	     8       4      format version, uint32 = 2
//	    12       4      NZ, pending slots a row, uint32: >= 1 if flags bit 1 is set, else 0
//	    16       8      n (rows of W), uint64 >= 1
//	    24       8      k (columns of W), uint64 >= 1
//	    32       8      iterations taken, uint64
//	    40       8      tile passes taken, uint64
//	    48       8      ||P||_F^2, float64
//	    56       8      largest row sum of P, float64
//	    64       8      objective before the last step (NaN before the first), float64
//	    72       8      elapsed time, int64 nanoseconds
//	    80       4      flags, uint32: bit 0 = P·W fresh from a pass,
//	                    bit 1 = pending changes follow (a row-CD state); no other bit
//	    84       4      reserved, zero
//	    88       8      length C of the settings, uint64
//	    96       8      length T of the trace, uint64
//	   104       8      row-CD: tracked objective, float64 (0 for Frank-Wolfe)
//	   112       8      row-CD: exact gap of the last P·W pass, float64
//	   120       8      row-CD: sum of the row gaps of the last sweep (NaN before the first), float64
//	   128       C      settings
//	 128+C       T      trace
//	     .    8·k·k     WᵀW as carried by the solver, float64, row-major
//	     .    8·n·k     W, float64, row-major
//	     .    8·n·k     P·W, float64, row-major
//	     .       n      if flags bit 1: pending changes per row, uint8 <= NZ
//	     .    4·n·NZ    if flags bit 1: their columns, int32 < k, row i's in slots i·NZ...; unused slots 0
//	     .    8·n·NZ    if flags bit 1: their values, float64; unused slots 0
//	   end-4     4      CRC-32C (Castagnoli) of every byte before it
//
// Version 1, written by the previous release for Frank-Wolfe runs, is the
// same up to offset 104 (bytes 12 to 16 reserved, flags bit 0 only), with no
// row-CD fields: the settings follow the header at offset 104, then the
// trace, WᵀW, W and P·W. [Load] reads both versions.
//
// [Load] checks the magic, version, sizes, checksum and pending changes
// before it returns anything, and [Dump] prints a checkpoint's header for
// debugging.
package checkpoint

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"time"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
)

const (
	magic       = "SSNMFCKP"
	version     = 2       // the version Save writes
	headerSize1 = 104     // the header of version 1
	headerSize  = 128     // the header of version 2
	maxMeta     = 1 << 30 // settings and trace are at most 1 GiB each
	maxNZ       = math.MaxUint8

	flagFresh   = 1 << 0
	flagPending = 1 << 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checkpoint is a saved run: its state, settings and trace. W and P·W are
// read into storage the caller gives to Load.
type Checkpoint struct {
	Version  int // format version of the file
	N, K     int
	State    fw.State // W and PW are not set by Load; Pending is set for a row-CD state
	Settings []byte
	Trace    []byte
}

// Save writes st (with its W and PW, and its pending changes if any), the
// run's settings and trace so far to the file name, replacing it
// atomically, in format version 2.
func Save(name string, st *fw.State, settings, trace []byte) error {
	k := int(math.Sqrt(float64(len(st.Gram))))
	if k < 1 || k*k != len(st.Gram) || len(st.W) != len(st.PW) || len(st.W)%k != 0 || len(st.W) == 0 {
		return fmt.Errorf("checkpoint %s: inconsistent state: Gram %d, W %d, P·W %d values", name, len(st.Gram), len(st.W), len(st.PW))
	}
	n := len(st.W) / k
	p := st.Pending
	if p != nil {
		if p.NZ < 1 || p.NZ > maxNZ {
			return fmt.Errorf("checkpoint %s: pending changes with %d slots a row, want 1 to %d", name, p.NZ, maxNZ)
		}
		if err := p.Check(n, k, p.NZ); err != nil {
			return fmt.Errorf("checkpoint %s: %w", name, err)
		}
	}
	f, err := store.CreateAtomic(name)
	if err != nil {
		return err
	}
	defer f.Abort()
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	var h [headerSize]byte
	copy(h[:], magic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], version)
	le.PutUint64(h[16:], uint64(n))
	le.PutUint64(h[24:], uint64(k))
	le.PutUint64(h[32:], uint64(st.Iter))
	le.PutUint64(h[40:], uint64(st.Passes))
	le.PutUint64(h[48:], math.Float64bits(st.FrobSq))
	le.PutUint64(h[56:], math.Float64bits(st.MaxRowSum))
	le.PutUint64(h[64:], math.Float64bits(st.Prev))
	le.PutUint64(h[72:], uint64(st.Elapsed))
	var flags uint32
	if st.Fresh {
		flags |= flagFresh
	}
	if p != nil {
		flags |= flagPending
		le.PutUint32(h[12:], uint32(p.NZ))
	}
	le.PutUint32(h[80:], flags)
	le.PutUint64(h[88:], uint64(len(settings)))
	le.PutUint64(h[96:], uint64(len(trace)))
	le.PutUint64(h[104:], math.Float64bits(st.Objective))
	le.PutUint64(h[112:], math.Float64bits(st.Gap))
	le.PutUint64(h[120:], math.Float64bits(st.SweepGap))
	bw.Write(h[:])
	bw.Write(settings)
	bw.Write(trace)
	for _, m := range [][]float64{st.Gram, st.W, st.PW} {
		bw.Write(store.AsBytes(m))
	}
	if p != nil {
		writePending(bw, p, n)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc.Sum32())
	if _, err := f.Write(sum[:]); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	return f.Commit()
}

// writePending writes the counts, columns and values of p, the unused slots
// as zeros, so that the file does not depend on what they held. Errors are
// left to the writer's Flush.
func writePending(bw *bufio.Writer, p *fw.Pending, n int) {
	bw.Write(p.Count)
	var b [8]byte
	for i := range n {
		c := int(p.Count[i])
		for e := range p.NZ {
			var v uint32
			if e < c {
				v = uint32(p.Col[i*p.NZ+e])
			}
			binary.LittleEndian.PutUint32(b[:4], v)
			bw.Write(b[:4])
		}
	}
	for i := range n {
		c := int(p.Count[i])
		for e := range p.NZ {
			var v uint64
			if e < c {
				v = math.Float64bits(p.Val[i*p.NZ+e])
			}
			binary.LittleEndian.PutUint64(b[:], v)
			bw.Write(b[:])
		}
	}
}

// Load reads the checkpoint name, of format version 1 or 2. Once the header
// is read, it calls storage with n and k for the n×k slices to read W and
// P·W into (for example memory-mapped matrices), and fills them. It returns
// an error, and the contents of w and pw are undefined, if the file is
// damaged.
func Load(name string, storage func(n, k int) (w, pw []float64, err error)) (*Checkpoint, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	c, err := load(bufio.NewReaderSize(f, 1<<20), st.Size(), storage)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", name, err)
	}
	return c, nil
}

// header is the decoded fixed part of a checkpoint.
type header struct {
	version    int
	size       int // bytes of the header
	n, k, nz   uint64
	clen, tlen uint64
	flags      uint32
	raw        []byte
}

// readHeader reads and checks the header of either version from r, and
// returns it with the bytes read.
func readHeader(r io.Reader) (*header, error) {
	raw := make([]byte, headerSize)
	if _, err := io.ReadFull(r, raw[:headerSize1]); err != nil {
		return nil, fmt.Errorf("header: %w", unexpected(err))
	}
	le := binary.LittleEndian
	if string(raw[:8]) != magic {
		return nil, errors.New("not a ssnmf checkpoint (bad magic)")
	}
	h := &header{version: int(le.Uint32(raw[8:])), n: le.Uint64(raw[16:]), k: le.Uint64(raw[24:]),
		clen: le.Uint64(raw[88:]), tlen: le.Uint64(raw[96:]), flags: le.Uint32(raw[80:])}
	switch h.version {
	case 1:
		h.size, h.flags = headerSize1, h.flags&flagFresh // version 1 readers ignored the other bits
	case 2:
		h.size = headerSize
		if _, err := io.ReadFull(r, raw[headerSize1:]); err != nil {
			return nil, fmt.Errorf("header: %w", unexpected(err))
		}
		h.nz = uint64(le.Uint32(raw[12:]))
		switch {
		case h.flags&^(flagFresh|flagPending) != 0:
			return nil, fmt.Errorf("unknown flags %#x", h.flags)
		case h.flags&flagPending != 0 && (h.nz < 1 || h.nz > maxNZ):
			return nil, fmt.Errorf("pending changes with %d slots a row, want 1 to %d", h.nz, maxNZ)
		case h.flags&flagPending == 0 && h.nz != 0:
			return nil, fmt.Errorf("%d pending slots a row but no pending changes", h.nz)
		}
	default:
		return nil, fmt.Errorf("format version %d, want 1 or %d", h.version, version)
	}
	h.raw = raw[:h.size]
	if h.n < 1 || h.k < 1 || h.n > math.MaxInt32 || h.k > math.MaxInt32 || h.clen > maxMeta || h.tlen > maxMeta {
		return nil, fmt.Errorf("bad sizes: n %d, k %d, settings %d bytes, trace %d bytes", h.n, h.k, h.clen, h.tlen)
	}
	return h, nil
}

// fileSize returns the size of a checkpoint with header h, and false if it
// does not fit in an int64.
func (h *header) fileSize() (uint64, bool) {
	var total uint64
	ok := true
	add := func(v uint64) {
		var carry uint64
		total, carry = bits.Add64(total, v, 0)
		ok = ok && carry == 0
	}
	mul := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		ok = ok && hi == 0
		return lo
	}
	add(uint64(h.size))
	add(h.clen)
	add(h.tlen)
	add(mul(8, mul(h.k, h.k)))
	add(mul(16, mul(h.n, h.k)))
	if h.flags&flagPending != 0 {
		add(h.n)
		add(mul(12, mul(h.n, h.nz)))
	}
	add(4)
	return total, ok && total <= math.MaxInt64
}

func load(r io.Reader, size int64, storage func(n, k int) (w, pw []float64, err error)) (*Checkpoint, error) {
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	h, err := readHeader(tr)
	if err != nil {
		return nil, err
	}
	if want, ok := h.fileSize(); !ok || uint64(size) != want {
		return nil, fmt.Errorf("%d bytes, want %d for n = %d, k = %d (truncated or extended)", size, want, h.n, h.k)
	}
	le := binary.LittleEndian
	n, k := int(h.n), int(h.k)
	c := &Checkpoint{Version: h.version, N: n, K: k}
	c.State = fw.State{
		Iter:      int(le.Uint64(h.raw[32:])),
		Passes:    int(le.Uint64(h.raw[40:])),
		FrobSq:    math.Float64frombits(le.Uint64(h.raw[48:])),
		MaxRowSum: math.Float64frombits(le.Uint64(h.raw[56:])),
		Prev:      math.Float64frombits(le.Uint64(h.raw[64:])),
		Elapsed:   time.Duration(le.Uint64(h.raw[72:])),
		Fresh:     h.flags&flagFresh != 0,
		Gram:      make([]float64, k*k),
	}
	if h.version >= 2 {
		c.State.Objective = math.Float64frombits(le.Uint64(h.raw[104:]))
		c.State.Gap = math.Float64frombits(le.Uint64(h.raw[112:]))
		c.State.SweepGap = math.Float64frombits(le.Uint64(h.raw[120:]))
	}
	c.Settings = make([]byte, h.clen)
	c.Trace = make([]byte, h.tlen)
	w, pw, err := storage(n, k)
	if err != nil {
		return nil, err
	}
	if len(w) != n*k || len(pw) != n*k {
		return nil, fmt.Errorf("storage for W and P·W has %d and %d values, want %d", len(w), len(pw), n*k)
	}
	parts := [][]byte{c.Settings, c.Trace, store.AsBytes(c.State.Gram), store.AsBytes(w), store.AsBytes(pw)}
	var p *fw.Pending
	if h.flags&flagPending != 0 {
		nz := int(h.nz)
		p = &fw.Pending{NZ: nz, Count: make([]uint8, n), Col: make([]int32, n*nz), Val: make([]float64, n*nz)}
		parts = append(parts, p.Count, store.AsBytes(p.Col), store.AsBytes(p.Val))
	}
	for _, b := range parts {
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, unexpected(err)
		}
	}
	if err := checkSum(r, crc); err != nil {
		return nil, err
	}
	if p != nil {
		if err := p.Check(n, k, p.NZ); err != nil {
			return nil, err
		}
		c.State.Pending = p
	}
	return c, nil
}

func checkSum(r io.Reader, crc hash.Hash32) error {
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return unexpected(err)
	}
	if got := binary.LittleEndian.Uint32(sum[:]); got != crc.Sum32() {
		return fmt.Errorf("checksum %08x, computed %08x: the file is damaged", got, crc.Sum32())
	}
	return nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Dump writes the header of the checkpoint name, its settings and the size
// of its trace to w, after checking the whole file; for a row-CD state also
// the tracked objective, the gaps and a summary of the pending changes.
func Dump(w io.Writer, name string) error {
	c, err := Load(name, func(n, k int) ([]float64, []float64, error) {
		return make([]float64, n*k), make([]float64, n*k), nil
	})
	if err != nil {
		return err
	}
	s := c.State
	fmt.Fprintf(w, "checkpoint %s (format version %d)\n  n %d, k %d\n  iteration %d, passes %d, elapsed %v\n  ||P||² %v, max row sum %v, previous objective %v, P·W fresh %v\n",
		name, c.Version, c.N, c.K, s.Iter, s.Passes, s.Elapsed, s.FrobSq, s.MaxRowSum, s.Prev, s.Fresh)
	if p := s.Pending; p != nil {
		rows, changes := 0, 0
		for _, cnt := range p.Count {
			if cnt > 0 {
				rows++
				changes += int(cnt)
			}
		}
		fmt.Fprintf(w, "  row-CD: objective %v, gap of the last pass %v, gap of the last sweep %v\n  pending changes: %d slots a row, %d rows, %d changes\n",
			s.Objective, s.Gap, s.SweepGap, p.NZ, rows, changes)
	}
	fmt.Fprintf(w, "  settings %s\n  trace %d bytes\n", c.Settings, len(c.Trace))
	return nil
}

// ReadSettings returns the settings saved in the checkpoint name, after
// checking its header; Load checks the rest.
func ReadSettings(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := readHeader(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", name, err)
	}
	b := make([]byte, h.clen)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("checkpoint %s: settings: %w", name, unexpected(err))
	}
	return b, nil
}
