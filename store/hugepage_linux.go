package store

import "golang.org/x/sys/unix"

// hugePage is the size of a transparent huge page on the architectures Go
// runs Linux on that matter here (amd64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// AdviseHuge asks the kernel to back b, memory of [MapAnonymous] not yet
// touched, with transparent huge pages (MADV_HUGEPAGE), where b spans at
// least one: a fault then maps 2 MiB at once instead of 4 KiB, and a pass
// that reads rows at random misses the TLB far less (the spectral
// embedding's blocks at 10⁶ rows: a third less time). It suits memory that
// is used whole; memory used in part would be zeroed 2 MiB at a time
// (with the kNN search's scratch advised so, its neighbour descent at 10⁷
// rows ran 10-36% slower a round, one run against one). It is advice: a kernel built without
// transparent huge pages, or set never to use them, refuses or ignores
// it, and the memory is then what it would have been, so its error is
// not one of the caller's. Off Linux it does nothing.
func AdviseHuge(b []byte) {
	if len(b) >= hugePage {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: see above
	}
}
