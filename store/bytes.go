package store

import "unsafe"

// AsBytes returns the memory of v viewed as bytes, without copying: the
// elements in the host's byte order, which is little-endian on every host
// that can use the package's file formats in place. The result aliases v,
// so stores into either show in the other. It returns nil for an empty v.
func AsBytes[T ~float32 | ~float64 | ~int32 | ~uint64](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0])))
}
