//go:build unix

package store

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReserve checks that Reserve makes a file of the size asked for,
// allocated, not sparse (where the system reports blocks), and that
// writeZeros, its fallback, keeps the bytes already there.
func TestReserve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 3<<20 + 5
	if err := Reserve(f, size); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != size {
		t.Fatalf("size %d, want %d", st.Size(), size)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Blocks*512 < size {
		t.Fatalf("%d bytes allocated, want at least %d (a sparse file)", sys.Blocks*512, size)
	}

	g, err := os.Create(path + ".z")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Write([]byte("head")); err != nil {
		t.Fatal(err)
	}
	if err := writeZeros(g, 1<<20+3); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(g.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 1<<20+3 || string(b[:4]) != "head" || !bytes.Equal(b[4:], make([]byte, len(b)-4)) {
		t.Fatalf("writeZeros: %d bytes beginning %q, want %d beginning \"head\" then zeros", len(b), b[:min(len(b), 8)], 1<<20+3)
	}
}

func TestHumanBytes(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {292096, "285.2 KiB"}, {14564104, "13.9 MiB"}, {3 << 40, "3.0 TiB"}} {
		if got := humanBytes(c.b); got != c.want {
			t.Errorf("humanBytes(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}
