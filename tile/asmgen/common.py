# Shared by the generators in this directory: the file header, the operand
# addressing and argument loads of the 8-row gemm kernels, and the writing
# of the output file into tile/.
import os

# The addresses of a[r*rs+s*is] for the 8 rows r of a block: SI points at
# row 0, R12 at row 4, R9 holds the row stride and R10 three times it.
ROWS = [("SI", None), ("SI", "R9*1"), ("SI", "R9*2"), ("SI", "R10*1"),
        ("R12", None), ("R12", "R9*1"), ("R12", "R9*2"), ("R12", "R10*1")]


def addr(base, idx):
    return f"({base})" if idx is None else f"({base})({idx})"


def start():
    """Returns the lines of a new assembly file, begun with its header, and
    the function that appends a line."""
    out = []
    out.append("//go:build goexperiment.simd && amd64\n")
    out.append('#include "textflag.h"\n')
    return out, out.append


def gemm_args(w, shift):
    """Loads the arguments (y, ldy, a, rs, is, b, ldb, inner, add) of a gemm
    kernel whose a and b elements are 1<<shift bytes: strides into bytes,
    R10 = 3·rs and R12 = the address of a's row 4."""
    w(f"\tMOVQ y+0(FP), DI\n\tMOVQ ldy+8(FP), R8\n\tSHLQ $3, R8\n\tMOVQ a+16(FP), SI\n\tMOVQ rs+24(FP), R9\n\tSHLQ ${shift}, R9")
    w(f"\tMOVQ is+32(FP), R13\n\tSHLQ ${shift}, R13\n\tMOVQ b+40(FP), DX\n\tMOVQ ldb+48(FP), R14\n\tSHLQ ${shift}, R14\n\tMOVQ inner+56(FP), CX\n\tMOVBQZX add+64(FP), R11")
    w("\tLEAQ (R9)(R9*2), R10\n\tLEAQ (SI)(R9*4), R12")


def write(out, name):
    """Writes the lines to tile/name."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", name)
    with open(path, "w") as f:
        f.write("\n".join(out))
