// Package tile computes products with a large symmetric affinity matrix P
// without ever holding P: P is produced one B×B tile at a time by a Source
// and consumed at once by a pass.
//
// A pass walks the upper triangle of the tile grid only. Tile (I, J) with
// I < J feeds block row I through P_IJ and block row J through its transpose,
// so each off-diagonal tile is generated once and used twice:
//
//	        J=0    J=1    J=2
//	I=0   [ P00 ][ P01 ][ P02 ]      Y_0 += P00 X_0 + P01 X_1 + P02 X_2
//	I=1   [  .  ][ P11 ][ P12 ]      Y_1 += P01ᵀX_0 + P11 X_1 + P12 X_2
//	I=2   [  .  ][  .  ][ P22 ]      Y_2 += P02ᵀX_0 + P12ᵀX_1 + P22 X_2
//
// The Engine offers the passes the solver needs: P·W for a dense n×k matrix
// W, P·S for a one-hot S given by one column index per row (a scatter-add, with
// no factor k), and the row sums and squared Frobenius norm of P. Tiles are
// computed on several goroutines and their contributions are added to the
// output in a fixed tile order (see package ordered), so a pass gives the
// same bits for every number of workers.
//
// Gaussian is the generated source, P_ij = exp(-gamma ||x_i - x_j||^2) over
// the rows of a feature matrix; Standardize prepares its features, and
// AutoBandwidth (the default rule, from the distances to near neighbours)
// and MedianGamma (the median heuristic, for comparison) choose gamma.
// A Gaussian's passes run vectorized kernels (assembly) of the family
// Engine.ISA resolves to, on CPUs that have it: AVX-512 or AVX2 with FMA
// on amd64 (the two give the same bits), NEON (Advanced SIMD) on arm64.
// Engine.Kernel names the kernel in use. The vectorized kernels differ
// from the portable kernel by rounding; the portable kernel runs where
// the CPU lacks the family, or when Engine.ISA is ISAGo.
//
// Pairs walks the same tile grid for an exact nearest-neighbour search:
// it screens the pairs of rows by squared distance against per-row
// thresholds, with dot-product micro-kernels in float32 and an exact
// float64 recheck inside a proven rounding bound, so that every kernel
// reports the same pairs with the same distances.
//
// The vector kernels come in families (ISA): AVX2 with FMA and AVX-512 on
// amd64, Advanced SIMD (NEON) on arm64, in Go assembly written by the
// generators in asmgen (see generate.go), and the portable Go code. A plain
// go build has them all; the family is chosen at run time from the CPU's
// features (ISAAuto), or forced (ISAGo, ISAAVX2, ...), and SupportedISAs
// lists what this CPU runs. FMAPeak measures a family's vector peak.
package tile
