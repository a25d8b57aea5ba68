"""WGSL code generation for Inductor's pointwise and reduction nodes on webgpu.

Inductor's SIMD scheduler decides what fuses (chains of pointwise nodes; pointwise prologues and
epilogues around reductions over the same iteration space); this module turns one fused node
schedule into one WGSL compute shader:

- pointwise kernel: one invocation per element of the flattened x range (256 per workgroup); a flat
  one may also get a variant moving 4 elements per buffer as one vec4 (_vec4_variant, off by default);
- reduction kernel: one workgroup per x index (output row); its 256 invocations stride over the
  reduction range, each keeping an accumulator, then combine through workgroup memory. Every
  invocation gets the result, so a later loop over the same row (softmax's exp(x - max) / sum)
  and the stores of per-row values follow in the same kernel. Rows of at most SERIAL_R elements
  take one invocation each instead.

Each storage argument is read and written through a helper generated per buffer (ld_<name>,
st_<name>) that adds the tensor's storage offset and unpacks sub-word dtypes (docs/design.md, "Dtype
storage"): f32, i32 and int64 (vec2<u32>, exact through wgsl/lib/int64.wgsl) directly;
bool/uint8/int8/int16/float16/bfloat16 from packed words, stored through atomics since neighbours
share a word. Floating-point functions use wgsl/lib/pointwise.wgsl's f_* (as the eager kernels
do), so compiled and eager results agree to the same tolerances.

Anything this generator cannot express raises NotImplementedError during code generation; the
compile entry (backend.py) then runs that graph with the eager kernels instead.
"""

from __future__ import annotations

import itertools
import math
import os
import re

import sympy
import torch
from sympy.printing.precedence import PRECEDENCE
from torch._inductor.codegen.common import CSEVariable, DeferredLine, IndentedBuffer, OpOverrides
from torch._inductor.codegen.simd import SIMDKernel, SIMDScheduling
from torch._inductor.utils import sympy_index_symbol
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.printers import ExprPrinter

try:  # the Python printer used for sizes in the wrapper
    from torch._inductor.codegen.common import PythonPrinter
except ImportError:  # pragma: no cover
    from torch.utils._sympy.printers import PythonPrinter

WG = 256  # invocations per workgroup (the WebGPU default limit)


def _vec4_quads():
    # The vec4 pointwise variant (_vec4_variant): one quad of 4 elements per invocation by default
    # (H200, gelu chain of 2^24 f32 in benchmarks/run.py: 2789 GB/s, against 1715-1987 for the
    # one-element kernel; 2 or 4 quads gave nothing more in benchmarks/probe_launch.py).
    # TORCH_WEBGPU_COMPILE_VEC4=Q (1 to 8) sets the quads, 0 turns the variant off. Read at code
    # generation (a graph compiled before the variable changed keeps its kernels).
    v = os.environ.get("TORCH_WEBGPU_COMPILE_VEC4", "1").strip()
    if v == "0":
        return 0
    if v == "":
        return 1
    return max(1, min(8, int(v))) if v.isdigit() else 1


def _ilp():
    # Elements per invocation of a pointwise kernel (TORCH_WEBGPU_COMPILE_ILP, default 1): each
    # invocation runs the body for t, t + T, t + 2T, ... (T: the invocations of the dispatch), so
    # every access stays coalesced and the loads of the elements can be in flight together.
    v = os.environ.get("TORCH_WEBGPU_COMPILE_ILP", "1")
    return max(1, min(8, int(v))) if v.isdigit() else 1


SERIAL_R = 32  # reductions this short run one invocation per output row
I32_MAX = 2**31 - 1

# Compute types: float types compute in f32 (as CPU's opmath), int64 exactly as (lo, hi) words
# (vec2<u32>, wgsl/lib/int64.wgsl), the other integer types in i32, bool in bool.
I64 = "vec2<u32>"
_COMPUTE = {
    torch.float32: "f32",
    torch.float16: "f32",
    torch.bfloat16: "f32",
    torch.int32: "i32",
    torch.int64: I64,
    torch.int16: "i32",
    torch.int8: "i32",
    torch.uint8: "i32",
    torch.bool: "bool",
}


def unsupported(what):
    return NotImplementedError(f"webgpu WGSL codegen: {what}")


def wtype(dtype):
    try:
        return _COMPUTE[dtype]
    except KeyError:
        raise unsupported(f"dtype {dtype}") from None


def f32_literal(v):
    v = float(v)
    if math.isnan(v):
        return "f_nan()"
    if math.isinf(v) or abs(v) > 3.4028234663852886e38:
        return "f_inf()" if v > 0 else "-f_inf()"
    s = repr(v)
    if "e" not in s and "." not in s:
        s += ".0"
    return f"f32({s})"


def i64_literal(v):
    v = int(v)
    if not -(2**63) <= v < 2**63:
        raise unsupported(f"integer constant {v} beyond int64")
    u = v & (2**64 - 1)
    return f"vec2<u32>({u & 0xFFFFFFFF}u, {u >> 32}u)"


def i32_literal(v):
    v = int(v)
    if not -(2**31) <= v <= I32_MAX:
        raise unsupported(f"integer constant {v} beyond int32")
    if v == -(2**31):
        return "(-2147483647i - 1i)"
    return f"{v}i"


class WGSLExprPrinter(ExprPrinter):
    """Index expressions (sympy) as i32 WGSL."""

    def _print_Integer(self, expr):
        return i32_literal(int(expr)) if int(expr) < 0 or int(expr) > 2**24 else str(int(expr))

    def _print_Symbol(self, expr):
        return str(expr.name)

    # Operands are parenthesised: sympy's printer gives "7 + x0", and "7 + x0 % 10" is not the index.
    def _p(self, e):
        return f"({self.doprint(e)})"

    def _print_FloorDiv(self, expr):
        x, div = expr.args
        if x.is_nonnegative and div.is_positive:
            return f"({self._p(x)} / {self._p(div)})"
        return f"i32_div_floor({self.doprint(x)}, {self.doprint(div)})"

    def _print_CleanDiv(self, expr):
        return self._print_FloorDiv(expr)

    def _print_ModularIndexing(self, expr):
        x, div, mod = expr.args
        xs = self._p(x)
        if div != 1:
            xs = f"({xs} / {self._p(div)})"
        if x.is_nonnegative:
            return f"({xs} % {self._p(mod)})"
        return f"i32_remainder({xs}, {self.doprint(mod)})"

    def _print_PythonMod(self, expr):
        return f"i32_remainder({self.doprint(expr.args[0])}, {self.doprint(expr.args[1])})"

    def _print_Mod(self, expr):
        return self._print_PythonMod(expr)

    def _minmax(self, expr, fn):
        args = [self.doprint(a) for a in expr.args]
        out = args[0]
        for a in args[1:]:
            out = f"{fn}({out}, {a})"
        return out

    def _print_Min(self, expr):
        return self._minmax(expr, "min")

    def _print_Max(self, expr):
        return self._minmax(expr, "max")

    def _print_Abs(self, expr):
        return f"abs({self.doprint(expr.args[0])})"

    def _print_Relational(self, expr):
        return f"({self._p(expr.lhs)} {expr.rel_op} {self._p(expr.rhs)})"

    def _print_Where(self, expr):
        c, p, q = (self.doprint(a) for a in expr.args)
        return f"select({q}, {p}, ({c}))"

    def _pow_int(self, base, exp):
        if not (exp.is_Integer and 0 <= int(exp) <= 8):
            raise unsupported(f"power {exp} in an index")
        if int(exp) == 0:
            return "1"
        b = self.parenthesize(base, PRECEDENCE["Mul"])
        return "(" + " * ".join([b] * int(exp)) + ")"

    def _print_Pow(self, expr):
        return self._pow_int(*expr.args)

    def _print_PowByNatural(self, expr):
        return self._pow_int(*expr.args)

    def _print_And(self, expr):
        return " && ".join(self.parenthesize(a, PRECEDENCE["And"]) for a in expr.args)

    def _print_Or(self, expr):
        return " || ".join(self.parenthesize(a, PRECEDENCE["Or"]) for a in expr.args)

    def _print_Not(self, expr):
        return f"!({self.doprint(expr.args[0])})"

    def _print_Identity(self, expr):
        return self.doprint(expr.args[0])

    def _unsupported(self, expr):
        raise unsupported(f"index expression {type(expr).__name__}")

    _print_Float = _print_ToFloat = _print_IntTrueDiv = _print_FloatTrueDiv = _unsupported
    _print_TruncToInt = _print_RoundToInt = _print_RoundDecimal = _print_FloorToInt = _print_CeilToInt = _unsupported
    _print_floor = _print_ceiling = _print_FloatPow = _print_TruncToFloat = _unsupported
    _print_Rational = _print_Infinity = _print_NegativeInfinity = _print_NaN = _unsupported


def _dtype_of(x):
    return getattr(x, "dtype", None)


def _typed_value(v, dtype):
    """A Python scalar or CSE variable as a WGSL value of `dtype`'s compute type."""
    if isinstance(v, (bool, int, float)) and not isinstance(v, CSEVariable):
        return WGSLOverrides.constant(v, dtype)
    return str(v)


def _is_float(x):
    d = _dtype_of(x)
    return d is not None and d.is_floating_point


class WGSLOverrides(OpOverrides):
    """Pointwise ops as WGSL expressions. Ops not defined here raise NotImplementedError (the
    OpsHandler default), which makes the graph fall back."""

    @staticmethod
    def constant(value, dtype):
        if dtype == torch.bool:
            return "true" if value else "false"
        t = wtype(dtype)
        if t == "f32":
            return f32_literal(value)
        if isinstance(value, float) and not float(value).is_integer():
            raise unsupported(f"non-integral constant {value} of {dtype}")
        return i64_literal(value) if t == I64 else i32_literal(value)

    @staticmethod
    def to_dtype(x, dtype, src_dtype=None, use_compute_types=True):
        if dtype == torch.float64:
            dtype = torch.float32  # Python float scalars that Inductor types as float64
        # the value's own dtype first: Inductor narrows index expressions to int32 but may still
        # name int64 as the cast's source
        src = _dtype_of(x) if _dtype_of(x) is not None else src_dtype
        if src == torch.float64:
            src = torch.float32
        if src is None:
            raise unsupported("cast from an unknown dtype")
        st, dt = wtype(src), wtype(dtype)
        if st == I64:  # int64 -> narrower: its low word, as a C cast; bool: nonzero; float: rounded
            if dt == I64:
                return str(x)
            if dt == "bool":
                return f"i64_nz({x})"
            if dt == "f32":
                x, st = f"i64_to_f32({x})", "f32"
                if dtype == torch.float32:
                    return x
            else:
                x, st = f"bitcast<i32>(({x}).x)", "i32"
                if dtype == torch.int32:
                    return x
        if dt == I64:
            if st == "f32":
                return f"f32_to_i64({x})"
            if st == "bool":
                return f"b2l({x})"
            return f"i64_from_i32({x})"
        if dtype in (torch.int16, torch.int8, torch.uint8) and src != dtype:
            v = f"f32_to_i32({x})" if st == "f32" else (f"select(0i, 1i, {x})" if st == "bool" else str(x))
            if dtype == torch.uint8:
                return f"({v} & 255i)"
            sh = "24u" if dtype == torch.int8 else "16u"
            return f"(({v} << {sh}) >> {sh})"
        if dt == "f32":
            if st == "f32":
                v = str(x)
            elif st == "i32":
                v = f"i32_to_f32({x})"
            else:
                v = f"select(0.0, 1.0, {x})"
            if dtype == torch.float16:
                return f"f16_to_f32(f32_to_f16({v}))"
            if dtype == torch.bfloat16:
                return f"bitcast<f32>(f32_to_bf16({v}) << 16u)"
            return v
        if dt == "i32":
            if st == "f32":
                return f"f32_to_i32({x})"
            if st == "bool":
                return f"select(0i, 1i, {x})"
            return str(x)
        # bool
        if st == "f32":
            return f"({x} != 0.0)"
        if st == "i32":
            return f"({x} != 0i)"
        return str(x)

    @staticmethod
    def indirect_indexing(var, size, check=True, wrap_neg=True):
        if _dtype_of(var) == torch.int64:  # an index: int32 (values past it saturate, out of range)
            V.kernel.helper_fns["i64_index"] = I64_INDEX_FN
            var = V.kernel.cse.generate(V.kernel.compute, f"i64_index({var})", dtype=torch.int32, bounds=var.bounds)
        return sympy_index_symbol(str(var))

    @staticmethod
    def to_dtype_bitcast(x, dtype, src_dtype):
        if wtype(dtype) == "f32" and dtype == torch.float32 and src_dtype == torch.int32:
            return f"bitcast<f32>({x})"
        if dtype == torch.int32 and src_dtype == torch.float32:
            return f"bitcast<i32>({x})"
        raise unsupported(f"bitcast {src_dtype} -> {dtype}")

    @staticmethod
    def index_expr(expr, dtype):
        idx = V.kernel.index_to_str(V.kernel.prepare_indexing(expr))
        if dtype == torch.int64:
            return V.kernel.cse.generate(V.kernel.compute, f"i64_from_i32({idx})", dtype=dtype)
        if dtype == torch.int32:
            return V.kernel.cse.generate(V.kernel.compute, idx, dtype=dtype)
        var = V.kernel.cse.generate(V.kernel.compute, idx, dtype=torch.int32)
        return WGSLOverrides.to_dtype(var, dtype, torch.int32)

    @staticmethod
    def value_expr(expr, dtype):  # torch 2.13: an index expression used as a value
        return WGSLOverrides.index_expr(expr, dtype)

    @staticmethod
    def masked(mask, body, other):
        scoped = IndentedBuffer()
        with V.kernel.swap_buffers(scoped), scoped.indent():
            rc = body()
        dtype = _dtype_of(rc)
        if dtype is None:
            raise unsupported("masked value of unknown dtype")
        t = wtype(dtype)
        var = V.kernel.cse.newvar(dtype=dtype)
        V.kernel.compute.writeline(f"var {var}: {t};")
        V.kernel.compute.writeline(f"if ({mask}) {{")
        V.kernel.compute.splice(scoped)
        with V.kernel.compute.indent():
            V.kernel.compute.writeline(f"{var} = {rc};")
        V.kernel.compute.writeline(f"}} else {{ {var} = {_typed_value(other, dtype)}; }}")
        return var

    @staticmethod
    def where(a, b, c):
        d = _dtype_of(b) if isinstance(b, CSEVariable) else _dtype_of(c)
        if d is None:
            d = torch.float32 if isinstance(b, float) or isinstance(c, float) else None
        bs = _typed_value(b, d) if d is not None else str(b)
        cs = _typed_value(c, d) if d is not None else str(c)
        return f"select({cs}, {bs}, {a})"

    # arithmetic
    @staticmethod
    def add(a, b):
        return f"({a} + {b})"

    @staticmethod
    def sub(a, b):
        return f"({a} - {b})"

    @staticmethod
    def mul(a, b):
        if _dtype_of(a) == torch.bool and _dtype_of(b) == torch.bool:
            return f"({a} && {b})"
        return f"({a} * {b})"

    @staticmethod
    def truediv(a, b):
        return f"({a} / {b})"

    @staticmethod
    def div(a, b):
        return f"({a} / {b})"

    @staticmethod
    def truncdiv(a, b):
        if _is_float(a) or _is_float(b):
            return f"trunc({a} / {b})"
        return f"i32_div_trunc({a}, {b})"

    @staticmethod
    def floordiv(a, b):
        if _is_float(a) or _is_float(b):
            return f"f_div_floor({a}, {b})"
        return f"i32_div_floor({a}, {b})"

    @staticmethod
    def mod(a, b):  # Inductor's mod is C's (truncated; integer fmod lowers to it)
        if _is_float(a) or _is_float(b):
            return f"f_fmod({a}, {b})"
        return f"i32_fmod({a}, {b})"

    @staticmethod
    def remainder(a, b):  # Python's (the sign of the divisor)
        if _is_float(a) or _is_float(b):
            return f"f_remainder({a}, {b})"
        return f"i32_remainder({a}, {b})"

    @staticmethod
    def fmod(a, b):
        if _is_float(a) or _is_float(b):
            return f"f_fmod({a}, {b})"
        return f"i32_fmod({a}, {b})"

    @staticmethod
    def neg(x):
        return f"(-{x})"

    @staticmethod
    def abs(x):
        return f"abs({x})"

    @staticmethod
    def reciprocal(x):
        return f"(1.0 / {x})"

    @staticmethod
    def square(x):
        return f"({x} * {x})"

    @staticmethod
    def pow(a, b):
        if _is_float(a) or _is_float(b):
            return f"f_pow({a}, {b})"
        return f"i32_pow({a}, {b})"

    @staticmethod
    def maximum(a, b):
        if _is_float(a) or _is_float(b):
            return f"f_maximum({a}, {b})"
        if _dtype_of(a) == torch.bool:
            return f"({a} || {b})"
        return f"max({a}, {b})"

    @staticmethod
    def minimum(a, b):
        if _is_float(a) or _is_float(b):
            return f"f_minimum({a}, {b})"
        if _dtype_of(a) == torch.bool:
            return f"({a} && {b})"
        return f"min({a}, {b})"

    @staticmethod
    def relu(x):
        return f"f_clamp_min({x}, 0.0)" if _is_float(x) else f"max({x}, 0i)"

    @staticmethod
    def sign(x):
        return f"f_sign({x})" if _is_float(x) else f"i32_sign({x})"

    @staticmethod
    def signbit(x):
        return f"sign_bit({x})"

    @staticmethod
    def copysign(a, b):
        return f"f_copysign({a}, {b})"

    # comparisons and logic
    @staticmethod
    def eq(a, b):
        if str(a) == str(b) and _is_float(a):  # x == x: not NaN (WGSL may fold the comparison)
            return f"(!is_nan({a}))"
        return f"({a} == {b})"

    @staticmethod
    def ne(a, b):
        if str(a) == str(b) and _is_float(a):  # x != x: NaN
            return f"is_nan({a})"
        return f"({a} != {b})"

    @staticmethod
    def lt(a, b):
        if _dtype_of(a) == torch.bool or _dtype_of(b) == torch.bool:
            return f"(!({a}) && ({b}))"
        return f"({a} < {b})"

    @staticmethod
    def le(a, b):
        if _dtype_of(a) == torch.bool or _dtype_of(b) == torch.bool:
            return f"(!({a}) || ({b}))"
        return f"({a} <= {b})"

    @staticmethod
    def gt(a, b):
        if _dtype_of(a) == torch.bool or _dtype_of(b) == torch.bool:
            return f"(({a}) && !({b}))"
        return f"({a} > {b})"

    @staticmethod
    def ge(a, b):
        if _dtype_of(a) == torch.bool or _dtype_of(b) == torch.bool:
            return f"(({a}) || !({b}))"
        return f"({a} >= {b})"

    @staticmethod
    def logical_not(a):
        return f"(!{a})" if _dtype_of(a) in (torch.bool, None) else f"({a} == {_typed_value(0, _dtype_of(a))})"

    @staticmethod
    def logical_and(a, b):
        return f"({a} && {b})"

    @staticmethod
    def logical_or(a, b):
        return f"({a} || {b})"

    @staticmethod
    def logical_xor(a, b):
        return f"({a} != {b})"

    @staticmethod
    def bitwise_and(a, b):
        return f"({a} & {b})"

    @staticmethod
    def bitwise_or(a, b):
        return f"({a} | {b})"

    @staticmethod
    def bitwise_xor(a, b):
        if _dtype_of(a) == torch.bool or _dtype_of(b) == torch.bool:
            return f"({a} != {b})"
        return f"({a} ^ {b})"

    @staticmethod
    def bitwise_not(a):
        return f"(!{a})" if _dtype_of(a) == torch.bool else f"(~{a})"

    @staticmethod
    def bitwise_left_shift(a, b):
        return f"i32_lshift({a}, {b})"

    @staticmethod
    def bitwise_right_shift(a, b):
        return f"i32_rshift({a}, {b})"

    @staticmethod
    def isnan(x):
        return f"is_nan({x})" if _is_float(x) else "false"

    @staticmethod
    def isinf(x):
        return f"is_inf({x})" if _is_float(x) else "false"

    @staticmethod
    def isfinite(x):
        return f"is_finite({x})" if _is_float(x) else "true"

    # rounding
    @staticmethod
    def floor(x):
        return f"floor({x})"

    @staticmethod
    def ceil(x):
        return f"ceil({x})"

    @staticmethod
    def trunc(x):
        return f"trunc({x})"

    @staticmethod
    def round(x):
        return f"round({x})"

    # functions: the accurate versions the eager kernels use (wgsl/lib/pointwise.wgsl)
    @staticmethod
    def exp(x):
        return f"f_exp({x})"

    @staticmethod
    def exp2(x):
        return f"f_exp2({x})"

    @staticmethod
    def expm1(x):
        return f"f_expm1({x})"

    @staticmethod
    def log(x):
        return f"f_log({x})"

    @staticmethod
    def log2(x):
        return f"f_log2({x})"

    @staticmethod
    def log10(x):
        return f"f_log10({x})"

    @staticmethod
    def log1p(x):
        return f"f_log1p({x})"

    @staticmethod
    def sqrt(x):
        return f"f_sqrt({x})"

    @staticmethod
    def rsqrt(x):
        return f"f_rsqrt({x})"

    @staticmethod
    def sigmoid(x):
        return f"f_sigmoid({x})"

    @staticmethod
    def tanh(x):
        return f"f_tanh({x})"

    @staticmethod
    def sinh(x):
        return f"f_sinh({x})"

    @staticmethod
    def cosh(x):
        return f"f_cosh({x})"

    @staticmethod
    def asinh(x):
        return f"f_asinh({x})"

    @staticmethod
    def acosh(x):
        return f"f_acosh({x})"

    @staticmethod
    def atanh(x):
        return f"f_atanh({x})"

    @staticmethod
    def sin(x):
        return f"f_sin({x})"

    @staticmethod
    def cos(x):
        return f"f_cos({x})"

    @staticmethod
    def tan(x):
        return f"f_tan({x})"

    @staticmethod
    def asin(x):
        return f"f_asin({x})"

    @staticmethod
    def acos(x):
        return f"f_acos({x})"

    @staticmethod
    def atan(x):
        return f"f_atan({x})"

    @staticmethod
    def atan2(a, b):
        return f"f_atan2({a}, {b})"

    @staticmethod
    def hypot(a, b):
        return f"f_hypot({a}, {b})"

    @staticmethod
    def erf(x):
        return f"f_erf({x})"

    @staticmethod
    def erfc(x):
        return f"f_erfc({x})"

    @staticmethod
    def erfinv(x):
        return f"f_erfinv({x})"

    @staticmethod
    def fmax(a, b):
        return f"f_fmax({a}, {b})"

    @staticmethod
    def fmin(a, b):
        return f"f_fmin({a}, {b})"

    @staticmethod
    def nextafter(a, b):
        raise unsupported("nextafter")

    # special functions: wgsl/lib/special.wgsl's (I0/I1: bessel_i.wgsl's), as the eager kernels use
    @staticmethod
    def lgamma(x):
        return f"sp_lgamma({x})"

    @staticmethod
    def digamma(x):
        return f"sp_digamma({x})"

    @staticmethod
    def i0(x):
        return f"f_bessel_i0({x})"

    @staticmethod
    def i0e(x):
        return f"f_bessel_i0e({x})"

    @staticmethod
    def i1(x):
        return f"f_bessel_i1({x})"

    @staticmethod
    def i1e(x):
        return f"f_bessel_i1e({x})"

    @staticmethod
    def erfcx(x):
        return f"sp_erfcx({x})"

    @staticmethod
    def ndtri(x):
        return f"sp_ndtri({x})"

    @staticmethod
    def log_ndtr(x):
        return f"sp_log_ndtr({x})"

    @staticmethod
    def zeta(x, q):
        return f"sp_zeta({x}, {q})"

    @staticmethod
    def libdevice_abs(x):
        return WGSLOverrides.abs(x)

    @staticmethod
    def libdevice_exp(x):
        return WGSLOverrides.exp(x)

    @staticmethod
    def libdevice_sqrt(x):
        return WGSLOverrides.sqrt(x)

    @staticmethod
    def libdevice_log(x):
        return WGSLOverrides.log(x)

    @staticmethod
    def libdevice_cos(x):
        return WGSLOverrides.cos(x)

    @staticmethod
    def libdevice_sin(x):
        return WGSLOverrides.sin(x)


# int64 operands (exact, wgsl/lib/int64.wgsl): the op's form over (lo, hi) words. Python scalars
# next to an int64 operand become int64 literals. Other ops on int64 raise (Inductor casts before
# float math).
_I64_OPS = {
    "add": "i64_add({0}, {1})",
    "sub": "i64_sub({0}, {1})",
    "mul": "i64_mul({0}, {1})",
    "neg": "i64_neg({0})",
    "abs": "i64_abs({0})",
    "eq": "i64_eq({0}, {1})",
    "ne": "(!i64_eq({0}, {1}))",
    "lt": "i64_lt({0}, {1})",
    "le": "i64_le({0}, {1})",
    "gt": "i64_lt({1}, {0})",
    "ge": "i64_le({1}, {0})",
    "maximum": "i64_max({0}, {1})",
    "minimum": "i64_min({0}, {1})",
    "floordiv": "i64_div_floor({0}, {1})",
    "truncdiv": "i64_div({0}, {1})",
    "mod": "i64_rem({0}, {1})",
    "remainder": "i64_remainder({0}, {1})",
    "fmod": "i64_rem({0}, {1})",
    "sign": "i64_sign({0})",
    "bitwise_and": "({0} & {1})",
    "bitwise_or": "({0} | {1})",
    "bitwise_xor": "({0} ^ {1})",
    "bitwise_not": "(~{0})",
    "bitwise_left_shift": "i64_lshift({0}, {1})",
    "bitwise_right_shift": "i64_rshift({0}, {1})",
    "pow": "i64_pow({0}, {1})",
    "square": "i64_mul({0}, {0})",
    "relu": "i64_max({0}, vec2<u32>(0u, 0u))",
}
_I64_PASS = {
    "where",
    "to_dtype",
    "to_dtype_bitcast",
    "indirect_indexing",
    "masked",
    "constant",
    "index_expr",
    "load",
    "store",
    "reduction",
    "store_reduction",
}


def _is64(v):
    return isinstance(v, CSEVariable) and _dtype_of(v) == torch.int64


def _as64(v):
    """An operand next to an int64 one, as int64 (Inductor narrows index expressions to int32 and
    mixes them with int64 values)."""
    if isinstance(v, CSEVariable) and _dtype_of(v) not in (torch.int64, None):
        return WGSLOverrides.to_dtype(v, torch.int64, _dtype_of(v))
    return _typed_value(v, torch.int64)


# Arithmetic on int8/uint8/int16 computes in i32; its result wraps to the dtype as CPU's would at
# each op (a comparison of int8 100 + 100 sees -56).
_NARROW_INT_OPS = {"add", "sub", "mul", "neg", "abs", "square", "pow", "floordiv", "truncdiv", "bitwise_left_shift"}
_NARROW_WRAP = {
    torch.int8: "((({0}) << 24u) >> 24u)",
    torch.int16: "((({0}) << 16u) >> 16u)",
    torch.uint8: "(({0}) & 255i)",
}


_FLOAT_BINARY = {
    "add",
    "sub",
    "mul",
    "truediv",
    "div",
    "maximum",
    "minimum",
    "pow",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "fmod",
    "remainder",
    "mod",
    "floordiv",
    "truncdiv",
    "atan2",
    "hypot",
    "copysign",
    "fmax",
    "fmin",
}


def _float_operand(v):
    """An integer or bool value next to a float one, as f32 (WGSL has no mixed arithmetic; Inductor
    leaves some such pairs, e.g. a pooling divisor from an index expression)."""
    d = _dtype_of(v)
    if isinstance(v, CSEVariable) and d is not None and not d.is_floating_point:
        return WGSLOverrides.to_dtype(v, torch.float32, d)
    return v


def _with_i64(name, fn):
    form = _I64_OPS.get(name)

    def op(*args, **kwargs):
        if (
            name in _FLOAT_BINARY
            and len(args) == 2
            and any(_is_float(a) for a in args)
            and not all(_is_float(a) or not isinstance(a, CSEVariable) for a in args)
        ):
            args = tuple(_float_operand(a) for a in args)
        if name in _NARROW_INT_OPS:
            dts = {_dtype_of(a) for a in args if isinstance(a, CSEVariable)}
            if len(dts) == 1 and next(iter(dts)) in _NARROW_WRAP:
                return _NARROW_WRAP[next(iter(dts))].format(fn(*args, **kwargs))
        if any(_is64(a) for a in args):
            if name == "where":
                a, b, c = args
                return f"select({_as64(c)}, {_as64(b)}, {a})"
            if name in _I64_PASS:
                return fn(*args, **kwargs)
            if form is None:
                raise unsupported(f"{name} on int64")
            return form.format(*[_as64(a) for a in args])
        return fn(*args, **kwargs)

    return staticmethod(op)


for _name, _fn in list(vars(WGSLOverrides).items()):
    if isinstance(_fn, staticmethod) and not _name.startswith("_") and _name not in ("constant", "masked"):
        setattr(WGSLOverrides, _name, _with_i64(_name, _fn.__func__))


# Buffer access helpers by storage dtype: (binding element type, load body, store body). `e` is the
# element index including the storage offset.
def _accessors(dtype, b, written, atomic=False):
    if atomic:  # a buffer some invocation adds into (store mode atomic_add): every access atomic
        if dtype not in (torch.float32, torch.int32):
            raise unsupported(f"atomic add into {dtype}")
        t = wtype(dtype)
        ld = f"return bitcast<{t}>(atomicLoad(&{b}[e]));"
        st = f"atomicStore(&{b}[e], bitcast<u32>(v));"
        if dtype == torch.int32:
            add = f"atomicAdd(&{b}[e], bitcast<u32>(v));"
        else:
            add = (
                f"var old = atomicLoad(&{b}[e]); loop {{ let r = atomicCompareExchangeWeak(&{b}[e], old, "
                f"bitcast<u32>(bitcast<f32>(old) + v)); if (r.exchanged) {{ break; }} old = r.old_value; }}"
            )
        return "atomic<u32>", ld, st, add
    if dtype in (torch.float32, torch.int32, torch.int64):
        t = wtype(dtype)
        return t, f"return {b}[e];", f"{b}[e] = v;", None
    if dtype in (torch.bool, torch.uint8, torch.int8):
        word = f"atomicLoad(&{b}[e >> 2u])" if written else f"{b}[e >> 2u]"
        byte = f"(({word} >> ((e & 3u) * 8u)) & 0xffu)"
        if dtype == torch.bool:
            ld, val = f"return {byte} != 0u;", "select(0u, 1u, v)"
        elif dtype == torch.uint8:
            ld, val = f"return i32({byte});", "(bitcast<u32>(v) & 0xffu)"
        else:
            ld, val = f"return (bitcast<i32>({byte} << 24u) >> 24u);", "(bitcast<u32>(v) & 0xffu)"
        st = f"let sh = (e & 3u) * 8u; atomicAnd(&{b}[e >> 2u], ~(0xffu << sh)); atomicOr(&{b}[e >> 2u], {val} << sh);"
        return ("atomic<u32>" if written else "u32"), ld, st, None
    if dtype == torch.int16:
        word = f"atomicLoad(&{b}[e >> 1u])" if written else f"{b}[e >> 1u]"
        ld = f"return (bitcast<i32>({word} << (16u - (e & 1u) * 16u)) >> 16u);"
        st = (
            f"let sh = (e & 1u) * 16u; atomicAnd(&{b}[e >> 1u], ~(0xffffu << sh)); "
            f"atomicOr(&{b}[e >> 1u], (bitcast<u32>(v) & 0xffffu) << sh);"
        )
        return ("atomic<u32>" if written else "u32"), ld, st, None
    if dtype in (torch.float16, torch.bfloat16):
        word = f"atomicLoad(&{b}[e >> 1u])" if written else f"{b}[e >> 1u]"
        half = f"(({word} >> ((e & 1u) * 16u)) & 0xffffu)"
        if dtype == torch.float16:
            ld, val = f"return f16_to_f32({half});", "f32_to_f16(v)"
        else:
            ld, val = f"return bitcast<f32>({half} << 16u);", "f32_to_bf16(v)"
        st = (
            f"let sh = (e & 1u) * 16u; atomicAnd(&{b}[e >> 1u], ~(0xffffu << sh)); "
            f"atomicOr(&{b}[e >> 1u], {val} << sh);"
        )
        return ("atomic<u32>" if written else "u32"), ld, st, None
    raise unsupported(f"a buffer of dtype {dtype}")


_RED_INIT = {
    ("sum", "f32"): "0.0",
    ("sum", "i32"): "0i",
    ("prod", "f32"): "1.0",
    ("prod", "i32"): "1i",
    ("max", "f32"): "-f_inf()",
    ("max", "i32"): "(-2147483647i - 1i)",
    ("max", "bool"): "false",
    ("min", "f32"): "f_inf()",
    ("min", "i32"): "2147483647i",
    ("min", "bool"): "true",
    ("any", "bool"): "false",
    ("sum", I64): "vec2<u32>(0u, 0u)",
    ("prod", I64): "vec2<u32>(1u, 0u)",
    ("max", I64): "vec2<u32>(0u, 0x80000000u)",
    ("min", I64): "vec2<u32>(0xffffffffu, 0x7fffffffu)",
}


def _red_combine(rt, t, a, b):
    if t == I64:
        return {
            "sum": f"i64_add({a}, {b})",
            "prod": f"i64_mul({a}, {b})",
            "max": f"i64_max({a}, {b})",
            "min": f"i64_min({a}, {b})",
        }[rt]
    if rt == "sum":
        return f"({a} + {b})"
    if rt == "prod":
        return f"({a} * {b})"
    if rt == "max":
        return {"f32": f"f_maximum({a}, {b})", "i32": f"max({a}, {b})", "bool": f"({a} || {b})"}[t]
    if rt == "min":
        return {"f32": f"f_minimum({a}, {b})", "i32": f"min({a}, {b})", "bool": f"({a} && {b})"}[t]
    if rt == "any":
        return f"({a} || {b})"
    raise unsupported(f"reduction {rt}")


I64_INDEX_FN = """
fn i64_index(v: vec2<u32>) -> i32 {
  if (v.y == select(0u, 0xffffffffu, (v.x >> 31u) == 1u)) { return bitcast<i32>(v.x); }
  return select(2147483647i, -2147483647i - 1i, (v.y >> 31u) == 1u);
}
"""

# argmax/argmin: does (v, i) replace (a, ai)?
_ARG_FN = {
    ("argmax", "f32"): """
fn argmax_f32(v: f32, i: i32, a: f32, ai: i32) -> bool {
  let vn = is_nan(v); let an = is_nan(a);
  if (vn || an) { return vn && (!an || i < ai); }
  return v > a || (v == a && i < ai);
}
""",
    ("argmin", "f32"): """
fn argmin_f32(v: f32, i: i32, a: f32, ai: i32) -> bool {
  let vn = is_nan(v); let an = is_nan(a);
  if (vn || an) { return vn && (!an || i < ai); }
  return v < a || (v == a && i < ai);
}
""",
    ("argmax", "i32"): """
fn argmax_i32(v: i32, i: i32, a: i32, ai: i32) -> bool { return v > a || (v == a && i < ai); }
""",
    ("argmin", "i32"): """
fn argmin_i32(v: i32, i: i32, a: i32, ai: i32) -> bool { return v < a || (v == a && i < ai); }
""",
}

WELFORD_FN = """
fn welford_merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {  // (mean, m2, weight)
  if (b.z == 0.0) { return a; }
  if (a.z == 0.0) { return b; }
  let w = a.z + b.z;
  let d = b.x - a.x;
  let nb = b.z / w;
  return vec3<f32>(a.x + d * nb, a.y + b.y + d * d * a.z * nb, w);
}
"""


class WGSLKernel(SIMDKernel):
    overrides = WGSLOverrides
    suffix = ";"
    newvar_prefix = "let "
    sexpr = WGSLExprPrinter().doprint
    kexpr = sexpr
    pexpr = PythonPrinter().doprint
    allow_block_ptr = False

    def __init__(self, tiling, **kwargs):
        kwargs.pop("override_persistent_reduction", None)
        super().__init__(tiling, override_persistent_reduction=False, **kwargs)
        self.acc_ids = itertools.count()
        self.acc_decls = IndentedBuffer()  # accumulators, at the top of main
        self.r_entries = IndentedBuffer()  # reduction index variables, at the top of each loop
        self.post_loop = IndentedBuffer()  # workgroup combines after a loop
        self.wg_decls = []
        self.kept = set()  # CSE variables valid after their loop (reduction results)
        self.uses_welford = False
        self.helper_fns = {}  # name -> WGSL of functions the kernel's reductions use
        self.access_idx = set()  # index expressions of loads and stores (the vec4 variant needs flat ones)
        self.wgsl_meta = None
        # Short reductions (a static range of at most SERIAL_R): one invocation per output row that
        # loops over the row, no workgroup combine; longer ones: a workgroup per row.
        rn = self.numels.get("r0_", sympy.S.One)
        self.serial = self.features.is_reduction() and isinstance(rn, (int, sympy.Integer)) and int(rn) <= SERIAL_R
        self.row_guard = self.features.is_reduction() and not self.serial  # stores by one invocation of the row

    # --- indexing ---------------------------------------------------------------------------
    def should_use_persistent_reduction(self):
        return False

    def dtype_to_str(self, dtype):
        return wtype(dtype)

    @property
    def index_dtype(self):
        return "i32"

    def codegen_iteration_ranges_entry(self, entry):
        line = f"let {entry.name}: i32 = {self.sexpr(self.rename_indexing(entry.expr))};"
        (self.r_entries if entry.is_reduction else self.indexing_code).writeline(line)

    def check_bounds(self, expr, size, lower, upper):
        """An indirect index out of range is reported as the eager kernels do (the Stream's
        index-error slot: IndexError at the next synchronisation or read of a poisoned result);
        the clamped read that follows is never seen."""
        if not (lower or upper):
            return
        idx = self.index_to_str(self.prepare_indexing(expr))
        n = self.index_to_str(self.prepare_indexing(size))
        cond = " || ".join(c for c, on in ((f"({idx}) < 0", lower), (f"({idx}) >= ({n})", upper)) if on)
        self.compute.writeline(
            f"if ({cond}) {{ report_index_error(P.err_op, 0u, vec2<u32>(bitcast<u32>({idx}), "
            f"select(0u, 0xffffffffu, ({idx}) < 0)), u32({n})); }}"
        )

    def device_assert_async(self, cond, msg):
        pass

    # --- loads and stores -------------------------------------------------------------------
    def load(self, name, index):
        dtype = V.graph.get_dtype(name)
        if dtype not in _COMPUTE:
            raise unsupported(f"load of a {dtype} buffer")
        var = self.args.input(name)
        idx = self.index_to_str(self.prepare_indexing(index))
        self.access_idx.add(idx)
        cdtype = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
        return self.cse.generate(self.loads, f"ld_{var}({idx})", dtype=cdtype)

    def store(self, name, index, value, mode=None):
        if mode not in (None, "atomic_add"):
            raise unsupported(f"store mode {mode}")
        dtype = V.graph.get_dtype(name)
        if dtype not in _COMPUTE:
            raise unsupported(f"store to a {dtype} buffer")
        var = self.args.output(name)
        idx = self.index_to_str(self.prepare_indexing(index))
        self.access_idx.add(idx)
        line = f"{'aadd' if mode else 'st'}_{var}({idx}, {value});"
        if self.inside_reduction:
            self.compute.writeline(DeferredLine(name, line))
        elif self.row_guard:
            self.stores.writeline(DeferredLine(name, f"if (lid == 0u) {{ {line} }}"))
        else:
            self.stores.writeline(DeferredLine(name, line))

    def store_reduction(self, name, index, value):
        dtype = V.graph.get_dtype(name)
        if dtype not in _COMPUTE:
            raise unsupported(f"store to a {dtype} buffer")
        var = self.args.output(name)
        idx = self.index_to_str(self.prepare_indexing(index))
        line = f"st_{var}({idx}, {value});"
        self.stores.writeline(DeferredLine(name, f"if (lid == 0u) {{ {line} }}" if self.row_guard else line))

    # --- reductions -------------------------------------------------------------------------
    def reduction(self, dtype, src_dtype, reduction_type, value):
        key = (src_dtype, reduction_type, value)
        if key in self.cse.reduction_cache:
            return self.cse.reduction_cache[key]
        out = self._reduction(dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[key] = out
        return out

    def _wg_tree(self, wg, t, combine):
        self.post_loop.writeline("workgroupBarrier();")
        self.post_loop.writeline(f"for (var s: u32 = {WG // 2}u; s > 0u; s = s >> 1u) {{")
        with self.post_loop.indent():
            self.post_loop.writeline(f"if (lid < s) {{ {wg}[lid] = {combine(f'{wg}[lid]', f'{wg}[lid + s]')}; }}")
            self.post_loop.writeline("workgroupBarrier();")
        self.post_loop.writeline("}")

    def _reduction(self, dtype, src_dtype, rt, value):
        assert self.inside_reduction
        k = next(self.acc_ids)
        acc, wg = f"acc{k}", f"wg{k}"
        if rt in ("welford_reduce", "welford_combine"):
            self.uses_welford = True
            self.acc_decls.writeline(f"var {acc}: vec3<f32> = vec3<f32>(0.0, 0.0, 0.0);")
            if rt == "welford_reduce":
                self.compute.writeline(
                    f"{{ let d = {value} - {acc}.x; let w = {acc}.z + 1.0; let m = {acc}.x + d / w; "
                    f"{acc} = vec3<f32>(m, {acc}.y + d * ({value} - m), w); }}"
                )
            else:
                m, m2, w = value
                self.compute.writeline(f"{acc} = welford_merge({acc}, vec3<f32>({m}, {m2}, {w}));")
            res = self.cse.newvar(dtype=torch.float32)
            if self.serial:
                self.post_loop.writeline(f"let {res} = {acc};")
            else:
                self.wg_decls.append(f"var<workgroup> {wg}: array<vec3<f32>, {WG}>;")
                self.post_loop.writeline(f"{wg}[lid] = {acc};")
                self._wg_tree(wg, "vec3<f32>", lambda a, b: f"welford_merge({a}, {b})")
                self.post_loop.writeline(f"let {res} = {wg}[0];")
            outs = []
            for c in "xyz":
                v = self.cse.newvar(dtype=torch.float32)
                self.post_loop.writeline(f"let {v} = {res}.{c};")
                outs.append(v)
            self.kept.update(outs)
            return tuple(outs)
        if rt in ("argmax", "argmin"):
            return self._arg_reduction(rt, src_dtype, value, k)
        if rt not in ("sum", "prod", "max", "min", "any"):
            raise unsupported(f"reduction {rt}")
        t = wtype(dtype if rt in ("sum", "prod") else src_dtype)
        init = _RED_INIT.get((rt, t))
        if init is None:
            raise unsupported(f"reduction {rt} over {t}")
        self.acc_decls.writeline(f"var {acc}: {t} = {init};")
        self.compute.writeline(f"{acc} = {_red_combine(rt, t, acc, value)};")
        res = self.cse.newvar(dtype=dtype)
        if self.serial:
            self.post_loop.writeline(f"let {res} = {acc};")
        else:
            self.wg_decls.append(f"var<workgroup> {wg}: array<{t}, {WG}>;")
            self.post_loop.writeline(f"{wg}[lid] = {acc};")
            self._wg_tree(wg, t, lambda a, b: _red_combine(rt, t, a, b))
            self.post_loop.writeline(f"let {res} = {wg}[0];")
        self.kept.add(res)
        return res

    def _arg_reduction(self, rt, src_dtype, value, k):
        """argmax/argmin: (value, index) pairs; NaN counts as the largest (argmax) or smallest
        (argmin) and ties go to the first index, as on CPU. The index is the reduction range's linear
        index; the result is int64."""
        t = wtype(src_dtype)
        if t not in ("f32", "i32"):
            raise unsupported(f"{rt} over {src_dtype}")
        _, rtree = self._trees()
        fn = f"{rt}_{t}"
        self.helper_fns[fn] = _ARG_FN[(rt, t)]
        av, ai, wv, wi = f"acc{k}", f"acci{k}", f"wg{k}", f"wgi{k}"
        init = {
            ("argmax", "f32"): "-f_inf()",
            ("argmin", "f32"): "f_inf()",
            ("argmax", "i32"): "(-2147483647i - 1i)",
            ("argmin", "i32"): "2147483647i",
        }[(rt, t)]
        self.acc_decls.writeline(f"var {av}: {t} = {init};")
        self.acc_decls.writeline(f"var {ai}: i32 = 2147483647i;")
        r = rtree.name
        self.compute.writeline(f"if ({fn}({value}, {r}, {av}, {ai})) {{ {av} = {value}; {ai} = {r}; }}")
        res = self.cse.newvar(dtype=torch.int64)
        if self.serial:
            self.post_loop.writeline(f"let {res} = i64_from_i32({ai});")
        else:
            self.wg_decls.append(f"var<workgroup> {wv}: array<{t}, {WG}>;")
            self.wg_decls.append(f"var<workgroup> {wi}: array<i32, {WG}>;")
            pl = self.post_loop
            pl.writeline(f"{wv}[lid] = {av};")
            pl.writeline(f"{wi}[lid] = {ai};")
            pl.writeline("workgroupBarrier();")
            pl.writeline(f"for (var s: u32 = {WG // 2}u; s > 0u; s = s >> 1u) {{")
            with pl.indent():
                pl.writeline(
                    f"if (lid < s && {fn}({wv}[lid + s], {wi}[lid + s], {wv}[lid], {wi}[lid])) "
                    f"{{ {wv}[lid] = {wv}[lid + s]; {wi}[lid] = {wi}[lid + s]; }}"
                )
                pl.writeline("workgroupBarrier();")
            pl.writeline("}")
            pl.writeline(f"let {res} = i64_from_i32({wi}[0]);")
        self.kept.add(res)
        return res

    # --- assembly ---------------------------------------------------------------------------
    def _trees(self):
        xs = [t for t in self.range_trees if not t.is_reduction]
        rs = [t for t in self.range_trees if t.is_reduction]
        if len(xs) != 1 or len(rs) > 1:
            raise unsupported(f"tiling {[t.prefix for t in self.range_trees]}")
        return xs[0], (rs[0] if rs else None)

    def codegen_body(self):
        _, rtree = self._trees()
        if self.inside_reduction and rtree is not None and (self.loads or self.compute or self.post_loop):
            rn = self.sexpr(self.rename_indexing(rtree.numel))
            r = rtree.name
            if self.serial:
                self.body.writeline(f"for (var {r}: i32 = 0i; {r} < {rn}; {r} = {r} + 1i) {{")
            else:
                self.body.writeline(f"for (var {r}: i32 = i32(lid); {r} < {rn}; {r} = {r} + {WG}i) {{")
            with self.body.indent():
                self.body.splice(self.r_entries)
                self.body.splice(self.loads)
                self.body.splice(self.compute)
            self.body.writeline("}")
            self.body.splice(self.post_loop)
            self.body.splice(self.stores)
            # what the loop defined is out of scope now; reduction results stay
            self.cse.invalidate(OrderedSet(self.kept))
            for node in self.range_tree_nodes.values():
                if node.is_reduction and hasattr(node, "cache_clear"):
                    node.cache_clear()
            self.r_entries.clear()
            self.post_loop.clear()
        else:
            self.body.splice(self.loads)
            self.body.splice(self.compute)
            self.body.splice(self.stores)
        self.loads.clear()
        self.compute.clear()
        self.stores.clear()

    def codegen_kernel(self, name=None):
        try:  # Inductor asks for 64-bit indexing past 2^31 elements; these kernels index in i32
            wide = self.features.select_index_dtype() == torch.int64
        except Exception:  # noqa: BLE001  (an Inductor without this query: sizes are checked at launch)
            wide = False
        if wide:
            raise unsupported("tensors of 2^31 elements or more (64-bit indexing)")
        self.codegen_body()
        xtree, rtree = self._trees()
        reduction = self.features.is_reduction()
        body = self.body.getvalue() + self.indexing_code.getvalue() + self.acc_decls.getvalue()

        # storage arguments in binding order; only those the body uses
        arg_defs, call_args, _, _ = self.args.python_argdefs()
        # (outer buffer, inner names used in the body, loaded?, stored?): a buffer that is both read
        # and written under two inner names (a mutated graph input) is one read-write binding
        uses = {}
        for d, outer in zip(arg_defs, call_args):
            inner = getattr(d, "name", d)
            if not isinstance(inner, str) or inner.startswith("ks") or outer in self.removed_buffers:
                continue
            used_ld, used_st, used_add = (f"{p}_{inner}(" in body for p in ("ld", "st", "aadd"))
            if not (used_ld or used_st or used_add):
                continue
            u = uses.setdefault(outer, [[], False, False])
            u[0].append((inner, used_ld, used_st, used_add))
            u[1] |= used_add
            u[2] |= used_st or used_add
        helpers, bindings, tensors, elems, writable = [], [], [], [], []
        for outer, (inners, any_add, any_st) in uses.items():
            dtype = V.graph.get_dtype(outer)
            k = len(bindings)
            b = f"b{k}"
            elem, ld_body, st_body, add_body = _accessors(dtype, b, any_st, any_add)
            t = wtype(dtype)
            head = f"let e = u32(P_off({k}u) + i);"
            for inner, used_ld, used_st, used_add in inners:
                if used_ld:
                    helpers.append(f"fn ld_{inner}(i: i32) -> {t} {{ {head} {ld_body} }}")
                if used_st:
                    helpers.append(f"fn st_{inner}(i: i32, v: {t}) {{ {head} {st_body} }}")
                if used_add:
                    helpers.append(f"fn aadd_{inner}(i: i32, v: {t}) {{ {head} {add_body} }}")
            bindings.append(b)
            tensors.append(outer)
            elems.append(elem)
            writable.append(any_st)
        if not bindings:
            raise unsupported("a kernel without storage arguments")
        index_errors = "report_index_error(" in body
        if len(bindings) + index_errors > 16:
            raise unsupported(f"{len(bindings)} storage arguments (at most 16)")

        xn = self.sexpr(self.rename_indexing(xtree.numel))  # may add a size parameter: before listing them
        ilp = 1 if reduction else _ilp()
        size_inners = list(self.args.sizevars.values())
        code = IndentedBuffer()
        if self.uses_welford:
            code.splice(WELFORD_FN)
        for f in self.helper_fns.values():
            code.splice(f)
        for d in self.wg_decls:
            code.writeline(d)
        for h in helpers:
            code.writeline(h)
        code.writeline(
            f"@compute @workgroup_size({WG}) fn main(@builtin(workgroup_id) wid: vec3<u32>, "
            "@builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {"
        )
        with code.indent():
            for i, inner in enumerate(size_inners):
                code.writeline(f"let {inner}: i32 = P_ks({i}u);")
            if self.row_guard:
                code.writeline(f"let {xtree.name}: i32 = i32((wid.z * nwg.y + wid.y) * nwg.x + wid.x);")
            elif ilp > 1:
                code.writeline(f"let t0: i32 = i32(linear_id(wid, nwg, lid, {WG}u));")
                code.writeline(f"let nt: i32 = i32(nwg.x * nwg.y * nwg.z * {WG}u);")
                code.writeline(f"for (var u: i32 = 0i; u < {ilp}i; u = u + 1i) {{")
                code.do_indent()
                code.writeline(f"let {xtree.name}: i32 = t0 + u * nt;")
            else:
                code.writeline(f"let {xtree.name}: i32 = i32(linear_id(wid, nwg, lid, {WG}u));")
            code.writeline(f"if ({xtree.name} >= {xn}) {{ {'break' if ilp > 1 else 'return'}; }}")
            code.splice(self.indexing_code)
            code.splice(self.acc_decls)
            code.splice(self.body)
            if ilp > 1:
                code.do_unindent()
                code.writeline("}")
        code.writeline("}")
        src = code.getvalue()
        vec4 = self._vec4_variant(xtree, xn, uses, size_inners) if not self.features.is_reduction() else None
        if len(size_inners) > 32:
            raise unsupported("too many symbolic sizes")

        sizes = list(self.args.sizevars.keys())
        groups = xtree.numel if self.row_guard else sympy.ceiling(xtree.numel / (WG * ilp))
        special = "sp_" in src  # special.wgsl uses int64.wgsl's helpers
        bessel_i = "f_bessel_i" in src  # bessel_i.wgsl's series run in binary64 (f64.wgsl, on int64.wgsl)
        libraries = (
            ["pointwise"]
            + (["int64"] if special or bessel_i or any(f in src for f in ("i64_", "u64_", "b2l(")) else [])
            + (["bessel_i", "f64"] if bessel_i else [])
            + (["special"] if special else [])
        )
        # Only graph inputs can share storage with each other (Inductor's own buffers are distinct):
        # the launch checks for aliasing only where a graph input is written next to another.
        inputs = set(getattr(V.graph, "graph_inputs", {}) or {})
        from_inputs = [t in inputs for t in tensors]
        check_alias = sum(from_inputs) >= 2 and any(w and i for w, i in zip(writable, from_inputs))
        self.wgsl_meta = dict(
            tensors=tensors,
            elems=elems,
            writable=writable,
            sizes=sizes,
            groups=groups,
            libraries=libraries,
            check_alias=check_alias,
            index_errors=index_errors,
            vec4=vec4,
            ilp=ilp,
        )
        return src

    def _vec4_variant(self, xtree, xn, uses, size_inners):
        """A pointwise kernel whose every load and store is at the flat index of a buffer of exactly
        the kernel's length, over 4-byte dtypes (f32, i32, mixed) and a static length divisible by 4,
        also gets a variant where each invocation moves 4 consecutive elements per buffer as one vec4
        (16-byte accesses, as the eager elementwise engine does), or Q such quads strided by the
        dispatch size (TORCH_WEBGPU_COMPILE_VEC4=Q), so accesses stay coalesced. The scalar body is
        emitted once per lane, each copy in its own block (the CSE temporaries do not clash), with its
        loads and stores renamed to a static component of a local vec4 (`vb0.x`, `vb1.w = ...`): no
        helper calls and no dynamic indexing, which made the first version (a `for lane` loop over
        `pf[i & 3]`) slower than the scalar kernel on an H200. The launch takes the variant when every
        tensor's storage offset is a multiple of 4 (runtime.py). Returns (source, element types,
        workgroups) or None."""
        quads = _vec4_quads()
        static = isinstance(xtree.numel, (int, sympy.Integer))
        if not quads or size_inners or not static or int(xtree.numel) % 4:
            return None
        n = int(xtree.numel)
        flat = {xtree.name} | {
            e.name
            for e in self.range_tree_nodes.values()
            if not e.is_reduction and e.expr == sympy_index_symbol(xtree.name)
        }
        body = self.body.getvalue()
        if not self.access_idx or not self.access_idx <= flat or self.helper_fns or "report_index_error(" in body:
            return None
        lines = body.splitlines()
        base = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
        flat_re = "|".join(re.escape(f) for f in sorted(flat))
        renames, pre, post, elems = {}, [], [], []
        for k, (outer, (inners, any_add, any_st)) in enumerate(uses.items()):
            dtype = V.graph.get_dtype(outer)
            # a buffer shorter than the range (a masked load: constant padding) would be read past its end
            if dtype not in (torch.float32, torch.int32) or any_add or V.graph.get_numel(outer) != n:
                return None
            t, v = wtype(dtype), f"vb{k}"
            elems.append(f"vec4<{t}>")
            w = f"b{k}[u32((P_off({k}u) >> 2u) + t4)]"
            loaded = any(ld for _, ld, _, _ in inners)
            for inner, _, _, _ in inners:
                renames[inner] = v
            if not any_st:
                pre.append(f"let {v}: vec4<{t}> = {w};")
                continue
            # lanes whose store is conditional keep the value the buffer held (read first)
            cond = any(
                re.match(rf"\s*st_{re.escape(i)}\(", x) and len(x) - len(x.lstrip()) != base
                for x in lines
                for i, _, st, _ in inners
                if st
            )
            pre.append(f"var {v}: vec4<{t}> = {w};" if loaded or cond else f"var {v}: vec4<{t}>;")
            post.append(f"{w} = {v};")
        names = "|".join(re.escape(i) for i in sorted(renames, key=len, reverse=True))
        ld_re = re.compile(rf"\bld_({names})\(({flat_re})\)")
        st_re = re.compile(rf"^(\s*)st_({names})\(({flat_re}), (.*)\);\s*$")
        lane_bodies = []
        for c, comp in enumerate("xyzw"):
            out = []
            for x in lines:
                x = ld_re.sub(lambda m, comp=comp: f"{renames[m.group(1)]}.{comp}", x)
                x = st_re.sub(lambda m, comp=comp: f"{m.group(1)}{renames[m.group(2)]}.{comp} = {m.group(4)};", x)
                out.append(x)
            lane_bodies.append((c, "\n".join(out)))
        left = re.compile(rf"\b(ld|st|aadd)_({names})\(")
        if any(left.search(b) for _, b in lane_bodies):
            return None  # an access the renaming did not resolve: keep the scalar kernel only
        nq = n // 4
        code = IndentedBuffer()
        code.writeline(
            f"@compute @workgroup_size({WG}) fn main(@builtin(workgroup_id) wid: vec3<u32>, "
            "@builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {"
        )
        with code.indent():
            if quads > 1:
                code.writeline(f"let t0: i32 = i32(linear_id(wid, nwg, lid, {WG}u));")
                code.writeline(f"let nt: i32 = i32(nwg.x * nwg.y * nwg.z * {WG}u);")
                code.writeline(f"for (var q: i32 = 0i; q < {quads}i; q = q + 1i) {{")
                code.do_indent()
                code.writeline("let t4: i32 = t0 + q * nt;")
            else:
                code.writeline(f"let t4: i32 = i32(linear_id(wid, nwg, lid, {WG}u));")
            code.writeline(f"if (t4 >= {nq}) {{ {'break' if quads > 1 else 'return'}; }}")
            for line in pre:
                code.writeline(line)
            for c, lane in lane_bodies:
                code.writeline("{")
                with code.indent():
                    code.writeline(f"let {xtree.name}: i32 = t4 * 4i + {c}i;")
                    code.splice(self.indexing_code)
                    code.splice(lane)
                code.writeline("}")
            for line in post:
                code.writeline(line)
            if quads > 1:
                code.do_unindent()
                code.writeline("}")
        code.writeline("}")
        return code.getvalue(), elems, -(-nq // (WG * quads))

    def call_kernel(self, name, node=None, deallocate_ws=True):
        wrapper = V.graph.wrapper_code
        meta = self.wgsl_meta
        for s in meta["sizes"]:
            wrapper.ensure_size_computed(s)
        xtree, _ = self._trees()
        n = V.graph.sizevars.simplify(xtree.numel)
        per = WG * meta["ilp"]
        groups = self.pexpr(n) if self.row_guard else f"(({self.pexpr(n)}) + {per - 1}) // {per}"
        args = [str(t) for t in meta["tensors"]] + [self.pexpr(s) for s in meta["sizes"]]
        wrapper.writeline(f"{name}({groups}, {', '.join(args)})")


MAX_FUSED_BUFFERS = 14  # a kernel binds at most 16 storage buffers; leave room for a mutated input's twin


def _buffer_names(node):
    rw = node.read_writes
    return {d.name for d in rw.reads} | {d.name for d in rw.writes}


class WGSLScheduling(SIMDScheduling):
    kernel_type = WGSLKernel

    def can_fuse(self, node1, node2):
        """Inductor's rules, and no fusion whose buffers could not all be bound in one dispatch
        (counted before fusion removes intermediates: conservative)."""
        if not super().can_fuse(node1, node2):
            return False
        return len(_buffer_names(node1) | _buffer_names(node2)) <= MAX_FUSED_BUFFERS

    can_fuse_vertical = can_fuse
    can_fuse_horizontal = can_fuse

    @classmethod
    def get_tiling_and_scores(cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None):
        # one flat x range (and one reduction range): the kernel indexes by a flat invocation id
        return cls.create_tiling([numel], [reduction_numel]), None

    @classmethod
    def select_tiling(cls, node_schedule, numel, reduction_numel=sympy.S.One, coalesce_analysis=None):
        return cls.create_tiling([numel], [reduction_numel])

    def define_kernel(self, src_code, node_schedule, kernel):
        wrapper = V.graph.wrapper_code
        if src_code in wrapper.src_to_kernel:
            return wrapper.src_to_kernel[src_code]
        name = f"wgsl_kernel_{wrapper.next_kernel_suffix()}"
        wrapper.src_to_kernel[src_code] = name
        if not getattr(wrapper, "_wgsl_import", False):
            wrapper.header.writeline("from torch_webgpu._inductor.runtime import WGSLKernel as _WGSLKernel")
            wrapper._wgsl_import = True
        meta = kernel.wgsl_meta
        wrapper.header.writeline(
            f"{name} = _WGSLKernel({name!r}, {src_code!r}, {meta['elems']!r}, {meta['writable']!r}, "
            f"{meta['libraries']!r}, {meta['check_alias']!r}, {meta['index_errors']!r}, {meta['vec4']!r})"
        )
        return name
