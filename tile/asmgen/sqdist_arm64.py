# Writes tile/sqdist_arm64.s, the NEON kernel of SqDistsColumns; run with
# python3 from anywhere (go generate ./tile runs it, see generate.go). The
# .s file is committed; rerun this after changing it.
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
from common import start, write
from neon import fadd, fmul, fsub

out, w = start(__file__, """
The kernel of SqDistsColumns (sqdist_arm64.go): sqDistsColNEON(d, a, xt,
p, ld, n) sets d[j] = the sum over the features q < p, in order, of
(a[q] - xt[q*ld + j])², each square rounded before it is added (FSUB,
FMUL, FADD; no fused multiply-add), for the columns j < n of the
transposed block xt: SqDist's arithmetic, one column a lane, so it gives
its bits. n is a positive multiple of 8 (the caller takes the rest): the
columns are taken 8 at a time, in V0-V3 (float64x2), 4 independent sums.
""", tag="arm64")

w("// func sqDistsColNEON(d, a, xt *float64, p, ld, n int)")
w("TEXT ·sqDistsColNEON(SB), NOSPLIT, $0-48")
w("""\tMOVD d+0(FP), R0
\tMOVD a+8(FP), R1
\tMOVD xt+16(FP), R2
\tMOVD p+24(FP), R3
\tMOVD ld+32(FP), R4
\tLSL $3, R4
\tMOVD n+40(FP), R5
group:""")
for v in range(4):
    w(f"\tVEOR V{v}.B16, V{v}.B16, V{v}.B16")
w("""\tMOVD R1, R6
\tMOVD R2, R7
\tMOVD R3, R8
feature:
\tVLD1R (R6), [V8.D2]
\tADD $8, R6
\tVLD1 (R7), [V4.D2, V5.D2, V6.D2, V7.D2]""")
for v in range(4):
    w(fsub(4 + v, 8, 4 + v, "2d"))
    w(fmul(4 + v, 4 + v, 4 + v, "2d"))
    w(fadd(v, v, 4 + v, "2d"))
w("""\tADD R4, R7
\tSUBS $1, R8
\tBNE feature
\tVST1 [V0.D2, V1.D2, V2.D2, V3.D2], (R0)
\tADD $64, R0
\tADD $64, R2
\tSUBS $8, R5
\tBNE group
\tRET
""")
write(out, "sqdist_arm64.s")
