package store

import "golang.org/x/sys/unix"

// hugePage is the size of a transparent huge page on the architectures Go
// runs Linux on that matter here (amd64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// adviseHuge asks the kernel to back b, memory of [MapAnonymous] not yet
// touched, with transparent huge pages (MADV_HUGEPAGE), where b spans at
// least one: a fault then maps 2 MiB at once instead of 4 KiB, and a pass
// that reads rows at random misses the TLB far less (the spectral
// embedding at 10⁶ rows: a third less time; at 10⁷, 70.6 s against 115.8
// and 116.1 s with its blocks and coarse graphs advised in part or not at
// all). It is advice: a kernel built without transparent huge pages, or
// set never to use them, refuses or ignores it, and the memory is then
// what it would have been, so its error is not one of the caller's.
func adviseHuge(b []byte) {
	if len(b) >= hugePage {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice only: see above
	}
}
