# Writes graph/csr_amd64.s, the vector kernels of the CSR product P·W; run
# with python3 from anywhere (go generate ./graph runs it, see
# generate.go). The .s file is committed; rerun this after changing it.
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
# The file's header and its writing are tile's generators' (common.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tile", "asmgen"))
from common import lanes_table, start, write, ymm_lane_masks, zmm_lane_masks  # noqa: E402

DOC = """
The kernels of CSR.Mul (csr_amd64.go): csrRow{nv}{ISA}(y, w, ld, width,
cols, vals, nnz, scale) sets y[c] = sum over the row's entries e of
v_e·w[cols[e]*ld + c] for the columns c < width, v_e = scale·vals[e], and
returns the row's sum of v_e and of v_e², for nnz >= 1 entries. AVX-512F
kernels keep width <= 8·nv columns in nv zmm accumulators (8 lanes), AVX2
kernels width <= 4·nv in nv ymm accumulators (4 lanes); the lanes at and
above width are masked off in every load and in the store, so no byte of
w or y beyond them is touched. Each product is rounded before it is added
(a multiply, then an add, no FMA), and the entries are added in order,
into each column independently: the arithmetic of the portable loop, so
every kernel gives its bits.
"""

out, w = start(__file__, DOC, tag="amd64")

ARGS = """\tMOVQ y+0(FP), DI
\tMOVQ w+8(FP), SI
\tMOVQ ld+16(FP), R11
\tSHLQ $3, R11
\tMOVQ width+24(FP), CX
\tMOVQ cols+32(FP), R8
\tMOVQ vals+40(FP), R9
\tMOVQ nnz+48(FP), R10
\tVMOVSD scale+56(FP), X9
\tVXORPD X10, X10, X10
\tVXORPD X11, X11, X11"""

# The scalar part of an entry: X8 = v = scale·val, X10 += v, X11 += v²
# (its square rounded in tmp), and AX the address of w's row cols[e].
ENTRY = """\tMOVLQSX (R8), AX
\tVMULSD (R9), X9, X8
\tVADDSD X8, X10, X10
\tVMULSD X8, X8, {tmp}
\tVADDSD {tmp}, X11, X11
\tIMULQ R11, AX
\tADDQ SI, AX"""

NEXT = """\tADDQ $4, R8
\tADDQ $8, R9
\tDECQ R10
\tJNZ {loop}"""

RET = """\tVMOVSD X10, rs+64(FP)
\tVMOVSD X11, sq+72(FP)
\tVZEROUPPER
\tRET
"""


def avx512(nv):
    name = f"csrRow{nv}AVX512"
    w(f"// func {name}(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-80")
    w(ARGS)
    zmm_lane_masks(w, nv)  # width is in CX
    w(f"loop{name}:")
    w(ENTRY.format(tmp="X12"))
    w("\tVBROADCASTSD X8, Z8")
    for v in range(nv):
        w(f"\tVMOVUPD.Z {64*v}(AX), K{v+1}, Z{4+v}")
        w(f"\tVMULPD Z8, Z{4+v}, Z{4+v}")
        w(f"\tVADDPD Z{4+v}, Z{v}, Z{v}")
    w(NEXT.format(loop=f"loop{name}"))
    for v in range(nv):
        w(f"\tVMOVUPD Z{v}, K{v+1}, {64*v}(DI)")
    w(RET)


def avx2(nv):
    name = f"csrRow{nv}AVX2"
    w(f"// func {name}(y, w *float64, ld, width int, cols *int32, vals *float64, nnz int, scale float64) (rs, sq float64)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-80")
    w(ARGS)
    ymm_lane_masks(w, "CX", nv)
    w(f"loop{name}:")
    w(ENTRY.format(tmp="X4"))
    w("\tVBROADCASTSD X8, Y8")
    for v in range(nv):
        w(f"\tVMASKMOVPD {32*v}(AX), Y{12+v}, Y{4+v}")
        w(f"\tVMULPD Y8, Y{4+v}, Y{4+v}")
        w(f"\tVADDPD Y{4+v}, Y{v}, Y{v}")
    w(NEXT.format(loop=f"loop{name}"))
    for v in range(nv):
        w(f"\tVMASKMOVPD Y{v}, Y{12+v}, {32*v}(DI)")
    w(RET)


lanes_table(w)
for nv in (1, 2, 3, 4):
    avx512(nv)
for nv in (1, 2, 3, 4):
    avx2(nv)
write(out, "csr_amd64.s")
