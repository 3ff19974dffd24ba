// Package fw minimizes the simplicial symmetric NMF objective
//
//	f(W) = 1/4 ||P - W Wᵀ||_F^2   over W >= 0 (n×k) with every row summing to 1
//
// by the Frank-Wolfe method of Zhao & Gordon, "Frank-Wolfe Optimization for
// Symmetric-NMF under Simplicial Constraint". Row i of W is point i's soft
// membership in k clusters.
//
// The feasible set is a product of n probability simplices, so the linear
// minimization oracle is one-hot: row i of the vertex S puts all its mass on
// argmin_j G_ij, where G = W (WᵀW) - P W is the gradient. The Frank-Wolfe gap
// g = <G, W - S> is nonnegative and zero exactly at KKT points; it is the
// stopping certificate.
//
// The solver never sees P itself, only an Affinity that multiplies by it.
// Because P (W + λ(S - W)) = (1-λ) P W + λ P S and S is one-hot, an iteration
// costs a single pass over P (for P·S, a scatter-add with no factor k);
// P·W is carried from step to step and recomputed by a full pass every
// Settings.Refresh iterations and before the final report. The objective
// along the step, f(W + λ(S - W)), is a quartic in λ whose coefficients come
// from k×k Gram matrices and the same pass, so the exact line search is free.
// The gradient is never stored: it is formed row by row, O(k^2) memory per
// goroutine, over W and P·W, which may live in memory-mapped files.
//
// A run can save its state (Settings.Checkpoint), stop between iterations
// (Settings.Stop) and be resumed from the saved state (Settings.Resume) with
// the same bits as a run never interrupted.
//
// The package holds other methods for the same problem, sharing Problem,
// Result and the Iteration records: MinimizeRowCD, cyclic row-wise pairwise
// coordinate descent (an iteration is a sweep over the rows, one pass over P,
// and it converges in far fewer passes than Frank-Wolfe; it checkpoints and
// resumes like Minimize), and the paper's baselines MinimizePGD (projected
// gradient with backtracking) and MinimizePenalty (the SOF penalty method). MinimizePolytope runs Frank-Wolfe
// over any polytope given by its linear minimization oracle, as in the
// paper's Section 4.
//
// Every reduction is split into fixed chunks of rows whose partial sums are
// added in chunk order, so a run gives the same bits for any number of
// workers, given the same Affinity.
package fw
