// Package checkpoint saves and loads the state of a Frank-Wolfe run, so that
// a long job killed at any moment can go on from its last checkpoint and end
// with the same bits as a run never interrupted.
//
// A checkpoint is one file, replaced atomically (written under a temporary
// name, synced, renamed), so that a crash leaves either the previous
// checkpoint or the new one, never a mixture. It holds the fw.State, the
// matrices W and P·W that the solver keeps in its work directory, the
// settings of the run as opaque bytes (the caller's, JSON by convention), and
// the trace written so far. Integers and floats are little-endian; floats are
// stored as their IEEE 754 bits, so the state round-trips exactly.
//
//	offset    size      field
//	     0       8      magic "SSNMFCKP"
//	     8       4      format version, uint32 = 1
//	    12       4      reserved, zero
//	    16       8      n (rows of W), uint64 >= 1
//	    24       8      k (columns of W), uint64 >= 1
//	    32       8      iterations taken, uint64
//	    40       8      tile passes taken, uint64
//	    48       8      ||P||_F^2, float64
//	    56       8      largest row sum of P, float64
//	    64       8      objective before the last step (NaN before the first), float64
//	    72       8      elapsed time, int64 nanoseconds
//	    80       4      flags, uint32: bit 0 = P·W fresh from a pass
//	    84       4      reserved, zero
//	    88       8      length C of the settings, uint64
//	    96       8      length T of the trace, uint64
//	   104       C      settings
//	 104+C       T      trace
//	     .    8·k·k     WᵀW as carried by the solver, float64, row-major
//	     .    8·n·k     W, float64, row-major
//	     .    8·n·k     P·W, float64, row-major
//	   end-4     4      CRC-32C (Castagnoli) of every byte before it
//
// [Load] checks the magic, version, sizes and checksum before it returns
// anything, and [Dump] prints a checkpoint's header for debugging.
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
	"os"
	"time"
	"unsafe"

	"github.com/ssnmf/ssnmf/fw"
	"github.com/ssnmf/ssnmf/store"
)

const (
	magic      = "SSNMFCKP"
	version    = 1
	headerSize = 104
	maxMeta    = 1 << 30 // settings and trace are at most 1 GiB each
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checkpoint is a saved run: its state, settings and trace. W and P·W are
// read into storage the caller gives to Load.
type Checkpoint struct {
	N, K     int
	State    fw.State // W and PW are not set by Load
	Settings []byte
	Trace    []byte
}

// Save writes st (with its W and PW), the run's settings and trace so far
// to the file name, replacing it atomically.
func Save(name string, st *fw.State, settings, trace []byte) error {
	k := int(math.Sqrt(float64(len(st.Gram))))
	if k < 1 || k*k != len(st.Gram) || len(st.W) != len(st.PW) || len(st.W)%k != 0 || len(st.W) == 0 {
		return fmt.Errorf("checkpoint %s: inconsistent state: Gram %d, W %d, P·W %d values", name, len(st.Gram), len(st.W), len(st.PW))
	}
	n := len(st.W) / k
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
	if st.Fresh {
		le.PutUint32(h[80:], 1)
	}
	le.PutUint64(h[88:], uint64(len(settings)))
	le.PutUint64(h[96:], uint64(len(trace)))
	bw.Write(h[:])
	bw.Write(settings)
	bw.Write(trace)
	for _, m := range [][]float64{st.Gram, st.W, st.PW} {
		bw.Write(floatBytes(m))
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

// floatBytes views a float64 slice as its little-endian bytes.
func floatBytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}

// Load reads the checkpoint name. Once the header is read, it calls storage
// with n and k for the n×k slices to read W and P·W into (for example
// memory-mapped matrices), and fills them. It returns an error, and the
// contents of w and pw are undefined, if the file is damaged.
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

func load(r io.Reader, size int64, storage func(n, k int) (w, pw []float64, err error)) (*Checkpoint, error) {
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	var h [headerSize]byte
	if _, err := io.ReadFull(tr, h[:]); err != nil {
		return nil, fmt.Errorf("header: %w", unexpected(err))
	}
	le := binary.LittleEndian
	if string(h[:8]) != magic {
		return nil, errors.New("not a ssnmf checkpoint (bad magic)")
	}
	if v := le.Uint32(h[8:]); v != version {
		return nil, fmt.Errorf("format version %d, want %d", v, version)
	}
	n, k := le.Uint64(h[16:]), le.Uint64(h[24:])
	clen, tlen := le.Uint64(h[88:]), le.Uint64(h[96:])
	if n < 1 || k < 1 || n > math.MaxInt32 || k > math.MaxInt32 || clen > maxMeta || tlen > maxMeta {
		return nil, fmt.Errorf("bad sizes: n %d, k %d, settings %d bytes, trace %d bytes", n, k, clen, tlen)
	}
	if want := headerSize + clen + tlen + 8*(k*k+2*n*k) + 4; uint64(size) != want {
		return nil, fmt.Errorf("%d bytes, want %d for n = %d, k = %d (truncated or extended)", size, want, n, k)
	}
	c := &Checkpoint{N: int(n), K: int(k)}
	c.State = fw.State{
		Iter:      int(le.Uint64(h[32:])),
		Passes:    int(le.Uint64(h[40:])),
		FrobSq:    math.Float64frombits(le.Uint64(h[48:])),
		MaxRowSum: math.Float64frombits(le.Uint64(h[56:])),
		Prev:      math.Float64frombits(le.Uint64(h[64:])),
		Elapsed:   time.Duration(le.Uint64(h[72:])),
		Fresh:     le.Uint32(h[80:])&1 != 0,
		Gram:      make([]float64, k*k),
	}
	c.Settings = make([]byte, clen)
	c.Trace = make([]byte, tlen)
	w, pw, err := storage(c.N, c.K)
	if err != nil {
		return nil, err
	}
	if len(w) != c.N*c.K || len(pw) != c.N*c.K {
		return nil, fmt.Errorf("storage for W and P·W has %d and %d values, want %d", len(w), len(pw), c.N*c.K)
	}
	for _, b := range [][]byte{c.Settings, c.Trace, floatBytes(c.State.Gram), floatBytes(w), floatBytes(pw)} {
		if _, err := io.ReadFull(tr, b); err != nil {
			return nil, unexpected(err)
		}
	}
	return c, checkSum(r, crc)
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
// of its trace to w, after checking the whole file.
func Dump(w io.Writer, name string) error {
	c, err := Load(name, func(n, k int) ([]float64, []float64, error) {
		return make([]float64, n*k), make([]float64, n*k), nil
	})
	if err != nil {
		return err
	}
	s := c.State
	fmt.Fprintf(w, "checkpoint %s\n  n %d, k %d\n  iteration %d, passes %d, elapsed %v\n  ||P||² %v, max row sum %v, previous objective %v, P·W fresh %v\n  settings %s\n  trace %d bytes\n",
		name, c.N, c.K, s.Iter, s.Passes, s.Elapsed, s.FrobSq, s.MaxRowSum, s.Prev, s.Fresh, c.Settings, len(c.Trace))
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
	var h [headerSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return nil, fmt.Errorf("checkpoint %s: header: %w", name, unexpected(err))
	}
	le := binary.LittleEndian
	switch {
	case string(h[:8]) != magic:
		return nil, fmt.Errorf("checkpoint %s: not a ssnmf checkpoint (bad magic)", name)
	case le.Uint32(h[8:]) != version:
		return nil, fmt.Errorf("checkpoint %s: format version %d, want %d", name, le.Uint32(h[8:]), version)
	case le.Uint64(h[88:]) > maxMeta:
		return nil, fmt.Errorf("checkpoint %s: settings of %d bytes", name, le.Uint64(h[88:]))
	}
	b := make([]byte, le.Uint64(h[88:]))
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("checkpoint %s: settings: %w", name, unexpected(err))
	}
	return b, nil
}
