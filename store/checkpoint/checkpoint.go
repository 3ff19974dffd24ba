// Package checkpoint saves and loads the state of a run of a method of
// package fw (Frank-Wolfe, row-wise coordinate descent), so that a long job
// killed at any moment can go on from its last checkpoint and end with the
// same bits as a run never interrupted.
//
// A checkpoint is one file, replaced atomically (written under a temporary
// name, synced, renamed), so that a crash leaves either the previous
// checkpoint or the new one, never a mixture. It holds the fw.State: the
// driver's counts, and the method's own state, its payload, in the binary
// form the method gives it (fw.Payload); the matrices W and P·W that the
// solver keeps in its work directory; the settings of the run as opaque
// bytes (the caller's, JSON by convention); and the trace written so far.
// Integers and floats are little-endian; floats are stored as their IEEE 754
// bits, so the state round-trips exactly.
//
// [Save] writes format version 3:
//
//	offset    size      field
//	     0       8      magic "SSNMFCKP"
//	     8       4      format version, uint32 = 3
//	    12       4      reserved, zero
//	    16       8      n (rows of W), uint64 >= 1
//	    24       8      k (columns of W), uint64 >= 1
//	    32       8      iterations taken, uint64
//	    40       8      passes over P taken, uint64
//	    48       8      ||P||_F^2, float64
//	    56       8      largest row sum of P, float64
//	    64       8      objective before the last iteration (NaN before the first), float64
//	    72       8      elapsed time, int64 nanoseconds
//	    80       8      length M of the method's name, uint64 in [1, 255]
//	    88       8      length S of the payload, uint64
//	    96       8      length C of the settings, uint64
//	   104       8      length T of the trace, uint64
//	   112       M      the method's name, fw.Payload.Method: "fw" or "rowcd"
//	 112+M       S      the payload, the method's binary form (fw.Payload.WriteTo, fw.ReadPayload)
//	     .       C      settings
//	     .       T      trace
//	     .    8·n·k     W, float64, row-major
//	     .    8·n·k     P·W, float64, row-major
//	   end-4     4      CRC-32C (Castagnoli) of every byte before it
//
// Versions 1 and 2, written by earlier releases, had no payload: the state of
// the two methods they knew was part of the layout. [Load] still reads them,
// into an fw.FrankWolfeState, or an fw.RowCDState for a version-2 file with
// pending changes. Version 2:
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
// Version 1, for Frank-Wolfe runs only, is version 2 up to offset 104 (bytes
// 12 to 16 reserved, flags bit 0 only; the other bits were ignored), with no
// row-CD fields: the settings follow the header at offset 104, then the
// trace, WᵀW, W and P·W and the checksum.
//
// [Load] checks the magic, version, sizes, checksum and payload (the pending
// changes of a row-CD state) before it returns anything, and [Dump] prints a
// checkpoint's header for debugging.
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
	"github.com/ssnmf/ssnmf/store/vfs"
)

const (
	magic       = "SSNMFCKP"
	version     = 3   // the version Save writes
	headerSize1 = 104 // the header of version 1
	headerSize2 = 128 // the header of version 2
	headerSize3 = 112 // the header of version 3
	maxHeader   = headerSize2
	maxMeta     = 1 << 30 // settings and trace are at most 1 GiB each
	maxMethod   = 255     // bytes of a method's name
	maxPayload  = 1 << 62 // bytes of a payload, so that offsets fit in an int64
	maxNZ       = math.MaxUint8

	flagFresh   = 1 << 0 // versions 1 and 2
	flagPending = 1 << 1 // version 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checkpoint is a saved run: its state, settings and trace. W and P·W are
// read into storage the caller gives to Load.
type Checkpoint struct {
	Version  int    // format version of the file
	N, K     int    // the shape of W
	Method   string // the method that saved the state, State.Payload.Method()
	State    fw.State
	Settings []byte
	Trace    []byte
}

// Save writes st, with its W and PW and its payload, the run's settings and
// trace so far to the file name, replacing it atomically, in format
// version 3. The payload is an *fw.FrankWolfeState or an *fw.RowCDState,
// whose WᵀW gives k. It is SaveFS on the operating system's file system.
func Save(name string, st *fw.State, settings, trace []byte) error {
	return SaveFS(vfs.OS{}, name, st, settings, trace)
}

// SaveFS is Save on the file system fsys, through which the checkpoint is
// created, written, synced and renamed into place (store.CreateAtomicFS).
// If it fails, the earlier checkpoint is left as it was, unless only the
// sync of the directory after the rename failed: then the new checkpoint
// is complete in its place, and the error says so.
func SaveFS(fsys vfs.FS, name string, st *fw.State, settings, trace []byte) error {
	n, k, err := shape(st)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	return writeFS(fsys, name, st, n, k, settings, trace)
}

// shape returns the rows and columns of the W of st, after checking that
// W, P·W and the payload agree with them. k is st.K; the payloads of the
// package fw's methods, whose WᵀW gives k, are checked against it.
func shape(st *fw.State) (n, k int, err error) {
	var gram []float64
	var pending *fw.Pending
	switch p := st.Payload.(type) {
	case nil:
		return 0, 0, errors.New("the state has no payload")
	case *fw.FrankWolfeState:
		if p == nil {
			return 0, 0, errors.New("the state has a nil payload")
		}
		gram = p.Gram
	case *fw.RowCDState:
		if p == nil {
			return 0, 0, errors.New("the state has a nil payload")
		}
		gram, pending = p.Gram, p.Pending
	default:
		if st.K < 1 {
			return 0, 0, fmt.Errorf("payload %T of method %q: its k is unknown here (the state's K is %d)", p, p.Method(), st.K)
		}
		gram = make([]float64, st.K*st.K) // no WᵀW to check k against
	}
	k = int(math.Sqrt(float64(len(gram))))
	if k < 1 || k*k != len(gram) || (st.K != 0 && st.K != k) || len(st.W) != len(st.PW) || len(st.W)%k != 0 || len(st.W) == 0 {
		return 0, 0, fmt.Errorf("inconsistent state: Gram %d, W %d, P·W %d values, K %d", len(gram), len(st.W), len(st.PW), st.K)
	}
	n = len(st.W) / k
	if pending != nil {
		if pending.NZ < 1 || pending.NZ > maxNZ {
			return 0, 0, fmt.Errorf("pending changes with %d slots a row, want 1 to %d", pending.NZ, maxNZ)
		}
		if err := pending.Check(n, k, pending.NZ); err != nil {
			return 0, 0, err
		}
	}
	return n, k, nil
}

// writeFS writes st for an n×k W through fsys; its payload may be of any
// method.
func writeFS(fsys vfs.FS, name string, st *fw.State, n, k int, settings, trace []byte) error {
	p := st.Payload
	method, size := p.Method(), p.Size()
	switch {
	case len(method) < 1 || len(method) > maxMethod:
		return fmt.Errorf("checkpoint %s: method name %q, want 1 to %d bytes", name, method, maxMethod)
	case size < 0 || size > maxPayload:
		return fmt.Errorf("checkpoint %s: %s payload of %d bytes", name, method, size)
	case n < 1 || k < 1 || len(st.W) != n*k || len(st.PW) != n*k:
		return fmt.Errorf("checkpoint %s: W and P·W of %d and %d values, want %d×%d", name, len(st.W), len(st.PW), n, k)
	}
	f, err := store.CreateAtomicFS(fsys, name)
	if err != nil {
		return err
	}
	defer f.Abort()
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	var h [headerSize3]byte
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
	le.PutUint64(h[80:], uint64(len(method)))
	le.PutUint64(h[88:], uint64(size))
	le.PutUint64(h[96:], uint64(len(settings)))
	le.PutUint64(h[104:], uint64(len(trace)))
	bw.Write(h[:])
	bw.WriteString(method)
	// The payload is streamed; the count of the bytes that reach the file,
	// not only the one WriteTo reports, must be its Size.
	cw := &countingWriter{w: bw}
	wrote, err := p.WriteTo(cw)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %s payload: %w", name, method, err)
	}
	if wrote != size || cw.n != size {
		return fmt.Errorf("checkpoint %s: %s payload of %d bytes (%d reported), its Size is %d", name, method, cw.n, wrote, size)
	}
	bw.Write(settings)
	bw.Write(trace)
	bw.Write(store.AsBytes(st.W))
	bw.Write(store.AsBytes(st.PW))
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	var sum [4]byte
	le.PutUint32(sum[:], crc.Sum32())
	if _, err := f.Write(sum[:]); err != nil {
		return fmt.Errorf("checkpoint %s: %w", name, err)
	}
	return f.Commit()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	m, err := c.w.Write(p)
	c.n += int64(m)
	return m, err
}

// Load reads the checkpoint name, of format version 1, 2 or 3. Once the
// header and the payload are read, it calls storage with n and k for the n×k
// slices to read W and P·W into (for example memory-mapped matrices), and
// fills them. It returns an error, and the contents of w and pw are
// undefined, if the file is damaged.
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
	n, k       uint64
	clen, tlen uint64 // settings and trace
	nz         uint64 // version 2: pending slots a row
	flags      uint32 // versions 1 and 2
	mlen, plen uint64 // version 3: method name and payload
	raw        []byte
}

// readHeader reads and checks the header of any version from r, and returns
// it with the bytes read.
func readHeader(r io.Reader) (*header, error) {
	raw := make([]byte, maxHeader)
	if _, err := io.ReadFull(r, raw[:headerSize1]); err != nil {
		return nil, fmt.Errorf("header: %w", unexpected(err))
	}
	le := binary.LittleEndian
	if string(raw[:8]) != magic {
		return nil, errors.New("not a ssnmf checkpoint (bad magic)")
	}
	h := &header{version: int(le.Uint32(raw[8:])), n: le.Uint64(raw[16:]), k: le.Uint64(raw[24:])}
	switch h.version {
	case 1:
		h.size = headerSize1
	case 2:
		h.size = headerSize2
	case 3:
		h.size = headerSize3
	default:
		return nil, fmt.Errorf("format version %d, want 1 to %d", h.version, version)
	}
	if _, err := io.ReadFull(r, raw[headerSize1:h.size]); err != nil {
		return nil, fmt.Errorf("header: %w", unexpected(err))
	}
	h.raw = raw[:h.size]
	switch h.version {
	case 1:
		h.flags = le.Uint32(raw[80:]) & flagFresh // version 1 readers ignored the other bits
		h.clen, h.tlen = le.Uint64(raw[88:]), le.Uint64(raw[96:])
	case 2:
		h.flags, h.nz = le.Uint32(raw[80:]), uint64(le.Uint32(raw[12:]))
		h.clen, h.tlen = le.Uint64(raw[88:]), le.Uint64(raw[96:])
		switch {
		case h.flags&^(flagFresh|flagPending) != 0:
			return nil, fmt.Errorf("unknown flags %#x", h.flags)
		case h.flags&flagPending != 0 && (h.nz < 1 || h.nz > maxNZ):
			return nil, fmt.Errorf("pending changes with %d slots a row, want 1 to %d", h.nz, maxNZ)
		case h.flags&flagPending == 0 && h.nz != 0:
			return nil, fmt.Errorf("%d pending slots a row but no pending changes", h.nz)
		}
	case 3:
		h.mlen, h.plen = le.Uint64(raw[80:]), le.Uint64(raw[88:])
		h.clen, h.tlen = le.Uint64(raw[96:]), le.Uint64(raw[104:])
		switch {
		case le.Uint32(raw[12:]) != 0:
			return nil, fmt.Errorf("reserved header bytes %#x, want 0", le.Uint32(raw[12:]))
		case h.mlen < 1 || h.mlen > maxMethod:
			return nil, fmt.Errorf("method name of %d bytes, want 1 to %d", h.mlen, maxMethod)
		case h.plen > maxPayload:
			return nil, fmt.Errorf("bad sizes: payload %d bytes", h.plen)
		}
	}
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
	add(mul(16, mul(h.n, h.k)))
	switch h.version {
	case 1, 2:
		add(mul(8, mul(h.k, h.k)))
		if h.flags&flagPending != 0 {
			add(h.n)
			add(mul(12, mul(h.n, h.nz)))
		}
	case 3:
		add(h.mlen)
		add(h.plen)
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
	c := &Checkpoint{Version: h.version, N: int(h.n), K: int(h.k)}
	c.State = fw.State{
		Iter:      int(le.Uint64(h.raw[32:])),
		Passes:    int(le.Uint64(h.raw[40:])),
		FrobSq:    math.Float64frombits(le.Uint64(h.raw[48:])),
		MaxRowSum: math.Float64frombits(le.Uint64(h.raw[56:])),
		Prev:      math.Float64frombits(le.Uint64(h.raw[64:])),
		Elapsed:   time.Duration(le.Uint64(h.raw[72:])),
	}
	if h.version < 3 {
		err = c.readV2(h, r, tr, crc, storage)
	} else {
		err = c.readV3(h, r, tr, crc, storage)
	}
	if err != nil {
		return nil, err
	}
	c.Method = c.State.Payload.Method()
	return c, nil
}

// readV2 reads the rest of a file of version 1 or 2 after its header, h,
// from tr, r through crc, and makes the payload of its state.
func (c *Checkpoint) readV2(h *header, r, tr io.Reader, crc hash.Hash32, storage func(n, k int) ([]float64, []float64, error)) error {
	le := binary.LittleEndian
	n, k := c.N, c.K
	c.Settings = make([]byte, h.clen)
	c.Trace = make([]byte, h.tlen)
	gram := make([]float64, k*k)
	w, pw, err := storage(n, k)
	if err != nil {
		return err
	}
	if len(w) != n*k || len(pw) != n*k {
		return fmt.Errorf("storage for W and P·W has %d and %d values, want %d", len(w), len(pw), n*k)
	}
	parts := [][]byte{c.Settings, c.Trace, store.AsBytes(gram), store.AsBytes(w), store.AsBytes(pw)}
	var p *fw.Pending
	if h.flags&flagPending != 0 {
		nz := int(h.nz)
		p = &fw.Pending{NZ: nz, Count: make([]uint8, n), Col: make([]int32, n*nz), Val: make([]float64, n*nz)}
		parts = append(parts, p.Count, store.AsBytes(p.Col), store.AsBytes(p.Val))
	}
	for _, b := range parts {
		if _, err := io.ReadFull(tr, b); err != nil {
			return unexpected(err)
		}
	}
	if err := checkSum(r, crc); err != nil {
		return err
	}
	fresh := h.flags&flagFresh != 0
	if p == nil {
		c.State.Payload = &fw.FrankWolfeState{Fresh: fresh, Gram: gram}
		return nil
	}
	if err := p.Check(n, k, p.NZ); err != nil {
		return err
	}
	c.State.Payload = &fw.RowCDState{Fresh: fresh, Gram: gram,
		Objective: math.Float64frombits(le.Uint64(h.raw[104:])),
		Gap:       math.Float64frombits(le.Uint64(h.raw[112:])),
		SweepGap:  math.Float64frombits(le.Uint64(h.raw[120:])),
		Pending:   p}
	return nil
}

// readV3 reads the rest of a file of version 3 after its header, h, from
// tr, r through crc.
func (c *Checkpoint) readV3(h *header, r, tr io.Reader, crc hash.Hash32, storage func(n, k int) ([]float64, []float64, error)) error {
	n, k := c.N, c.K
	name := make([]byte, h.mlen)
	if _, err := io.ReadFull(tr, name); err != nil {
		return unexpected(err)
	}
	method := string(name)
	pr := &io.LimitedReader{R: tr, N: int64(h.plen)}
	payload, perr := fw.ReadPayload(method, pr, int64(h.plen), n, k)
	if perr == nil && pr.N != 0 {
		perr = fmt.Errorf("%s payload: %d of its %d bytes not read", method, pr.N, h.plen)
	}
	if perr == nil && payload.Method() != method {
		perr = fmt.Errorf("%s payload read as one of %s", method, payload.Method())
	}
	if perr != nil {
		// A damaged file is reported as such, not by what the damage did to
		// the payload: read on to the checksum first. The file has the size
		// of its header, so the rest fits in an int64.
		rest := pr.N + int64(h.clen) + int64(h.tlen) + 16*int64(n)*int64(k)
		if _, err := io.CopyN(io.Discard, tr, rest); err != nil {
			return unexpected(err)
		}
		if err := checkSum(r, crc); err != nil {
			return err
		}
		return perr
	}
	c.State.Payload = payload
	c.Settings = make([]byte, h.clen)
	c.Trace = make([]byte, h.tlen)
	for _, b := range [][]byte{c.Settings, c.Trace} {
		if _, err := io.ReadFull(tr, b); err != nil {
			return unexpected(err)
		}
	}
	w, pw, err := storage(n, k)
	if err != nil {
		return err
	}
	if len(w) != n*k || len(pw) != n*k {
		return fmt.Errorf("storage for W and P·W has %d and %d values, want %d", len(w), len(pw), n*k)
	}
	for _, b := range [][]byte{store.AsBytes(w), store.AsBytes(pw)} {
		if _, err := io.ReadFull(tr, b); err != nil {
			return unexpected(err)
		}
	}
	return checkSum(r, crc)
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

// Dump writes the header of the checkpoint name, its method and the size of
// its payload, its settings and the size of its trace to w, after checking
// the whole file; for a row-CD state also the tracked objective, the gaps
// and a summary of the pending changes.
func Dump(w io.Writer, name string) error {
	c, err := Load(name, func(n, k int) ([]float64, []float64, error) {
		return make([]float64, n*k), make([]float64, n*k), nil
	})
	if err != nil {
		return err
	}
	s := c.State
	fmt.Fprintf(w, "checkpoint %s (format version %d)\n  n %d, k %d\n  iteration %d, passes %d, elapsed %v\n  ||P||² %v, max row sum %v, previous objective %v\n",
		name, c.Version, c.N, c.K, s.Iter, s.Passes, s.Elapsed, s.FrobSq, s.MaxRowSum, s.Prev)
	fmt.Fprintf(w, "  method %s, payload %d bytes", c.Method, s.Payload.Size())
	switch p := s.Payload.(type) {
	case *fw.FrankWolfeState:
		fmt.Fprintf(w, ", P·W fresh %v\n", p.Fresh)
	case *fw.RowCDState:
		fmt.Fprintf(w, ", P·W fresh %v\n  row-CD: objective %v, gap of the last pass %v, gap of the last sweep %v\n",
			p.Fresh, p.Objective, p.Gap, p.SweepGap)
		if p.Pending == nil {
			fmt.Fprintln(w, "  pending changes: none kept (the sweep passes every change on)")
		} else {
			rows, changes := 0, 0
			for _, cnt := range p.Pending.Count {
				if cnt > 0 {
					rows++
					changes += int(cnt)
				}
			}
			fmt.Fprintf(w, "  pending changes: %d slots a row, %d rows, %d changes\n", p.Pending.NZ, rows, changes)
		}
		if pt := p.Part; pt != nil {
			fmt.Fprintf(w, "  a sweep stopped part way: %d of %d rows visited, objective change %v, row gaps %v, mass moved %v, %d rows changed cluster\n",
				pt.At, c.N, pt.Dec, pt.Gap, pt.Moved, pt.Changed)
		}
	default:
		fmt.Fprintln(w)
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
	if h.version >= 3 {
		// The settings follow the method's name and the payload
		// (mlen <= 255, plen <= 2^62).
		if _, err := f.Seek(int64(h.mlen+h.plen), io.SeekCurrent); err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", name, err)
		}
	}
	b := make([]byte, h.clen)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("checkpoint %s: settings: %w", name, unexpected(err))
	}
	return b, nil
}
