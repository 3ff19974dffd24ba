# Writes the assembly file named at the end; run with python3 from anywhere.
# The .s files in tile/ are committed; rerun this after changing it (or run
# go generate in tile/, see generate.go).
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
from common import start, write

# Emits tile/dense_avx2_amd64.s: the AVX2 kernels of the dense Gaussian
# tiles besides the dot products and P·W products (gen_avx2_amd64.s,
# gemm_avx2_amd64.s): the vectorized exp in both precisions, the one-hot
# consumer of P·S and row sums, and the float64 vector add of the commit.
out, w = start(__file__, """
exp32AVX2 and exp64AVX2 are exp32Slice and exp64Slice (dense_amd64.s) for
AVX2 and FMA: they replace each value v of t (len a multiple of 8, resp.
4; a shorter rest is left as it is) by exp(min(v, 0)), with the same
instructions on the same operands up to the last step, y·2^k, which AVX2
has no VSCALEF for: k is split into h = floor(k/2) and k - h, each
becomes the float 2^h (h + 1.5·2^m + bias, whose low bits then hold the
biased exponent, shifted left by m, the width of the mantissa; the
constants of expScale32 and expScale64), and y is multiplied by the two.
The first product is exact (y·2^h is a normal number for every k from
the clamp up), the second rounds once, as VSCALEF does, subnormal or 0
results included; so they give exp32Slice's and exp64Slice's bits.
The constants that do not fit in registers are read from memory.

consume16AVX2 is consume16 (dense_amd64.s) for AVX2: it adds an hp×wp
float32 tile (hp and wp multiples of 16) to class-major float64
accumulators, 16×16 blocks at a time, each as four 8×8 blocks (row half
a, column half b, in the order (0, 0), (0, 1), (1, 0), (1, 1)): with
cols, accC[sr[i]*wp+j] += t[i][j] row by row; then the 8×8 block is
transposed in registers (VUNPCKLPS/VUNPCKHPS, VSHUFPS, VPERM2F128) and
accR[sc[j]*hp+i] += t[i][j] column by column. Every accumulator gets its
additions in consume16's order (rows in order for accC, columns in order
for accR), and with frob the squares of the widened values go into four
float64 vectors by column (Y12-Y15: the 16 lanes of consume16's two),
rows in order, whose halves' sums are stored into sq: consume16's bits.

addF64sAVX2 sets dst[i] += src[i] for the first n values, n a multiple
of 4.

Every function needs AVX2 and FMA and ends with VZEROUPPER. Generated
by asmgen/dense_avx2.py (unrolled).
""", tag="amd64")


# --- exp ---------------------------------------------------------------------

def exp_func(name, tab, scale, size, ncoef):
    """Emits exp32AVX2 or exp64AVX2. The body runs on Y0-Y4 (x, then h; k;
    r; y; r²); lo, zero, log2e, ln2hi, ln2lo, one and as many of the
    polynomial coefficients after the first as fit are kept in Y5 and up,
    the others read from the table (AX; scale's constants from BX)."""
    sfx, lanes = ("S", 8) if size == 4 else ("D", 4)
    shift, sll = (23, "VPSLLD") if size == 4 else (52, "VPSLLQ")
    x, k, r, y, r2 = range(5)
    # Table rows: lo, zero, log2e, ln2hi, ln2lo, the coefficients, one.
    rows = ["lo", "zero", "log2e", "ln2hi", "ln2lo"] + [f"c{i}" for i in range(ncoef)] + ["one"]
    kept = ["lo", "zero", "log2e", "ln2hi", "ln2lo", "one"] + [f"c{i}" for i in range(1, ncoef)]
    kept = kept[:16 - 5]
    reg = {name: f"Y{15-i}" for i, name in enumerate(kept)}

    def op(name):
        """The operand of constant name: its register or its table row."""
        return reg.get(name, f"{64*rows.index(name)}(AX)")

    elem = "float32" if size == 4 else "float64"
    w(f"// func {name}(t []{elem})")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-24")
    w(f"\tMOVQ t_base+0(FP), DI\n\tMOVQ t_len+8(FP), CX\n\tLEAQ ·{tab}(SB), AX\n\tLEAQ ·{scale}(SB), BX")
    for name_ in kept:
        w(f"\tVMOVUP{sfx} {64*rows.index(name_)}(AX), {reg[name_]}")
    w(f"\tSUBQ ${lanes}, CX\n\tJLT done{sfx}")
    w(f"loop{sfx}:")
    w(f"\tVMAXP{sfx} (DI), {op('lo')}, Y{x}")
    w(f"\tVMINP{sfx} {op('zero')}, Y{x}, Y{x}")
    w(f"\tVMULP{sfx} {op('log2e')}, Y{x}, Y{k}")
    w(f"\tVROUNDP{sfx} $0, Y{k}, Y{k}")
    # r = k·ln2hi + x, then r = k·ln2lo + r.
    w(f"\tVMOVAP{sfx} Y{k}, Y{r}")
    w(f"\tVFMADD213P{sfx} Y{x}, {op('ln2hi')}, Y{r}")
    w(f"\tVFMADD231P{sfx} Y{k}, {op('ln2lo')}, Y{r}")
    # y = c0·r + c1, then y = y·r + c for the other coefficients.
    w(f"\tVMOVUP{sfx} {op('c0')}, Y{y}")
    for i in range(1, ncoef):
        w(f"\tVFMADD213P{sfx} {op(f'c{i}')}, Y{r}, Y{y}")
    w(f"\tVMULP{sfx} Y{r}, Y{r}, Y{r2}")
    w(f"\tVFMADD213P{sfx} Y{r}, Y{r2}, Y{y}")
    w(f"\tVADDP{sfx} {op('one')}, Y{y}, Y{y}")
    # y·2^k = y·2^h·2^(k-h), h = floor(k/2), in x.
    w(f"\tVMULP{sfx} (BX), Y{k}, Y{x}")
    w(f"\tVROUNDP{sfx} $1, Y{x}, Y{x}")
    w(f"\tVSUBP{sfx} Y{x}, Y{k}, Y{k}")
    for v in (x, k):
        w(f"\tVADDP{sfx} 64(BX), Y{v}, Y{v}")
        w(f"\t{sll} ${shift}, Y{v}, Y{v}")
    w(f"\tVMULP{sfx} Y{x}, Y{y}, Y{y}")
    w(f"\tVMULP{sfx} Y{k}, Y{y}, Y{y}")
    w(f"\tVMOVUP{sfx} Y{y}, (DI)")
    w(f"\tADDQ $32, DI\n\tSUBQ ${lanes}, CX\n\tJGE loop{sfx}")
    w(f"done{sfx}:")
    w("\tVZEROUPPER\n\tRET\n")


exp_func("exp32AVX2", "expTab32", "expScale32", 4, 6)
exp_func("exp64AVX2", "expTab64", "expScale64", 8, 11)


# --- consume16AVX2 -----------------------------------------------------------

# Registers: DI t, R8 the row stride in bytes, CX hp, BX wp, SI sr, DX sc,
# R11 accR, R12 accC, R9 i0, R10 j0, R13 the tile's row i0, AX a row of
# the 8×8 block, R14 an accumulator's address; Y0-Y8 the block's rows,
# then its columns (one register free), Y9-Y10 a vector widened, Y12-Y15
# the sums of squares.

def widen(z):
    """Widens the 8 float32 of Y{z} into Y9 (the first 4) and Y10."""
    w(f"\tVCVTPS2PD X{z}, Y9\n\tVEXTRACTF128 $1, Y{z}, X10\n\tVCVTPS2PD X10, Y10")


def add_widened(off):
    """Adds Y9 and Y10 to the 8 float64 at off(R14)."""
    for i in (0, 1):
        w(f"\tVADDPD {off+32*i}(R14), Y{9+i}, Y{9+i}\n\tVMOVUPD Y{9+i}, {off+32*i}(R14)")


def transpose8(regs, free):
    """Transposes the 8×8 block whose rows are in the registers regs (Y),
    with the register free: three stages of pairs (a, b) turned into two
    vectors, the first into free, the second over b, a becoming free.
    Returns the registers of the columns."""
    def pair(op_a, op_b, a, b):
        nonlocal free
        w(f"\t{op_a} Y{b}, Y{a}, Y{free}\n\t{op_b} Y{b}, Y{a}, Y{b}")
        out, free = (free, b), a
        return out
    # Rows 2i, 2i+1 interleaved: s1[2i] their lanes 0, 1 (and 4, 5), s1[2i+1] 2, 3 (6, 7).
    s1 = []
    for i in range(4):
        s1 += pair("VUNPCKLPS", "VUNPCKHPS", regs[2*i], regs[2*i+1])
    # Four rows' columns c and c+4 in s2[g][c], for the rows 4g to 4g+3.
    s2 = [[None] * 4 for _ in range(2)]
    for g in range(2):
        for h in range(2):
            s2[g][2*h], s2[g][2*h+1] = pair("VSHUFPS $0x44,", "VSHUFPS $0xEE,", s1[4*g+h], s1[4*g+2+h])
    cols = [None] * 8
    for c in range(4):
        cols[c], cols[c+4] = pair("VPERM2F128 $0x20,", "VPERM2F128 $0x31,", s2[0][c], s2[1][c])
    return cols


def sub_block(a, b):
    """Emits the 8×8 block of rows 8a to 8a+7 and columns 8b to 8b+7 of the
    16×16 block at row i0 (R9) and column j0 (R10)."""
    tag = f"{a}{b}"
    w(f"\tLEAQ (R13)(R10*4), AX")
    if a:
        w("\tLEAQ (AX)(R8*8), AX")
    for r in range(8):
        w(f"\tVMOVUPS {32*b}(AX), Y{r}")
        if r < 7:
            w("\tADDQ R8, AX")
    w(f"\tCMPB cols+56(FP), $0\n\tJEQ cnocols{tag}")
    for r in range(8):
        # accC[sr[i0+8a+r]*wp + j0 + 8b]
        w(f"\tMOVLQSX {4*(8*a+r)}(SI)(R9*4), R14\n\tIMULQ BX, R14\n\tADDQ R10, R14\n\tLEAQ (R12)(R14*8), R14")
        widen(r)
        add_widened(64 * b)
    w(f"cnocols{tag}:")
    w(f"\tCMPB frob+57(FP), $0\n\tJEQ cnofrob{tag}")
    for r in range(8):
        widen(r)
        w(f"\tVFMADD231PD Y9, Y9, Y{12+2*b}\n\tVFMADD231PD Y10, Y10, Y{13+2*b}")
    w(f"cnofrob{tag}:")
    cols = transpose8(list(range(8)), 8)
    for c in range(8):
        # accR[sc[j0+8b+c]*hp + i0 + 8a]
        w(f"\tMOVLQSX {4*(8*b+c)}(DX)(R10*4), R14\n\tIMULQ CX, R14\n\tADDQ R9, R14\n\tLEAQ (R11)(R14*8), R14")
        widen(cols[c])
        add_widened(64 * a)


w("// func consume16AVX2(t *float32, hp, wp int, sr, sc *int32, accR, accC *float64, cols, frob bool, sq *[8]float64)")
w("TEXT ·consume16AVX2(SB), NOSPLIT, $0-72")
w("\tMOVQ t+0(FP), DI\n\tMOVQ hp+8(FP), CX\n\tMOVQ wp+16(FP), BX\n\tMOVQ BX, R8\n\tSHLQ $2, R8")
w("\tMOVQ sr+24(FP), SI\n\tMOVQ sc+32(FP), DX\n\tMOVQ accR+40(FP), R11\n\tMOVQ accC+48(FP), R12")
for i in range(12, 16):
    w(f"\tVXORPD Y{i}, Y{i}, Y{i}")
w("\tMOVQ DI, R13\n\tXORQ R9, R9")
w("\tCMPQ R9, CX\n\tJGE cdone")
w("crows:")
w("\tXORQ R10, R10")
w("ccols:")
for a in (0, 1):
    for b in (0, 1):
        sub_block(a, b)
w("\tADDQ $16, R10\n\tCMPQ R10, BX\n\tJLT ccols")
w("\tLEAQ (R13)(R8*8), R13\n\tLEAQ (R13)(R8*8), R13")
w("\tADDQ $16, R9\n\tCMPQ R9, CX\n\tJLT crows")
w("cdone:")
w("\tVADDPD Y14, Y12, Y12\n\tVADDPD Y15, Y13, Y13")
w("\tMOVQ sq+64(FP), AX\n\tVMOVUPD Y12, (AX)\n\tVMOVUPD Y13, 32(AX)")
w("\tVZEROUPPER\n\tRET\n")


# --- addF64sAVX2 -------------------------------------------------------------

w("// func addF64sAVX2(dst, src *float64, n int)")
w("TEXT ·addF64sAVX2(SB), NOSPLIT, $0-24")
w("\tMOVQ dst+0(FP), DI\n\tMOVQ src+8(FP), SI\n\tMOVQ n+16(FP), CX")
w("\tSUBQ $16, CX\n\tJLT aone")
w("afour:")
for v in range(4):
    w(f"\tVMOVUPD {32*v}(DI), Y{v}\n\tVADDPD {32*v}(SI), Y{v}, Y{v}")
for v in range(4):
    w(f"\tVMOVUPD Y{v}, {32*v}(DI)")
w("\tADDQ $128, DI\n\tADDQ $128, SI\n\tSUBQ $16, CX\n\tJGE afour")
w("aone:")
w("\tADDQ $12, CX\n\tJLT adone")
w("aloop:")
w("\tVMOVUPD (DI), Y0\n\tVADDPD (SI), Y0, Y0\n\tVMOVUPD Y0, (DI)")
w("\tADDQ $32, DI\n\tADDQ $32, SI\n\tSUBQ $4, CX\n\tJGE aloop")
w("adone:")
w("\tVZEROUPPER\n\tRET\n")
write(out, "dense_avx2_amd64.s")
