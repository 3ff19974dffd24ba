package model

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Dump prints the model file at path for debugging: its header, each
// section with its offset, length and whether its checksum holds, the
// settings, and the first rows of W. A damaged file is described as far
// as it can be, and its first error returned.
func Dump(w io.Writer, path string, rows int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b = append(make([]byte, 0, len(b)+8), b...) // 8-byte aligned for decode
	if len(b) < headerFixed {
		return fmt.Errorf("%s: %d bytes, not a model file", path, len(b))
	}
	fmt.Fprintf(w, "model file %s: %d bytes, magic %q, version %d, %d sections\n", path, len(b), b[:8],
		binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:]))
	count := min(int(binary.LittleEndian.Uint32(b[12:])), maxSections)
	for i := range count {
		e := headerFixed + entrySize*i
		if e+entrySize > len(b) {
			break
		}
		kind, sum := binary.LittleEndian.Uint32(b[e:]), binary.LittleEndian.Uint32(b[e+4:])
		off, n := binary.LittleEndian.Uint64(b[e+8:]), binary.LittleEndian.Uint64(b[e+16:])
		status := "out of the file"
		if off <= uint64(len(b)) && n <= uint64(len(b))-off {
			status = "crc ok"
			if got := crc32.Checksum(b[off:off+n], castagnoli); got != sum {
				status = fmt.Sprintf("BAD crc: stored 0x%08x, computed 0x%08x", sum, got)
			}
		}
		fmt.Fprintf(w, "  section %-9s offset %10d  %12d bytes  %s\n", sectionNames[kind], off, n, status)
	}
	meta, a, err := decode(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	settings, _ := json.MarshalIndent(meta, "  ", "  ")
	fmt.Fprintf(w, "settings:\n  %s\n", settings)
	fmt.Fprintf(w, "W (first %d of %d rows, in leaf order):\n", min(rows, meta.N), meta.N)
	for i := range min(rows, meta.N) {
		fmt.Fprintf(w, "  %6d %.6g\n", i, a.W[i*meta.K:(i+1)*meta.K])
	}
	return nil
}
