// Package fault turns the memory fault of a mapped file into an error.
//
// A file cut short under its mapping (by another process, or a copy over
// it), or a page of a sparse file that a full disk cannot back, makes an
// access to the lost pages fault with SIGBUS, which by default ends the
// program with a stack trace. Go makes such a fault a panic only on a
// goroutine that asked for it (debug.SetPanicOnFault), so every goroutine
// that touches a mapping runs under [Catch]: the command's own goroutine,
// and the workers, which are started through [Guard].
package fault

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"unsafe"
)

// Error is a fault of a mapped file, recovered by [Catch] or [CatchFile].
type Error struct {
	File string  // the file the faulting address was mapped from
	Addr uintptr // the faulting address; 0 if the kernel did not report it
	Op   string  // "read" for a read-only mapping, else "read or write"
}

// Error names the file and what to do.
func (e *Error) Error() string {
	if e.Addr == 0 {
		return fmt.Sprintf("%s: a %s of the mapped file faulted (address not reported), and the file is now shorter than its mapping: it was cut short while in use; keep it unchanged while a run uses it", e.File, e.Op)
	}
	return fmt.Sprintf("%s: a %s of the mapped file faulted (address %#x): it was cut short or changed while in use; keep it unchanged while a run uses it", e.File, e.Op, e.Addr)
}

// Catch guards the calling goroutine against the faults of every file
// mapping of the process. Between Catch and the call of the function it
// returns, which must be deferred by the same goroutine,
//
//	defer fault.Catch(&err)()
//
// a fault at an address of a file mapping is a panic that the deferred
// function recovers into *err, an [*Error] naming the file (found in the
// kernel's table of the process's mappings, /proc/self/maps). Other
// panics, and faults outside a file mapping (a nil dereference, a use
// after unmap), go on. Where the kernel's table cannot be read (outside
// Linux) a fault cannot be named and goes on as before.
func Catch(err *error) func() { return catch(err, fromMaps) }

// catch is Catch with the fault named by name, which returns nil for a
// panic that is not a fault it can name: that panic goes on.
func catch(err *error, name func(r any) *Error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if e := name(r); e != nil {
			*err = e
			return
		}
		panic(r)
	}
}

// Guard returns f run under [Catch], for the goroutines of a worker pool:
// g.Go(fault.Guard(func() error { ... })).
func Guard(f func() error) func() error {
	return func() (err error) {
		defer Catch(&err)()
		return f()
	}
}

// CatchFile is [Catch] for one known mapping: data, of the open file f
// named name. A fault is the mapping's if the address the kernel reports
// lies in data.
//
// Emulators do not always report the address: qemu-user delivers the
// SIGBUS of a truncated mapping with address 0, which the Go runtime
// cannot tell from a nil pointer dereference (it panics with the plain
// "invalid memory address" error, without an address). Such a panic is
// taken as the mapping's fault only if f is now shorter than data, that
// is, if the file was indeed cut short under the mapping; otherwise it
// goes on. On real hardware a fault of the mapping always has its
// address, so this fallback changes nothing there but for a nil
// dereference that happens to coincide with a truncated file. f may be
// nil when data is not a mapping (it cannot fault then).
func CatchFile(name string, f *os.File, data []byte, err *error) func() {
	return catch(err, func(r any) *Error {
		if fa, ok := r.(interface{ Addr() uintptr }); ok && inMapping(data, fa.Addr()) {
			return &Error{File: name, Addr: fa.Addr(), Op: "read"}
		}
		if addressLost(r) && shrunk(f, data) {
			return &Error{File: name, Op: "read"}
		}
		return nil
	})
}

// inMapping reports whether addr lies in data.
func inMapping(data []byte, addr uintptr) bool {
	if len(data) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return addr >= base && addr-base < uintptr(len(data))
}

// nilPage is the size of the lowest addresses, below which the Go runtime
// reports a fault as a nil pointer dereference (runtime.sigpanic).
const nilPage = 0x1000

// addressLost reports whether r is the runtime's panic of a memory fault
// without a usable address: either the plain error of a nil dereference,
// which the runtime raises for any fault below nilPage, or a fault error
// whose address is below nilPage.
func addressLost(r any) bool {
	re, ok := r.(runtime.Error)
	if !ok {
		return false
	}
	if fa, ok := r.(interface{ Addr() uintptr }); ok {
		return fa.Addr() < nilPage
	}
	return re.Error() == "runtime error: invalid memory address or nil pointer dereference"
}

// shrunk reports whether the file f is now shorter than its mapping data.
func shrunk(f *os.File, data []byte) bool {
	if f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Size() < int64(len(data))
}

// fromMaps returns the error of the fault r if it hit a file mapping of
// the process, and nil otherwise: the mapping that holds r's address, or,
// for a fault without an address (see [CatchFile]), a mapping whose file
// is now shorter than its mapped pages.
func fromMaps(r any) *Error {
	if _, ok := r.(runtime.Error); !ok {
		return nil
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil
	}
	fa, hasAddr := r.(interface{ Addr() uintptr })
	lost := addressLost(r)
	if !lost && !hasAddr {
		return nil
	}
	for line := range bytes.Lines(maps) {
		m, ok := parseMapping(line)
		if !ok {
			continue
		}
		switch {
		case !lost && fa.Addr() >= m.start && fa.Addr() < m.end:
			return &Error{File: m.path, Addr: fa.Addr(), Op: m.op()}
		case lost && m.cutShort():
			return &Error{File: m.path, Op: m.op()}
		}
	}
	return nil
}

// mapping is a file mapping of the process, a line of /proc/self/maps.
type mapping struct {
	start, end uintptr
	write      bool
	offset     int64
	path       string
}

// op is what faulted in the mapping: a read, or a read or write.
func (m mapping) op() string {
	if m.write {
		return "read or write"
	}
	return "read"
}

// cutShort reports whether the file of m is now too short to back its
// last mapped page, the condition of a fault there.
func (m mapping) cutShort() bool {
	st, err := os.Stat(m.path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return st.Size() <= m.offset+int64(m.end-m.start)-int64(os.Getpagesize())
}

// parseMapping parses a line of /proc/self/maps,
//
//	7f1c2d000000-7f1c2d100000 rw-s 00000000 00:2f 1234   /path/to/file
//
// and reports whether it is the mapping of a file (a path that begins
// with "/"; a deleted file's path ends in " (deleted)", kept in the name).
func parseMapping(line []byte) (mapping, bool) {
	var m mapping
	f := bytes.Fields(line)
	if len(f) < 6 || !bytes.HasPrefix(f[5], []byte("/")) {
		return m, false
	}
	lo, hi, ok := bytes.Cut(f[0], []byte("-"))
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	off, err3 := strconv.ParseInt(string(f[2]), 16, 64)
	if !ok || err1 != nil || err2 != nil || err3 != nil {
		return m, false
	}
	m.start, m.end, m.offset = uintptr(start), uintptr(end), off
	m.write = len(f[1]) > 1 && f[1][1] == 'w'
	// The path is the rest of the line: it may hold spaces.
	m.path = string(bytes.TrimSpace(line[bytes.Index(line, f[5]):]))
	return m, true
}
