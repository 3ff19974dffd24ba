package diskio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMeterCountsFileIO writes a file through the page cache, syncs it,
// drops its pages and reads it back: the phase that wrote it and the one
// that read it each count at least its size.
func TestMeterCountsFileIO(t *testing.T) {
	m := Start()
	if !m.OK() {
		t.Skip("no " + procFile + " here: the counters cannot be read")
	}
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC || fs.Type == unix.OVERLAYFS_SUPER_MAGIC {
		t.Skipf("%s is on tmpfs or overlayfs, whose pages are not counted as storage I/O", dir)
	}
	const size = 8 << 20
	name := filepath.Join(dir, "f")
	data := bytes.Repeat([]byte{7}, size)
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, size, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	f.Close()
	w := m.End("write")
	got, err := os.ReadFile(name)
	if err != nil || len(got) != size {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}
	r := m.End("read")
	if w.Written < size {
		t.Errorf("the write phase wrote %d bytes, want >= %d", w.Written, size)
	}
	if r.Read < size {
		t.Errorf("the read phase read %d bytes, want >= %d (the pages were dropped before)", r.Read, size)
	}
	if ph := m.Phases(); len(ph) != 2 || ph[0].Name != "write" || ph[1].Name != "read" {
		t.Errorf("phases %+v, want write then read", ph)
	}
	if tot := m.Total(); tot.Read != w.Read+r.Read || tot.Written != w.Written+r.Written {
		t.Errorf("total %+v is not the sum of %+v and %+v", tot, w, r)
	}
}
