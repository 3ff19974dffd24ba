package graph

// The assembly of package graph (csr_amd64.s, csr_arm64.s, the kernels of
// the CSR product, and prefetch_amd64.s, prefetch_arm64.s, the local
// join's prefetch) is written by asmgen/csr.py, asmgen/csr_arm64.py and
// asmgen/prefetch.py, with the file handling (and NEON encodings) of
// tile's generators, which they import; the directives below run them
// (.ci/run checks that the committed files are what they write):
//
//	go generate ./graph

//go:generate python3 asmgen/csr.py
//go:generate python3 asmgen/csr_arm64.py
//go:generate python3 asmgen/prefetch.py
