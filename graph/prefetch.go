//go:build amd64 || arm64

package graph

// prefetchJoin starts the loads of the features (rowBytes a row, from x)
// and the bounds of the n candidates cand of a local join, up to the first
// none, while the join before it computes: the joins' rows are scattered
// over the features, and their loads, not the distances, bound a join.
// Written by asmgen/prefetch.py (prefetch_amd64.s, prefetch_arm64.s). It
// changes no value.
//
//go:noescape
func prefetchJoin(x *float64, rowBytes int, bound *uint64, cand *int32, n int)
