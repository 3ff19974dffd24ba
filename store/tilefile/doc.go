// Package tilefile stores a symmetric affinity matrix P as an Arrow IPC
// file of tiles, so that a solver can read P from disk, memory-mapped and
// without copies, instead of generating it.
//
// A tile file holds the upper triangle of P's tile grid: for block size B
// and nb = ceil(n/B) block rows, the tiles (I, J) with I <= J, each the
// row-major values of P[I·B : min((I+1)·B, n), J·B : min((J+1)·B, n)]. The
// lower triangle is implied by symmetry. There are nb(nb+1)/2 tiles.
//
// # Layout
//
// The file is a standard Arrow IPC file (the "Feather v2" format): any Arrow
// library can list and read it. Its schema has a single non-nullable column
// named "p" of type float32 or float64. Each record batch is one tile, and
// carries the tile's coordinates in its own custom metadata:
//
//	ARROW1 magic
//	schema        field "p": float32 | float64, not null
//	              metadata  ssnmf.magic   = "ssnmf-tiles"
//	                        ssnmf.version = "1"
//	                        ssnmf.n       = n       (decimal, >= 1)
//	                        ssnmf.block   = B       (decimal, >= 1)
//	                        ssnmf.*       = free-form provenance (kernel, gamma, ...)
//	record batch  tile (0,0)     metadata ssnmf.tile = "0,0"    h·w values, row-major
//	record batch  tile (0,1)     metadata ssnmf.tile = "0,1"
//	...
//	record batch  tile (nb-1,nb-1)
//	footer        block index of the batches
//	ARROW1 magic
//
//	                J=0        J=1        J=2
//	     I=0    [ batch 0 ][ batch 1 ][ batch 2 ]
//	     I=1    [    .    ][ batch 3 ][ batch 4 ]      "." = transpose of the
//	     I=2    [    .    ][    .    ][ batch 5 ]            stored tile
//
// [Write] emits the tiles in this row-major order, but a reader finds each
// tile by its metadata, so a file written in another order is read
// correctly. The record batches must not be compressed: [Open] maps the file
// and uses the values in place.
//
// # Validation
//
// [Open] refuses a file, with an error naming it and the tile at fault,
// whose schema or metadata is wrong (magic, version, n, block, column type),
// that misses a tile or holds one twice, whose tile has the wrong number of
// values or null entries, whose diagonal tile is not exactly symmetric, that
// holds a NaN, an infinity or a negative value, or that is truncated. It
// reads every value once to do so. After Open succeeds, [File.Tile] cannot
// fail for ranges inside P.
//
// [Dump] prints the metadata and tile index of a file for debugging.
package tilefile
