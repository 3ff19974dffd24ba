package store

import (
	"bytes"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "update golden files in testdata")

// validHeader returns the header of a well-formed rows×cols matrix file.
func validHeader(rows, cols uint64) matrixHeader {
	return matrixHeader{version: matrixVersion, kind: kindFloat64, rows: rows, cols: cols, offset: matrixHeaderSize}
}

// matrixFile returns the bytes of a matrix file with header h and n data bytes.
func matrixFile(h matrixHeader, n int) []byte {
	return append(encodeMatrixHeader(h), make([]byte, n)...)
}

func TestMatrixRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.mat")
	const rows, cols = 7, 5
	m, err := CreateMatrix(path, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows() != rows || m.Cols() != cols {
		t.Fatalf("dimensions %d×%d, want %d×%d", m.Rows(), m.Cols(), rows, cols)
	}
	data := m.Data()
	if len(data) != rows*cols {
		t.Fatalf("len(Data()) = %d, want %d", len(data), rows*cols)
	}
	for i, v := range data {
		if v != 0 || math.Signbit(v) {
			t.Fatalf("new matrix element %d = %v, want +0", i, v)
		}
	}
	special := []float64{
		math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.Float64frombits(0x7ff8_0000_dead_beef),
		math.SmallestNonzeroFloat64, math.MaxFloat64, 1.0 / 3,
	}
	want := make([]float64, rows*cols)
	for i := range want {
		if i < len(special) {
			want[i] = special[i]
		} else {
			want[i] = float64(i)*1.25 - 7
		}
	}
	for i := range rows {
		copy(m.Row(i), want[i*cols:(i+1)*cols])
	}
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if m.Data() != nil {
		t.Errorf("Data() after Close is not nil")
	}
	if err := m.Sync(); err == nil {
		t.Errorf("Sync after Close succeeded")
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Size(), int64(matrixHeaderSize+rows*cols*8); got != want {
		t.Fatalf("file size %d, want %d", got, want)
	}

	m, err = OpenMatrix(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Rows() != rows || m.Cols() != cols {
		t.Fatalf("reopened dimensions %d×%d, want %d×%d", m.Rows(), m.Cols(), rows, cols)
	}
	for i, v := range m.Data() {
		if math.Float64bits(v) != math.Float64bits(want[i]) {
			t.Errorf("element %d = %v (%#x), want %v (%#x)", i, v, math.Float64bits(v), want[i], math.Float64bits(want[i]))
		}
	}
	for i := range rows {
		if r := m.Row(i); len(r) != cols || cap(r) != cols || &r[0] != &m.Data()[i*cols] {
			t.Errorf("Row(%d) does not alias row %d of Data", i, i)
		}
	}
}

func TestMatrixCloseWithoutSyncKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.mat")
	m, err := CreateMatrix(path, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.Row(1)[2] = 42
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = OpenMatrix(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := m.Data()[5]; got != 42 {
		t.Errorf("element after reopen = %v, want 42", got)
	}
}

func TestMatrixRowOutOfRange(t *testing.T) {
	m, err := CreateMatrix(filepath.Join(t.TempDir(), "m.mat"), 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, i := range []int{-1, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Row(%d) did not panic", i)
				}
			}()
			m.Row(i)
		}()
	}
}

func TestCreateMatrixErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		path       string
		rows, cols int
		wantErr    string
	}{
		{name: "zero rows", path: filepath.Join(dir, "a.mat"), rows: 0, cols: 3, wantErr: "invalid matrix dimensions 0×3"},
		{name: "zero cols", path: filepath.Join(dir, "a.mat"), rows: 3, cols: 0, wantErr: "invalid matrix dimensions 3×0"},
		{name: "negative", path: filepath.Join(dir, "a.mat"), rows: -1, cols: 3, wantErr: "invalid matrix dimensions"},
		{name: "overflow", path: filepath.Join(dir, "a.mat"), rows: math.MaxInt / 4, cols: 3, wantErr: "overflow"},
		{name: "missing directory", path: filepath.Join(dir, "no", "such", "a.mat"), rows: 1, cols: 1, wantErr: "creating matrix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := CreateMatrix(tt.path, tt.rows, tt.cols)
			if err == nil {
				m.Close()
				t.Fatalf("CreateMatrix succeeded, want error containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not contain %q and the path", err, tt.wantErr)
			}
		})
	}
}

func TestOpenMatrixErrors(t *testing.T) {
	good := validHeader(3, 2)
	badCRC := encodeMatrixHeader(good)
	badCRC[16] ^= 1 // rows 3 → 2 without updating the checksum
	badCRC = append(badCRC, make([]byte, 48)...)
	badMagic := matrixFile(good, 48)
	copy(badMagic, "SSNMFMAX")

	tests := []struct {
		name    string
		content []byte // nil: no file at all
		wantErr string
	}{
		{name: "missing", content: nil, wantErr: "m.mat"},
		{name: "empty", content: []byte{}, wantErr: "file is 0 bytes, too short"},
		{name: "too short", content: encodeMatrixHeader(good)[:100], wantErr: "file is 100 bytes, too short"},
		{name: "bad magic", content: badMagic, wantErr: `bad magic "SSNMFMAX"`},
		{name: "unknown version", content: matrixFile(matrixHeader{version: 2, kind: kindFloat64, rows: 3, cols: 2, offset: matrixHeaderSize}, 48), wantErr: "unknown format version 2"},
		{name: "unknown kind", content: matrixFile(matrixHeader{version: 1, kind: 2, rows: 3, cols: 2, offset: matrixHeaderSize}, 48), wantErr: "unknown element kind 2"},
		{name: "bad checksum", content: badCRC, wantErr: "bad header checksum"},
		{name: "bad offset", content: matrixFile(matrixHeader{version: 1, kind: kindFloat64, rows: 3, cols: 2, offset: 8192}, 48), wantErr: "data offset 8192"},
		{name: "zero rows", content: matrixFile(validHeader(0, 2), 0), wantErr: "invalid dimensions 0×2"},
		{name: "zero cols", content: matrixFile(validHeader(2, 0), 0), wantErr: "invalid dimensions 2×0"},
		{name: "overflow", content: matrixFile(validHeader(1<<40, 1<<40), 0), wantErr: "overflow"},
		{name: "overflow by size", content: matrixFile(validHeader(1<<61, 1), 0), wantErr: "overflow"},
		{name: "truncated", content: matrixFile(good, 47), wantErr: "file is 4143 bytes, want 4144"},
		{name: "extended", content: matrixFile(good, 49), wantErr: "file is 4145 bytes, want 4144"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.mat")
			if tt.content != nil {
				if err := os.WriteFile(path, tt.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := OpenMatrix(path)
			if err == nil {
				m.Close()
				t.Fatalf("OpenMatrix succeeded, want error containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not contain %q and the path", err, tt.wantErr)
			}
			if err := DumpMatrix(&bytes.Buffer{}, path, 1); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("DumpMatrix error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseMatrixHeader(t *testing.T) {
	full := encodeMatrixHeader(validHeader(3, 4))
	tests := []struct {
		name    string
		b       []byte
		wantErr string // "" for success
	}{
		{name: "full page", b: full},
		{name: "fields only", b: full[:matrixHeaderLen]},
		{name: "nil", b: nil, wantErr: "bad magic"},
		{name: "partial magic", b: full[:5], wantErr: "bad magic"},
		{name: "magic only", b: full[:8], wantErr: "header is 8 bytes"},
		{name: "no checksum", b: full[:matrixHeaderLen-1], wantErr: "header is 43 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseMatrixHeader(tt.b)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if h.rows != 3 || h.cols != 4 || h.offset != matrixHeaderSize {
					t.Errorf("header %+v, want 3×4 at offset %d", h, matrixHeaderSize)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDumpMatrix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.mat")
	m, err := CreateMatrix(path, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{0, 0.5, -1, 1.0 / 3, 1e-300, 2.5e10, math.Inf(1), math.NaN(), math.Copysign(0, -1)} {
		m.Data()[i] = v
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		maxRows int
		golden  string
	}{
		{name: "first rows", maxRows: 3, golden: "dump.golden"},
		{name: "all rows", maxRows: -1, golden: "dump_all.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := DumpMatrix(&buf, path, tt.maxRows); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("DumpMatrix output:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
}

func FuzzMatrixHeader(f *testing.F) {
	good := encodeMatrixHeader(validHeader(3, 4))
	f.Add(good)
	f.Add(good[:matrixHeaderLen])
	f.Add(good[:20])
	f.Add([]byte{})
	for _, h := range []matrixHeader{
		validHeader(0, 1), validHeader(1<<40, 1<<40), validHeader(math.MaxUint64, 1),
		{version: 2, kind: 1, rows: 1, cols: 1, offset: matrixHeaderSize},
		{version: 1, kind: 7, rows: 1, cols: 1, offset: matrixHeaderSize},
		{version: 1, kind: 1, rows: 1, cols: 1, offset: 0},
	} {
		f.Add(encodeMatrixHeader(h)[:matrixHeaderLen])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParsedHeader(t, b)
		if len(b) >= matrixHeaderLen {
			// Most inputs fail the checksum; fix it so that the
			// checks after it are exercised too.
			b = slices.Clone(b)
			binary.LittleEndian.PutUint32(b[matrixCRCOffset:], crc32.ChecksumIEEE(b[:matrixCRCOffset]))
			checkParsedHeader(t, b)
		}
	})
}

// checkParsedHeader parses b and, if it is accepted, checks the header.
func checkParsedHeader(t *testing.T, b []byte) {
	t.Helper()
	h, err := parseMatrixHeader(b)
	if err != nil {
		return
	}
	if h.rows < 1 || h.cols < 1 {
		t.Fatalf("accepted dimensions %d×%d", h.rows, h.cols)
	}
	size, ok := fileSize(h.rows, h.cols)
	if !ok || size != matrixHeaderSize+8*int(h.rows)*int(h.cols) {
		t.Fatalf("accepted %d×%d, whose size overflows", h.rows, h.cols)
	}
	if enc := encodeMatrixHeader(h); !bytes.Equal(enc[:matrixHeaderLen], b[:matrixHeaderLen]) {
		t.Fatalf("re-encoded header differs:\n got %x\nwant %x", enc[:matrixHeaderLen], b[:matrixHeaderLen])
	}
	if binary.LittleEndian.Uint32(b[matrixCRCOffset:]) != h.crc {
		t.Fatalf("crc field %#x, want %#x", h.crc, binary.LittleEndian.Uint32(b[matrixCRCOffset:]))
	}
}
