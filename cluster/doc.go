// Package cluster runs the O(n²) work of a run, the search of a kNN graph
// (the exact one as one step, the approximate one's rounds of leaf pairs as
// a step each) and the passes of the Gaussian kernel, as the tasks of job
// steps of a batch system (Slurm), over a run directory on storage that
// every node sees.
//
// The engine does the distribution: no worker lives longer than a step,
// polls storage or talks to another. A Coordinator, inside the allocation,
// writes a pass's input and launches one step (Launcher; Srun); each task
// runs Work, which reads the input, computes the rows of its part and
// writes them under a temporary name that it renames; the coordinator waits
// for the step to exit and reads the parts in task order. A task is a pure
// function of its files: run again, it finds its part and does nothing, so
// a failed step is simply launched again, and a part is only ever read
// whole. The parts are runs of row blocks (tile.Engine.PartRows,
// graph.KNNRows, graph.LeafRoundRows) whose rows have the bits of the single-machine pass, so
// a run gives the same bits for any number of tasks.
//
// # The run directory
//
//	run.json                       the Spec: kernel, n, p, bandwidth, tile edge, ...
//	features.blk                   the features the kernel uses (Features)
//	pass-000007.in                 the input of pass 7 (W, the assignment, a kNN request, or a round of leaf pairs)
//	pass-000007.part-0003          task 3's part of pass 7
//	logs/pass-000007.try-0.task-3.err  task 3's output in the first try of pass 7
//
// A pass's input and parts are removed once the parts are read; the logs
// stay.
//
// # Block files
//
// Every file but run.json is a block file: a header of 72 bytes, then the
// payload, little-endian.
//
//	offset  size  field
//	     0     8  magic "SSNMFBLK"
//	     8     4  version (1)
//	    12     4  kind (Kind)
//	    16     8  pass (0 for the features)
//	    24     4  task
//	    28     4  tasks
//	    32     8  rows
//	    40     8  cols
//	    48     8  source: the run's ID (Spec.ID) for the features and the
//	              inputs; the input's ID (Header.ID) for a part
//	    56     8  payload length in bytes
//	    64     4  CRC-32C of the payload
//	    68     4  CRC-32 (IEEE) of bytes 0..67
//	    72     …  payload (see Kind)
//
// The payloads of the kNN search's files, by section, each a run of
// little-endian values:
//
//	KNNInput        (rows n)          none
//	LeafRoundInput  (rows n, cols T)  T × (int32 I, int32 J): the tiles, leaves I <= J, in order
//	                                  n × float64: every row's bound, its M-th candidate's distance
//	                                  n × int32, or none: every row's input row, by which ties rank (graph.LeafRound.Order)
//	KNNPart         (rows r, cols M)  r × int32: the rows, by index
//	                                  r × int32: their counts of candidates, at most M
//	                                  r·M × float64: the squared distances, ascending, M a row
//	                                  r·M × int32: the candidates, M a row
//
// A part of the exact search holds every row of the part; a part of a
// round of leaf pairs only the part's rows that the round's tiles gave
// candidates.
//
// A task refuses an input whose source is not its run's or whose pass is
// not the one it was launched for; the coordinator takes a part only if
// its source is the ID of the pass's input, so a stale part of an earlier
// try or run is never read. Dump prints a block file's header.
package cluster
