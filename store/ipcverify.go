package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arrow's IPC decoder (arrow-go v18.8.0) trusts the lengths of the
// flatbuffer vectors in a message's metadata: a schema whose field count
// reads as four billion makes it allocate hundreds of gigabytes, which
// kills the process instead of failing. The functions here check, before
// the decoder sees a flatbuffer, that every table, vector and string it
// will read lies inside the buffer, so that a corrupt file is an error.
// The layouts are those of Arrow's Schema.fbs, Message.fbs and File.fbs.

// fbMaxDepth bounds the nesting of fields (Arrow's own loader allows 64).
const fbMaxDepth = 64

// fbuf is a flatbuffer under verification.
type fbuf []byte

// fbTable is a table at pos whose vtable is at vt.
type fbTable struct {
	b      fbuf
	pos    int
	vt     int
	vtSize int
}

var errFlatbuffer = errors.New("corrupt flatbuffer metadata")

// u32 reads a uint32 at p, checking bounds.
func (b fbuf) u32(p int) (int, error) {
	if p < 0 || p+4 > len(b) {
		return 0, errFlatbuffer
	}
	return int(binary.LittleEndian.Uint32(b[p:])), nil
}

// table returns the table at pos.
func (b fbuf) table(pos int) (fbTable, error) {
	if pos < 0 || pos+4 > len(b) {
		return fbTable{}, errFlatbuffer
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	if vt < 0 || vt+4 > len(b) {
		return fbTable{}, errFlatbuffer
	}
	vtSize := int(binary.LittleEndian.Uint16(b[vt:]))
	tblSize := int(binary.LittleEndian.Uint16(b[vt+2:]))
	if vtSize < 4 || vtSize%2 != 0 || vt+vtSize > len(b) || pos+tblSize > len(b) {
		return fbTable{}, errFlatbuffer
	}
	return fbTable{b: b, pos: pos, vt: vt, vtSize: vtSize}, nil
}

// root returns the root table of b.
func (b fbuf) root() (fbTable, error) {
	p, err := b.u32(0)
	if err != nil {
		return fbTable{}, err
	}
	return b.table(p)
}

// field returns the position of field slot and whether it is present; a
// present field of size bytes lies inside the buffer.
func (t fbTable) field(slot, size int) (int, bool, error) {
	o := 4 + 2*slot
	if o+2 > t.vtSize {
		return 0, false, nil
	}
	off := int(binary.LittleEndian.Uint16(t.b[t.vt+o:]))
	if off == 0 {
		return 0, false, nil
	}
	p := t.pos + off
	if p+size > len(t.b) {
		return 0, false, errFlatbuffer
	}
	return p, true, nil
}

// uint8 returns the value of a ubyte field, 0 if absent.
func (t fbTable) uint8(slot int) (int, error) {
	p, ok, err := t.field(slot, 1)
	if !ok {
		return 0, err
	}
	return int(t.b[p]), nil
}

// int64 returns the value of a long field, 0 if absent.
func (t fbTable) int64(slot int) (int64, error) {
	p, ok, err := t.field(slot, 8)
	if !ok {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(t.b[p:])), nil
}

// ref follows the offset in field slot, returning its target.
func (t fbTable) ref(slot int) (int, bool, error) {
	p, ok, err := t.field(slot, 4)
	if !ok {
		return 0, false, err
	}
	u, _ := t.b.u32(p)
	return p + u, true, nil
}

// sub returns the table in field slot.
func (t fbTable) sub(slot int) (fbTable, bool, error) {
	p, ok, err := t.ref(slot)
	if !ok {
		return fbTable{}, false, err
	}
	s, err := t.b.table(p)
	return s, err == nil, err
}

// vector returns the start and length of the vector (or string) in field
// slot, whose elements are elem bytes, after checking that it fits.
func (t fbTable) vector(slot, elem int) (start, n int, err error) {
	p, ok, err := t.ref(slot)
	if !ok {
		return 0, 0, err
	}
	n, err = t.b.u32(p)
	if err != nil {
		return 0, 0, err
	}
	if n > (len(t.b)-p-4)/elem {
		return 0, 0, errFlatbuffer
	}
	return p + 4, n, nil
}

// tables calls check on each table of the vector of tables in field slot.
func (t fbTable) tables(slot int, check func(fbTable) error) error {
	start, n, err := t.vector(slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		p := start + 4*i
		u, _ := t.b.u32(p)
		s, err := t.b.table(p + u)
		if err != nil {
			return err
		}
		if err := check(s); err != nil {
			return err
		}
	}
	return nil
}

// verifyKeyValues checks a custom_metadata vector of KeyValue tables.
func verifyKeyValues(t fbTable, slot int) error {
	return t.tables(slot, func(kv fbTable) error {
		if _, _, err := kv.vector(0, 1); err != nil {
			return err
		}
		_, _, err := kv.vector(1, 1)
		return err
	})
}

// Type union tags of Schema.fbs that hold vectors.
const fbTypeUnion = 14

// verifyField checks a Field table and its children.
func verifyField(f fbTable, depth int) error {
	if depth > fbMaxDepth {
		return fmt.Errorf("fields nested more than %d deep", fbMaxDepth)
	}
	if _, _, err := f.vector(0, 1); err != nil { // name
		return err
	}
	typ, err := f.uint8(2)
	if err != nil {
		return err
	}
	tt, ok, err := f.sub(3)
	if err != nil {
		return err
	}
	if ok && typ == fbTypeUnion {
		if _, _, err := tt.vector(1, 4); err != nil { // typeIds
			return err
		}
	}
	if d, ok, err := f.sub(4); err != nil { // dictionary
		return err
	} else if ok {
		if _, _, err := d.sub(1); err != nil { // indexType
			return err
		}
	}
	if err := f.tables(5, func(c fbTable) error { return verifyField(c, depth+1) }); err != nil {
		return err
	}
	return verifyKeyValues(f, 6)
}

// verifySchema checks a Schema table.
func verifySchema(s fbTable) error {
	if err := s.tables(1, func(f fbTable) error { return verifyField(f, 0) }); err != nil {
		return err
	}
	if err := verifyKeyValues(s, 2); err != nil {
		return err
	}
	_, _, err := s.vector(3, 8) // features
	return err
}

// verifyRecordBatch checks a RecordBatch table.
func verifyRecordBatch(r fbTable) error {
	if _, _, err := r.vector(1, 16); err != nil { // nodes
		return err
	}
	if _, _, err := r.vector(2, 16); err != nil { // buffers
		return err
	}
	if _, _, err := r.sub(3); err != nil { // compression
		return err
	}
	_, _, err := r.vector(4, 8) // variadicBufferCounts
	return err
}

// Message header union tags of Message.fbs.
const (
	fbSchema          = 1
	fbDictionaryBatch = 2
	fbRecordBatch     = 3
)

// verifyMessage checks the flatbuffer of a Message and returns its body
// length.
func verifyMessage(meta []byte) (int64, error) {
	m, err := fbuf(meta).root()
	if err != nil {
		return 0, err
	}
	typ, err := m.uint8(1)
	if err != nil {
		return 0, err
	}
	h, ok, err := m.sub(2)
	if err != nil {
		return 0, err
	}
	if ok {
		switch typ {
		case fbSchema:
			err = verifySchema(h)
		case fbRecordBatch:
			err = verifyRecordBatch(h)
		case fbDictionaryBatch:
			var d fbTable
			if d, ok, err = h.sub(1); ok {
				err = verifyRecordBatch(d)
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if err := verifyKeyValues(m, 4); err != nil {
		return 0, err
	}
	body, err := m.int64(3)
	if err != nil {
		return 0, err
	}
	if body < 0 {
		return 0, fmt.Errorf("negative message body length %d", body)
	}
	return body, nil
}

// verifyFooter checks the flatbuffer of a file's Footer and returns the
// blocks (file offset, metadata length, body length) of its dictionary and
// record batch messages.
func verifyFooter(footer []byte) ([][3]int64, error) {
	f, err := fbuf(footer).root()
	if err != nil {
		return nil, err
	}
	if s, ok, err := f.sub(1); err != nil {
		return nil, err
	} else if ok {
		if err := verifySchema(s); err != nil {
			return nil, err
		}
	}
	var blocks [][3]int64
	for _, slot := range []int{2, 3} {
		start, n, err := f.vector(slot, 24)
		if err != nil {
			return nil, err
		}
		for i := range n {
			p := footer[start+24*i:]
			blocks = append(blocks, [3]int64{
				int64(binary.LittleEndian.Uint64(p)),
				int64(int32(binary.LittleEndian.Uint32(p[8:]))),
				int64(binary.LittleEndian.Uint64(p[16:])),
			})
		}
	}
	return blocks, verifyKeyValues(f, 4)
}

// verifyArrowFile checks the footer of the IPC file r of the given size and
// the metadata of every message it lists, before Arrow's reader sees them.
func verifyArrowFile(r io.ReaderAt, size int64) error {
	const tail = 4 + int64(len(arrowFileMagic)) // footer length, magic
	if size < 2*int64(len(arrowFileMagic))+2+tail {
		return fmt.Errorf("file of %d bytes is too short", size)
	}
	var end [tail]byte
	if _, err := r.ReadAt(end[:], size-tail); err != nil {
		return err
	}
	if string(end[4:]) != arrowFileMagic {
		return errors.New("no Arrow file magic at the end: truncated?")
	}
	n := int64(int32(binary.LittleEndian.Uint32(end[:])))
	if n <= 0 || n > size-tail-8 {
		return fmt.Errorf("footer length %d does not fit in the file", n)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-tail-n); err != nil {
		return err
	}
	blocks, err := verifyFooter(footer)
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	for _, blk := range blocks {
		off, metaLen, bodyLen := blk[0], blk[1], blk[2]
		if off < 8 || metaLen < 8 || bodyLen < 0 || off > size || metaLen > size-off || bodyLen > size-off-metaLen {
			return fmt.Errorf("message block at offset %d (metadata %d, body %d bytes) does not fit in the file", off, metaLen, bodyLen)
		}
		meta := make([]byte, metaLen)
		if _, err := r.ReadAt(meta, off); err != nil {
			return err
		}
		skip := 4
		if binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
			skip = 8
		}
		if _, err := verifyMessage(meta[skip:]); err != nil {
			return fmt.Errorf("message at offset %d: %w", off, err)
		}
	}
	return nil
}

// messageReader reads the messages of an IPC stream, checking each one's
// metadata and size before handing it to Arrow's stream reader. It
// implements ipc.MessageReader.
type messageReader struct {
	r         io.Reader
	bodyLimit int64
	msg       *ipc.Message
}

// Message returns the next message, valid until the next call; io.EOF at
// the end of the stream.
func (m *messageReader) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	var hdr [4]byte
	if _, err := io.ReadFull(m.r, hdr[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF // a stream may end without an end-of-stream marker
		}
		return nil, fmt.Errorf("reading message length: %w", err)
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0xFFFFFFFF { // continuation marker, then the length
		if _, err := io.ReadFull(m.r, hdr[:]); err != nil {
			return nil, fmt.Errorf("reading message length: %w", unexpected(err))
		}
		n = binary.LittleEndian.Uint32(hdr[:])
	}
	if n == 0 {
		return nil, io.EOF // end-of-stream marker
	}
	if int32(n) < 8 || int64(n) > streamMetadataLimit {
		return nil, fmt.Errorf("invalid message metadata length %d", int32(n))
	}
	meta := make([]byte, n)
	if _, err := io.ReadFull(m.r, meta); err != nil {
		return nil, fmt.Errorf("reading message metadata: %w", unexpected(err))
	}
	bodyLen, err := verifyMessage(meta)
	if err != nil {
		return nil, fmt.Errorf("message metadata: %w", err)
	}
	if bodyLen > m.bodyLimit {
		return nil, fmt.Errorf("message body of %d bytes exceeds the limit of %d", bodyLen, m.bodyLimit)
	}
	// Read the body in pieces so that a length larger than the rest of
	// the stream fails before it is all allocated.
	body := make([]byte, 0, min(bodyLen, 1<<20))
	for int64(len(body)) < bodyLen {
		k := min(bodyLen-int64(len(body)), 1<<20)
		if int64(cap(body)-len(body)) < k {
			body = append(body[:cap(body)], make([]byte, k)...)[:len(body)]
		}
		got, err := io.ReadFull(m.r, body[len(body):len(body)+int(k)])
		body = body[:len(body)+got]
		if err != nil {
			return nil, fmt.Errorf("reading message body: %w", unexpected(err))
		}
	}
	mb, bb := memory.NewBufferBytes(meta), memory.NewBufferBytes(body)
	m.msg = ipc.NewMessage(mb, bb)
	mb.Release()
	bb.Release()
	return m.msg, nil
}

// unexpected turns io.EOF in the middle of a message into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Retain does nothing: the reader is owned by one stream reader.
func (m *messageReader) Retain() {}

// Release releases the current message.
func (m *messageReader) Release() {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// VerifyArrowFile checks the structure of the Arrow IPC file r of the given
// size (its footer and the metadata of every message the footer lists)
// before Arrow's reader decodes it: arrow-go allocates by lengths it reads
// from the file, so a damaged file could otherwise exhaust memory. It
// checks bounds only, not meaning.
func VerifyArrowFile(r io.ReaderAt, size int64) error { return verifyArrowFile(r, size) }
