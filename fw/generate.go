package fw

// The assembly kernels of the strip products (strip_amd64.s) are written
// by asmgen/strip.py, which overwrites the committed file (marked as
// generated); the directive below runs it:
//
//	go generate ./fw
//
// It is in this file, built on every architecture, so that go generate on
// any machine writes the file.

//go:generate python3 asmgen/strip.py
