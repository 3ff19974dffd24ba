//go:build linux

package fault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sync/errgroup"
)

// mapped writes size bytes to a file, maps it shared with protection prot
// and returns both.
func mapped(t *testing.T, size, prot int) (*os.File, []byte) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "mapped file")
	if err := os.WriteFile(name, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, size, prot, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() {
		syscall.Munmap(data)
		f.Close()
	})
	return f, data
}

// guarded runs touch under Catch and returns its error, or the value of
// the panic that went on.
func guarded(touch func()) (err error, panicked any) {
	defer func() { panicked = recover() }()
	func() {
		defer Catch(&err)()
		touch()
	}()
	return err, nil
}

var sink byte

// TestCatch reads and writes the lost pages of files cut short under their
// mappings: each fault is an error naming the file, found without being
// told which mapping to look in; an access that does not fault, a nil
// dereference and other panics are left alone.
func TestCatch(t *testing.T) {
	if _, err := os.Stat("/proc/self/maps"); err != nil {
		t.Skip("no /proc/self/maps: faults are not named on this system")
	}
	const size = 1 << 16
	ro, rdata := mapped(t, size, syscall.PROT_READ)
	rw, wdata := mapped(t, size, syscall.PROT_READ|syscall.PROT_WRITE)
	var nilPtr *byte
	for _, c := range []struct {
		name  string
		cut   *os.File // the file cut to one page first, nil for none
		touch func()
		want  string // in the error; "" for a panic that goes on, "-" for neither
	}{
		{"read", ro, func() { sink = rdata[size-1] }, ro.Name() + ": a read of the mapped file faulted"},
		{"write", rw, func() { wdata[size-1] = 1 }, rw.Name() + ": a read or write of the mapped file faulted"},
		{"the page that is left", ro, func() { sink = rdata[100] }, "-"},
		{"nil dereference", nil, func() { sink = *nilPtr }, ""},
		{"other panic", ro, func() { panic("boom") }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.cut != nil {
				if err := c.cut.Truncate(4096); err != nil {
					t.Fatal(err)
				}
				defer c.cut.Truncate(size)
			}
			err, p := guarded(c.touch)
			var fe *Error
			switch {
			case c.want == "-":
				if err != nil || p != nil {
					t.Fatalf("error %v, panic %v, want neither", err, p)
				}
			case c.want == "":
				if p == nil {
					t.Fatalf("error %v, want the panic to go on", err)
				}
			case p != nil || err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %v, panic %v, want %q", err, p, c.want)
			case !errors.As(err, &fe):
				t.Fatalf("error %T, want *fault.Error", err)
			}
		})
	}
}

// TestGuard checks that a worker started through Guard returns the fault
// as its error instead of ending the program.
func TestGuard(t *testing.T) {
	if _, err := os.Stat("/proc/self/maps"); err != nil {
		t.Skip("no /proc/self/maps: faults are not named on this system")
	}
	f, data := mapped(t, 1<<16, syscall.PROT_READ)
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	for i := range 4 {
		g.Go(Guard(func() error { sink = data[i*4096]; return nil }))
	}
	err := g.Wait()
	if err == nil || !strings.Contains(err.Error(), f.Name()+": a read of the mapped file faulted") {
		t.Fatalf("error %v, want the fault naming the file", err)
	}
}

// TestParseMapping reads lines of /proc/self/maps.
func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
		want mapping
	}{
		{"7f1c2d000000-7f1c2d100000 rw-s 00001000 00:2f 1234   /tmp/a b/W.mat\n", true,
			mapping{start: 0x7f1c2d000000, end: 0x7f1c2d100000, write: true, offset: 0x1000, path: "/tmp/a b/W.mat"}},
		{"7f1c2d000000-7f1c2d100000 r--s 00000000 00:2f 1234 /tmp/x (deleted)", true,
			mapping{start: 0x7f1c2d000000, end: 0x7f1c2d100000, path: "/tmp/x (deleted)"}},
		{"7f1c2d000000-7f1c2d100000 rw-p 00000000 00:00 0 ", false, mapping{}},
		{"7ffd1000-7ffd2000 rw-p 00000000 00:00 0  [stack]", false, mapping{}},
		{"zz-7ffd2000 r--s 00000000 00:00 0  /x", false, mapping{}},
	} {
		m, ok := parseMapping([]byte(c.line))
		if ok != c.ok || ok && m != c.want {
			t.Errorf("%q: %+v %v, want %+v %v", c.line, m, ok, c.want, c.ok)
		}
	}
}
