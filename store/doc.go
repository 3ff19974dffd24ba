// Package store owns every byte that ssnmf reads from or writes to disk:
// the memory-mapped matrices of a solver's work directory, the feature
// tables it reads as input, and the files it writes as output.
//
// # Matrices
//
// The solver's large working matrices live in files rather than on the Go
// heap so that a run can exceed the memory a process would comfortably
// allocate and so that the operating system, not the garbage collector,
// decides which pages stay resident. A [Matrix] is a rows×cols matrix of
// float64 stored row-major in such a file and memory-mapped read-write with
// MAP_SHARED: stores through [Matrix.Data] or [Matrix.Row] are stores into
// the page cache, made durable by [Matrix.Sync]. On systems without mmap the
// file is read into memory instead and written back by Sync and Close.
//
// A matrix file is a single 4096-byte header page followed by the elements.
// Because the data begins on a page boundary, the mapped bytes can be viewed
// as a []float64 directly, without copying or decoding. Integers in the
// header and the elements themselves are little-endian; the elements are
// used in place, so matrices can be created or opened only on little-endian
// hosts.
//
//	offset   size   field
//	     0      8   magic "SSNMFMAT"
//	     8      4   format version, uint32 = 1
//	    12      4   element kind, uint32 = 1 (float64)
//	    16      8   rows, uint64 ≥ 1
//	    24      8   cols, uint64 ≥ 1
//	    32      8   data offset, uint64 = 4096
//	    40      4   CRC-32 (IEEE) of bytes [0, 40)
//	    44   4052   reserved, written as zero, ignored on read
//	  4096  8·r·c   elements, float64, row-major
//
//	+----------+---------+------+------+------+--------+-----+----------+
//	| SSNMFMAT | version | kind | rows | cols | offset | crc | 0 ... 0  |  header page
//	+----------+---------+------+------+------+--------+-----+----------+  4096 bytes
//	| a[0][0]     a[0][1]     ...     a[0][cols-1]                      |
//	| a[1][0]     a[1][1]     ...     a[1][cols-1]                      |  data
//	| ...                                                               |  rows·cols·8 bytes
//	| a[rows-1][0]            ...     a[rows-1][cols-1]                 |
//	+-------------------------------------------------------------------+
//
// The length of a valid file is exactly 4096 + rows·cols·8 bytes; [OpenMatrix]
// rejects a file that is shorter (truncated) or longer (extended), and a
// header whose magic, version, kind, checksum or dimensions are wrong.
// [DumpMatrix] prints a file's header and leading rows for debugging.
//
// # Scratch
//
// A [ScratchSpace] grants scratch memory, anonymous up to a budget, then
// mapped from unlinked files of a directory ([Scratch]). An [Aside] sets
// items aside in such files by group of the rows they go to, and hands
// them back group by group in the order they were set aside: what a pass
// over data larger than memory gives to rows far from the rows at hand is
// then written once and read once, in order, rather than dirtying a page
// anywhere per item. Neither has a format: their files live and die with
// the process.
//
// # Feature tables
//
// A [Table] is a data set read from a file: a dense row-major float64
// feature matrix and, when the file has one, a column of ground-truth labels
// mapped to dense class indices. Every reader chooses the columns by the
// same [TableOptions] ([SelectColumns]): the feature columns by name, the
// label column by name or, by default, the column named "label".
//
//   - [ReadCSV] and [ParseCSV] read comma-separated values with a header
//     record; gzip-compressed input is recognized by its magic bytes.
//   - [ReadArrow] reads an Arrow IPC file or stream (told apart by the file
//     magic), [ReadArrowFile] and [ReadArrowStream] one of each, and
//     [ReadRecords] any sequence of Arrow record batches; the Parquet
//     reader in package parquetio is built on it. Feature columns may be of
//     any integer or floating-point type, the label column of an integer,
//     floating-point or string type, possibly dictionary-encoded.
//
// Readers consume their input a record or a record batch at a time. With
// TableOptions.MapDir set, the features are written as they are read to the
// matrix file FeaturesFile in that directory, which the table then maps (see
// Matrices above): a large input is converted once and never held in memory
// twice, and its pages are file-backed memory the kernel can reclaim. The
// features are float64 either way, the type of the kernel computations;
// integers beyond 2^53 in magnitude are rounded.
//
// Every error names the input and, where it applies, the line (CSV) or the
// row counted from 0 ("row index 12", Arrow and Parquet) and the column at
// fault, so that a bad cell in a file of millions of rows can be found
// without a debugger: nulls, NaN, infinities and non-numeric feature columns
// are all refused. Malformed Arrow input is an error, never a panic: the
// metadata of every IPC message is checked before arrow-go decodes it (see
// ipcverify.go for why).
//
// # Output
//
// [WriteFileAtomic] and [CreateAtomic] replace a file all at once or not at
// all (through a symbolic link, the file it points to). An output that
// cannot be replaced by a rename, one that exists and is not a regular
// file (a character device, a named pipe) or standard output
// ([WriteThrough]), is written directly instead. [WriteMembershipCSV] and [WriteMembershipArrow] write a membership
// matrix W with the columns of [MembershipSchema] (id, w1..wk, cluster, confidence), so
// that it reads back bit-exactly; [MembershipBatches] cuts it into the
// record batches every writer, Parquet's included, uses. [CSVWriter]
// writes any record batches of numeric columns as CSV, with the Write and
// Close of Arrow's IPC file writer and of the Parquet writer.
package store
