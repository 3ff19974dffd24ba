//go:build linux && amd64

// The arm64 tests run under qemu-user, which takes madvise's advice without
// passing it on (its target_madvise), so there the huge pages cannot be
// seen: this test is amd64's.

package store

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAnonymousHugePages checks that memory of MapAnonymous is backed by
// huge pages once touched, where the kernel's transparent huge pages are
// on (always or madvise), and that advice on memory too small for one
// does nothing.
func TestAnonymousHugePages(t *testing.T) {
	adviseHuge(make([]byte, 100)) // smaller than a huge page: nothing
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages off here (%q, %v)", strings.TrimSpace(string(mode)), err)
	}
	b, err := MapAnonymous(8 * hugePage)
	if err != nil {
		t.Fatal(err)
	}
	defer UnmapAnonymous(b)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if kb := anonHugeKB(t, uintptr(unsafe.Pointer(&b[0]))); kb == 0 {
		t.Errorf("the anonymous mapping has no huge pages (AnonHugePages 0 kB)")
	}
}

// anonHugeKB returns the AnonHugePages of the mapping of this process
// that holds addr, from /proc/self/smaps.
func anonHugeKB(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's first line: lo-hi perms ...
			var lo, hi uintptr
			_, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi)
			in = err == nil && lo <= addr && addr < hi
			continue
		}
		if in && fields[0] == "AnonHugePages:" && len(fields) > 1 {
			var kb int
			fmt.Sscanf(fields[1], "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return 0
}
