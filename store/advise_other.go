//go:build !unix

package store

// adviseSequential does nothing where a mapping is memory of the process.
func adviseSequential([]byte) error { return nil }

// adviseRandom does nothing where a mapping is memory of the process.
func adviseRandom([]byte) error { return nil }

// adviseNormal does nothing where a mapping is memory of the process.
func adviseNormal([]byte) error { return nil }

// prefetch does nothing where a mapping is memory of the process.
func prefetch(addr, n uintptr) error { return nil }
