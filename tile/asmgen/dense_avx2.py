# Writes the assembly file named at the end; run with python3 from anywhere.
# The .s files in tile/ are committed; rerun this after changing it (or run
# go generate in tile/, see generate.go).
import contextlib
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the committed sources
from common import class_address, start, write

# Emits tile/dense_avx2_amd64.s: the AVX2 kernels of the dense Gaussian
# tiles besides the dot products and P·W products (gen_avx2_amd64.s,
# gemm_avx2_amd64.s): the vectorized exp in both precisions, the one-hot
# consumer of P·S and row sums, and the float64 vector add of the commit.
out, w = start(__file__, """
exp32AVX2 and exp64AVX2 are exp32Slice and exp64Slice (dense_amd64.s) for
AVX2 and FMA: they replace each value v of t (len a multiple of 8, resp.
4; a shorter rest is left as it is) by exp(min(v, 0)), with the same
operations on the same operands up to the last steps, y + 1 and y·2^k,
which AVX2 has no VSCALEF for: k is split into h = floor(k/2) and k - h,
each becomes the float 2^h (h + 1.5·2^m + bias, whose low bits then hold
the biased exponent, shifted left by m, the width of the mantissa; the
constants of expScale32 and expScale64), then y·2^h + 2^h (fused: the
sum y + 1 rounded once and scaled exactly, y·2^h being a normal number
for every k from the clamp up) is multiplied by 2^(k-h), which rounds
once, as VSCALEF does, subnormal or 0 results included; so they give
exp32Slice's and exp64Slice's bits. Two vectors are computed at a time,
their instructions interleaved (the exp is a chain of some 20 dependent
instructions: one at a time, they do not fill the pipes); the constants
that do not fit in the registers left are read from memory.

consume16AVX2 is consume16 (dense_amd64.s) for AVX2: it adds an hp×wp
float32 tile (hp and wp multiples of 16) to class-major float64
accumulators, 16×16 blocks at a time, each as four 8×8 blocks (row half
a, column half b, in the order (0, 0), (0, 1), (1, 0), (1, 1)): with
cols, accC[sr[i]*wp+j] += t[i][j] row by row; then the 8×8 block is
transposed in registers (VUNPCKLPS/VUNPCKHPS, VSHUFPS, VPERM2F128) and
accR[sc[j]*hp+i] += t[i][j] column by column. Every accumulator gets its
additions in consume16's order (rows in order for accC, columns in order
for accR; a sub-block's 8 rows or columns of one class are added in
registers, as consume16's blocks are), and with frob the squares of the
widened values go into four float64 vectors by column (Y12-Y15: the 16
lanes of consume16's two), rows in order, whose halves' sums are stored
into sq: consume16's bits.

addF64sAVX2 sets dst[i] += src[i] for the first n values, n a multiple
of 4.

Every function needs AVX2 and FMA and ends with VZEROUPPER. Generated
by asmgen/dense_avx2.py (unrolled).
""", tag="amd64")


# --- exp ---------------------------------------------------------------------

def exp_func(name, tab, scale, size, ncoef, copies):
    """Emits exp32AVX2 or exp64AVX2: copies bodies interleaved instruction
    by instruction, on vectors one after the other, each on five registers
    from Y{5*c} (x, then 2^h; k, then 2^(k-h); r; y; r²); as many of the
    constants as fit in the registers left, down from Y15, lo first (the
    maximum's first operand must be a register), the others read from the
    table (AX; scale's constants from BX)."""
    sfx, lanes = ("S", 8) if size == 4 else ("D", 4)
    shift, sll = (23, "VPSLLD") if size == 4 else (52, "VPSLLQ")
    # Table rows: lo, zero, log2e, ln2hi, ln2lo, the coefficients, one.
    rows = ["lo", "zero", "log2e", "ln2hi", "ln2lo"] + [f"c{i}" for i in range(ncoef)] + ["one"]
    kept = ["lo", "ln2hi", "ln2lo", "log2e", "zero"] + [f"c{i}" for i in range(1, ncoef)]
    kept = kept[:16 - 5 * copies]
    reg = {name: f"Y{15-i}" for i, name in enumerate(kept)}

    def op(name):
        """The operand of constant name: its register or its table row."""
        return reg.get(name, f"{64*rows.index(name)}(AX)")

    def fma(form, a, b, dst):
        """Returns the fused multiply-add of form 213 (dst = b·dst + a) or
        231 (dst = b·a + dst) with b a register or, swapping the factors
        (132: dst = dst·b + a), from memory: only the first operand may
        be."""
        if b.startswith("Y"):
            return f"VFMADD{form}P{sfx} {a}, {b}, {dst}"
        return f"VFMADD132P{sfx} {b}, {a}, {dst}" if form == "213" else f"VFMADD231P{sfx} {b}, {a}, {dst}"

    def body(c):
        """Returns the instructions of copy c, on the vector at 32c(DI)."""
        x, k, r, y, r2 = (f"Y{5*c+i}" for i in range(5))
        off = 32 * c
        out = [f"VMAXP{sfx} {off}(DI), {op('lo')}, {x}",
               f"VMINP{sfx} {op('zero')}, {x}, {x}",
               f"VMULP{sfx} {op('log2e')}, {x}, {k}",
               f"VROUNDP{sfx} $0, {k}, {k}",
               # r = k·ln2hi + x, then r = k·ln2lo + r.
               f"VMOVAP{sfx} {k}, {r}",
               fma("213", x, op("ln2hi"), r),
               fma("231", k, op("ln2lo"), r),
               # h = floor(k/2) in x, k - h in k, each turned into its power of 2.
               f"VMULP{sfx} (BX), {k}, {x}",
               f"VROUNDP{sfx} $1, {x}, {x}",
               f"VSUBP{sfx} {x}, {k}, {k}",
               f"VADDP{sfx} 64(BX), {x}, {x}",
               f"VADDP{sfx} 64(BX), {k}, {k}",
               f"{sll} ${shift}, {x}, {x}",
               f"{sll} ${shift}, {k}, {k}",
               # y = c0·r + c1, then y = y·r + c for the other coefficients.
               f"VMOVUP{sfx} {op('c0')}, {y}"]
        out += [f"VFMADD213P{sfx} {op(f'c{i}')}, {r}, {y}" for i in range(1, ncoef)]
        # y = y·r² + r; (y + 1)·2^h as y·2^h + 2^h, exact; then ·2^(k-h).
        out += [f"VMULP{sfx} {r}, {r}, {r2}",
                f"VFMADD213P{sfx} {r}, {r2}, {y}",
                f"VFMADD213P{sfx} {x}, {x}, {y}",
                f"VMULP{sfx} {k}, {y}, {y}",
                f"VMOVUP{sfx} {y}, {off}(DI)"]
        return out

    def loop(label, n):
        """Emits the loop over n bodies at a time (CX: values left)."""
        w(f"\tSUBQ ${n*lanes}, CX\n\tJLT {label}end")
        w(f"{label}:")
        for lines in zip(*(body(c) for c in range(n))):
            for line in lines:
                w("\t" + line)
        w(f"\tADDQ ${32*n}, DI\n\tSUBQ ${n*lanes}, CX\n\tJGE {label}")
        w(f"{label}end:\n\tADDQ ${n*lanes}, CX")

    elem = "float32" if size == 4 else "float64"
    w(f"// func {name}(t []{elem})")
    w(f"TEXT ·{name}(SB), NOSPLIT, $0-24")
    w(f"\tMOVQ t_base+0(FP), DI\n\tMOVQ t_len+8(FP), CX\n\tLEAQ ·{tab}(SB), AX\n\tLEAQ ·{scale}(SB), BX")
    for name_ in kept:
        w(f"\tVMOVUP{sfx} {64*rows.index(name_)}(AX), {reg[name_]}")
    loop(f"many{sfx}", copies)
    if copies > 1:
        loop(f"one{sfx}", 1)
    w("\tVZEROUPPER\n\tRET\n")


exp_func("exp32AVX2", "expTab32", "expScale32", 4, 6, 2)
exp_func("exp64AVX2", "expTab64", "expScale64", 8, 11, 2)


# --- consume16AVX2 -----------------------------------------------------------

# Registers: DI t, R8 the row stride in bytes, CX hp, BX wp, SI sr, DX sc,
# R11 accR, R12 accC, R9 i0, R10 j0, R13 the tile's row i0, AX a row of
# the 8×8 block, R14 an accumulator's address; Y0-Y8 the block's rows,
# then its columns (one register free), Y9-Y10 a vector widened, Y11
# and the free one the accumulator of a run of one class, Y12-Y15 the sums
# of squares.

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
    return cols, free


def uniform(classes, slot):
    """Sets the byte slot(SP) to 1 if the 8 classes at classes are all
    one, else to 0."""
    w(f"\tVMOVDQU {classes}, Y9\n\tVPBROADCASTD {classes}, Y10")
    w(f"\tVPCMPEQD Y10, Y9, Y9\n\tVMOVMSKPS Y9, AX\n\tCMPL AX, $0xFF\n\tSETEQ {slot}(SP)")


cold_lines = []


@contextlib.contextmanager
def cold():
    """Sends what w emits meanwhile to cold_lines, which go after the
    function's RET: code seldom run, kept out of the loop's way."""
    global w
    hot, w = w, cold_lines.append
    try:
        yield
    finally:
        w = hot


def add_run(regs, off, acc):
    """Adds the 8 values of each of regs, widened, in order, to the 8
    float64 at off(R14), held in the registers acc meanwhile: each
    addition the one add_widened makes, with the same operands in the
    same roles."""
    w(f"\tVMOVUPD {off}(R14), Y{acc[0]}\n\tVMOVUPD {off+32}(R14), Y{acc[1]}")
    for z in regs:
        widen(z)
        w(f"\tVADDPD Y{acc[0]}, Y9, Y{acc[0]}\n\tVADDPD Y{acc[1]}, Y10, Y{acc[1]}")
    w(f"\tVMOVUPD Y{acc[0]}, {off}(R14)\n\tVMOVUPD Y{acc[1]}, {off+32}(R14)")


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
    w(f"\tCMPB {a}(SP), $0\n\tJNE cuniC{tag}")
    for r in range(8):
        # accC[sr[i0+8a+r]*wp + j0 + 8b]
        class_address(w, f"{4*(8*a+r)}(SI)(R9*4)", "BX", "R10", "R12")
        widen(r)
        add_widened(64 * b)
    w(f"cnocols{tag}:")
    with cold():
        w(f"cuniC{tag}:")
        class_address(w, f"{32*a}(SI)(R9*4)", "BX", "R10", "R12")
        add_run(range(8), 64 * b, (8, 11))
        w(f"\tJMP cnocols{tag}")
    w(f"\tCMPB frob+57(FP), $0\n\tJEQ cnofrob{tag}")
    for r in range(8):
        widen(r)
        w(f"\tVFMADD231PD Y9, Y9, Y{12+2*b}\n\tVFMADD231PD Y10, Y10, Y{13+2*b}")
    w(f"cnofrob{tag}:")
    cols, free = transpose8(list(range(8)), 8)
    w(f"\tCMPB {2+b}(SP), $0\n\tJNE cuniR{tag}")
    for c in range(8):
        # accR[sc[j0+8b+c]*hp + i0 + 8a]
        class_address(w, f"{4*(8*b+c)}(DX)(R10*4)", "CX", "R9", "R11")
        widen(cols[c])
        add_widened(64 * a)
    w(f"cnextR{tag}:")
    with cold():
        w(f"cuniR{tag}:")
        class_address(w, f"{32*b}(DX)(R10*4)", "CX", "R9", "R11")
        add_run(cols, 64 * a, (free, 11))
        w(f"\tJMP cnextR{tag}")


w("// func consume16AVX2(t *float32, hp, wp int, sr, sc *int32, accR, accC *float64, cols, frob bool, sq *[8]float64)")
w("TEXT ·consume16AVX2(SB), NOSPLIT, $8-72")
w("\tMOVQ t+0(FP), DI\n\tMOVQ hp+8(FP), CX\n\tMOVQ wp+16(FP), BX\n\tMOVQ BX, R8\n\tSHLQ $2, R8")
w("\tMOVQ sr+24(FP), SI\n\tMOVQ sc+32(FP), DX\n\tMOVQ accR+40(FP), R11\n\tMOVQ accC+48(FP), R12")
for i in range(12, 16):
    w(f"\tVXORPD Y{i}, Y{i}, Y{i}")
w("\tMOVQ DI, R13\n\tXORQ R9, R9")
w("\tCMPQ R9, CX\n\tJGE cdone")
w("crows:")
# Whether each half's 8 rows are of one class, for the whole strip (0(SP)
# and 1(SP)); then, each block, whether each half's 8 columns are (2(SP)
# and 3(SP)).
for a in (0, 1):
    uniform(f"{32*a}(SI)(R9*4)", a)
w("\tXORQ R10, R10")
w("ccols:")
for b in (0, 1):
    uniform(f"{32*b}(DX)(R10*4)", 2 + b)
for a in (0, 1):
    for b in (0, 1):
        sub_block(a, b)
w("\tADDQ $16, R10\n\tCMPQ R10, BX\n\tJLT ccols")
w("\tLEAQ (R13)(R8*8), R13\n\tLEAQ (R13)(R8*8), R13")
w("\tADDQ $16, R9\n\tCMPQ R9, CX\n\tJLT crows")
w("cdone:")
w("\tVADDPD Y14, Y12, Y12\n\tVADDPD Y15, Y13, Y13")
w("\tMOVQ sq+64(FP), AX\n\tVMOVUPD Y12, (AX)\n\tVMOVUPD Y13, 32(AX)")
w("\tVZEROUPPER\n\tRET")
# The runs of one class, out of the loop's way.
for line in cold_lines:
    w(line)
w("")


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
