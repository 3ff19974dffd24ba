# Writes tile/sqdist_amd64.s, the vector kernels of SqDistsColumns and
# SqDists; run with
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


def rows_avx2():
    name = "sqDistsRowsAVX2"
    w(f"// func {name}(d, a, x *float64, p, base int, rows *int32, n int)")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-56")
    # DI d, SI a, DX x, R9 a row's bytes, R10 base, BX rows, CX the rows
    # left; R11-R14
    # the group's rows, R8 the features' offset, AX the bytes left of a row.
    w("\tMOVQ d+0(FP), DI\n\tMOVQ a+8(FP), SI\n\tMOVQ x+16(FP), DX\n\tMOVQ p+24(FP), R9\n\tSHLQ $3, R9")
    w("\tMOVQ base+32(FP), R10\n\tMOVQ rows+40(FP), BX\n\tMOVQ n+48(FP), CX")
    w("rgroup:")
    for e, r in enumerate(("R11", "R12", "R13", "R14")):
        w(f"\tMOVLQSX {4*e}(BX), {r}\n\tADDQ R10, {r}\n\tIMULQ R9, {r}\n\tADDQ DX, {r}")
    w("\tVXORPD Y0, Y0, Y0\n\tXORQ R8, R8")
    w("rchunk:")
    w("\tMOVQ R9, AX\n\tSUBQ R8, AX\n\tJZ rstore\n\tCMPQ AX, $32\n\tJLT rtail")

    def chunk(load, feats):
        for e, r in enumerate(("R11", "R12", "R13", "R14")):
            w(load(f"({r})(R8*1)", 4 + e))
        # Y4-Y7 hold rows 0-3; Y8-Y11 get features 0-3 of the four rows.
        w("\tVUNPCKLPD Y5, Y4, Y8\n\tVUNPCKHPD Y5, Y4, Y9")
        w("\tVUNPCKLPD Y7, Y6, Y10\n\tVUNPCKHPD Y7, Y6, Y11")
        w("\tVPERM2F128 $0x20, Y10, Y8, Y4\n\tVPERM2F128 $0x20, Y11, Y9, Y5")
        w("\tVPERM2F128 $0x31, Y10, Y8, Y6\n\tVPERM2F128 $0x31, Y11, Y9, Y7")
        for f in range(4):
            if f in feats:
                w(feats[f])
            w(f"\tVBROADCASTSD {8*f}(SI)(R8*1), Y12")
            w(f"\tVSUBPD Y{4+f}, Y12, Y{4+f}\n\tVMULPD Y{4+f}, Y{4+f}, Y{4+f}\n\tVADDPD Y{4+f}, Y0, Y0")

    chunk(lambda m, z: f"\tVMOVUPD {m}, Y{z}", {})
    w("\tADDQ $32, R8\n\tJMP rchunk")
    # The last 1 to 3 features: lanes below AX/8 loaded (Y13 their mask),
    # features 1 and 2 added only where they exist.
    w("rtail:")
    w("\tMOVQ AX, R15\n\tSHRQ $3, R15\n\tMOVQ R15, X13\n\tVPBROADCASTQ X13, Y13\n\tVPCMPGTQ lanes<>(SB), Y13, Y13")
    chunk(lambda m, z: f"\tVMASKMOVPD {m}, Y13, Y{z}",
          {1: "\tCMPQ AX, $8\n\tJEQ rstore", 2: "\tCMPQ AX, $16\n\tJEQ rstore", 3: "\tJMP rstore"})
    w("rstore:")
    w("\tVMOVUPD Y0, (DI)")
    w("\tADDQ $32, DI\n\tADDQ $16, BX\n\tSUBQ $4, CX\n\tJG rgroup")
    w("\tVZEROUPPER\n\tRET\n")


lanes_table(w)
avx512()
avx2()
rows_avx2()
write(out, "sqdist_amd64.s")
