// Package synth makes synthetic data sets: the seeded Gaussian mixtures
// that "ssnmf gen" writes. Its one idea is a mixture drawn row by row
// from one seeded stream (the k centers first, then each row's component
// and noise), so that the values depend only on the seed and the shape:
// not on the batch size, nor on the format, Parquet, Arrow IPC or CSV
// (plain or gzip-compressed), that Write puts them in. A data set of any
// number of rows is generated and written BatchRows rows at a time, in
// memory that does not grow with the rows.
package synth
