package store

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// CatchFault guards reads of data, the memory mapping of the open file f
// named name. A file cut short or removed under its mapping (by another
// process, or a full disk) makes a read of the lost pages fault with
// SIGBUS, which by default ends the program with a stack trace. Between
// CatchFault and the call of the function it returns, which must be
// deferred by the same goroutine:
//
//	defer store.CatchFault(name, f, data, &err)()
//
// such a fault is a panic instead, which that function recovers into *err,
// naming the file; other panics go on. f may be nil when data is not a
// mapping (it cannot fault then).
//
// A fault is the mapping's if the address the kernel reports lies in data.
// Emulators do not always report it: qemu-user delivers the SIGBUS of a
// truncated mapping with address 0, which the Go runtime cannot tell from
// a nil pointer dereference (it panics with the plain "invalid memory
// address" error, without an address). Such a panic is taken as the
// mapping's fault only if f is now shorter than data, that is, if the file
// was indeed cut short under the mapping; otherwise it goes on. On real
// hardware a fault of the mapping always has its address, so this fallback
// changes nothing there but for a nil dereference that happens to coincide
// with a truncated file.
func CatchFault(name string, f *os.File, data []byte, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if fa, ok := r.(interface{ Addr() uintptr }); ok && inMapping(data, fa.Addr()) {
			*err = fmt.Errorf("%s: a read of the mapped file faulted (address %#x): it was cut short or changed while in use; keep it unchanged while a run reads it", name, fa.Addr())
			return
		}
		if addressLost(r) && shrunk(f, data) {
			*err = fmt.Errorf("%s: a read of the mapped file faulted (address not reported), and the file is now shorter than its mapping: it was cut short while in use; keep it unchanged while a run reads it", name)
			return
		}
		panic(r)
	}
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
