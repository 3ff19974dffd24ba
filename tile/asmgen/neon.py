# The A64 Advanced SIMD instructions that Go's arm64 assembler lacks, for
# the arm64 generators (screen_arm64.py, dense_arm64.py, sqdist_arm64.py,
# graph's csr_arm64.py): each function returns the instruction as a WORD directive holding its encoding, with
# the instruction in ARM syntax as a comment. The arrangement is "4s" (4
# float32 lanes) or "2d" (2 float64 lanes); registers are numbers 0-31.
#
# The encodings are checked below against the examples in Go's assembler
# tests (cmd/asm/internal/asm/testdata/arm64enc.s) and against llvm-mc's;
# the tests under qemu check what they compute.

# The size bit (bit 22) of each arrangement.
SZ = {"4s": 0, "2d": 1}


def word(enc, text):
    """Returns the WORD directive of encoding enc, commented with text."""
    return f"\tWORD ${enc:#08x} // {text}"


def _three(base, name, arr, d, n, m):
    enc = base | SZ[arr] << 22 | m << 16 | n << 5 | d
    return word(enc, f"{name} v{d}.{arr}, v{n}.{arr}, v{m}.{arr}")


def _two(base, name, arr, d, n, src=None):
    enc = base | SZ[arr] << 22 | n << 5 | d
    return word(enc, f"{name} v{d}.{arr}, v{n}.{src or arr}")


def fadd(d, n, m, arr="4s"):
    """FADD: Vd = Vn + Vm."""
    return _three(0x4E20D400, "fadd", arr, d, n, m)


def fsub(d, n, m, arr="4s"):
    """FSUB: Vd = Vn - Vm."""
    return _three(0x4EA0D400, "fsub", arr, d, n, m)


def fmul(d, n, m, arr="4s"):
    """FMUL: Vd = Vn·Vm."""
    return _three(0x6E20DC00, "fmul", arr, d, n, m)


def fmax(d, n, m, arr="4s"):
    """FMAX: Vd = the larger of Vn and Vm (NaN if either is NaN)."""
    return _three(0x4E20F400, "fmax", arr, d, n, m)


def fmin(d, n, m, arr="4s"):
    """FMIN: Vd = the smaller of Vn and Vm (NaN if either is NaN; -0 is
    below +0)."""
    return _three(0x4EA0F400, "fmin", arr, d, n, m)


def fcmge(d, n, m, arr="4s"):
    """FCMGE: Vd = all ones where Vn >= Vm (ordered), else zero."""
    return _three(0x6E20E400, "fcmge", arr, d, n, m)


def frintn(d, n, arr="4s"):
    """FRINTN: Vd = Vn rounded to an integer, ties to even."""
    return _two(0x4E218800, "frintn", arr, d, n)


def fcvtzs(d, n, arr="4s"):
    """FCVTZS: Vd = Vn converted to signed integers of the same width,
    toward zero."""
    return _two(0x4EA1B800, "fcvtzs", arr, d, n)


def fcvtl(d, n, upper=False):
    """FCVTL (FCVTL2 if upper): Vd.2D = the lower (upper) two float32
    lanes of Vn, widened (exactly)."""
    enc = (0x4E617800 if upper else 0x0E617800) | n << 5 | d
    name, src = ("fcvtl2", "4s") if upper else ("fcvtl", "2s")
    return word(enc, f"{name} v{d}.2d, v{n}.{src}")


def fmla_lane(d, n, m, i, arr="4s"):
    """FMLA by element: Vd += Vn·Vm[i], fused."""
    if arr == "4s":
        enc = 0x4F801000 | (i & 1) << 21 | m << 16 | (i >> 1) << 11 | n << 5 | d
        return word(enc, f"fmla v{d}.4s, v{n}.4s, v{m}.s[{i}]")
    enc = 0x4FC01000 | m << 16 | i << 11 | n << 5 | d
    return word(enc, f"fmla v{d}.2d, v{n}.2d, v{m}.d[{i}]")


def fmul_lane(d, n, m, i):
    """FMUL by element, float64: Vd.2D = Vn.2D·Vm.D[i]."""
    enc = 0x4FC09000 | m << 16 | i << 11 | n << 5 | d
    return word(enc, f"fmul v{d}.2d, v{n}.2d, v{m}.d[{i}]")


def _check(line, enc):
    assert line.startswith(f"\tWORD ${enc:#08x} "), (line, hex(enc))


# Go's assembler tests (arm64enc.s), widened to 4 lanes where they are 2.
_check(fadd(21, 10, 21), 0x4E35D555)           # there: fadd v21.2d = 0x4e75d555
_check(fcmge(2, 31, 8), 0x6E28E7E2)            # there: .2s 0x2e28e7e2
_check(fmla_lane(30, 2, 28, 2), 0x4F9C185E)    # there: .2s 0x0f9c185e
# llvm-mc -triple=aarch64 -show-encoding.
_check(fadd(1, 2, 3, "2d"), 0x4E63D441)
_check(fsub(1, 2, 3, "2d"), 0x4EE3D441)
_check(fmul(1, 2, 3), 0x6E23DC41)
_check(fmul(1, 2, 3, "2d"), 0x6E63DC41)
_check(fmax(1, 2, 31), 0x4E3FF441)
_check(fmin(1, 2, 3, "2d"), 0x4EE3F441)
_check(fcmge(1, 2, 3, "2d"), 0x6E63E441)
_check(frintn(1, 2), 0x4E218841)
_check(frintn(1, 2, "2d"), 0x4E618841)
_check(fcvtzs(1, 2), 0x4EA1B841)
_check(fcvtzs(1, 2, "2d"), 0x4EE1B841)
_check(fcvtl(1, 2), 0x0E617841)
_check(fcvtl(1, 2, upper=True), 0x4E617841)
_check(fmla_lane(1, 2, 3, 1, "2d"), 0x4FC31841)
_check(fmul_lane(1, 2, 19, 1), 0x4FD39841)
