package cluster

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/ssnmf/ssnmf/store"
	"github.com/ssnmf/ssnmf/store/vfs"
)

// Kind says what a block file holds.
type Kind uint32

// The kinds of block files. An input's kind is the pass it asks for.
const (
	// Features are the n×p rows the kernel uses (cols = p).
	Features Kind = 1 + iota
	// MulInput is W, n×k (cols = k), for a P·W pass.
	MulInput
	// MulSumsInput is W for a P·W pass that also sums the rows of P.
	MulSumsInput
	// OneHotInput is the assignment s, n int32 values (cols = k), for a
	// P·S pass.
	OneHotInput
	// KNNInput asks for a kNN search; it has no payload.
	KNNInput
	// ProductPart is a task's rows of a product: rows×k float64, then,
	// after a MulSumsInput, the rows' sums and one squared norm for each
	// row block of the part.
	ProductPart
	// KNNPart is a task's neighbour lists (graph.KNNPart; cols = M): the
	// rows (int32), their counts (int32), the squared distances (float64,
	// M a row) and the neighbours (int32, M a row).
	KNNPart
	// LeafRoundInput asks for a round of leaf pairs of the approximate kNN
	// search (graph.LeafRound; rows = n, cols = the tiles): the tiles, two
	// int32 leaves I <= J each, then every row's bound, n float64. Its
	// parts are KNNParts that hold only the rows with candidates.
	LeafRoundInput
)

var kindNames = map[Kind]string{Features: "features", MulInput: "P·W input", MulSumsInput: "P·W input with sums",
	OneHotInput: "P·S input", KNNInput: "kNN input", ProductPart: "product part", KNNPart: "kNN part",
	LeafRoundInput: "leaf round input"}

// String returns the kind's name.
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", uint32(k))
}

// part returns the kind of the parts of a pass whose input is of kind k.
func (k Kind) part() Kind {
	if k == KNNInput || k == LeafRoundInput {
		return KNNPart
	}
	return ProductPart
}

// Magic begins every block file.
const Magic = "SSNMFBLK"

const (
	version    = 1
	headerSize = 72
	crcOff     = 68
)

// Header is the fixed first part of a block file (see the package doc).
type Header struct {
	Kind        Kind
	Pass        uint64 // the pass; 0 for the features
	Task, Tasks uint32 // the task that wrote a part, and the tasks of its step
	Rows, Cols  uint64
	// Source identifies what the file was made from: for the features
	// and an input, the run (Spec.ID); for a part, its input (Header.ID of
	// the input).
	Source uint64
	Length uint64 // the payload's bytes
	CRC    uint32 // the payload's CRC-32C
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (h *Header) encode() []byte {
	b := make([]byte, headerSize)
	le := binary.LittleEndian
	copy(b, Magic)
	le.PutUint32(b[8:], version)
	le.PutUint32(b[12:], uint32(h.Kind))
	le.PutUint64(b[16:], h.Pass)
	le.PutUint32(b[24:], h.Task)
	le.PutUint32(b[28:], h.Tasks)
	le.PutUint64(b[32:], h.Rows)
	le.PutUint64(b[40:], h.Cols)
	le.PutUint64(b[48:], h.Source)
	le.PutUint64(b[56:], h.Length)
	le.PutUint32(b[64:], h.CRC)
	store.SealHeader(b, crcOff)
	return b
}

// ID identifies the file by its header, which holds the payload's CRC: a
// part names its input by it.
func (h *Header) ID() uint64 {
	b := h.encode()
	return uint64(crc32.Checksum(b, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(b))
}

func decodeHeader(b []byte) (Header, error) {
	if err := store.CheckHeader(b, Magic, crcOff); err != nil {
		return Header{}, err
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != version {
		return Header{}, fmt.Errorf("block file version %d, want %d", v, version)
	}
	return Header{Kind: Kind(le.Uint32(b[12:])), Pass: le.Uint64(b[16:]), Task: le.Uint32(b[24:]), Tasks: le.Uint32(b[28:]),
		Rows: le.Uint64(b[32:]), Cols: le.Uint64(b[40:]), Source: le.Uint64(b[48:]), Length: le.Uint64(b[56:]), CRC: le.Uint32(b[64:])}, nil
}

// writeBlock writes a block file at path, atomically through fsys, with
// header h (Length and CRC are set here) and the payload sections in
// order, and returns the header written.
func writeBlock(fsys vfs.FS, path string, h Header, sections ...[]byte) (Header, error) {
	h.Length, h.CRC = 0, 0
	crc := crc32.New(castagnoli)
	for _, s := range sections {
		h.Length += uint64(len(s))
		crc.Write(s)
	}
	h.CRC = crc.Sum32()
	err := store.WriteFileAtomicFS(fsys, path, func(w io.Writer) error {
		if _, err := w.Write(h.encode()); err != nil {
			return err
		}
		for _, s := range sections {
			if _, err := w.Write(s); err != nil {
				return err
			}
		}
		return nil
	})
	return h, err
}

// readHeader reads and checks the header of the block file at path.
func readHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	b := make([]byte, headerSize)
	if _, err := io.ReadFull(f, b); err != nil {
		return Header{}, fmt.Errorf("%s: header: %w", path, err)
	}
	h, err := decodeHeader(b)
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// readBlock reads the block file at path, checks its header, that it is of
// kind want, and its payload's length and checksum, and returns the header
// and the payload.
func readBlock(path string, want Kind) (Header, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	b := make([]byte, headerSize)
	if _, err := io.ReadFull(r, b); err != nil {
		return Header{}, nil, fmt.Errorf("%s: header: %w", path, err)
	}
	h, err := decodeHeader(b)
	if err != nil {
		return Header{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	if h.Kind != want {
		return Header{}, nil, fmt.Errorf("%s holds a %v, want a %v", path, h.Kind, want)
	}
	fi, err := f.Stat()
	if err != nil {
		return Header{}, nil, err
	}
	if uint64(fi.Size()) != headerSize+h.Length {
		return Header{}, nil, fmt.Errorf("%s is %d bytes, its header says %d", path, fi.Size(), headerSize+h.Length)
	}
	payload := make([]byte, h.Length)
	if _, err := io.ReadFull(r, payload); err != nil {
		return Header{}, nil, fmt.Errorf("%s: payload: %w", path, err)
	}
	if got := crc32.Checksum(payload, castagnoli); got != h.CRC {
		return Header{}, nil, fmt.Errorf("%s: payload checksum 0x%08x, its header says 0x%08x", path, got, h.CRC)
	}
	return h, payload, nil
}

// cut splits a payload into sections of the given byte lengths, which must
// add up to its length.
func cut(payload []byte, lengths ...int) ([][]byte, error) {
	out := make([][]byte, len(lengths))
	for i, l := range lengths {
		if l < 0 || l > len(payload) {
			return nil, fmt.Errorf("payload of %d bytes too short for section %d of %d bytes", len(payload), i, l)
		}
		out[i], payload = payload[:l], payload[l:]
	}
	if len(payload) != 0 {
		return nil, fmt.Errorf("payload has %d bytes past its sections", len(payload))
	}
	return out, nil
}

// float64s and int32s copy little-endian bytes into values.
func float64s(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	copy(store.AsBytes(v), b)
	return v
}

func int32s(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	copy(store.AsBytes(v), b)
	return v
}

// Dump prints the header of the block file at path and the first values
// of its payload, for debugging.
func Dump(w io.Writer, path string) error {
	h, err := readHeader(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s, version %d\n  pass %d, task %d of %d, %d×%d\n  source %016x\n  payload %d bytes, CRC-32C %08x\n  id %016x\n",
		path, h.Kind, version, h.Pass, h.Task, h.Tasks, h.Rows, h.Cols, h.Source, h.Length, h.CRC, h.ID())
	_, payload, err := readBlock(path, h.Kind)
	if err != nil {
		return err
	}
	switch h.Kind {
	case Features, MulInput, MulSumsInput, ProductPart:
		v := float64s(payload[:min(len(payload), 8*8)])
		fmt.Fprintf(w, "  first values %v\n", v)
	case OneHotInput, KNNPart, LeafRoundInput:
		v := int32s(payload[:min(len(payload), 8*4)])
		fmt.Fprintf(w, "  first values %v\n", v)
	}
	return nil
}
