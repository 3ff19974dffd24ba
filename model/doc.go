// Package model holds a solved clustering as a file that new rows are
// assigned against: the memberships W of the training rows, their Gram
// matrix WᵀW, and what the affinity of a new row to the training rows
// needs. Its one idea is the out-of-sample rule of simplicial symmetric
// NMF: P ≈ W Wᵀ, so a new row x with affinity row p_x to the training rows
// should satisfy p_x ≈ W w_x, and its memberships are
//
//	w_x = argmin over the simplex of ‖p_x - W w‖² = ‖p_x‖² - 2 p_xᵀW w + wᵀ(WᵀW)w,
//
// a k-dimensional convex quadratic program that Simplex solves exactly.
// For a training row, p_x is its row of P, and the KKT conditions of this
// problem at W_i are those of the solve's objective 1/4‖P - WWᵀ‖² in row i
// (both gradients are (WᵀW)W_i - WᵀP_i): a solve's optimum predicts its
// own rows back.
//
// p_x is built as the solve built P. For the kNN graph (Build records M,
// the weights, the self-tuning scales σ_j, each training row's reach, the
// squared distance of its M-th neighbour, its M nearest rows, and the
// scale c): x's own M
// nearest training rows give half an edge each and the training rows whose
// reach x is in give the other half, each weighing c·exp(-d²/(σ_x σ_j)), so
// a training row gets exactly its row of the exact graph. The neighbours
// are found by scanning every training row or, approximately, the rows of
// the leaves (runs of Meta.Leaf rows, in the order of graph.Partition)
// whose centroids are nearest, followed by a best-first walk of the
// training rows' neighbour lists (Options). For the Gaussian kernel p_x is
// the kernel row against every training row.
//
// A table of new rows, as store/input reads it into a work directory
// (WorkDir), is tuned (TuneTable) and predicted in batches (PredictTable)
// into a matrix file there, its errors naming the table's rows and
// columns; PredictFile does all three for a file, its columns the model's
// features by name unless told otherwise, and "ssnmf predict" runs it.
//
// # File format
//
// A model is a directory holding one file, model.ssnmf, written by Save
// into a new directory that is then renamed over the old one, and read by
// Open through a read-only memory map, so that any number of processes may
// read it at once without a lock. All integers and floats are
// little-endian; every section starts at a multiple of 8 bytes, padded
// with zeros, so that its float64s are read in place.
//
//	offset        size  field
//	0                8  magic "SSNMFMOD"
//	8                4  format version (uint32), 1
//	12               4  section count c (uint32), at most 64
//	16            24·c  section table, one entry a section:
//	                      kind (uint32), CRC-32C of the section (uint32),
//	                      offset (uint64), length in bytes (uint64)
//	16+24·c          4  CRC-32C (Castagnoli) of the bytes before it
//	...                 zero padding to a multiple of 8
//	                    the sections, in table order:
//	  kind 1  meta       JSON of Meta: affinity, n, p, k, feature names,
//	                     standardize, neighbors, weights, sigma_floor,
//	                     scale, gamma, leaf, and for the record search,
//	                     input, method
//	  kind 2  mean       p float64: the means of the raw features
//	  kind 3  std        p float64: their population standard deviations
//	  kind 4  features   n×p float64: the training rows, standardized,
//	                     in leaf order
//	  kind 5  W          n×k float64: their memberships, same order
//	  kind 6  gram       k×k float64: WᵀW
//	  kind 7  sigma      n float64 (kNN only): the self-tuning scales
//	  kind 8  reach      n float64 (kNN only): squared M-th distances
//	  kind 9  centroids  ⌈n/leaf⌉×p float64: the leaves' means
//	  kind 10 lists      n×M int32 (kNN only): each row's M nearest rows
//	                     by (d², row), itself first, in leaf numbering
//
// Open checks the magic, the version (a model of another version is
// refused with a VersionError naming both versions), the header's and
// every section's checksum, the sections' bounds and lengths against n, p
// and k, and that every value is finite, W nonnegative and the scales
// positive; FuzzDecode feeds it damaged files. Dump prints a model file;
// "ssnmf dump DIR" runs it.
package model
