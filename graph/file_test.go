package graph

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/dump.golden and testdata/descent.golden")

// sameCSR reports whether a and b hold the same bits.
func sameCSR(a, b *CSR) bool {
	return slices.Equal(a.RowPtr, b.RowPtr) && slices.Equal(a.Col, b.Col) && slices.Equal(a.Val, b.Val)
}

// TestFileKNN checks that a kNN graph assembled in a CSR file has the bits
// of the one assembled in memory, that the file reopens to them, and that
// KNN reuses the file for the same rows and options only; and that the
// advice of the order of its reads changes no value.
func TestFileKNN(t *testing.T) {
	const n, p = 150, 3
	x := points(n, p, 8)
	opt := KNNOptions{Neighbors: 7, Weights: SelfTuning}
	mem, err := KNN(context.Background(), x, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.File = filepath.Join(t.TempDir(), "g.csr")
	g, err := KNN(context.Background(), x, n, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !sameCSR(g, mem) {
		t.Fatal("the graph assembled in a file differs from the one in memory")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(opt.File + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	h, src, err := OpenFile(opt.File)
	if err != nil {
		t.Fatal(err)
	}
	if !sameCSR(h, mem) || src != knnSource(x, n, p, 7, KNNOptions{Weights: SelfTuning}) {
		t.Errorf("reopened: same bits %t, source %x", sameCSR(h, mem), src)
	}
	// The advice of the reads' order and the rows asked for, on the file
	// and in memory, change no value.
	if !h.InFile() || mem.InFile() {
		t.Errorf("InFile: %t for the file, %t in memory", h.InFile(), mem.InFile())
	}
	for _, m := range []*CSR{h, mem} {
		for _, random := range []bool{true, false} {
			if err := m.AdviseRandom(random); err != nil {
				t.Errorf("AdviseRandom(%t): %v", random, err)
			}
		}
		m.FetchRows([]int32{0, 1, 2, 40, 41, 97, n - 1})
		m.FetchRows(nil)
	}
	if !sameCSR(h, mem) {
		t.Error("the advice changed the graph")
	}
	h.Close()

	before, _ := os.Stat(opt.File)
	if g, err = KNN(context.Background(), x, n, p, opt); err != nil {
		t.Fatal(err)
	}
	g.Close()
	after, _ := os.Stat(opt.File)
	if !os.SameFile(before, after) {
		t.Error("the same rows and options built the graph again instead of opening the file")
	}
	opt.Neighbors = 5
	if g, err = KNN(context.Background(), x, n, p, opt); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rebuilt, _ := os.Stat(opt.File)
	want, _ := KNN(context.Background(), x, n, p, KNNOptions{Neighbors: 5, Weights: SelfTuning})
	if os.SameFile(after, rebuilt) || !sameCSR(g, want) {
		t.Error("other options did not rebuild the file")
	}
}

// TestFileEdges checks that an edge list assembled in a CSR file has the
// bits of the one assembled in memory, and that a refused list leaves no
// file behind.
func TestFileEdges(t *testing.T) {
	const text = "src,dst,weight\n0,1,0.5\n2,1,2\n3,3,1\n"
	mem, err := FromEdges(context.Background(), "e.csv", edgeTable(t, text), EdgeOptions{Rows: 5})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.csr")
	g, err := FromEdges(context.Background(), "e.csv", edgeTable(t, text), EdgeOptions{Rows: 5, File: path})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !sameCSR(g, mem) {
		t.Error("the graph assembled in a file differs from the one in memory")
	}
	bad := filepath.Join(t.TempDir(), "bad.csr")
	_, err = FromEdges(context.Background(), "e.csv", edgeTable(t, text+"1,0,1\n"), EdgeOptions{Rows: 5, File: bad})
	if err == nil || !strings.Contains(err.Error(), "edges 1 and 4") {
		t.Fatalf("a pair listed twice: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(bad)); len(ents) != 0 {
		t.Errorf("a refused list left %d files", len(ents))
	}
}

// writeTestFile writes a small CSR file and returns its path and bytes.
func writeTestFile(t testing.TB) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.csr")
	g, err := KNN(context.Background(), points(12, 2, 4), 12, 2, KNNOptions{Neighbors: 3, File: path})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestOpenFileErrors checks that every kind of damage is refused with an
// error naming the file and what is wrong.
func TestOpenFileErrors(t *testing.T) {
	_, good := writeTestFile(t)
	body := func(b []byte) []byte { // recompute both checksums after a change
		h, _ := parseFileHeader(good)
		h.body = crc32.Checksum(b[fileHeaderSize:], castagnoli)
		copy(b, encodeFileHeader(h))
		return b
	}
	n := int(binary.LittleEndian.Uint64(good[12:]))
	valAt := fileHeaderSize + 8*(n+1)
	for _, tc := range []struct {
		name   string
		change func(b []byte) []byte
		want   string
	}{
		{name: "magic", change: func(b []byte) []byte { b[0] = 'X'; return b }, want: "bad magic"},
		{name: "short header", change: func(b []byte) []byte { return b[:20] }, want: "header is 20 bytes"},
		{name: "header checksum", change: func(b []byte) []byte { b[13]++; return b }, want: "bad header checksum"},
		{name: "version", change: func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], 2)
			binary.LittleEndian.PutUint32(b[fileCRCOffset:], crc32.ChecksumIEEE(b[:fileCRCOffset]))
			return b
		}, want: "version 2"},
		{name: "truncated", change: func(b []byte) []byte { return b[:len(b)-4] }, want: "want"},
		{name: "extended", change: func(b []byte) []byte { return append(b, 0) }, want: "want"},
		{name: "body checksum", change: func(b []byte) []byte { b[valAt]++; return b }, want: "bad checksum of the arrays"},
		{name: "column and body checksum", change: func(b []byte) []byte { b[len(b)-1] = 0x7f; return b }, want: "bad checksum of the arrays"},
		{name: "column", change: func(b []byte) []byte { b[len(b)-1] = 0x7f; return body(b) }, want: "out of range"},
		{name: "asymmetric", change: func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[valAt+8:], 0x4000000000000000) // P_0j = 2 for row 0's first neighbour j
			return body(b)
		}, want: "not symmetric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.csr")
			if err := os.WriteFile(path, tc.change(slices.Clone(good)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := OpenFile(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming the file and %q", err, tc.want)
			}
		})
	}
}

// TestCRC32CJoin checks that joining the checksums of two byte strings
// gives that of the two end to end, for lengths around the bits of size.
func TestCRC32CJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, la := range []int{0, 1, 7, 100} {
		for _, lb := range []int{0, 1, 2, 3, 8, 255, 256, 4097} {
			ab := make([]byte, la+lb)
			for i := range ab {
				ab[i] = byte(rng.Uint32())
			}
			a, b := ab[:la], ab[la:]
			want := crc32.Checksum(ab, castagnoli)
			if got := crc32cJoin(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(lb)); got != want {
				t.Errorf("lengths %d and %d: joined 0x%08x, want 0x%08x", la, lb, got, want)
			}
		}
	}
}

// TestDumpFile compares the dump of a small file with testdata/dump.golden
// (rewritten with -update).
func TestDumpFile(t *testing.T) {
	path, _ := writeTestFile(t)
	var out bytes.Buffer
	if err := DumpFile(&out, path, 4); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(out.String(), path, "g.csr")
	golden := filepath.Join("testdata", "dump.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("dump:\n%s\nwant:\n%s", got, want)
	}
}

// FuzzOpenFile checks that OpenFile refuses damaged files with an error,
// never a panic, and that what it accepts is a valid CSR.
func FuzzOpenFile(f *testing.F) {
	_, good := writeTestFile(f)
	f.Add(good)
	f.Add(good[:fileHeaderSize])
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.csr")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		g, _, err := OpenFile(path)
		if err != nil {
			return
		}
		defer g.Close()
		if _, err := NewCSR(slices.Clone(g.RowPtr), slices.Clone(g.Col), slices.Clone(g.Val)); err != nil {
			t.Fatalf("accepted a file NewCSR refuses: %v", err)
		}
	})
}
