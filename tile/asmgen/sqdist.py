# Writes tile/sqdist_amd64.s, the vector kernels of SqDistsColumns; run with
# python3 from anywhere (go generate ./tile runs it, see generate.go). The
# .s file is committed; rerun this after changing it.
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
from common import lanes_table, start, write, ymm_lane_masks, zmm_lane_masks

out, w = start(__file__, """
The kernels of SqDistsColumns (sqdist_amd64.go): sqDistsCol{ISA}(d, a, xt,
p, ld, n) sets d[j] = the sum over the features q < p, in order, of
(a[q] - xt[q*ld + j])², each square rounded before it is added (a
subtract, a multiply and an add, no FMA), for the n >= 1 columns j of the
transposed block xt: SqDist's arithmetic, one column a lane, so every
kernel gives its bits. Columns are taken up to 4 vectors at a time
(AVX-512F: 32 columns in zmm, AVX2: 16 in ymm), with 4 independent sums;
the lanes at and above n are masked off in every load, so no byte of xt
beyond the n columns is read, but every vector of a group is stored
whole: d must hold n rounded up to 32 (AVX-512) or 16 (AVX2) values. (A
masked store, and a load of what it stored, cost some 5 times the whole
group's arithmetic on the Zen 4 these were timed on.)
""", tag="amd64")

ARGS = """\tMOVQ d+0(FP), DI
\tMOVQ a+8(FP), SI
\tMOVQ xt+16(FP), DX
\tMOVQ p+24(FP), R8
\tMOVQ ld+32(FP), R9
\tSHLQ $3, R9
\tMOVQ n+40(FP), R10"""


def avx512():
    name = "sqDistsColAVX512"
    w(f"// func {name}(d, a, xt *float64, p, ld, n int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-48")
    w(ARGS)
    w("group512:")
    # K1-K4: the lanes below n of this group of 32 columns.
    w("\tMOVQ R10, CX\n\tCMPQ CX, $32\n\tJLE mask512\n\tMOVQ $32, CX\nmask512:")
    zmm_lane_masks(w, 4)
    # AX walks a, R11 the group's column in xt's feature rows.
    w("\tMOVQ SI, AX\n\tMOVQ DX, R11\n\tMOVQ R8, R12\n\tTESTQ R12, R12\n\tJZ store512")
    w("feature512:")
    w("\tVBROADCASTSD (AX), Z8")
    for v in range(4):
        w(f"\tVMOVUPD.Z {64*v}(R11), K{v+1}, Z{4+v}")
        w(f"\tVSUBPD Z{4+v}, Z8, Z{4+v}")
        w(f"\tVMULPD Z{4+v}, Z{4+v}, Z{4+v}")
        w(f"\tVADDPD Z{4+v}, Z{v}, Z{v}")
    w("\tADDQ $8, AX\n\tADDQ R9, R11\n\tDECQ R12\n\tJNZ feature512")
    w("store512:")
    for v in range(4):
        w(f"\tVMOVUPD Z{v}, {64*v}(DI)")
    w("\tADDQ $256, DI\n\tADDQ $256, DX\n\tSUBQ $32, R10\n\tJG group512")
    w("\tVZEROUPPER\n\tRET\n")


def avx2():
    name = "sqDistsColAVX2"
    w(f"// func {name}(d, a, xt *float64, p, ld, n int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-48")
    w(ARGS)
    w("group2:")
    # Y12-Y15: the lanes below n (at most 16 count).
    ymm_lane_masks(w, "R10", 4)
    w("\tMOVQ SI, AX\n\tMOVQ DX, R11\n\tMOVQ R8, R12\n\tTESTQ R12, R12\n\tJZ store2")
    w("feature2:")
    w("\tVBROADCASTSD (AX), Y8")
    for v in range(4):
        w(f"\tVMASKMOVPD {32*v}(R11), Y{12+v}, Y{4+v}")
        w(f"\tVSUBPD Y{4+v}, Y8, Y{4+v}")
        w(f"\tVMULPD Y{4+v}, Y{4+v}, Y{4+v}")
        w(f"\tVADDPD Y{4+v}, Y{v}, Y{v}")
    w("\tADDQ $8, AX\n\tADDQ R9, R11\n\tDECQ R12\n\tJNZ feature2")
    w("store2:")
    for v in range(4):
        w(f"\tVMOVUPD Y{v}, {32*v}(DI)")
    w("\tADDQ $128, DI\n\tADDQ $128, DX\n\tSUBQ $16, R10\n\tJG group2")
    w("\tVZEROUPPER\n\tRET\n")


lanes_table(w)
avx512()
avx2()
write(out, "sqdist_amd64.s")
