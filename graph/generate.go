package graph

// The assembly kernels of package graph (csr_amd64.s) are written by
// asmgen/csr.py, with the file handling of tile's generators, which it
// imports; the directive below runs it (.ci/run checks that the committed
// file is what it writes):
//
//	go generate ./graph

//go:generate python3 asmgen/csr.py
