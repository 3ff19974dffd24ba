package store

import (
	"os"

	"github.com/ssnmf/ssnmf/internal/fault"
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
// mapping (it cannot fault then). It is fault.CatchFile, which says how a
// fault without an address (qemu-user) is told from a nil dereference.
func CatchFault(name string, f *os.File, data []byte, err *error) func() {
	return fault.CatchFile(name, f, data, err)
}
