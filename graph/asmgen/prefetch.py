# Writes graph/prefetch_amd64.s and graph/prefetch_arm64.s, the prefetch of
# a local join's rows; run with python3 from anywhere (go generate ./graph
# runs it, see generate.go). The .s files are committed; rerun this after
# changing it.
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
# The file's header and its writing are tile's generators' (common.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tile", "asmgen"))
from common import start, write  # noqa: E402

DOC = """
prefetchJoin(x, rowBytes, bound, cand, n) (prefetch.go) asks the CPU to
bring into cache, for each of the n candidates cand[e] of a local join
(v, or ^v for a new one) up to the first none (math.MinInt32), the bytes
[r·rowBytes, (r+1)·rowBytes) of x and the word bound[r] of its row
r = max(v, ^v). A prefetch never faults and changes no value: it only
starts the loads of the next join's rows while this one's computes.
"""


def emit(tag, body):
    """Writes prefetch_{tag}.s: the header, then prefetchJoin with body."""
    out, w = start(__file__, DOC, tag=tag)
    w("// func prefetchJoin(x *float64, rowBytes int, bound *uint64, cand *int32, n int)")
    w("TEXT ·prefetchJoin(SB), NOSPLIT, $0-40")
    w(body)
    write(out, f"prefetch_{tag}.s")


emit("amd64", """\tMOVQ x+0(FP), SI
\tMOVQ rowBytes+8(FP), R8
\tMOVQ bound+16(FP), DI
\tMOVQ cand+24(FP), BX
\tMOVQ n+32(FP), CX
loop:
\tTESTQ CX, CX
\tJLE done
\tMOVLQSX (BX), AX
\tCMPQ AX, $-2147483648
\tJEQ done
\tMOVQ AX, DX
\tNOTQ DX
\tCMPQ AX, DX
\tCMOVQLT DX, AX
\tPREFETCHT0 (DI)(AX*8)
\tIMULQ R8, AX
\tADDQ SI, AX
\tLEAQ -1(AX)(R8*1), DX
lines:
\tPREFETCHT0 (AX)
\tADDQ $64, AX
\tCMPQ AX, DX
\tJLT lines
\tPREFETCHT0 (DX)
\tADDQ $4, BX
\tDECQ CX
\tJMP loop
done:
\tRET
""")
emit("arm64", """\tMOVD x+0(FP), R0
\tMOVD rowBytes+8(FP), R1
\tMOVD bound+16(FP), R2
\tMOVD cand+24(FP), R3
\tMOVD n+32(FP), R4
\tMOVD $-2147483648, R9
loop:
\tCMP $0, R4
\tBLE done
\tMOVW (R3), R5
\tCMP R9, R5
\tBEQ done
\tMVN R5, R6
\tCMP R6, R5
\tCSEL LT, R6, R5, R5
\tADD R5<<3, R2, R7
\tPRFM (R7), PLDL1KEEP
\tMUL R1, R5, R7
\tADD R0, R7, R7
\tADD R1, R7, R8
\tSUB $1, R8, R8
lines:
\tPRFM (R7), PLDL1KEEP
\tADD $64, R7, R7
\tCMP R8, R7
\tBLT lines
\tPRFM (R8), PLDL1KEEP
\tADD $4, R3, R3
\tSUB $1, R4, R4
\tB loop
done:
\tRET
""")
