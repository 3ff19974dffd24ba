# Writes tile/sqdist_amd64.s, the vector kernels of SqDistsColumns and
# SqDistPairs; run with python3 from anywhere (go generate ./tile runs it,
# see generate.go). The .s file is committed; rerun this after changing it.
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

The kernel of SqDistPairs, sqDistPairsAVX2(d, x, p, i, j, n), sets d[e]
to the same sum for the rows i[e] and j[e] of x (row r's features at
x[r*p:]), n a positive multiple of 4, p >= 1: four pairs a group, one a
lane. A group's rows are loaded 4 features at a time (the last 1 to 3
masked, so no byte past a row is read), subtracted, and the differences
transposed in registers (two unpacks and two 128-bit permutes a pair);
then each feature's difference is squared and added in order, as in
sqDistsCol. It needs AVX2 only, and is the kernel of the AVX2 and
AVX-512 families alike.
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


def pairs_avx2():
    name = "sqDistPairsAVX2"
    w(f"// func {name}(d, x *float64, p int, i, j *int32, n int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $16-48")
    # DX x, R9 a row's bytes, BX i, SI j, CX the pairs left, R8 the
    # features' offset; R10-R13 the group's rows i, R14, R15, AX and DI
    # its rows j (d is kept in its argument); full and tail the bytes of
    # the whole groups of 4 features and the features left, whose lanes
    # Y15 masks.
    w("\tMOVQ x+8(FP), DX\n\tMOVQ p+16(FP), R9\n\tMOVQ i+24(FP), BX\n\tMOVQ j+32(FP), SI\n\tMOVQ n+40(FP), CX")
    w("\tMOVQ R9, AX\n\tANDQ $3, AX\n\tMOVQ AX, tail-16(SP)\n\tMOVQ AX, X15\n\tVPBROADCASTQ X15, Y15\n\tVPCMPGTQ lanes<>(SB), Y15, Y15")
    w("\tSHLQ $3, R9\n\tMOVQ R9, AX\n\tANDQ $-32, AX\n\tMOVQ AX, full-8(SP)")
    w("pgroup:")
    for e, r in enumerate(("R10", "R11", "R12", "R13")):
        w(f"\tMOVLQSX {4*e}(BX), {r}\n\tIMULQ R9, {r}\n\tADDQ DX, {r}")
    for e, r in enumerate(("R14", "R15", "AX", "DI")):
        w(f"\tMOVLQSX {4*e}(SI), {r}\n\tIMULQ R9, {r}\n\tADDQ DX, {r}")
    w("\tVXORPD Y0, Y0, Y0\n\tXORQ R8, R8")
    pairs = list(zip(("R10", "R11", "R12", "R13"), ("R14", "R15", "AX", "DI")))

    def chunk(tail):
        for e, (ri, rj) in enumerate(pairs):
            if tail:
                w(f"\tVMASKMOVPD ({ri})(R8*1), Y15, Y{4+e}\n\tVMASKMOVPD ({rj})(R8*1), Y15, Y{8+e}")
                w(f"\tVSUBPD Y{8+e}, Y{4+e}, Y{4+e}")
            else:
                w(f"\tVMOVUPD ({ri})(R8*1), Y{4+e}\n\tVSUBPD ({rj})(R8*1), Y{4+e}, Y{4+e}")
        # Y4-Y7 hold the pairs' differences; Y8-Y11, then Y4-Y7 again,
        # features 0-3 of the four pairs.
        w("\tVUNPCKLPD Y5, Y4, Y8\n\tVUNPCKHPD Y5, Y4, Y9")
        w("\tVUNPCKLPD Y7, Y6, Y10\n\tVUNPCKHPD Y7, Y6, Y11")
        w("\tVPERM2F128 $0x20, Y10, Y8, Y4\n\tVPERM2F128 $0x20, Y11, Y9, Y5")
        w("\tVPERM2F128 $0x31, Y10, Y8, Y6\n\tVPERM2F128 $0x31, Y11, Y9, Y7")
        for f in range(4):
            if tail and f > 0:
                w(f"\tCMPQ tail-16(SP), ${f}\n\tJEQ pstore")
            w(f"\tVMULPD Y{4+f}, Y{4+f}, Y{4+f}\n\tVADDPD Y{4+f}, Y0, Y0")
            if tail and f == 2:
                break

    w("pchunk:")
    w("\tCMPQ R8, full-8(SP)\n\tJGE ptail")
    chunk(False)
    w("\tADDQ $32, R8\n\tJMP pchunk")
    w("ptail:")
    w("\tCMPQ tail-16(SP), $0\n\tJEQ pstore")
    chunk(True)
    w("pstore:")
    w("\tMOVQ d+0(FP), R10\n\tVMOVUPD Y0, (R10)\n\tADDQ $32, R10\n\tMOVQ R10, d+0(FP)")
    w("\tADDQ $16, BX\n\tADDQ $16, SI\n\tSUBQ $4, CX\n\tJG pgroup")
    w("\tVZEROUPPER\n\tRET\n")


lanes_table(w)
avx512()
avx2()
pairs_avx2()
write(out, "sqdist_amd64.s")
