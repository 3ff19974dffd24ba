package graph

// The assembly kernels of package graph (csr_amd64.s, csr_arm64.s) are
// written by asmgen/csr.py and asmgen/csr_arm64.py, with the file handling
// (and NEON encodings) of tile's generators, which they import; the
// directives below run them (.ci/run checks that the committed
// file is what it writes):
//
//	go generate ./graph

//go:generate python3 asmgen/csr.py
//go:generate python3 asmgen/csr_arm64.py
