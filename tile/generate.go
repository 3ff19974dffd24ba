package tile

// The assembly kernels of package tile are written by the Python scripts
// in asmgen, which overwrite the .s files (committed, marked as
// generated); the directives below run them:
//
//	go generate ./tile
//
// (.ci/run does, and fails if the output differs from the committed
// files). The scripts are plain Python rather than avo, the Go ecosystem's
// assembly generator, because one generator language must cover amd64
// and arm64 alike and avo emits amd64 only; the scripts share their
// register blocking and file handling (common.py) and the encodings of the
// arm64 instructions Go's assembler lacks (neon.py), and stay a page or
// two each.
//
// The directives are in this file, built on every architecture, so that
// go generate on any machine writes the files of all of them.

//go:generate python3 asmgen/gen32.py
//go:generate python3 asmgen/gemm32.py
//go:generate python3 asmgen/gemm64.py
//go:generate python3 asmgen/dense.py
//go:generate python3 asmgen/gen_avx2.py
//go:generate python3 asmgen/gemm_avx2.py
//go:generate python3 asmgen/dense_avx2.py
//go:generate python3 asmgen/screen.py
//go:generate python3 asmgen/screen_arm64.py
//go:generate python3 asmgen/dense_arm64.py
//go:generate python3 asmgen/probe.py
//go:generate python3 asmgen/sqdist.py
//go:generate python3 asmgen/sqdist_arm64.py
