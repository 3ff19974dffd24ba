# Writes graph/csr_arm64.s, the NEON kernels of the CSR product P·W; run
# with python3 from anywhere (go generate ./graph runs it, see
# generate.go). The .s file is committed; rerun this after changing it.
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
# The file's header and its writing, and the NEON encodings Go's assembler
# lacks, are tile's generators' (common.py, neon.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tile", "asmgen"))
from common import start, write  # noqa: E402
from neon import fadd, fmul_lane  # noqa: E402

DOC = """
The NEON kernels of CSR.Mul (csr_arm64.go): csrRow{width}NEON(y, w, ld,
width, cols, vals, nnz, scale), for width = 1 to 16 columns, sets y[c] =
sum over the row's entries e of v_e·w[cols[e]*ld + c] for c < width, v_e
= scale·vals[e], and returns the row's sum of v_e and of v_e², for nnz >= 1
entries (the width argument is the kernel's own, and unused). The columns
are taken two at a time in V0-V7 (float64x2), an odd last column in the
lower lane of the next register, loaded and stored alone, so no byte of w
or y beyond the width columns is touched. Each product is rounded before
it is added (FMUL by element, then FADD; no fused multiply-add), and the
entries are added in order, into each column independently: the
arithmetic of the portable loop, so the kernels give its bits.
"""

out, w = start(__file__, DOC, tag="arm64")


def kernel(width):
    name = f"csrRow{width}NEON"
    pairs, odd = divmod(width, 2)
    regs = pairs + odd
    w(f"// func {name}(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-80")
    w("""\tMOVD y+0(FP), R2
\tMOVD w+8(FP), R1
\tMOVD ld+16(FP), R3
\tLSL $3, R3
\tMOVD cols+32(FP), R4
\tMOVD vals+40(FP), R5
\tMOVD nnz+48(FP), R6
\tFMOVD scale+56(FP), F9
\tFMOVD ZR, F10
\tFMOVD ZR, F11""")
    for v in range(regs):
        w(f"\tVEOR V{v}.B16, V{v}.B16, V{v}.B16")
    w(f"loop{name}:")
    # v = scale·val in F8 (the lower lane of V8), rs += v, sq += v²; R0
    # the address of w's row cols[e].
    w("""\tMOVWU.P 4(R4), R0
\tFMOVD.P 8(R5), F8
\tFMULD F9, F8, F8
\tFADDD F8, F10, F10
\tFMULD F8, F8, F12
\tFADDD F12, F11, F11
\tMUL R3, R0, R0
\tADD R1, R0, R0""")
    for v in range(regs):
        load = "FMOVQ" if v < pairs else "FMOVD"
        w(f"\t{load} {16*v}(R0), F{16+v}")
        w(fmul_lane(16 + v, 16 + v, 8, 0))
        w(fadd(v, v, 16 + v, "2d"))
    w(f"\tSUBS $1, R6\n\tBNE loop{name}")
    for v in range(regs):
        store = "FMOVQ" if v < pairs else "FMOVD"
        w(f"\t{store} F{v}, {16*v}(R2)")
    w("""\tFMOVD F10, rs+64(FP)
\tFMOVD F11, sq+72(FP)
\tRET
""")


for width in range(1, 17):
    kernel(width)
write(out, "csr_arm64.s")
