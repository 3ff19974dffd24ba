// Package fw minimizes the simplicial symmetric NMF objective
//
//	f(W) = 1/4 ||P - W Wᵀ||_F^2   over W >= 0 (n×k) with every row summing to 1,
//
// where P is a symmetric, nonnegative n×n affinity matrix and row i of W is
// point i's soft membership in k clusters.
//
// The feasible set is a product of n probability simplices, so the linear
// minimization oracle of Frank-Wolfe (Zhao & Gordon, "Frank-Wolfe
// Optimization for Symmetric-NMF under Simplicial Constraint") is one-hot:
// row i of the vertex S puts all its mass on argmin_j G_ij, where
// G = W (WᵀW) - P W is the gradient. The Frank-Wolfe gap
// g = <G, W - S> = <G, W> - Σ_i min_j G_ij is nonnegative and zero exactly
// at KKT points; it is every method's stopping certificate.
//
// # One driver, several methods
//
// Minimize is the one loop: it tests the stopping rules of Settings, polls
// Stop, saves checkpoints, records every iteration and ends with an exact
// report from a P·W pass. What differs between methods is behind the small
// Method interface: RowCD (the default: cyclic row-wise pairwise coordinate
// descent, an iteration a sweep over the rows, converging in tens of
// passes), FrankWolfe (the paper's method), the paper's baselines PGD
// (projected gradient with backtracking) and Penalty (the SOF penalty
// method), and KMeans (k-means in feature space, evaluated as a W). A method's parameters are fields of its own type; Settings
// holds what applies to every method. RowCD and FrankWolfe are
// Checkpointers: a run can save its State (Settings.Checkpoint), stop
// between iterations (Settings.Stop; RowCD also within a long sweep) and be
// resumed from the saved state (Settings.Resume) with the same bits as a
// run never interrupted.
//
// # One affinity
//
// The methods never see P itself, only an Affinity: the products P·W and
// P·S (S one-hot), the row sums and ||P||_F^2, and the row access of a
// Sweep for row-wise methods. Tiled makes one of any matrix with tile
// passes and tiles (tile.Engine: the Gaussian kernel generated tile by
// tile, or a tile file); Dense holds P in memory, the reference for tests.
//
// # Streaming identities
//
// Because P (W + λ(S - W)) = (1-λ) P W + λ P S and S is one-hot, a
// Frank-Wolfe iteration costs a single pass over P (for P·S, a scatter-add
// with no factor k). The objective along the step, f(W + λ(S - W)), is a
// quartic in λ whose coefficients come from k×k Gram matrices and the same
// pass, so the exact line search is free. The objective itself is
// f = 1/4 (||P||_F^2 - 2 <W, P W> + ||WᵀW||_F^2). The gradient is never
// stored: it is formed row by row, O(k^2) memory per goroutine, over W and
// P·W, which may live in memory-mapped files.
//
// MinimizePolytope runs Frank-Wolfe over any polytope given by its linear
// minimization oracle, as in the paper's Section 4.
//
// Every reduction is split into fixed chunks of rows whose partial sums are
// added in chunk order, so a run gives the same bits for any number of
// workers, given the same Affinity. On amd64, RowCD's strip sweep multiplies
// the changes of W with the tiles by assembly kernels chosen at run time
// (strip_amd64.s: AVX-512F, else AVX2 with FMA), whose fused multiply-adds
// give the same bits on either family but may differ in the last bits from
// the portable loops (products rounded) of CPUs without them and of arm64.
package fw
