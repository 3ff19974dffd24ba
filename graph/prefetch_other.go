//go:build !amd64 && !arm64

package graph

// prefetchJoin does nothing where there is no assembly for it (prefetch.go).
func prefetchJoin(x *float64, rowBytes int, bound *uint64, cand *int32, n int) {}
