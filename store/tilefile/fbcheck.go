package tilefile

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Arrow's IPC decoder trusts the lengths of the flatbuffer vectors in a
// file's footer and message headers and allocates accordingly, so a corrupt
// length can exhaust memory before any check fails. checkFlatbuffers walks
// the footer, the schema and every record batch header of an IPC file and
// verifies that each vector Arrow allocates for lies inside its buffer,
// before the file is handed to Arrow. It checks bounds only; Arrow and
// File.load check the meaning.
func checkFlatbuffers(data []byte) error {
	const tail = 10 // int32 footer length + "ARROW1"
	if len(data) < 8+tail || string(data[len(data)-6:]) != "ARROW1" {
		return errors.New("no Arrow IPC file footer")
	}
	flen := int(int32(binary.LittleEndian.Uint32(data[len(data)-tail:])))
	fstart := len(data) - tail - flen
	if flen <= 0 || fstart < 8 {
		return fmt.Errorf("footer length %d out of range", flen)
	}
	footer := fbuf(data[fstart : len(data)-tail])
	root, err := footer.root()
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	if _, _, err := footer.vector(root, 2, 24); err != nil { // dictionaries: [Block]
		return fmt.Errorf("footer dictionaries: %w", err)
	}
	if err := footer.keyValues(root, 4); err != nil {
		return fmt.Errorf("footer metadata: %w", err)
	}
	if schema, ok, err := footer.table(root, 1); err != nil {
		return fmt.Errorf("schema: %w", err)
	} else if ok {
		if err := footer.schema(schema); err != nil {
			return fmt.Errorf("schema: %w", err)
		}
	}
	start, n, err := footer.vector(root, 3, 24) // recordBatches: [Block]
	if err != nil {
		return fmt.Errorf("footer record batches: %w", err)
	}
	for i := range n {
		blk := footer[start+24*i:]
		off := int64(binary.LittleEndian.Uint64(blk))
		mlen := int64(int32(binary.LittleEndian.Uint32(blk[8:])))
		if off < 0 || mlen < 8 || off > int64(len(data)) || mlen > int64(len(data))-off {
			return fmt.Errorf("record batch %d: message at %d, length %d outside the file", i, off, mlen)
		}
		msg := data[off : off+mlen]
		if binary.LittleEndian.Uint32(msg) == 0xFFFFFFFF {
			msg = msg[8:]
		} else {
			msg = msg[4:]
		}
		if err := checkMessage(fbuf(msg)); err != nil {
			return fmt.Errorf("record batch %d: %w", i, err)
		}
	}
	return nil
}

func checkMessage(m fbuf) error {
	root, err := m.root()
	if err != nil {
		return err
	}
	if err := m.keyValues(root, 4); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	hdr, ok, err := m.table(root, 2)
	if err != nil || !ok {
		return err
	}
	// RecordBatch: nodes [FieldNode] (16 bytes), buffers [Buffer] (16),
	// variadicBufferCounts [long].
	for _, v := range []struct{ slot, size int }{{1, 16}, {2, 16}, {4, 8}} {
		if _, _, err := m.vector(hdr, v.slot, v.size); err != nil {
			return fmt.Errorf("header: %w", err)
		}
	}
	return nil
}

// fbuf is a flatbuffer with bounds-checked accessors.
type fbuf []byte

func (b fbuf) u32(at int) (int, error) {
	if at < 0 || at+4 > len(b) {
		return 0, fmt.Errorf("offset %d outside a %d-byte buffer", at, len(b))
	}
	return int(binary.LittleEndian.Uint32(b[at:])), nil
}

func (b fbuf) root() (int, error) { return b.u32(0) }

// field returns the position of field slot of the table at pos, or 0 if
// the field is absent.
func (b fbuf) field(pos, slot int) (int, error) {
	so, err := b.u32(pos)
	if err != nil {
		return 0, err
	}
	vt := pos - int(int32(so))
	if vt < 0 || vt+4 > len(b) {
		return 0, fmt.Errorf("vtable at %d outside the buffer", vt)
	}
	vtlen := int(binary.LittleEndian.Uint16(b[vt:]))
	at := vt + 4 + 2*slot
	if 4+2*slot+2 > vtlen || at+2 > len(b) {
		return 0, nil
	}
	off := int(binary.LittleEndian.Uint16(b[at:]))
	if off == 0 {
		return 0, nil
	}
	return pos + off, nil
}

// deref follows the offset stored in field slot of the table at pos.
func (b fbuf) deref(pos, slot int) (target int, ok bool, err error) {
	f, err := b.field(pos, slot)
	if err != nil || f == 0 {
		return 0, false, err
	}
	u, err := b.u32(f)
	if err != nil {
		return 0, false, err
	}
	if f+u >= len(b) {
		return 0, false, fmt.Errorf("offset %d outside the buffer", f+u)
	}
	return f + u, true, nil
}

func (b fbuf) table(pos, slot int) (int, bool, error) { return b.deref(pos, slot) }

// vector returns the start and length of the vector in field slot, whose
// elements are size bytes each, after checking that it fits the buffer.
func (b fbuf) vector(pos, slot, size int) (start, n int, err error) {
	at, ok, err := b.deref(pos, slot)
	if err != nil || !ok {
		return 0, 0, err
	}
	n, err = b.u32(at)
	if err != nil {
		return 0, 0, err
	}
	if n > (len(b)-at-4)/size {
		return 0, 0, fmt.Errorf("vector of %d elements does not fit the buffer", n)
	}
	return at + 4, n, nil
}

// tables checks a vector of tables and calls fn for each element.
func (b fbuf) tables(pos, slot int, fn func(pos int) error) error {
	start, n, err := b.vector(pos, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		at := start + 4*i
		u, err := b.u32(at)
		if err != nil {
			return err
		}
		if at+u >= len(b) {
			return fmt.Errorf("element %d outside the buffer", i)
		}
		if err := fn(at + u); err != nil {
			return err
		}
	}
	return nil
}

// keyValues checks a vector of KeyValue tables (key and value strings).
func (b fbuf) keyValues(pos, slot int) error {
	return b.tables(pos, slot, func(kv int) error {
		for s := range 2 {
			if _, _, err := b.vector(kv, s, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b fbuf) schema(pos int) error {
	if err := b.keyValues(pos, 2); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if _, _, err := b.vector(pos, 3, 8); err != nil { // features
		return err
	}
	return b.tables(pos, 1, func(f int) error { return b.fieldTable(f, 0) })
}

// fieldTable checks a Field: name, children (recursively) and metadata.
func (b fbuf) fieldTable(pos, depth int) error {
	if depth > 64 {
		return errors.New("fields nested too deeply")
	}
	if _, _, err := b.vector(pos, 0, 1); err != nil {
		return fmt.Errorf("field name: %w", err)
	}
	if err := b.keyValues(pos, 6); err != nil {
		return fmt.Errorf("field metadata: %w", err)
	}
	return b.tables(pos, 5, func(c int) error { return b.fieldTable(c, depth+1) })
}
