package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mappedFile writes size bytes to a file, maps it and returns both.
func mappedFile(t *testing.T, size int) (*os.File, []byte) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(name, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := MapReadOnly(f, size)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		UnmapReadOnly(data)
		f.Close()
	})
	return f, data
}

// guarded runs read under CatchFault and returns its error, or the value
// of the panic that went on.
func guarded(f *os.File, data []byte, read func()) (err error, panicked any) {
	defer func() { panicked = recover() }()
	func() {
		defer CatchFault("test file", f, data, &err)()
		read()
	}()
	return err, nil
}

var sink byte

// TestCatchFaultTruncated reads the lost pages of a file cut short under
// its mapping: the SIGBUS is an error naming the file.
func TestCatchFaultTruncated(t *testing.T) {
	const size = 1 << 16
	f, data := mappedFile(t, size)
	if err := os.Truncate(f.Name(), 0); err != nil {
		t.Fatal(err)
	}
	err, p := guarded(f, data, func() { sink = data[size-1] })
	if p != nil || err == nil || !strings.Contains(err.Error(), "test file: a read of the mapped file faulted") {
		t.Fatalf("error %v, panic %v, want a fault naming the file", err, p)
	}
}

// TestCatchFaultNilDereference checks that a nil dereference under the
// guard is still a panic while the file is intact, and that it is taken
// for the mapping's fault once the file is shorter than its mapping, as
// qemu-user reports a SIGBUS (at address 0, like a nil dereference).
func TestCatchFaultNilDereference(t *testing.T) {
	f, data := mappedFile(t, 1<<16)
	var nilPtr *byte
	read := func() { sink = *nilPtr }
	if err, p := guarded(f, data, read); p == nil {
		t.Fatalf("nil dereference with the file intact: error %v, want the panic to go on", err)
	}
	if err, p := guarded(nil, nil, read); p == nil {
		t.Fatalf("nil dereference without a file: error %v, want the panic to go on", err)
	}
	if err := os.Truncate(f.Name(), 4096); err != nil {
		t.Fatal(err)
	}
	err, p := guarded(f, data, read)
	if p != nil || err == nil || !strings.Contains(err.Error(), "address not reported") {
		t.Fatalf("fault without an address, file cut short: error %v, panic %v, want a fault naming the file", err, p)
	}
}

// TestCatchFaultOtherPanic checks that a panic other than a fault goes on.
func TestCatchFaultOtherPanic(t *testing.T) {
	f, data := mappedFile(t, 4096)
	if err, p := guarded(f, data, func() { panic("other") }); p != "other" {
		t.Fatalf("error %v, panic %v, want the panic \"other\" to go on", err, p)
	}
}
