package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestAdviseSequential checks that the advice, sequential, random and
// normal, and Prefetch, on a whole mapping and on parts of it that start
// and end inside pages, are taken without error and change no byte; and
// that a part too small to hold a whole page is left alone.
func TestAdviseSequential(t *testing.T) {
	const size = 5*4096 + 123
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "m")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := MapReadOnly(f, size)
	if err != nil {
		t.Fatal(err)
	}
	defer UnmapReadOnly(mem)
	for _, tc := range []struct {
		name   string
		lo, hi int
	}{
		{"whole", 0, size},
		{"inside pages", 100, 4*4096 + 5},
		{"less than a page", 4000, 4200},
		{"empty", 10, 10},
	} {
		if err := AdviseRandom(mem[tc.lo:tc.hi]); err != nil {
			t.Errorf("%s, random: %v", tc.name, err)
		}
		if err := AdviseSequential(mem[tc.lo:tc.hi]); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err := AdviseNormal(mem[tc.lo:tc.hi]); err != nil {
			t.Errorf("%s, normal: %v", tc.name, err)
		}
		if err := Prefetch(mem[tc.lo:tc.hi]); err != nil {
			t.Errorf("%s, prefetch: %v", tc.name, err)
		}
	}
	heap := make([]byte, 3*4096)
	if err := Prefetch(heap[5:9000]); err != nil {
		t.Errorf("prefetch of heap memory: %v", err)
	}
	if !bytes.Equal(mem, want) {
		t.Error("the advice changed the mapping's bytes")
	}
}

// TestWholePages checks the pages AdviseSequential advises: whole, inside the bytes.
func TestWholePages(t *testing.T) {
	for _, tc := range []struct {
		start     uintptr
		n, lo, hi int
	}{
		{4096, 8192, 0, 8192},
		{4096, 8191, 0, 4096},
		{4097, 8192, 4095, 4095 + 4096},
		{4097, 8190, 0, 0},
		{8191, 4097, 1, 4097},
		{8192, 4095, 0, 0},
		{0, 0, 0, 0},
	} {
		if lo, hi := wholePages(tc.start, tc.n); lo != tc.lo || hi != tc.hi {
			t.Errorf("wholePages(%d, %d) = [%d, %d), want [%d, %d)", tc.start, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestGatherRows checks that GatherRows copies the rows asked for in their
// order, from a mapped file and from memory of the process alike.
func TestGatherRows(t *testing.T) {
	const n, p = 3000, 3
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(8 * n * p); err != nil {
		t.Fatal(err)
	}
	b, err := MapReadWrite(f, 8*n*p)
	if err != nil {
		t.Fatal(err)
	}
	defer UnmapReadWrite(f, b)
	mapped := unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), n*p)
	heap := make([]float64, n*p)
	for i := range heap {
		heap[i], mapped[i] = float64(i), float64(i)
	}
	rows := []int{2999, 5, 1200, 5, 0}
	for name, x := range map[string][]float64{"mapped": mapped, "heap": heap} {
		got := GatherRows(make([]float64, 20), x, p, rows)
		if len(got) != len(rows)*p {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(rows)*p)
		}
		for k, r := range rows {
			for q := range p {
				if got[k*p+q] != float64(r*p+q) {
					t.Fatalf("%s: row %d of the gather holds %v, want row %d", name, k, got[k*p:(k+1)*p], r)
				}
			}
		}
		if got := GatherRows(nil, x, p, nil); len(got) != 0 {
			t.Errorf("%s: %d values gathered for no rows", name, len(got))
		}
	}
}
