//go:build !unix

package store

// mapAnonymous returns size bytes of zeroed memory aligned for float64, on
// systems without mmap.
func mapAnonymous(size int) ([]byte, error) {
	return AsBytes(make([]uint64, (size+7)/8))[:size], nil
}
