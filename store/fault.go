package store

import (
	"fmt"
	"runtime/debug"
)

// CatchFault guards reads of a memory-mapped file named name. A file cut
// short or removed under its mapping (by another process, or a full disk)
// makes a read of the lost pages fault with SIGBUS, which by default ends
// the program with a stack trace. Between CatchFault and the call of the
// function it returns, which must be deferred by the same goroutine:
//
//	defer store.CatchFault(name, &err)()
//
// such a fault is a panic instead, which that function recovers into *err,
// naming the file; other panics go on.
func CatchFault(name string, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if f, ok := r.(interface{ Addr() uintptr }); ok {
			*err = fmt.Errorf("%s: a read of the mapped file faulted (address %#x): it was cut short or changed while in use; keep it unchanged while a run reads it", name, f.Addr())
			return
		}
		panic(r)
	}
}
