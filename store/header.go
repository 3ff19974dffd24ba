package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The binary files of ssnmf (the matrices here, the CSR files of package
// graph) begin with a header page: a magic string, fixed fields, and at
// a fixed offset the CRC-32 (IEEE) of the bytes before it.

// SealHeader writes the CRC-32 (IEEE) of b[:crcOff] at b[crcOff:crcOff+4],
// little-endian.
func SealHeader(b []byte, crcOff int) {
	binary.LittleEndian.PutUint32(b[crcOff:], crc32.ChecksumIEEE(b[:crcOff]))
}

// CheckHeader checks that b, of any length, begins with magic, holds the
// checksum at crcOff, and that the checksum is that of b[:crcOff]. It
// never panics.
func CheckHeader(b []byte, magic string, crcOff int) error {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return fmt.Errorf("bad magic %q, want %q", b[:min(len(b), len(magic))], magic)
	}
	if len(b) < crcOff+4 {
		return fmt.Errorf("header is %d bytes, want at least %d", len(b), crcOff+4)
	}
	if got, want := binary.LittleEndian.Uint32(b[crcOff:]), crc32.ChecksumIEEE(b[:crcOff]); got != want {
		return fmt.Errorf("bad header checksum 0x%08x, computed 0x%08x", got, want)
	}
	return nil
}
