// Package score measures how well a hard clustering agrees with
// ground-truth classes.
//
// A hard clustering assigns each of n points exactly one cluster label; the
// ground truth assigns each point exactly one class label. Both are given as
// slices of non-negative ints of equal length, where truth[i] and pred[i]
// label the same point. Labels are names, not numbers: they need not be
// contiguous or start at zero, and renaming the clusters (or the classes)
// never changes a score.
//
// All three measures are computed from the contingency table, whose entry
// (i, j) counts the points of class i placed in cluster j. The table is built
// in a single pass over the points, so each measure costs O(n + c*k) for c
// classes and k clusters, plus O(m³) with m = max(c, k) for the matching step
// of [Accuracy].
//
//   - [ARI], the adjusted Rand index of Hubert and Arabie, counts the pairs of
//     points on which the two partitions agree and corrects for the agreement
//     expected by chance. It is 1 for identical partitions, near 0 for
//     independent ones, and can be negative.
//   - [NMI], normalized mutual information, divides the mutual information of
//     the two partitions by the arithmetic mean of their entropies. It lies in
//     [0, 1].
//   - [Accuracy] matches clusters to classes one-to-one so as to maximize the
//     number of correctly placed points (the Hungarian algorithm) and reports
//     that number as a fraction of n.
//
// [Compare] returns all three at once, from a single contingency table.
//
// Degenerate inputs, such as partitions with a single cluster, follow the
// conventions of scikit-learn; each function documents the cases it treats
// specially.
package score
